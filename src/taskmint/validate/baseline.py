"""Running a seed's original suite several times to find its stable tests."""

from __future__ import annotations

import json
import shutil
import tempfile
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, replace
from pathlib import Path

from taskmint.acquire.snapshot import copy_tree
from taskmint.config import Limits
from taskmint.records import Environment, RunReport, SeedApp, from_json_dict, to_json_dict
from taskmint.runners import run_tests
from taskmint.runners.adapters import runner_fingerprint
from taskmint.sandbox.base import Sandbox
from taskmint.validate.bytecode import build_bytecode, install_bytecode

__all__ = ["Baseline", "RunPlan", "cut_suite", "run_baseline", "run_plan"]

_ORDERS = ("declared", "reverse", "shuffle", "declared", "shuffle")


@dataclass(frozen=True, slots=True, kw_only=True)
class RunPlan:
    """How one run of a suite is made: the test order, the seed (of the shuffle and of each
    test's `random`), and whether a warm interpreter may serve it."""

    order: str
    seed: int
    warm: bool


def run_plan(index: int) -> RunPlan:
    """The plan of the `index`-th run of the original suite.

    Order dependence causes most flaky tests, so the runs alternate the declared order, its
    reverse (which flips every pairwise dependence) and seeded shuffles. Every second run is
    cold, so the original is seen under several interpreter hash seeds (set-order dependence).
    The broken tree's j-th run uses plan j again, so a test's random draws match the original's.
    """
    order = _ORDERS[index] if index < len(_ORDERS) else "shuffle"
    return RunPlan(order=order, seed=index, warm=index % 2 == 1)


@dataclass(frozen=True, slots=True, kw_only=True)
class Baseline:
    """What the original suite does: stable passes, flaky tests, failures, and timing."""

    snapshot_id: str
    env_id: str
    runs: int
    stable_passed: tuple[str, ...]
    flaky: tuple[str, ...]
    failing: tuple[str, ...]
    collection_errors: tuple[str, ...]
    max_wall_time: float
    reason: str = ""
    plans: tuple[str, ...] = ()  # "order/seed/warm|cold" of each run, in run order
    # stable tests left out because the suite was longer than `max_tests` (see `cut_suite`)
    cut: tuple[str, ...] = ()
    # the snapshot's cached bytecode, copied into every tree validated against this baseline
    # ("" for none; see `taskmint.validate.bytecode`)
    bytecode: str = ""
    # (test id, its longest duration in seconds over the runs), for every test that reported
    # one: what a run of part of the suite should take (see `validate.candidate.broken_run_limits`)
    durations: tuple[tuple[str, float], ...] = ()

    @property
    def tests_kept(self) -> int:
        """How many tests the seed's tasks are built on."""
        return len(self.stable_passed)

    @property
    def tests_excluded(self) -> int:
        """Tests left out: failing or flaky on the original, or cut from a long suite."""
        return len(self.failing) + len(self.flaky) + len(self.cut)

    @property
    def usable(self) -> bool:
        """Whether tasks can be minted from this seed at all."""
        return not self.reason


def _workspace(seed: SeedApp, bytecode: Path | None) -> Path:
    ws = Path(tempfile.mkdtemp(prefix="taskmint-ws-"))
    copy_tree(Path(seed.root), ws, seed.files)
    install_bytecode(ws, bytecode)
    return ws


