"""The per-test coverage map of a seed snapshot: which tests execute which lines.

One run of the original suite under coverage.py, in the sandbox, with a dynamic context per test
phase ("<test id>|setup", "|run", "|teardown"; code run during collection keeps the empty
context). It is computed once per (snapshot, environment) and cached as JSON.

Validation uses it to run only the tests whose outcome can change. A line executed outside any
test's run phase (at import, in a fixture, possibly shared between tests) could affect any test,
so edits touching such lines fall back to the full suite.
"""

from __future__ import annotations

import json
import shutil
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any
from urllib.parse import unquote

import coverage

from taskmint.config import Limits
from taskmint.files import copy_tree
from taskmint.languages import adapter_for
from taskmint.records import Environment, RunReport, SeedApp, stable_id
from taskmint.runners import bytecode as snapshot_bytecode
from taskmint.runners import run_tests
from taskmint.runners.adapters import runner_fingerprint
from taskmint.sandbox.base import WORKSPACE, Sandbox
from taskmint.scratch import make_scratch

__all__ = ["CoverageMap", "coverage_map"]

# The marker file the pytest plugin records process starts under (`record_spawns`).
SPAWN_FILE = "/taskmint-spawned-a-process"
# The marker file of the tests that left state behind for later tests (`record_leaks`, see
# `runners/inside/shared_state.py`): every line they executed counts as shared.
LEAK_FILE = "/taskmint-left-shared-state"


@dataclass(frozen=True, slots=True, kw_only=True)
class CoverageMap:
    """Per file and line: the tests that executed it, the test files that did while being
    collected (or in a module-scoped fixture), or "shared" (-1)."""

    snapshot_id: str
    tests: tuple[str, ...]
    # file -> line -> indices into `tests`; -1 marks a line run where every test may see it
    lines: dict[str, dict[int, tuple[int, ...]]] = field(default_factory=dict)
    # file -> line -> test files whose collection (or module fixtures) executed it
    collect_lines: dict[str, dict[int, tuple[str, ...]]] = field(default_factory=dict)
    # tests (indices; -1: outside any one test) and test files that started a process that
    # was not measured: the code it ran is not in the map, so they may see any edit
    # (`always_run`). A measured Python child's lines are in `lines` under the test's context.
    spawned: tuple[int, ...] = ()
    spawned_files: tuple[str, ...] = ()
    # Runners with a process per test file (node): workspace file -> the test files whose
    # process loaded it, and the files a process holding no test file loaded (a child process,
    # the runner itself). A test file whose process left no record is in `spawned_files`.
    process_per_file: bool = False
    loaded: dict[str, tuple[str, ...]] = field(default_factory=dict)
    loaded_shared: tuple[str, ...] = ()

    def always_run(self, universe: tuple[str, ...] | None = None) -> tuple[str, ...] | None:
        """The tests every selection must hold: those that started another process whose
        lines coverage never saw (a shell, a program that is not Python, a Python child that
        did not report; see `record_spawns` in the pytest plugin). None when a
        process was started outside any one test (at import, in a shared fixture): no
        selection is exact then."""
        if -1 in self.spawned:
            return None
        chosen = {self.tests[i] for i in self.spawned}
        if self.spawned_files:
            pool = self.tests if universe is None else universe
            files = set(self.spawned_files)
            chosen.update(t for t in pool if t.split("::", 1)[0] in files)
        return tuple(sorted(chosen))

    def tests_touching(
        self, file: str, first: int, last: int, universe: tuple[str, ...] | None = None
    ) -> tuple[str, ...] | None:
        """Tests that executed a line of `file` in [first, last], sorted.

        A line run while a test file was collected (or in its module-scoped fixtures) brings in
        every test of that file, taken from `universe` (default: the tests the map knows). None
        when some line in the range ran where any test may depend on it (import of the seed's
        modules, session fixtures, teardowns): then the full suite must run.
        """
        return self.tests_on_lines(file, range(first, last + 1), universe)

    def tests_on_lines(
        self, file: str, lines: Iterable[int], universe: tuple[str, ...] | None = None
    ) -> tuple[str, ...] | None:
        """Like `tests_touching`, for any set of lines of `file`."""
        per_line = self.lines.get(file, {})
        per_line_files = self.collect_lines.get(file, {})
        picked: set[int] = set()
        test_files: set[str] = set()
        for line in lines:
            idx = per_line.get(line, ())
            if -1 in idx:
                return None
            picked.update(idx)
            test_files.update(per_line_files.get(line, ()))
        chosen = {self.tests[i] for i in picked}
        pool = self.tests if universe is None else universe
        chosen.update(t for t in pool if t.split("::", 1)[0] in test_files)
        return tuple(sorted(chosen))


