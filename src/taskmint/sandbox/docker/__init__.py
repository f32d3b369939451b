"""The `docker` sandbox backend: one container per run, or a warm pool of containers for `verify`.

An optional part of taskmint: it needs the `docker` Python package (`pip install
taskmint[docker]`), and only this package imports it, when the backend is chosen. Its modules:

- `sandbox`: `DockerSandbox`, which runs a `RunSpec` through the parts below;
- `containers`: `DockerOptions`, and how containers are made, pooled, reused and removed;
- `mounts`: the image, bind mounts and environment volumes each run needs;
- `execs`: the execs that carry a run into a container and its report out (cold runs and
  warm standbys), over the byte streams of `streams`;
- `client`, `base_image`, `images`: the Docker Engine client and the images, built on this
  machine with no registry.
"""

from taskmint.errors import SandboxUnavailableError

try:
    import docker  # noqa: F401  (the optional dependency; every module below uses it)
except ImportError as exc:  # pragma: no cover - only where the extra is not installed
    raise SandboxUnavailableError(
        "the docker sandbox backend needs the `docker` Python package: "
        "install taskmint[docker] (or choose the `local` backend)"
    ) from exc

from taskmint.sandbox.docker.containers import DockerOptions
from taskmint.sandbox.docker.mounts import sweep_environment_volumes
from taskmint.sandbox.docker.sandbox import DockerSandbox

__all__ = ["DockerOptions", "DockerSandbox", "sweep_environment_volumes"]
