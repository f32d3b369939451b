"""Building verification workspaces, grading, and the policy's view of a task.

`grade_patch` rebuilds the broken tree from the task, applies the policy's diff filtered to the
allowed paths (`verify.scope`), restores the tests (the hidden ones included, which the
language's profile cut out of the policy's view: `LanguageProfile.strip_hidden`) and the test
code the language keeps inside source files (`LanguageProfile.restore_test_code`: Rust's
`#[cfg(test)]` modules), plants
canaries for a runner that asks for them (`verify.canary`), keeps the tests and their
configuration root-owned and read-only for the run, checksums them before and after, runs
through the out-of-band channel (no nonce, selection or report reachable by the code under
test), and grades the exact expected ids. The diff is also scanned statically (`verify.scan`).
"""

from __future__ import annotations

import functools
import hashlib
import os
import shutil
import time
from dataclasses import dataclass
from pathlib import Path

from taskmint.config import Limits, VerifyConfig
from taskmint.errors import PatchError, SandboxError
from taskmint.files import copy_tree, is_artefact, stamp_tree
from taskmint.languages import adapter_for, find_profile, profile_for_seed
from taskmint.patches import apply_patch
from taskmint.records import Environment, Reward, RunReport, SeedApp, Task
from taskmint.runners import run_tests
from taskmint.sandbox.base import Sandbox
from taskmint.scratch import make_scratch
from taskmint.verify.canary import canary_verdict, plant_canaries
from taskmint.verify.scan import scan_patch
from taskmint.verify.scope import filter_patch, language_protected_names, patch_paths

__all__ = ["Grader", "filter_patch", "grade", "grade_patch", "policy_view"]


def _remove_bytecode(root: Path) -> None:
    for pycache in list(root.rglob("__pycache__")):
        shutil.rmtree(pycache, ignore_errors=True)
    for pyc in list(root.rglob("*.py[co]")):
        pyc.unlink(missing_ok=True)


def policy_view(task: Task, seed: SeedApp, dest: Path) -> Path:
    """Write what a model being trained gets: the broken tree, and nothing that holds the answer.

    There is no `.git`, no bytecode, caches, build artefacts, egg-info or coverage data
    (snapshots never hold them, and they are dropped again here), the hidden tests are cut out
    of their test files, and every file has the same timestamp.
    """
    dest = Path(dest)
    if dest.exists() and any(dest.iterdir()):
        raise FileExistsError(f"{dest} is not empty; give an empty or new folder")
    copy_tree(Path(seed.root), dest, [f for f in seed.files if not is_artefact(f)])
    apply_patch(dest, task.breaking_patch)
    language = profile_for_seed(seed)
    files = {language.test_file(t) for t in task.hidden_tests}
    for rel in sorted(f for f in files if f is not None):
        path = dest / rel
        if path.is_file():
            text = path.read_text(encoding="utf-8")
            path.write_text(language.strip_hidden(rel, text, task.hidden_tests), encoding="utf-8")
    stamp_tree(dest)  # the files the patch rewrote get the same timestamp as the rest
    return dest


def _protected_files(seed: SeedApp, task: Task) -> list[str]:
    """The seed's tests, the test code its language keeps among the sources
    (`LanguageProfile.test_code_files`), and every file that configures the test run, the
    build or the interpreter (the language's `protected_names` too)."""
    return list(_protected(seed.root, seed.files, task.test_paths, task.language))


def _test_code(seed: SeedApp, language: str) -> tuple[str, ...]:
    """The seed's files outside its test paths that are test code (its profile says)."""
    return _test_code_of(seed.root, seed.files, language)


@functools.lru_cache(maxsize=64)
def _test_code_of(root: str, files: tuple[str, ...], language: str) -> tuple[str, ...]:
    found = find_profile(language)
    return () if found is None else tuple(found.test_code_files(Path(root), files))


@functools.lru_cache(maxsize=64)
def _protected(
    root: str, files: tuple[str, ...], test_paths: tuple[str, ...], language: str
) -> tuple[str, ...]:
    prefixes = tuple(t.rstrip("/") + "/" for t in test_paths)
    names = language_protected_names(language)
    test_code = set(_test_code_of(root, files, language))
    return tuple(
        f
        for f in files
        if f.rsplit("/", 1)[-1] in names
        or f in test_paths
        or f.startswith(prefixes)
        or f in test_code
    )


