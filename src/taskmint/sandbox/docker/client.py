"""The Docker Engine client of the `docker` backend, and looking images up by tag."""

from __future__ import annotations

from typing import Any

import docker
import docker.errors

from taskmint.errors import SandboxUnavailableError

__all__ = ["docker_client", "image_exists", "image_labels"]


def docker_client(base_url: str | None = None) -> Any:
    """A client for the Docker Engine (`base_url`, else the usual DOCKER_HOST or local socket),
    or a clear error when it cannot be reached."""
    try:
        if base_url:
            client = docker.DockerClient(base_url=base_url, timeout=300)
        else:
            client = docker.from_env(timeout=300)
        client.ping()
    except Exception as exc:
        raise SandboxUnavailableError(
            f"cannot reach the Docker daemon ({exc}). Start it (`systemctl start docker` or "
            "`dockerd &`), check DOCKER_HOST and that this user may use /var/run/docker.sock, "
            "or choose the `local` sandbox backend."
        ) from exc
    return client


def image_exists(client: Any, tag: str) -> dict[str, Any] | None:
    """The image's inspect data, or None when no image has that tag."""
    try:
        return dict(client.api.inspect_image(tag))
    except docker.errors.ImageNotFound:
        return None


def image_labels(info: dict[str, Any]) -> dict[str, str]:
    """The labels of an image, from its inspect data."""
    return dict((info.get("Config") or {}).get("Labels") or {})
