"""Building verification workspaces, filtering patches, and grading."""

from __future__ import annotations

import os
import re
import shutil
import tempfile
import time
from pathlib import Path, PurePosixPath

from taskmint.acquire.snapshot import copy_tree, stamp_tree
from taskmint.config import Limits
from taskmint.errors import PatchError, SandboxError
from taskmint.patches import apply_patch, file_changes
from taskmint.records import Environment, Reward, RunReport, SeedApp, Task
from taskmint.runners import run_tests
from taskmint.sandbox.base import Sandbox

__all__ = ["filter_patch", "grade", "policy_view", "verify"]

# Files that configure the test run or the interpreter: a patch may never touch them.
PROTECTED_NAMES = frozenset(
    {
        "conftest.py",
        "pytest.ini",
        "tox.ini",
        "setup.cfg",
        "pyproject.toml",
        "setup.py",
        "taskmint.toml",
        "package.json",
        "sitecustomize.py",
        "usercustomize.py",
        ".pytest.ini",
    }
)
_SECTION = re.compile(r"^diff --git ", re.MULTILINE)


def _allowed(path: str, task: Task) -> str | None:
    """None if the policy may change `path`, else why not."""
    p = PurePosixPath(path)
    if p.is_absolute() or ".." in p.parts or not path:
        return "path leaves the workspace"
    if p.name in PROTECTED_NAMES or p.suffix == ".pth":
        return "test or interpreter configuration"
    for t in task.test_paths:
        if path == t or path.startswith(t.rstrip("/") + "/"):
            return "test files are restored from the task"
    if not any(path == s or path.startswith(s.rstrip("/") + "/") for s in task.source_paths):
        return "outside the task's source paths"
    return None


def filter_patch(patch: str, task: Task) -> tuple[str, tuple[str, ...]]:
    """The part of `patch` the task allows, and the paths (with reasons) that were dropped."""
    starts = [m.start() for m in _SECTION.finditer(patch)]
    if not starts:
        sections = [patch] if patch.strip() else []
    else:
        sections = [patch[a:b] for a, b in zip(starts, [*starts[1:], len(patch)], strict=True)]
    kept: list[str] = []
    rejected: list[str] = []
    for section in sections:
        changes = file_changes(section)
        reasons = []
        for ch in changes:
            for path in {ch.old_path, ch.new_path} - {None}:
                why = _allowed(str(path), task)
                if why:
                    reasons.append(f"{path}: {why}")
            if ch.binary:
                reasons.append(f"{ch.path}: binary change")
            if ch.new_mode not in (None, "100644", "100755"):
                reasons.append(f"{ch.path}: mode {ch.new_mode} (symlinks and submodules refused)")
        if not changes:
            reasons.append("unparseable patch section")
        if reasons:
            rejected.extend(reasons)
        else:
            kept.append(section)
    return "".join(kept), tuple(rejected)


def _remove_bytecode(root: Path) -> None:
    for pycache in list(root.rglob("__pycache__")):
        shutil.rmtree(pycache, ignore_errors=True)
    for pyc in list(root.rglob("*.py[co]")):
        pyc.unlink(missing_ok=True)


def policy_view(task: Task, seed: SeedApp, dest: Path) -> Path:
    """Write what a model being trained gets: the broken tree, and nothing that holds the answer.

    There is no `.git`, no bytecode or caches (snapshots never hold them), and every file has
    the same timestamp.
    """
    dest = Path(dest)
    if dest.exists() and any(dest.iterdir()):
        raise FileExistsError(f"{dest} is not empty; give an empty or new folder")
    copy_tree(Path(seed.root), dest, seed.files)
    apply_patch(dest, task.breaking_patch)
    stamp_tree(dest)  # the files the patch rewrote get the same timestamp as the rest
    return dest