def _fatal(findings: tuple[str, ...], ws: Path, root: Path, language: str) -> str | None:
    """The first finding whose rule the language's profile makes cost the reward
    (`fatal_findings`) on a line that is not one of the original file's, else None."""
    found = find_profile(language)
    rules = found.fatal_findings if found is not None else frozenset()
    for finding in findings:
        where, _, what = finding.rpartition(": ")
        rel, _, number = where.rpartition(":")
        if what not in rules:
            continue
        if not number.isdigit() or int(number) < 1:
            return finding  # about the file, not one of its lines
        try:
            line = (ws / rel).read_text(encoding="utf-8").splitlines()[int(number) - 1]
            original = (root / rel).read_text(encoding="utf-8").splitlines()
        except (OSError, ValueError, IndexError, UnicodeDecodeError):
            return finding
        if " ".join(line.split()) not in {" ".join(x.split()) for x in original}:
            return finding
    return None


def _digest(ws: Path, rels: list[str]) -> str:
    """One hash over the readonly files (content, or their absence)."""
    h = hashlib.sha256()
    for rel in sorted(rels):
        path = ws / rel
        h.update(rel.encode() + b"\0")
        if path.is_symlink() or not path.is_file():
            h.update(b"<missing>")
        else:
            h.update(path.read_bytes())
    return h.hexdigest()


def _restore_tests(ws: Path, seed: SeedApp, task: Task) -> None:
    for t in task.test_paths:
        target = ws / t
        if target.is_dir() and not target.is_symlink():
            shutil.rmtree(target)
        elif target.exists() or target.is_symlink():
            target.unlink()
    files = _protected_files(seed, task)
    for rel in files:  # configuration outside the test folders too
        target = ws / rel
        if target.is_symlink() or target.is_file():
            target.unlink()
    copy_tree(Path(seed.root), ws, files)


def grade(report: RunReport, expected: tuple[str, ...]) -> tuple[float, str, int]:
    """Reward 1.0 only if the run completed and every expected id passed."""
    outcomes = report.outcome_map()
    passed = sum(1 for t in expected if outcomes.get(t) == "passed")
    if report.timed_out:
        return 0.0, "the tests timed out", passed
    if not report.nonce_ok:
        return 0.0, "the report was tampered with (bad record or nonce)", passed
    if report.tampered:
        return 0.0, f"tampered: {report.tampered}", passed
    if not report.complete:
        return 0.0, "the test run did not complete", passed
    if passed < len(expected):
        missing = [t for t in expected if outcomes.get(t) != "passed"]
        return 0.0, f"{len(missing)} expected test(s) did not pass, e.g. {missing[0]}", passed
    return 1.0, "all expected tests passed", passed


def _zero(reason: str, expected: int, start: float, **extra: object) -> Reward:
    return Reward(
        reward=0.0,
        reason=reason,
        expected=expected,
        wall_time=round(time.monotonic() - start, 3),
        **extra,  # type: ignore[arg-type]
    )


@dataclass(frozen=True, slots=True, kw_only=True)
class Grader:
    """`grade_patch` bound to one seed's runtime: what the pipeline, calibration and the CLI
    pass around to grade patches of that seed's tasks (`grader(task, patch)`)."""

    seed: SeedApp
    env: Environment
    sandbox: Sandbox
    limits: Limits
    config: VerifyConfig

    def __call__(self, task: Task, patch: str, fail_fast: bool = False) -> Reward:
        return grade_patch(
            task,
            patch,
            seed=self.seed,
            env=self.env,
            sandbox=self.sandbox,
            limits=self.limits,
            config=self.config,
            fail_fast=fail_fast,
        )