def _to_json(cmap: CoverageMap) -> dict[str, object]:
    return {
        "snapshot_id": cmap.snapshot_id,
        "tests": list(cmap.tests),
        "lines": {f: {str(k): list(v) for k, v in ls.items()} for f, ls in cmap.lines.items()},
        "collect_lines": {
            f: {str(k): list(v) for k, v in ls.items()} for f, ls in cmap.collect_lines.items()
        },
        "spawned": list(cmap.spawned),
        "spawned_files": list(cmap.spawned_files),
        "process_per_file": cmap.process_per_file,
        "loaded": {f: list(v) for f, v in cmap.loaded.items()},
        "loaded_shared": list(cmap.loaded_shared),
    }


def _from_json(data: dict[str, object]) -> CoverageMap:
    lines = data["lines"]
    assert isinstance(lines, dict)
    return CoverageMap(
        snapshot_id=str(data["snapshot_id"]),
        tests=tuple(data["tests"]),  # type: ignore[arg-type]
        lines={f: {int(k): tuple(v) for k, v in ls.items()} for f, ls in lines.items()},
        collect_lines={
            f: {int(k): tuple(v) for k, v in ls.items()}
            for f, ls in data.get("collect_lines", {}).items()  # type: ignore[attr-defined]
        },
        spawned=tuple(data.get("spawned", ())),  # type: ignore[arg-type]
        spawned_files=tuple(data.get("spawned_files", ())),  # type: ignore[arg-type]
        process_per_file=bool(data.get("process_per_file", False)),
        loaded={
            f: tuple(v)
            for f, v in data.get("loaded", {}).items()  # type: ignore[attr-defined]
        },
        loaded_shared=tuple(data.get("loaded_shared", ())),  # type: ignore[arg-type]
    )


def _read(db: Path, snapshot_id: str) -> CoverageMap:
    data = coverage.CoverageData(basename=str(db))
    data.read()
    index: dict[str, int] = {}
    lines: dict[str, dict[int, tuple[int, ...]]] = {}
    collect_lines: dict[str, dict[int, tuple[str, ...]]] = {}
    prefix = WORKSPACE.rstrip("/") + "/"
    spawned: set[int] = set()
    spawned_files: set[str] = set()
    leaked = {
        ctx.rpartition("|")[0]
        for contexts in (
            data.contexts_by_lineno(LEAK_FILE).values()
            if LEAK_FILE in data.measured_files()
            else ()
        )
        for ctx in contexts
    }

    def owners(contexts: Iterable[str], as_lines: bool = True) -> tuple[set[int], set[str]]:
        ids: set[int] = set()
        files: set[str] = set()
        for ctx in contexts:
            head, _, tail = ctx.partition("|")
            test, _, phase = ctx.rpartition("|")
            if head == "collect" and tail:
                files.add(tail)
            elif test and phase in ("run", "setup"):
                # a test's own phases (function-scoped fixtures only: wider fixtures and
                # teardowns, which may leave shared state, are in other contexts); a test that
                # left state behind may have passed what these lines computed to later tests
                ids.add(index.setdefault(test, len(index)))
                if as_lines and test in leaked:
                    ids.add(-1)
            else:
                ids.add(-1)
        return ids, files

    for measured in data.measured_files():
        if measured == LEAK_FILE:
            continue
        if measured == SPAWN_FILE:
            for contexts in data.contexts_by_lineno(measured).values():
                ids, files = owners(contexts, as_lines=False)
                spawned.update(ids)
                spawned_files.update(files)
            continue
        if not measured.startswith(prefix):
            continue
        rel = measured[len(prefix) :]
        per_line: dict[int, tuple[int, ...]] = {}
        per_line_files: dict[int, tuple[str, ...]] = {}
        for line, contexts in data.contexts_by_lineno(measured).items():
            ids, files = owners(contexts)
            per_line[line] = tuple(sorted(ids))
            if files:
                per_line_files[line] = tuple(sorted(files))
        lines[rel] = per_line
        collect_lines[rel] = per_line_files
    tests = tuple(sorted(index, key=index.__getitem__))
    return CoverageMap(
        snapshot_id=snapshot_id,
        tests=tests,
        lines=lines,
        collect_lines=collect_lines,
        spawned=tuple(sorted(spawned)),
        spawned_files=tuple(sorted(spawned_files)),
    )