def _restore_tests(ws: Path, seed: SeedApp, task: Task) -> None:
    for t in task.test_paths:
        target = ws / t
        if target.is_dir() and not target.is_symlink():
            shutil.rmtree(target)
        elif target.exists() or target.is_symlink():
            target.unlink()
    files = [
        f
        for f in seed.files
        if any(f == t or f.startswith(t.rstrip("/") + "/") for t in task.test_paths)
    ]
    copy_tree(Path(seed.root), ws, files)


def grade(report: RunReport, expected: tuple[str, ...]) -> tuple[float, str, int]:
    """Reward 1.0 only if the run completed and every expected id passed."""
    outcomes = report.outcome_map()
    passed = sum(1 for t in expected if outcomes.get(t) == "passed")
    if report.timed_out:
        return 0.0, "the tests timed out", passed
    if not report.nonce_ok:
        return 0.0, "the report was tampered with (bad record or nonce)", passed
    if not report.complete:
        return 0.0, "the test run did not complete", passed
    if passed < len(expected):
        missing = [t for t in expected if outcomes.get(t) != "passed"]
        return 0.0, f"{len(missing)} expected test(s) did not pass, e.g. {missing[0]}", passed
    return 1.0, "all expected tests passed", passed


def verify(
    task: Task,
    patch: str,
    *,
    seed: SeedApp | None = None,
    env: Environment | None = None,
    sandbox: Sandbox | None = None,
    limits: Limits | None = None,
    fail_fast: bool = False,
    cache_dir: str | os.PathLike[str] | None = None,
) -> Reward:
    """The reward for `patch` (a `git diff` relative to the task's root) on `task`.

    `fail_fast` stops at the first failing test: the reward is the same (any failure gives 0),
    only the per-test outcomes after it are reported missing. FAIL_TO_PASS runs first.

    For a task from `taskmint.load_tasks`, `seed` and `env` may be left out: they come from the
    version the task was loaded from, cached by hash under `cache_dir`; `sandbox` defaults to
    the local bubblewrap sandbox and `limits` to the defaults with the seed's timeout.
    """
    if seed is None or env is None:
        from taskmint.publish.loader import runtime_for

        seed, env = runtime_for(task, cache_dir=cache_dir)
    if limits is None:
        limits = Limits().with_wall(seed.manifest.timeout)
    if sandbox is None:
        from taskmint.sandbox import LocalSandbox

        sandbox = LocalSandbox()
    start = time.monotonic()
    expected = tuple(dict.fromkeys((*task.FAIL_TO_PASS, *task.PASS_TO_PASS)))
    kept, rejected = filter_patch(patch, task)
    ws = Path(tempfile.mkdtemp(prefix="taskmint-verify-"))
    try:
        copy_tree(Path(seed.root), ws, seed.files)
        apply_patch(ws, task.breaking_patch)
        try:
            apply_patch(ws, kept)
        except PatchError as exc:
            return Reward(
                reward=0.0,
                reason=str(exc),
                expected=len(expected),
                rejected_paths=rejected,
                wall_time=time.monotonic() - start,
            )
        _restore_tests(ws, seed, task)
        _remove_bytecode(ws)
        try:
            report = run_tests(
                sandbox,
                ws,
                seed.manifest,
                env,
                limits=limits,
                test_ids=expected,
                fail_fast=fail_fast,
            )
        except SandboxError as exc:
            return Reward(
                reward=0.0,
                reason=f"sandbox error: {exc}",
                expected=len(expected),
                rejected_paths=rejected,
                wall_time=time.monotonic() - start,
            )
    finally:
        shutil.rmtree(ws, ignore_errors=True)
    reward, reason, passed = grade(report, expected)
    if rejected and reward == 0.0:
        reason += f"; {len(rejected)} change(s) outside the allowed paths were dropped"
    return Reward(
        reward=reward,
        reason=reason,
        outcomes=tuple(r for r in report.results if r.test_id in set(expected)),
        passed=passed,
        expected=len(expected),
        rejected_paths=rejected,
        wall_time=round(time.monotonic() - start, 3),
    )
