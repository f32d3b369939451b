"""The environment digests of exported Harbor tasks, taken once per image at export.

`environment_manifest(image, python=..., tools=...)` runs taskmint's probe
(`taskmint/harbor/inside/environment.py probe`) in a container of `image`, under the interpreter
the tests use, as root, with the network off, and returns its manifest: the sha256 of every file
the grading trusts (see `taskmint.harbor.inside.environment`). The export ships it in the task's
tests/ (uploaded only after the agent finished), and the grader compares the container it runs
in with it before trusting anything there.

Nothing runs on the image but the probe; the container is removed afterwards. Manifests are
cached under `cache_dir` by the image's id (content-addressed) and the probe's own hash. Without
the docker extra, a reachable daemon or the image on this machine there is no manifest: the
caller gets None and the reason.
"""

from __future__ import annotations

import contextlib
import hashlib
import io
import json
import tarfile
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from taskmint.cache import atomic_write
from taskmint.errors import TaskmintError

try:  # the `docker` extra
    import docker.errors

    from taskmint.sandbox.docker.client import docker_client, image_exists
except (ImportError, TaskmintError) as exc:  # pragma: no cover - without the docker extra
    _DOCKER_MISSING: Exception | None = exc
else:
    _DOCKER_MISSING = None

__all__ = ["PROBE", "environment_manifest"]

PROBE = Path(__file__).parent / "inside" / "environment.py"
_PROBE_DIR = "/tmp/taskmint-probe"
_TIMEOUT = 600


def _probe_id(python: str, tools: Sequence[str]) -> str:
    h = hashlib.sha256(PROBE.read_bytes())
    h.update(json.dumps([python, list(tools)]).encode())
    return h.hexdigest()[:16]


def environment_manifest(
    image: str, *, python: str, tools: Sequence[str], cache_dir: Path
) -> tuple[dict[str, Any] | None, str | None]:
    """(the manifest of `image`'s environment as `python` sees it, with `tools`; None) or
    (None, why there is none)."""
    if _DOCKER_MISSING is not None:
        return None, f"the docker extra is not installed ({_DOCKER_MISSING})"
    try:
        client = docker_client()
        info = image_exists(client, image)
    except (TaskmintError, docker.errors.DockerException) as exc:
        return None, f"Docker is not reachable ({exc})"
    if info is None:
        return None, (
            f"the image {image} is not on this machine (build it with `taskmint images build`, "
            "or pull it, before the export)"
        )
    image_id = str(info["Id"]).removeprefix("sha256:")
    cached = Path(cache_dir) / "harbor-digests" / f"{image_id}-{_probe_id(python, tools)}.json"
    if cached.is_file():
        with contextlib.suppress(OSError, ValueError):
            return json.loads(cached.read_text(encoding="utf-8")), None
    try:
        manifest = _run_probe(client, image_id, python, tools)
    except (TaskmintError, docker.errors.DockerException) as exc:
        return None, f"the probe failed in {image}: {exc}"
    atomic_write(cached, json.dumps(manifest, sort_keys=True).encode())
    return manifest, None


def _run_probe(client: Any, image_id: str, python: str, tools: Sequence[str]) -> dict[str, Any]:
    argv = [python, "-I", "-B", f"{_PROBE_DIR}/environment.py", "probe"]
    for tool in tools:
        argv += ["--tool", tool]
    api = client.api
    created = api.create_container(
        image_id,
        entrypoint=[],
        command=argv,
        user="0:0",
        network_disabled=True,
        environment={"PATH": "/usr/local/bin:/usr/bin:/bin", "LANG": "C.UTF-8"},
        host_config=api.create_host_config(network_mode="none"),
        labels={"taskmint.probe": "1"},
    )
    cid = created["Id"]
    try:
        buffer = io.BytesIO()
        with tarfile.open(fileobj=buffer, mode="w") as tar:
            folder = tarfile.TarInfo(_PROBE_DIR.rsplit("/", 1)[1])
            folder.type, folder.mode = tarfile.DIRTYPE, 0o755
            tar.addfile(folder)
            data = PROBE.read_bytes()
            info = tarfile.TarInfo(f"{_PROBE_DIR.rsplit('/', 1)[1]}/environment.py")
            info.size, info.mode = len(data), 0o644
            tar.addfile(info, io.BytesIO(data))
        api.put_archive(cid, "/tmp", buffer.getvalue())
        api.start(cid)
        status = api.wait(cid, timeout=_TIMEOUT)
        out = api.logs(cid, stdout=True, stderr=False).decode("utf-8", "replace")
        if status.get("StatusCode") != 0:
            err = api.logs(cid, stdout=False, stderr=True).decode("utf-8", "replace")
            raise TaskmintError(f"exit {status.get('StatusCode')}: {err[-1500:]}")
    finally:
        with contextlib.suppress(Exception):
            api.remove_container(cid, force=True)
    try:
        manifest = json.loads(out)
    except ValueError as exc:
        raise TaskmintError(f"the probe printed no manifest ({exc}): {out[-500:]}") from exc
    if not isinstance(manifest, dict) or "entries" not in manifest:
        raise TaskmintError("the probe printed no manifest")
    return manifest