def run_baseline(
    seed: SeedApp,
    env: Environment,
    sandbox: Sandbox,
    *,
    runs: int,
    limits: Limits,
    cache_dir: Path | None = None,
    workers: int = 1,
    min_tests: int = 1,
    max_tests: int | None = None,
) -> Baseline:
    """Run the original suite `runs` times (cached per snapshot and environment), on up to
    `workers` runs at a time.

    Triage: tests that fail or flake on the original are excluded; the seed is kept when at
    least `min_tests` pass every run, and a suite with more than `max_tests` stable tests is cut
    down to a selection of them (`cut_suite`) rather than dropped. With a `cache_dir`, the
    snapshot's bytecode is compiled first (`build_bytecode`) and every run, here and in
    validation, starts from it.
    """
    cache_file = None
    if cache_dir is not None:
        key = (
            f"{seed.snapshot_id}-{env.env_id}-{runner_fingerprint()}-{runs}-p3"
            f"-t{min_tests}-{max_tests or 0}"
        )
        cache_file = Path(cache_dir) / "baselines" / f"{key}.json"
        if cache_file.exists():
            return from_json_dict(Baseline, json.loads(cache_file.read_text()))
    plans = [run_plan(i) for i in range(runs)]
    bytecode = (
        build_bytecode(seed, env, sandbox, limits=limits, cache_dir=cache_dir)
        if cache_dir is not None
        else None
    )

    def one(plan: RunPlan) -> RunReport:
        ws = _workspace(seed, bytecode)
        try:
            return run_tests(
                sandbox,
                ws,
                seed.manifest,
                env,
                limits=limits,
                order=plan.order,
                seed=plan.seed,
                warm=plan.warm,
                keep_workspace=False,
            )
        finally:
            shutil.rmtree(ws, ignore_errors=True)

    reports: list[RunReport] = []
    if workers <= 1:
        for plan in plans:
            reports.append(one(plan))
            if reports[-1].timed_out:  # a hang costs one timeout, not `runs` of them
                break
    else:
        with ThreadPoolExecutor(min(workers, len(plans))) as pool:
            reports = list(pool.map(one, plans))
    baseline = summarize(seed, env, reports, runs=runs, min_tests=min_tests, max_tests=max_tests)
    baseline = replace(
        baseline,
        plans=tuple(
            f"{p.order}/{p.seed}/{'warm' if p.warm else 'cold'}" for p in plans[: len(reports)]
        ),
        bytecode=str(bytecode) if bytecode is not None else "",
    )
    if cache_file is not None and baseline.usable:
        cache_file.parent.mkdir(parents=True, exist_ok=True)
        tmp = cache_file.with_suffix(".tmp")
        tmp.write_text(json.dumps(to_json_dict(baseline), indent=1))
        tmp.replace(cache_file)
    return baseline


def cut_suite(tests: list[str], limit: int) -> tuple[list[str], list[str]]:
    """Keep `limit` of `tests`, spread over their files: one test from each file in turn.

    Deterministic (the ids are sorted first), and every test file keeps some of its tests, so
    every part of the code stays observable; the rest are returned as cut.
    """
    by_file: dict[str, list[str]] = {}
    for tid in sorted(tests):
        by_file.setdefault(tid.split("::", 1)[0], []).append(tid)
    kept: list[str] = []
    queues = [list(v) for _, v in sorted(by_file.items())]
    while len(kept) < limit and any(queues):
        for q in queues:
            if q and len(kept) < limit:
                kept.append(q.pop(0))
    chosen = set(kept)
    return sorted(chosen), sorted(t for t in tests if t not in chosen)


def summarize(
    seed: SeedApp,
    env: Environment,
    reports: list[RunReport],
    *,
    runs: int,
    min_tests: int = 1,
    max_tests: int | None = None,
) -> Baseline:
    """Combine the runs: a test is stable if it passed every time, flaky if its results mixed.

    Failing and flaky tests are excluded rather than fatal: the seed is usable while at least
    `min_tests` tests pass every time.
    """
    maps = [r.outcome_map() for r in reports]
    ids = sorted(set().union(*maps)) if maps else []
    stable, flaky, failing = [], [], []
    for tid in ids:
        outcomes = {m.get(tid, "missing") for m in maps}
        if outcomes == {"passed"}:
            stable.append(tid)
        elif "passed" in outcomes:
            flaky.append(tid)
        else:
            failing.append(tid)
    errors = sorted({e for r in reports for e in r.collection_errors})
    reason = ""
    if any(r.timed_out for r in reports):
        reason = "the original suite timed out; raise run.timeout in taskmint.toml or fix the hang"
    elif not any(r.complete for r in reports):
        tail = reports[-1].output_tail[-500:] if reports else ""
        reason = f"the original suite did not run to completion: {tail}"
    elif not stable:
        reason = "no test passes reliably on the original tree"
        if errors:
            reason += f"; {len(errors)} test files failed to collect ({errors[0][:300]})"
    elif len(stable) < min_tests:
        reason = (
            f"only {len(stable)} tests pass reliably on the original tree ({len(failing)} "
            f"failing, {len(flaky)} flaky), fewer than min_tests={min_tests}; fix the seed's "
            "dependencies or lower min_tests"
        )
    longest: dict[str, float] = {}
    for report in reports:
        for result in report.results:
            longest[result.test_id] = max(longest.get(result.test_id, 0.0), result.duration)
    cut: list[str] = []
    if not reason and max_tests is not None and len(stable) > max_tests:
        stable, cut = cut_suite(stable, max_tests)
    return Baseline(
        snapshot_id=seed.snapshot_id,
        env_id=env.env_id,
        runs=len(reports),
        stable_passed=tuple(stable),
        flaky=tuple(flaky),
        failing=tuple(failing),
        collection_errors=tuple(errors),
        max_wall_time=max((r.wall_time for r in reports), default=0.0),
        reason=reason,
        cut=tuple(cut),
        durations=tuple(sorted((tid, round(d, 6)) for tid, d in longest.items())),
    )
