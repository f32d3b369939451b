"""Validating one candidate against the seed's baseline."""

from __future__ import annotations

import shutil
import time
from collections.abc import Callable
from pathlib import Path
from typing import Literal

from taskmint.config import Limits
from taskmint.errors import PatchError, SandboxError
from taskmint.files import copy_tree
from taskmint.index.coverage import CoverageMap
from taskmint.languages import adapter_for
from taskmint.patches import apply_patch
from taskmint.records import Candidate, Environment, RunReport, SeedApp, Verdict
from taskmint.runners import run_tests
from taskmint.runners.bytecode import install_bytecode
from taskmint.sandbox.base import Sandbox
from taskmint.scratch import make_scratch
from taskmint.validate.baseline import Baseline, run_plan
from taskmint.validate.selection import select_tests

__all__ = ["broken_run_limits", "conclude", "materialize", "validate_candidate"]

Reruns = Literal["open", "all"]  # what later broken runs repeat (see `validate_candidate`)
_MAX_MESSAGES = 20  # failure messages kept per verdict (the statement shows a few)


def materialize(
    seed: SeedApp, patch: str, dest: Path | None = None, bytecode: Path | None = None
) -> Path:
    """A fresh copy of the seed's snapshot with `patch` applied (the caller removes it), with
    the snapshot's cached bytecode for the files the patch leaves alone (`install_bytecode`)."""
    ws = Path(dest) if dest is not None else make_scratch("taskmint-ws-")
    copy_tree(Path(seed.root), ws, seed.files)
    apply_patch(ws, patch)
    install_bytecode(ws, bytecode, patch)
    return ws


def broken_run_limits(
    baseline: Baseline,
    limits: Limits,
    manifest_timeout: float,
    tests: tuple[str, ...] | None = None,
    whole_files: bool = False,
) -> Limits:
    """A timeout for broken runs scaled from the original suite's time: a hang costs seconds.

    The whole suite gets 4x the original's longest wall time plus 5 s, at least 10 s. A run of
    part of it (`tests`) gets a share of that: 4x the original's wall time times the run's share
    of the suite, plus 3 s, and never more than the whole suite's limit. The share is the
    largest of three, each measured on the original (`Baseline.durations`):
    - the share of the tests (the runner's cost per test);
    - the share of their summed durations (a selection holding the one slow test gets the time
      that test took);
    - the share of the test files they are in (importing or starting each file: a process per
      file for node).
    With `whole_files` (a runner that runs every test of a selected file), the tests of every
    selected file count. A test with no known duration means the whole suite's limit. The margin
    is about 30x a typical warm selection run's time on this machine.
    """
    whole = max(10.0, 4 * baseline.max_wall_time + 5.0)
    wall = whole
    known = dict(baseline.durations)
    if tests is not None and known and all(t in known for t in tests):
        files = {t.split("::", 1)[0] for t in tests}
        chosen = set(tests)
        if whole_files:
            chosen = {t for t in known if t.split("::", 1)[0] in files}
        total = sum(known.values())
        share = max(
            len(chosen) / len(known),
            sum(known[t] for t in chosen) / total if total > 0 else 0.0,
            len(files) / len({t.split("::", 1)[0] for t in known}),
        )
        wall = min(whole, 4 * baseline.max_wall_time * min(share, 1.0) + 3.0)
    return limits.with_wall(min(manifest_timeout, wall))


def validate_candidate(
    candidate: Candidate,
    seed: SeedApp,
    env: Environment,
    baseline: Baseline,
    sandbox: Sandbox,
    *,
    runs: int,
    limits: Limits,
    coverage: CoverageMap | None = None,
    reruns: Reruns = "open",
    within: frozenset[str] | None = None,
) -> Verdict:
    """The `validate` verb: run the broken tree up to `runs` times and compare with the baseline.

    With a coverage map, only the tests whose outcome can change run (see `select_tests`);
    every other stable test is PASS_TO_PASS by construction. The first run runs that selection;
    each later run repeats only the tests whose verdict is still open (`_open_tests`: those that
    have not passed yet), and none is made when no test is open. `reruns="all"` repeats the whole
    first run instead: the same verdict and FAIL_TO_PASS (see `_open_tests`), and a test that
    passed once and failed later is dropped rather than PASS_TO_PASS. With `within`, only the
    stable tests among those run (the caller needs no other's verdict: the test-strength gate's
    graded tests, when no coverage map selects). Never raises for a bad candidate: every
    outcome is a `Verdict`.
    """
    start = time.monotonic()

    def verdict(status: str, reason: str, **kw: object) -> Verdict:
        return Verdict(
            candidate_id=candidate.candidate_id,
            status=status,  # type: ignore[arg-type]
            reason=reason,
            original_runs=baseline.runs,
            wall_time=round(time.monotonic() - start, 3),
            **kw,  # type: ignore[arg-type]
        )

    if reruns not in ("open", "all"):
        raise ValueError(f"reruns must be 'open' or 'all', not {reruns!r}")
    if not baseline.usable:
        return verdict("original_failed", baseline.reason)
    stable = set(baseline.stable_passed)
    selected = select_tests(candidate, coverage, baseline.stable_passed, seed)
    if within is not None:
        selected = selected if selected is not None else baseline.stable_passed
        selected = tuple(t for t in selected if t in within)
    if selected is not None:
        selected = tuple(t for t in selected if t in stable)
        if not selected:
            return verdict(
                "no_failing_tests",
                "no test executes the removed code",
                pass_to_pass=baseline.stable_passed,
                flaky_tests=baseline.flaky,
            )
    if selected is None:  # a cut suite runs its kept part, a hung test is never waited for
        selected = baseline.full_request
    observed = set(selected) if selected is not None else stable
    bytecode = Path(baseline.bytecode) if baseline.bytecode else None
    failing = set(baseline.failing)
    adapter = adapter_for(seed.manifest)
    reports: list[RunReport] = []
    # What each test did in the runs that were asked to run it.
    seen: dict[str, list[str]] = {}
    request: tuple[str, ...] | None = selected
    for index in range(runs):
        if index > 0 and reruns != "all":
            # Later runs re-run only the tests whose verdict is still open (see `_open_tests`):
            # a test that passed once can no longer be FAIL_TO_PASS, and a test failing on the
            # original that failed once can no longer be "newly passing".
            request = _open_tests(observed, failing, seen)
            if not request:
                break
        plan = run_plan(index)
        run_limits = broken_run_limits(
            baseline, limits, seed.manifest.timeout, request, adapter.selects_whole_files
        )
        try:
            ws = materialize(seed, candidate.breaking_patch, bytecode=bytecode)
        except PatchError as exc:
            return verdict("excise_failed", str(exc))
        try:
            report = run_tests(
                sandbox,
                ws,
                seed.manifest,
                env,
                adapter=adapter_for(seed.manifest),
                limits=run_limits,
                test_ids=request,
                order=plan.order,
                seed=plan.seed,
                keep_workspace=False,
            )
        except SandboxError as exc:
            return verdict("sandbox_error", str(exc))
        finally:
            shutil.rmtree(ws, ignore_errors=True)
        if report.timed_out:
            return verdict(
                "timeout",
                f"the broken tree's tests did not finish in {run_limits.wall_seconds:.0f}s",
                broken_runs=len(reports) + 1,
            )
        reports.append(report)
        outcomes = report.outcome_map()
        asked = set(request) if request is not None else set(outcomes) | stable
        for tid in asked:
            seen.setdefault(tid, []).append(outcomes.get(tid, "missing"))
    return conclude(baseline, observed, seen, reports, verdict)