def _line_starts(text: str) -> list[int]:
    starts = [0]
    for i, ch in enumerate(text):
        if ch == "\n":
            starts.append(i + 1)
    return starts


def _executed_lines(functions: list[dict[str, Any]], starts: list[int]) -> set[int]:
    """Lines (1-based) holding a character whose innermost covering range has a count > 0.

    V8's block coverage gives, per function, ranges with execution counts; nested ranges refine
    their parent (a count of 0 marks a block that never ran)."""
    ranges = [
        (int(r["startOffset"]), int(r["endOffset"]), int(r["count"]))
        for fn in functions
        for r in fn.get("ranges", ())
    ]
    # Outer ranges first, so an inner range overwrites its parent's count where it applies.
    ranges.sort(key=lambda r: (r[0], -r[1]))
    end = starts[-1] + 1 if starts else 0
    end = max([end, *(r[1] for r in ranges)])
    counts = bytearray(end + 1)
    for start, stop, count in ranges:
        counts[start:stop] = (b"\x01" if count > 0 else b"\x00") * (stop - start)
    lines: set[int] = set()
    for number, first in enumerate(starts, start=1):
        last = starts[number] if number < len(starts) else end
        if 1 in counts[first:last]:
            lines.add(number)
    return lines


def _read_v8(folder: Path, seed: SeedApp, tests: tuple[str, ...]) -> CoverageMap:
    """Per-file coverage from V8: node runs each test file in its own process, so a source line
    is attributed to the test files whose process executed it (never shared between files).
    A process that loaded no test file (the runner itself, a child process a test started)
    and executed seed code marks those lines as shared. Every workspace script a process
    loaded is recorded (`CoverageMap.loaded`), and a test file whose process left no coverage
    file (it was killed, or a test turned coverage off) is one that may see any edit."""
    prefix = "file://" + WORKSPACE.rstrip("/") + "/"
    test_files = {t.split("::", 1)[0] for t in tests}
    sources = {
        f
        for f in seed.files
        if any(f == p or f.startswith(p.rstrip("/") + "/") for p in seed.manifest.source_paths)
    }
    texts: dict[str, list[int]] = {}
    by_line: dict[str, dict[int, set[str]]] = {}
    shared: dict[str, set[int]] = {}
    loaded: dict[str, set[str]] = {}
    loaded_shared: set[str] = set()
    recorded: set[str] = set()
    for path in sorted(folder.glob("*.json")):
        try:
            result = json.loads(path.read_text(encoding="utf-8")).get("result", [])
        except (OSError, ValueError):
            continue
        scripts = {
            unquote(str(s.get("url", ""))[len(prefix) :]): s
            for s in result
            if str(s.get("url", "")).startswith(prefix)
        }
        owners = sorted(f for f in scripts if f in test_files)
        recorded.update(owners)
        for rel in scripts:
            if owners:
                loaded.setdefault(rel, set()).update(owners)
            else:
                loaded_shared.add(rel)
        for rel, script in scripts.items():
            if rel not in sources:
                continue
            if rel not in texts:
                try:
                    text = (Path(seed.root) / rel).read_text(encoding="utf-8", errors="replace")
                except OSError:
                    continue
                texts[rel] = _line_starts(text)
            executed = _executed_lines(script.get("functions", []), texts[rel])
            if not owners:
                shared.setdefault(rel, set()).update(executed)
            for line in executed:
                by_line.setdefault(rel, {}).setdefault(line, set()).update(owners)
    return CoverageMap(
        snapshot_id=seed.snapshot_id,
        tests=tests,
        lines={f: dict.fromkeys(ls, (-1,)) for f, ls in shared.items()},
        collect_lines={
            f: {n: tuple(sorted(o)) for n, o in ls.items()} for f, ls in by_line.items()
        },
        spawned_files=tuple(sorted(test_files - recorded)),
        process_per_file=True,
        loaded={f: tuple(sorted(o)) for f, o in sorted(loaded.items())},
        loaded_shared=tuple(sorted(loaded_shared)),
    )


