"""The tasks a reward service grades: one or more dataset versions, checked, by instance id.

Each version is resolved (a local folder or any fsspec URL), every file of it is checked against
the version's manifest (`verify_manifest`: sizes and sha256) before anything is served, and its
tasks are indexed by instance id. The same id in two versions is answered from the version the
request names, or from the version loaded last when it names none. Each seed's snapshot and
built test environment are resolved once (`taskmint.runtime_for`, cached on disk by hash).
"""

from __future__ import annotations

import io
import os
import tarfile
import tempfile
import threading
from collections.abc import Iterable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from taskmint.consumer import load_tasks, runtime_for
from taskmint.publish.loader import resolve_version, verify_manifest
from taskmint.records import Environment, SeedApp, Task
from taskmint.verify.reward import policy_view

__all__ = ["Loaded", "TaskRegistry", "UnknownTask"]


class UnknownTask(LookupError):
    """No loaded version has this task (or the named version is not loaded)."""


@dataclass(frozen=True, slots=True)
class Loaded:
    """One task and the version it was loaded from."""

    task: Task
    version: str  # the version's name (vNNNN)
    url: str


class TaskRegistry:
    """Tasks by id over the loaded versions, and each seed's runtime (resolved once)."""

    def __init__(
        self,
        datasets: Iterable[str | os.PathLike[str]],
        *,
        cache_dir: str | os.PathLike[str] | None = None,
        storage_options: dict[str, Any] | None = None,
    ) -> None:
        self.cache_dir = cache_dir
        self.storage_options = storage_options
        self.versions: dict[str, str] = {}  # name -> URL
        self._by_version: dict[str, dict[str, Loaded]] = {}
        self._latest: dict[str, Loaded] = {}
        for dataset in datasets:
            ref = resolve_version(dataset, storage_options=storage_options)
            verify_manifest(ref.url, storage_options=storage_options)
            tasks = load_tasks(ref.url, streaming=False, storage_options=storage_options)
            found = {t.instance_id: Loaded(t, ref.version, ref.url) for t in tasks}
            self.versions[ref.version] = ref.url
            self._by_version[ref.version] = found
            self._latest.update(found)
        self._runtimes: dict[str, tuple[SeedApp, Environment]] = {}
        self._locks: dict[str, threading.Lock] = {}
        self._lock = threading.Lock()

    def __len__(self) -> int:
        return len(self._latest)

    def tasks(self) -> list[Loaded]:
        """Every task the service answers for (the latest version's copy of each id)."""
        return list(self._latest.values())

    def get(self, instance_id: str, version: str | None = None) -> Loaded:
        """The task `instance_id` (of `version`, if given)."""
        if version is not None:
            found = self._by_version.get(version)
            if found is None:
                raise UnknownTask(
                    f"dataset version {version!r} is not loaded; loaded: {sorted(self.versions)}"
                )
        else:
            found = self._latest
        loaded = found.get(instance_id)
        if loaded is None:
            where = f"version {version}" if version else "any loaded version"
            raise UnknownTask(f"no task {instance_id!r} in {where}")
        return loaded

    def runtime(self, task: Task) -> tuple[SeedApp, Environment]:
        """The seed snapshot and test environment of `task`, resolved once per snapshot (a
        second request for the same snapshot waits for the first to finish resolving it)."""
        key = task.snapshot_id
        with self._lock:
            found = self._runtimes.get(key)
            if found is not None:
                return found
            lock = self._locks.setdefault(key, threading.Lock())
        with lock:
            found = self._runtimes.get(key)
            if found is None:
                found = runtime_for(
                    task, cache_dir=self.cache_dir, storage_options=self.storage_options
                )
                with self._lock:
                    self._runtimes[key] = found
            return found

    def environments(self) -> dict[str, Loaded]:
        """One task per test environment (by env_id): what a warm-up grades."""
        out: dict[str, Loaded] = {}
        for loaded in self._latest.values():
            out.setdefault(loaded.task.env_id, loaded)
        return out

    def workspace_tar(self, task: Task) -> bytes:
        """The policy's view of `task` (the broken tree, hidden tests cut) as a tar archive."""
        seed, _ = self.runtime(task)
        with tempfile.TemporaryDirectory(prefix="taskmint-ws-") as tmp:
            root = policy_view(task, seed, Path(tmp) / "ws")
            buf = io.BytesIO()
            with tarfile.open(fileobj=buf, mode="w:") as tar:
                for path in sorted(root.rglob("*")):
                    info = tar.gettarinfo(str(path), arcname=str(path.relative_to(root)))
                    info.uid = info.gid = 0
                    info.uname = info.gname = ""
                    if info.isfile():
                        with open(path, "rb") as fh:
                            tar.addfile(info, fh)
                    else:
                        tar.addfile(info)
            return buf.getvalue()