def conclude(
    baseline: Baseline,
    observed: set[str],
    seen: dict[str, list[str]],
    reports: list[RunReport],
    verdict: Callable[..., Verdict],
) -> Verdict:
    """The verdict from the broken runs: `seen` holds what each test did in the runs that were
    asked to run it, `observed` the tests the runs could see the edit in (every other stable test
    is PASS_TO_PASS by construction), `reports` the runs' reports in order."""
    f2p, p2p, unstable = [], [], []
    for tid in baseline.stable_passed:
        if tid not in observed:  # cannot observe the edit (see select_tests)
            p2p.append(tid)
            continue
        results = seen.get(tid, ["missing"])
        if all(o == "passed" for o in results):
            p2p.append(tid)
        elif all(o != "passed" for o in results):
            f2p.append(tid)
        else:
            unstable.append(tid)
    failure_messages = _failure_messages(f2p, reports)
    newly_passing = sorted(
        tid for tid in baseline.failing if tid in seen and all(o == "passed" for o in seen[tid])
    )
    # A test with mixed results on the broken tree is dropped (neither FAIL_TO_PASS nor
    # PASS_TO_PASS), like a test that flakes on the original; the task keeps the rest.
    common = {
        "fail_to_pass": tuple(f2p),
        "pass_to_pass": tuple(p2p),
        "flaky_tests": baseline.flaky,
        "dropped_tests": tuple(unstable),
        "broken_runs": len(reports),
        "tests_run": len(observed),
        "test_time": round(sum(r.duration for rep in reports for r in rep.results), 4),
        "failure_messages": failure_messages,
    }
    if newly_passing:
        return verdict(
            "side_effects",
            f"{len(newly_passing)} test(s) that fail on the original pass on the broken tree",
            **common,
        )
    if not f2p and unstable:
        return verdict(
            "unstable",
            f"{len(unstable)} test(s) had mixed results on the broken tree, e.g. {unstable[0]},"
            " and no other test fails",
            **common,
        )
    if not f2p:
        return verdict("no_failing_tests", "no test fails when this code is removed", **common)
    return verdict("accepted", f"{len(f2p)} test(s) fail without the removed code", **common)


def _open_tests(
    observed: set[str], failing: set[str], seen: dict[str, list[str]]
) -> tuple[str, ...]:
    """The tests a further broken run must repeat: those whose verdict one more run can change.

    A stable test is FAIL_TO_PASS only if it failed in every run, so once it passed it is
    settled: PASS_TO_PASS if it passed every time, dropped if its results mixed. Re-running it
    could only move it between those two, which are both "not FAIL_TO_PASS", and so could change
    neither the accept/reject verdict nor the FAIL_TO_PASS set. A test failing on the original
    matters only if it passes in every run ("side effects"), so once it failed it is settled.
    Everything else (a stable test that never passed, a failing one that always passed) runs
    again, in the next run's order and seed (`run_plan`). Every FAIL_TO_PASS test therefore
    failed in each of the runs, as with full re-runs; what re-runs no longer catch is a test
    that passed the first time and would fail later (a flake of the broken tree), which stays
    PASS_TO_PASS: it passed in every run of the original, which is what the solved task is.
    """
    open_ = [
        tid
        for tid, results in seen.items()
        if (tid in observed and "passed" not in results)
        or (tid in failing and all(o == "passed" for o in results))
    ]
    return tuple(sorted(open_))


def _failure_messages(
    fail_to_pass: list[str], reports: list[RunReport]
) -> tuple[tuple[str, str], ...]:
    """(test id, message) of the FAIL_TO_PASS tests in the first broken run, for `describe`."""
    wanted = set(fail_to_pass)
    out: list[tuple[str, str]] = []
    for result in reports[0].results if reports else ():
        if result.test_id in wanted and result.message:
            out.append((result.test_id, result.message))
            if len(out) >= _MAX_MESSAGES:
                break
    return tuple(out)
