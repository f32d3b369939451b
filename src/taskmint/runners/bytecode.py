"""Bytecode for validation runs: compiled once per snapshot, reused by every tree made from it.

Runs use `python -I -B`, so nothing a run compiles is kept: every run of every tree compiled
the seed's modules and rewrote its test files' asserts from source again. On sheetcalc that was
70 ms of a 260 ms warm run of one test, and most of a candidate's cost is such runs.

`build_bytecode` makes one collect-only run of the original tree per snapshot, environment and
runner, in the sandbox, with the run's own interpreter and paths, in which `run_pytest.py`
compiles every file of the workspace and pytest's collection writes its assertion-rewritten
test modules (see `run_pytest._compile_workspace`). The `__pycache__` files are kept in the cache,
and `install_bytecode` copies them into each new tree (`materialize`, the baseline's runs, the
coverage run) before it runs. The coverage run spends about a quarter of its time compiling
and rewriting from source without it (sheetcalc: 1.97 s against 1.41 s).

Why the results cannot change:
- A pyc is used only for a source byte-identical to the one it was compiled from. The seed's
  modules are compiled as CHECKED_HASH pycs (PEP 552), which the import system checks against
  the source's hash at every import; pytest 9 checks its rewritten pycs by source hash too.
  Older pytest releases check only the mtime and size, and every materialized file has the same
  mtime, so on top of that `install_bytecode` copies no pyc of a file the patch touches: every
  pyc that reaches a tree belongs to a file the tree holds exactly as the snapshot does.
- The code is what compiling that source gives: the same interpreter, the same paths
  (`/workspace/...`, so tracebacks and coverage read the same), optimization level 0, and the
  runner's own pytest configuration, which is the same for every run.
- It is used for validation only, where the trees are taskmint's own. `verify` never loads
  it: a model's patch could be built to collide with the (non-cryptographic) source hash.
"""

from __future__ import annotations

import contextlib
import functools
import os
import shutil
import threading
from pathlib import Path

from taskmint.config import Limits
from taskmint.errors import SandboxError
from taskmint.files import copy_tree
from taskmint.patches import file_changes
from taskmint.records import Environment, SeedApp
from taskmint.runners.adapters import Adapter, runner_fingerprint
from taskmint.runners.execute import run_tests
from taskmint.sandbox.base import Sandbox
from taskmint.scratch import make_scratch, make_staging

__all__ = ["build_bytecode", "bytecode_dir", "install_bytecode"]

_PYCACHE = "__pycache__"
_BUILDING: dict[Path, threading.Lock] = {}  # one build at a time per folder in this process
_BUILDING_LOCK = threading.Lock()


def bytecode_dir(seed: SeedApp, env: Environment, cache_dir: Path) -> Path:
    """Where the bytecode of `seed`'s snapshot under `env` and this runner is kept."""
    key = f"{seed.snapshot_id}-{env.env_id}-{runner_fingerprint()}"
    return Path(cache_dir) / "bytecode" / key


def build_bytecode(
    seed: SeedApp,
    env: Environment,
    sandbox: Sandbox,
    *,
    adapter: Adapter,
    limits: Limits,
    cache_dir: Path,
) -> Path | None:
    """The folder of the snapshot's `__pycache__` files (relative to the tree), made once and
    cached; None for runners without bytecode (`adapter.compiles` false), or when the compile
    run fails (runs then compile from source, as before: slower, never different)."""
    if not adapter.compiles:
        return None
    final = bytecode_dir(seed, env, cache_dir)
    with _BUILDING_LOCK:
        lock = _BUILDING.setdefault(final, threading.Lock())
    with lock:  # the baseline and the coverage run ask at the same time: build it once
        return final if final.is_dir() else _build(seed, env, sandbox, adapter, limits, final)


def _build(
    seed: SeedApp,
    env: Environment,
    sandbox: Sandbox,
    adapter: Adapter,
    limits: Limits,
    final: Path,
) -> Path | None:
    final.parent.mkdir(parents=True, exist_ok=True)
    ws = make_scratch("taskmint-compile-")
    tmp = make_staging(f".{final.name}.", final.parent)
    try:
        copy_tree(Path(seed.root), ws, seed.files)
        try:
            # the one run that writes into the test folders: their pycs (`readonly=()`)
            report = run_tests(
                sandbox,
                ws,
                seed.manifest,
                env,
                adapter=adapter,
                limits=limits,
                compile_bytecode=True,
                readonly=(),
            )
        except SandboxError:
            return None
        if report.timed_out:
            return None
        sources = set(seed.files)
        for pyc in ws.rglob(f"{_PYCACHE}/*.pyc"):
            rel = pyc.relative_to(ws)
            if _source_of(rel) not in sources or pyc.is_symlink() or not pyc.is_file():
                continue
            (tmp / rel).parent.mkdir(parents=True, exist_ok=True)
            shutil.copyfile(pyc, tmp / rel)
        try:
            os.rename(tmp, final)
        except OSError:  # made meanwhile by another process: use that one
            if not final.is_dir():
                return None
        return final
    finally:
        shutil.rmtree(ws, ignore_errors=True)
        shutil.rmtree(tmp, ignore_errors=True)


def _source_of(pyc_rel: Path) -> str:
    """`pkg/__pycache__/mod.cpython-311[-pytest-9.2.0].pyc` -> `pkg/mod.py`."""
    module = pyc_rel.name.split(".", 1)[0]
    return (pyc_rel.parent.parent / f"{module}.py").as_posix()


def install_bytecode(tree: Path, bytecode: Path | None, patch: str = "") -> int:
    """Copy the cached pycs into `tree` (made from the snapshot, then `patch` applied), except
    those of the files `patch` touches. Returns how many were copied; nothing when `bytecode`
    is None or gone."""
    if bytecode is None or not os.path.isdir(bytecode):
        return 0
    touched: set[str] = set()
    if patch:
        for change in file_changes(patch):
            touched.update(p for p in (change.old_path, change.new_path) if p)
    root = str(tree)
    made: set[str] = set()
    copied = 0
    for pyc, folder, source in _listing(str(bytecode)):
        if source in touched or not os.path.isfile(os.path.join(root, source)):
            continue
        with contextlib.suppress(OSError):
            if folder not in made:
                os.makedirs(os.path.join(root, folder), exist_ok=True)
                made.add(folder)
            shutil.copyfile(os.path.join(bytecode, pyc), os.path.join(root, pyc))
            copied += 1
    return copied


@functools.lru_cache(maxsize=64)
def _listing(bytecode: str) -> tuple[tuple[str, str, str], ...]:
    """(pyc, its folder, its source), relative paths, of a bytecode folder. A folder is written
    once under its final name (`build_bytecode` renames it into place) and never changed."""
    out = []
    for dirpath, _, filenames in os.walk(bytecode):
        for name in sorted(filenames):
            rel = Path(dirpath, name).relative_to(bytecode)
            out.append((rel.as_posix(), rel.parent.as_posix(), _source_of(rel)))
    return tuple(out)
