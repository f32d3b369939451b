"""Fixtures of the Harbor tests: the tiny seed's environment image, which the exported
Dockerfiles start FROM (built as tests/sandbox/test_docker.py builds it)."""

from __future__ import annotations

import pytest

from taskmint.records import Environment


@pytest.fixture(scope="module")
def env_image(tiny_env: Environment) -> str:
    docker_images = pytest.importorskip("taskmint.sandbox.docker.images")
    from taskmint.sandbox.docker.base_image import build_base_image
    from taskmint.sandbox.docker.client import docker_client

    client = docker_client()
    return str(
        docker_images.build_environment_image(tiny_env, client, base=build_base_image(client))
    )
