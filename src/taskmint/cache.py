"""The caches' common ground: atomic writes, the cache version, and the result store that lets a
rerun after a crash redo no finished work.

`atomic_write` writes a file whole or not at all (temporary file in the same folder, fsync,
rename). `CACHE_VERSION` is part of every result key: raise it when a stored record's meaning
changes, and every stored result is a miss.

A key is the SHA-256 of what decides a result: the seed snapshot's id (itself a content hash
of the seed's files), the candidate id (a hash of the edit) and the config fields that can
change a result (`config_fingerprint` over the allow-list `VERDICT_FIELDS`; not the output
folder, the worker count, the candidate budget or the alert webhook).
Each result is pickled to `<root>/<key[:2]>/<key>.pkl`, written to a temporary file and renamed,
so a process killed mid-write leaves no half result: a file is either whole or absent. A file
that cannot be read back (a different taskmint version's record layout) is a miss, redone.
"""

from __future__ import annotations

import dataclasses
import hashlib
import json
import os
import pickle
import tempfile
import threading
from collections.abc import Callable
from pathlib import Path
from typing import Any, TypeVar

from taskmint.config import PipelineConfig
from taskmint.lifecycle import stopping, track_path

__all__ = [
    "CACHE_VERSION",
    "OTHER_FIELDS",
    "VERDICT_FIELDS",
    "ResultStore",
    "atomic_write",
    "config_fingerprint",
    "content_key",
]

# Part of every result key (`content_key`): a new value makes every stored result a miss.
CACHE_VERSION = "3"

T = TypeVar("T")

# The config fields that can change a stored result (a verdict, a task's text, its calibration
# rows): the resume key hashes these and nothing else. Every field of `PipelineConfig` is in
# exactly one of the two sets (a test checks it), so a new field is placed deliberately.
VERDICT_FIELDS = frozenset(
    {
        "sandbox",  # backend and limits: what a run can do in time and memory
        "original_runs",  # the baseline: which tests are stable
        "broken_runs",
        "min_tests",
        "max_tests",
        "random_seed",  # seeds the choice of hidden tests
        "reference_solvers",  # the reference calibration rows
        "verify",  # how the references are graded
        "models",  # the calibration models and the describe model (file contents too)
        "describe_model",
        "statement_style",
        "statement_level",  # the level of problem_statement
        "strength",  # the test-strength gate: its mutants and threshold
        "bands",
    }
)
# Fields that change which candidates are made, where output goes or how the run is carried
# out, never the result a candidate gets (a candidate's id is the hash of its edit).
OTHER_FIELDS = frozenset(
    {
        "output_root",
        "dataset_name",
        "seeds_manifest",  # the seed's snapshot id is in the key instead
        "shard_rows",
        "workers",
        "parallel_seeds",
        "max_candidates_per_seed",
        "min_body_lines",
        "strategies",
        "knobs",
        "feature",  # the size of strategy `feature`'s candidates (their ids differ)
        "alert_webhook",
        "infra_error_threshold",
    }
)


def _canonical(value: Any) -> Any:
    if dataclasses.is_dataclass(value) and not isinstance(value, type):
        return {f.name: _canonical(getattr(value, f.name)) for f in dataclasses.fields(value)}
    if isinstance(value, dict):
        return {str(k): _canonical(v) for k, v in sorted(value.items())}
    if isinstance(value, list | tuple):
        return [_canonical(v) for v in value]
    if isinstance(value, Path):
        return str(value)
    return value


def config_fingerprint(config: PipelineConfig) -> str:
    """A hash of the config fields that decide results (and of the models file's contents)."""
    data = {name: _canonical(getattr(config, name)) for name in sorted(VERDICT_FIELDS)}
    if config.models is not None:
        try:
            data["models_contents"] = hashlib.sha256(config.models.read_bytes()).hexdigest()
        except OSError:
            data["models_contents"] = None
    text = json.dumps(data, sort_keys=True, default=str)
    return hashlib.sha256(text.encode()).hexdigest()


def atomic_write(path: Path, data: bytes) -> None:
    """Write `path` whole or not at all: a temporary file beside it, fsync, rename (a process
    killed part way leaves no temporary file either: the reaper removes it)."""
    path.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp = tempfile.mkstemp(dir=path.parent, prefix=f".{path.name}.", suffix=".tmp")
    track_path(tmp)
    try:
        with os.fdopen(fd, "wb") as fh:
            fh.write(data)
            fh.flush()
            os.fsync(fh.fileno())
        os.replace(tmp, path)
    except BaseException:
        Path(tmp).unlink(missing_ok=True)
        raise


def content_key(*parts: str) -> str:
    """SHA-256 over the cache version and the parts, length-prefixed so ("ab", "c") and
    ("a", "bc") differ."""
    h = hashlib.sha256()
    for part in (CACHE_VERSION, *parts):
        data = part.encode("utf-8", "surrogateescape")
        h.update(f"{len(data)}:".encode())
        h.update(data)
    return h.hexdigest()


class ResultStore:
    """A folder of pickled results by content key; thread- and process-safe for whole files.

    `hits` and `misses` count look-ups in this process, so a caller can report how much work a
    rerun skipped.
    """

    def __init__(self, root: Path) -> None:
        self.root = Path(root)
        self.hits = 0
        self.misses = 0
        self._lock = threading.Lock()

    def _path(self, key: str) -> Path:
        return self.root / key[:2] / f"{key}.pkl"

    def get(self, key: str) -> tuple[bool, Any]:
        """(True, value) for a stored result, else (False, None)."""
        try:
            with self._path(key).open("rb") as fh:
                value = pickle.load(fh)
        except (OSError, EOFError, pickle.UnpicklingError, AttributeError, ImportError):
            with self._lock:
                self.misses += 1
            return False, None
        with self._lock:
            self.hits += 1
        return True, value

    def has(self, key: str) -> bool:
        """Whether a result is stored under `key` (without reading it)."""
        return self._path(key).is_file()

    def put(self, key: str, value: Any) -> None:
        """Store atomically (temporary file, fsync, rename); nothing once the process is
        stopping on a signal (`taskmint.lifecycle.stopping`): a result computed then may come
        from a sandbox killed under it."""
        if stopping():
            return
        path = self._path(key)
        path.parent.mkdir(parents=True, exist_ok=True)
        fd, tmp = tempfile.mkstemp(dir=path.parent, prefix=".tmp-", suffix=".pkl")
        track_path(tmp)  # a process killed mid-write leaves no temporary file either
        try:
            with os.fdopen(fd, "wb") as fh:
                pickle.dump(value, fh, protocol=pickle.HIGHEST_PROTOCOL)
                fh.flush()
                os.fsync(fh.fileno())
            if stopping():
                raise InterruptedError("stopping: not storing")
            os.replace(tmp, path)
        except BaseException:
            Path(tmp).unlink(missing_ok=True)
            raise
        # The journal: one line per computed result, appended (O_APPEND: whole lines even from
        # several processes), so a rerun's repeated work would show as a repeated key.
        with (self.root / "journal.log").open("a", encoding="utf-8") as fh:
            fh.write(key + "\n")

    def journal(self) -> list[str]:
        """The keys stored so far, in the order they were computed (across processes)."""
        try:
            return (self.root / "journal.log").read_text(encoding="utf-8").split()
        except OSError:
            return []

    def cached(self, key: str, compute: Callable[[], T]) -> T:
        """The stored result for `key`, or `compute()` stored under it."""
        found, value = self.get(key)
        if found:
            return value  # type: ignore[no-any-return,unused-ignore]
        value = compute()
        self.put(key, value)
        return value
