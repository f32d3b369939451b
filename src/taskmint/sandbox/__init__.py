"""Sandboxes: one small interface, several backends.

`Sandbox.run(spec)` runs one command over a workspace folder and returns a `RunResult`; the
backend decides how isolation is achieved. `local` uses bubblewrap, `docker` the Docker Engine
(images built locally, see `sandbox.docker`); `FakeSandbox` takes a handler, for tests of code
that only needs the interface.
"""

from taskmint.config import SandboxConfig
from taskmint.sandbox.base import Mount, RunResult, RunSpec, Sandbox
from taskmint.sandbox.fake import FakeSandbox
from taskmint.sandbox.local import LocalSandbox, bwrap_path

__all__ = [
    "FakeSandbox",
    "LocalSandbox",
    "Mount",
    "RunResult",
    "RunSpec",
    "Sandbox",
    "bwrap_path",
    "open_sandbox",
]


def open_sandbox(config: SandboxConfig) -> Sandbox:
    """The backend named by a `SandboxConfig`."""
    if config.backend == "local":
        return LocalSandbox(config)
    if config.backend == "docker":
        # Imported only here: the backend needs the optional `docker` package.
        from taskmint.sandbox.docker import DockerOptions, DockerSandbox

        return DockerSandbox(config, options=DockerOptions(warm=config.docker_warm))
    raise ValueError(f"unknown sandbox backend {config.backend!r}")