def _read_coverage_py(db: Path, seed: SeedApp, report: RunReport) -> CoverageMap:
    return _read(db, seed.snapshot_id)


def _read_v8_folder(folder: Path, seed: SeedApp, report: RunReport) -> CoverageMap:
    return _read_v8(folder, seed, tuple(r.test_id for r in report.results))


# the coverage a runner leaves (`Adapter.coverage_format`) -> how it becomes a map
_READERS: dict[str, Callable[[Path, SeedApp, RunReport], CoverageMap]] = {
    "coverage.py": _read_coverage_py,
    "v8": _read_v8_folder,
}


def coverage_map(
    seed: SeedApp,
    env: Environment,
    sandbox: Sandbox,
    *,
    limits: Limits,
    cache_dir: Path | None = None,
    tests: tuple[str, ...] | None = None,
) -> CoverageMap | None:
    """The coverage map of `seed` (None when it cannot be had: the run failed), over the
    tests `tests` (None: the whole suite; `Baseline.full_request` leaves out tests that hung)."""
    adapter = adapter_for(seed.manifest)
    if adapter.coverage_format not in _READERS:
        return None  # a runner whose coverage no reader here understands: no map
    cache_file = None
    if cache_dir is not None:
        # -m2: single-module seeds are measured through their folder (maps before were empty);
        # -m3: tests that start processes are recorded (`spawned`); -m4: the Python processes
        # they start are measured (only unmeasured ones make a test `spawned`); -m5: node maps
        # record the scripts each process loaded; -m6: tests that leave state behind share
        # their lines, and caches empty after collection are emptied before each test; -m7: the
        # tests and the run's configuration are read-only (`runners.protect`); -m8: the
        # standard library's `test` package is visible (`PytestAdapter.mounts`)
        key = f"{seed.snapshot_id}-{env.env_id}-{runner_fingerprint()}-m8"
        if tests is not None:
            key += "-" + stable_id(*tests)
        cache_file = Path(cache_dir) / "coverage" / f"{key}.json"
        if cache_file.exists():
            return _from_json(json.loads(cache_file.read_text()))
    # The snapshot's bytecode, as every validation run has it (built once; the baseline asks
    # for the same folder). Which lines run does not depend on it: a pyc is the compiled source
    # it is checked against (see `taskmint.runners.bytecode`).
    bytecode = (
        snapshot_bytecode.build_bytecode(
            seed, env, sandbox, adapter=adapter, limits=limits, cache_dir=cache_dir
        )
        if cache_dir is not None
        else None
    )
    work = make_scratch("taskmint-cov-")
    try:
        ws = work / "ws"
        copy_tree(Path(seed.root), ws, seed.files)
        snapshot_bytecode.install_bytecode(ws, bytecode)
        db = work / "coverage.db"
        report = run_tests(
            sandbox,
            ws,
            seed.manifest,
            env,
            adapter=adapter,
            limits=limits,
            coverage_out=db,
            test_ids=tests,
        )
        if not report.complete or not db.exists():
            return None
        cmap = _READERS[adapter.coverage_format](db, seed, report)
    finally:
        shutil.rmtree(work, ignore_errors=True)
    if cache_file is not None:
        cache_file.parent.mkdir(parents=True, exist_ok=True)
        tmp = cache_file.with_suffix(".tmp")
        tmp.write_text(json.dumps(_to_json(cmap)))
        tmp.replace(cache_file)
    return cmap
