"""Selection for runners that start a process per test file (node): the files that loaded it.

`select_by_loaded` is exact for any edit confined to the files it changes, whatever the edit
removes (a function, a method, a class, an export), because the processes are disjoint:

- Node's test runner runs each test file in a process of its own, and a test's outcome is
  decided inside that process. V8's coverage, taken on the original, lists every script each
  process compiled (`CoverageMap.loaded`).
- A process that never loaded a changed file on the original runs exactly as before on the
  broken tree up to the moment it would first load one, and that moment never comes: nothing
  it executed differs, so it reports the same outcomes.

What that argument leaves out, and what is done about it:
- A process can look at a file without loading it as a script: read it (`fs`), list its
  folder, or hand it to another program (`child_process`, `worker_threads`). Every test file
  whose process loaded a script that spells one of those (`_OUTSIDE`), or that spells one
  itself, is selected for every edit. A child process that writes coverage (it inherits
  NODE_V8_COVERAGE) and loads a workspace file is a process with no test file: any edit to a
  file it loaded means the full suite.
- A test file whose process left no coverage record is in `CoverageMap.spawned_files`, which
  every selection holds (`CoverageMap.always_run`).
- An edit to a file that is not a script every process compiles from the workspace (a JSON
  file, a file outside the map): the full suite.
"""

from __future__ import annotations

import re
from pathlib import Path

from taskmint.index.coverage import CoverageMap
from taskmint.records import Candidate, SeedApp

__all__ = ["select_by_loaded"]

# Ways a script reaches a file without compiling it, or starts code that may not report.
# (A named import or a require spells the module's name, `node:fs` and `fs/promises` too.)
_OUTSIDE = re.compile(
    r"\b(?:fs|child_process|worker_threads|cluster)\b|\bWorker\b|process\.(?:binding|dlopen)"
)
# What V8 compiles as a script: an edit to anything else (a JSON module) is not seen loading.
_SCRIPTS = (".js", ".mjs", ".cjs", ".jsx", ".ts", ".mts", ".cts", ".tsx")


def _outside_users(cmap: CoverageMap, seed: SeedApp) -> set[str] | None:
    """The test files whose process loaded a script that can reach files without loading
    them; None when a process with no test file loaded one."""
    root = Path(seed.root)
    users: set[str] = set()
    for rel, owners in cmap.loaded.items():
        try:
            text = (root / rel).read_text(encoding="utf-8", errors="replace")
        except OSError:
            return None
        if _OUTSIDE.search(text):
            if rel in cmap.loaded_shared:
                return None
            users.update(owners)
    return users


def select_by_loaded(
    candidate: Candidate,
    cmap: CoverageMap,
    seed: SeedApp,
    universe: tuple[str, ...] | None = None,
) -> tuple[str, ...] | None:
    """The tests of every test file whose process loaded a file the candidate changes, or
    reaches files another way (see the module doc); None when the full suite must run."""
    if not cmap.process_per_file or not candidate.files:
        return None
    changed = set(candidate.files)
    if changed & set(cmap.loaded_shared):
        return None
    if any(f not in cmap.loaded and not f.endswith(_SCRIPTS) for f in changed):
        return None
    files: set[str] = set(cmap.spawned_files)
    for f in changed:
        files.update(cmap.loaded.get(f, ()))
    outside = _outside_users(cmap, seed)
    if outside is None:
        return None
    files |= outside
    pool = cmap.tests if universe is None else universe
    return tuple(sorted(t for t in pool if t.split("::", 1)[0] in files))