def grade_patch(
    task: Task,
    patch: str,
    *,
    seed: SeedApp,
    env: Environment,
    sandbox: Sandbox,
    limits: Limits,
    config: VerifyConfig,
    fail_fast: bool = False,
) -> Reward:
    """The reward for `patch` (a `git diff` relative to the task's root) on `task`: the one
    function every reward comes from (reference solvers, model attempts, `taskmint verify`,
    and the consumer's `taskmint.verify`).

    `fail_fast` stops at the first failing test: the reward is the same (any failure gives 0),
    only the per-test outcomes after it are reported missing. FAIL_TO_PASS runs first. A run
    whose report was forged, whose canaries came out wrong or whose tests changed during the
    run gets 0 and `tampered`; `config.scan_zeroes_reward` makes any static finding cost the
    reward too.
    """
    start = time.monotonic()
    expected = tuple(dict.fromkeys((*task.FAIL_TO_PASS, *task.PASS_TO_PASS)))
    kept, rejected = filter_patch(patch, task, _test_code(seed, task.language))
    findings = scan_patch(kept)
    common: dict[str, object] = {"rejected_paths": rejected, "findings": findings}
    ws = make_scratch("taskmint-verify-")
    try:
        copy_tree(Path(seed.root), ws, [f for f in seed.files if not is_artefact(f)])
        apply_patch(ws, task.breaking_patch)
        try:
            apply_patch(ws, kept)
        except PatchError as exc:
            return _zero(str(exc), len(expected), start, **common)
        fatal = _fatal(findings, ws, Path(seed.root), task.language)
        if fatal is not None:
            return _zero(
                f"the static scan found what the runner cannot tell from a result: {fatal}",
                len(expected),
                start,
                **common,
            )
        _restore_tests(ws, seed, task)
        # test code inside the source files the patches touched (Rust's `#[cfg(test)]` modules)
        changed_files = patch_paths(task.breaking_patch + "\n" + kept)
        why = profile_for_seed(seed).restore_test_code(Path(seed.root), ws, changed_files)
        if why is not None:
            return _zero(why, len(expected), start, **common)
        _remove_bytecode(ws)
        # pytest's canaries are a planted file; node's harness runs its own in every test
        # process (`runners/inside/node_runner.py`) and reports them as `RunReport.tampered`.
        adapter = adapter_for(seed.manifest)
        canaries = plant_canaries(ws, task) if adapter.plants_canaries else None
        readonly = [*_protected_files(seed, task), *([canaries.path] if canaries else [])]
        before = _digest(ws, readonly)
        try:
            report = run_tests(
                sandbox,
                ws,
                seed.manifest,
                env,
                adapter=adapter,
                limits=limits,
                test_ids=(*expected, *(canaries.ids if canaries else ())),
                fail_fast=fail_fast,
                readonly=tuple(dict.fromkeys([*task.test_paths, *readonly])),
            )
        except SandboxError as exc:
            return _zero(f"sandbox error: {exc}", len(expected), start, error=str(exc), **common)
        changed = _digest(ws, readonly) != before
    finally:
        _remove_tree(ws)
    reward, reason, passed = grade(report, expected)
    outcomes = report.outcome_map()
    tamper = None
    if not report.nonce_ok:
        tamper = "the report was tampered with (bad record or nonce)"
    elif report.tampered:
        tamper = report.tampered
    elif changed:
        tamper = "the tests or their configuration changed during the run"
    elif canaries is not None and all(outcomes.get(t, "missing") != "missing" for t in expected):
        tamper = canary_verdict(report, canaries)
    if tamper is not None:
        reward, reason = 0.0, f"tampered: {tamper}"
    elif findings and config.scan_zeroes_reward:
        reward, reason = (
            0.0,
            f"the static scan found {len(findings)} suspect line(s): {findings[0]}",
        )
    if rejected and reward == 0.0:
        reason += f"; {len(rejected)} change(s) outside the allowed paths were dropped"
    return Reward(
        reward=reward,
        reason=reason,
        outcomes=tuple(r for r in report.results if r.test_id in set(expected)),
        passed=passed,
        expected=len(expected),
        tampered=tamper is not None,
        rejected_paths=rejected,
        wall_time=round(time.monotonic() - start, 3),
        findings=findings,
        signal=_signal_of(report),
    )


def _signal_of(report: RunReport) -> int:
    """The signal an unfinished run died of (the sandboxes report 128 + N), else 0."""
    code = report.exit_code
    if report.complete or report.timed_out or code is None or not 128 < code < 160:
        return 0
    return code - 128


def _remove_tree(root: Path) -> None:
    """Remove a workspace, whatever modes the run left in it (never following links)."""
    for dirpath, dirnames, _ in os.walk(root):
        for name in dirnames:
            path = os.path.join(dirpath, name)
            if not os.path.islink(path):
                os.chmod(path, 0o700)
    shutil.rmtree(root, ignore_errors=True)
