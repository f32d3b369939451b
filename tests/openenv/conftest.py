"""A published version with Python and JavaScript tasks, and the real OpenEnv server over it.

The Python tasks are the shared tiny seed's (`tiny_tasks`); the JavaScript ones are minted
from the tinyjs fixture seed here. The server is `taskmint serve-openenv` in a child process,
sharing the session's cache (its `--output` is the session's work folder).
"""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest

from taskmint.config import PipelineConfig
from taskmint.records import Environment, SeedApp, Task
from taskmint.sandbox import LocalSandbox
from tests.openenv.helpers import mint_js, publish_mixed, running_server


@pytest.fixture(scope="session")
def js_minted(
    cache_dir: Path, sandbox: LocalSandbox, pipeline_config: PipelineConfig
) -> tuple[SeedApp, Environment, list[Task]]:
    return mint_js(cache_dir, sandbox, pipeline_config)


@pytest.fixture(scope="session")
def mixed_dataset(
    tiny_tasks: list[Task],
    tiny_seed: SeedApp,
    tiny_env: Environment,
    js_minted: tuple[SeedApp, Environment, list[Task]],
    work_dir: Path,
) -> Path:
    return publish_mixed((tiny_seed, tiny_env, tiny_tasks), js_minted, work_dir / "openenv")


@pytest.fixture(scope="session")
def openenv_url(mixed_dataset: Path, work_dir: Path) -> Iterator[str]:
    with running_server(mixed_dataset, work_dir, work_dir / "openenv-server.log") as url:
        yield url
