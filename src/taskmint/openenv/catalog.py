"""A dataset version as the environment sees it: its tasks in splits, and their runtimes.

One `TaskCatalog` is built per server and shared by every session: the tasks are loaded once,
each seed's snapshot and test environment are resolved once (`taskmint.runtime_for`, cached on
disk by hash), and one sandbox runs every session's commands.

Splits (the Task API's `list_splits`): `all` (every task of the version), one per language
present (`python`, `javascript`, ...) and one per band present (`band-easy`, ...; tasks not
calibrated against models have no band and are only in `all` and their language). Within a
split, tasks are ordered by instance id, so an index names the same task on every server of
the same version.
"""

from __future__ import annotations

import dataclasses
import os
import threading
from pathlib import Path
from typing import Any

from taskmint.config import Limits, PipelineConfig, VerifyConfig
from taskmint.consumer import load_tasks, runtime_for
from taskmint.records import Environment, SeedApp, Task
from taskmint.sandbox.base import Sandbox
from taskmint.sandbox.local import LocalSandbox

__all__ = ["CatalogConfig", "TaskCatalog", "UnknownSplitError"]


class UnknownSplitError(IndexError):
    """A split the version does not have (an IndexError, so the Task API answers 400)."""


@dataclasses.dataclass(frozen=True, slots=True, kw_only=True)
class CatalogConfig:
    """How episodes run: time limits, and what `verify` is given."""

    # a shell command's wall-clock limit when the call gives none, and the most it may ask for
    command_seconds: float = 60.0
    max_command_seconds: float = 600.0
    # the most characters of a tool's output returned to the policy
    max_output: int = 12_000
    verify: VerifyConfig = dataclasses.field(default_factory=VerifyConfig)


class TaskCatalog:
    """The tasks of one dataset version, by split, with their runtimes and the sandbox."""

    def __init__(
        self,
        dataset: str | os.PathLike[str],
        *,
        version: str = "latest",
        cache_dir: str | os.PathLike[str] | None = None,
        sandbox: Sandbox | None = None,
        storage_options: dict[str, Any] | None = None,
        config: CatalogConfig | None = None,
        limits: Limits | None = None,
    ) -> None:
        self.dataset = str(dataset)
        self.cache_dir = Path(cache_dir) if cache_dir is not None else PipelineConfig().cache_dir
        self.storage_options = storage_options
        self.config = config or CatalogConfig()
        self.limits = limits or Limits()
        self.sandbox = sandbox if sandbox is not None else LocalSandbox()
        tasks = sorted(
            load_tasks(dataset, version, streaming=False, storage_options=storage_options),
            key=lambda t: t.instance_id,
        )
        splits: dict[str, list[Task]] = {"all": tasks}
        for task in tasks:
            splits.setdefault(task.language, []).append(task)
        for task in tasks:
            if task.band:
                splits.setdefault(f"band-{task.band}", []).append(task)
        self._splits = splits
        self._runtimes: dict[str, tuple[SeedApp, Environment]] = {}
        self._lock = threading.Lock()

    # -- the Task API's data ------------------------------------------------------------------

    def split_names(self) -> list[str]:
        """`all`, then the languages, then the bands."""
        return list(self._splits)

    def split(self, name: str) -> list[Task]:
        """The tasks of split `name`, in order."""
        try:
            return self._splits[name]
        except KeyError:
            raise UnknownSplitError(
                f"unknown split {name!r}; the splits are {self.split_names()}"
            ) from None

    def task(self, split: str, index: int) -> Task:
        """The task at `index` of `split` (IndexError when out of range)."""
        tasks = self.split(split)
        if isinstance(index, bool) or not isinstance(index, int):
            raise IndexError(f"index must be an integer, got {index!r}")
        if not 0 <= index < len(tasks):
            raise IndexError(f"index {index} is out of range for split {split!r} ({len(tasks)})")
        return tasks[index]

    @staticmethod
    def spec(task: Task, split: str, index: int) -> dict[str, Any]:
        """A task's metadata for the Task API: never its answer, tests or statement."""
        return {
            "id": task.instance_id,
            "index": index,
            "split": split,
            "seed": task.seed,
            "language": task.language,
            "strategy": task.strategy,
            "band": task.band,
            "retired": task.retired,
        }

    # -- episodes -----------------------------------------------------------------------------

    def runtime(self, task: Task) -> tuple[SeedApp, Environment]:
        """The seed snapshot and test environment `task` runs with (resolved once per seed)."""
        with self._lock:
            found = self._runtimes.get(task.snapshot_id)
            if found is None:
                found = runtime_for(
                    task, cache_dir=self.cache_dir, storage_options=self.storage_options
                )
                self._runtimes[task.snapshot_id] = found
            return found
