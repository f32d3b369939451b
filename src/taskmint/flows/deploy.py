"""Serve the deployments of `prefect.yaml` from this checkout: `taskmint serve`.

A cron schedule needs a Prefect server: `ensure_server` connects to the one PREFECT_API_URL
names (or `--api-url`), and otherwise starts `prefect server start` on 127.0.0.1 for as long as
`taskmint serve` runs. `serve` registers each deployment, with its schedule and parameters,
and runs its scheduled (and manually triggered) runs until interrupted.
"""

from __future__ import annotations

import dataclasses
import importlib
import importlib.util
import os
import subprocess
import sys
import time
import urllib.error
import urllib.request
from pathlib import Path
from typing import Any

import prefect
import yaml
from prefect.schedules import Cron
from prefect.settings import PREFECT_API_URL, temporary_settings

from taskmint.errors import ManifestError

__all__ = ["DeploymentSpec", "ensure_server", "load_specs", "serve", "server_healthy"]


@dataclasses.dataclass(frozen=True, slots=True, kw_only=True)
class DeploymentSpec:
    """One deployment of prefect.yaml, as far as serving it needs."""

    name: str
    entrypoint: str  # "flows/refresh.py:nightly", relative to `root`
    crons: tuple[tuple[str, str], ...]  # (cron, timezone)
    parameters: dict[str, Any]
    description: str | None = None
    tags: tuple[str, ...] = ()
    concurrency_limit: int | None = None
    root: str = "."  # the folder of the prefect.yaml the entrypoint is relative to

    def flow(self) -> Any:
        """The flow object the entrypoint names: the file's attribute, the file loaded from
        `root` as Prefect's own `prefect deploy` loads it (a module of the installed taskmint
        when the path is one of `src/`)."""
        path, _, attr = self.entrypoint.partition(":")
        if path.startswith("src/"):
            module = path.removeprefix("src/").removesuffix(".py").replace("/", ".")
            return getattr(importlib.import_module(module), attr)
        file = Path(self.root, path)
        spec = importlib.util.spec_from_file_location(f"_taskmint_entry_{file.stem}", file)
        if spec is None or spec.loader is None or not file.is_file():
            raise ManifestError(f"deployment {self.name}: no flow file {file}")
        loaded = importlib.util.module_from_spec(spec)
        spec.loader.exec_module(loaded)
        try:
            return getattr(loaded, attr)
        except AttributeError:
            raise ManifestError(f"deployment {self.name}: {file} has no {attr!r}") from None


def load_specs(path: Path) -> list[DeploymentSpec]:
    """The deployments of a prefect.yaml, with a clear error for a malformed one."""
    try:
        data = yaml.safe_load(Path(path).read_text(encoding="utf-8"))
    except (OSError, yaml.YAMLError) as exc:
        raise ManifestError(f"cannot read {path}: {exc}") from exc
    specs = []
    for i, dep in enumerate((data or {}).get("deployments") or []):
        if not isinstance(dep, dict) or "name" not in dep or "entrypoint" not in dep:
            raise ManifestError(f"{path}: deployment {i} needs a name and an entrypoint")
        crons = tuple(
            (str(s["cron"]), str(s.get("timezone", "UTC")))
            for s in dep.get("schedules") or []
            if isinstance(s, dict) and "cron" in s and s.get("active", True)
        )
        specs.append(
            DeploymentSpec(
                name=str(dep["name"]),
                entrypoint=str(dep["entrypoint"]),
                crons=crons,
                parameters={k: v for k, v in (dep.get("parameters") or {}).items()},
                description=dep.get("description"),
                tags=tuple(dep.get("tags") or ()),
                concurrency_limit=dep.get("concurrency_limit"),
                root=str(Path(path).resolve().parent),
            )
        )
    if not specs:
        raise ManifestError(f"{path} defines no deployments")
    return specs


def server_healthy(api_url: str, timeout: float = 3.0) -> bool:
    """Whether a Prefect server answers its health check at `api_url` (…/api)."""
    try:
        with urllib.request.urlopen(api_url.rstrip("/") + "/health", timeout=timeout) as r:
            return bool(r.status == 200)
    except (urllib.error.URLError, OSError, ValueError):
        return False


def ensure_server(
    api_url: str | None, port: int = 4200, wait: float = 120.0
) -> tuple[str, subprocess.Popen[bytes] | None]:
    """(API URL, the server process started here or None when one was already there)."""
    url = api_url or os.environ.get("PREFECT_API_URL")
    if url:
        if not server_healthy(url):
            raise ManifestError(f"no Prefect server answers at {url}; start one or unset it")
        return url, None
    url = f"http://127.0.0.1:{port}/api"
    if server_healthy(url):
        return url, None
    prefect = Path(sys.executable).with_name("prefect")
    proc = subprocess.Popen(
        [str(prefect), "server", "start", "--host", "127.0.0.1", "--port", str(port)],
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )
    deadline = time.monotonic() + wait
    while time.monotonic() < deadline:
        if server_healthy(url):
            return url, proc
        if proc.poll() is not None:
            raise ManifestError(f"`prefect server start` exited with {proc.returncode}")
        time.sleep(1)
    proc.terminate()
    raise ManifestError(f"the Prefect server did not come up at {url} in {wait:.0f}s")


def serve(specs: list[DeploymentSpec], api_url: str, limit: int | None = None) -> None:
    """Register the deployments (schedules, parameters) on the server and run their runs."""
    with temporary_settings(updates={PREFECT_API_URL: api_url}):
        deployments = []
        for spec in specs:
            flow = spec.flow()
            deployments.append(
                flow.to_deployment(
                    name=spec.name,
                    schedules=[Cron(c, timezone=tz) for c, tz in spec.crons] or None,
                    parameters=spec.parameters,
                    description=spec.description,
                    tags=list(spec.tags),
                    concurrency_limit=spec.concurrency_limit,
                )
            )
        prefect.serve(*deployments, limit=limit)
