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
from taskmint.errors import SandboxError
from taskmint.records import Environment, RunReport, SeedApp, from_json_dict, to_json_dict
from taskmint.runners import run_tests
from taskmint.runners.adapters import PytestAdapter, adapter_for, runner_fingerprint
from taskmint.runners.execute import run_batch
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
    cold, so the original is seen under several interpreter hash seeds (set-order dependence);
    the warm ones share one collection, each a fork of it (`_forked_runs`), when the runner
    allows. The broken tree's j-th run uses plan j again, so a test's random draws match the
    original's.
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
    plans: tuple[str, ...] = ()  # "order/seed/cold|warm|forked" of each run, in run order
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
    down to a selection of them (`cut_suite`) rather than dropped. The warm runs are forks of
    one collection (`_forked_runs`) when there are two or more and the runner is pytest over
    the sandbox's channel. With a `cache_dir`, the
    snapshot's bytecode is compiled first (`build_bytecode`) and every run, here and in
    validation, starts from it.
    """
    cache_file = None
    if cache_dir is not None:
        key = (
            f"{seed.snapshot_id}-{env.env_id}-{runner_fingerprint()}-{runs}-p4"
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

    # The warm runs share one collection: each is a fork of it (`_forked_runs`).
    warm = [i for i, p in enumerate(plans) if p.warm]
    forkable = (
        len(warm) >= 2
        and isinstance(adapter_for(seed.manifest), PytestAdapter)
        and sandbox.supports_channel
    )
    if not forkable:
        warm = []
    forked: dict[int, RunReport] = {}

    def forked_job() -> None:
        forked.update(_forked_runs(seed, env, sandbox, [plans[i] for i in warm], limits, bytecode))

    def by_plan(index: int) -> RunReport:
        if index in warm:
            return forked.get(warm.index(index)) or one(plans[index])
        return one(plans[index])

    reports: list[RunReport] = []
    if workers <= 1:
        for index in range(len(plans)):
            if index in warm and not forked and index == warm[0]:
                forked_job()
            reports.append(by_plan(index))
            if reports[-1].timed_out:  # a hang costs one timeout, not `runs` of them
                break
    else:
        with ThreadPoolExecutor(min(workers, len(plans))) as pool:
            batch = pool.submit(forked_job) if warm else None
            cold = {i: pool.submit(one, plans[i]) for i in range(len(plans)) if i not in warm}
            if batch is not None:
                batch.result()
            # a warm run the batch did not serve runs here, the ordinary way
            reports = [cold[i].result() if i in cold else by_plan(i) for i in range(len(plans))]
    baseline = summarize(seed, env, reports, runs=runs, min_tests=min_tests, max_tests=max_tests)
    baseline = replace(
        baseline,
        plans=tuple(
            f"{p.order}/{p.seed}/{_how(i, p, warm, forked)}"
            for i, p in enumerate(plans[: len(reports)])
        ),
        bytecode=str(bytecode) if bytecode is not None else "",
    )
    if cache_file is not None and baseline.usable:
        cache_file.parent.mkdir(parents=True, exist_ok=True)
        tmp = cache_file.with_suffix(".tmp")
        tmp.write_text(json.dumps(to_json_dict(baseline), indent=1))
        tmp.replace(cache_file)
    return baseline


def _how(index: int, plan: RunPlan, warm: list[int], forked: dict[int, RunReport]) -> str:
    """How run `index` was made: "cold", "warm", or "forked" (a fork of the warm runs'
    shared collection)."""
    if index in warm and warm.index(index) in forked:
        return "forked"
    return "warm" if plan.warm else "cold"


def _forked_runs(
    seed: SeedApp,
    env: Environment,
    sandbox: Sandbox,
    plans: list[RunPlan],
    limits: Limits,
    bytecode: Path | None,
) -> dict[int, RunReport]:
    """The original suite's runs `plans` as forks of one collection of it, in a warm sandbox
    (`runners/inside/forked_runs.py`): the report of each run it served, by position in `plans`.

    A fork of a collected pytest process is what a warm run is after its own collection: the
    same interpreter and hash seed (the server's), the same modules imported by the same code,
    then the whole suite in the plan's order and seed, every test's protocol in a fresh
    process. What the runs no longer repeat is importing and collecting (import-time
    nondeterminism is drawn once for these runs; the cold runs draw it again each). A run the
    batch did not serve (it stopped: a run changed the workspace, the collection left threads
    running; the sandbox failed) is left out, and the caller runs it the ordinary way."""
    from taskmint.validate.forked import SNAPSHOT_BYTES  # it imports this module

    spec = {
        "runs": len(plans),
        "plans": [[p.order, p.seed] for p in plans],
        "candidates": [
            {
                "files": [],
                "select": None,
                "failing": [],
                "wall": limits.wall_seconds,
                "repeat": "all",
            }
        ],
        "snapshot_bytes": SNAPSHOT_BYTES,
    }
    ws = _workspace(seed, bytecode)
    try:
        report, _ = run_batch(
            sandbox,
            ws,
            seed.manifest,
            env,
            limits=limits.with_wall(limits.wall_seconds * (len(plans) + 1)),
            test_ids=None,
            batch=spec,
        )
    except (SandboxError, OSError):
        return {}
    finally:
        shutil.rmtree(ws, ignore_errors=True)
    out: dict[int, RunReport] = {}
    for index in range(len(plans)):
        tag = f"0/{index}"
        end = report.ends.get(tag, {})
        if tag not in report.reports or end.get("status") not in ("ran", "timeout"):
            continue
        out[index] = replace(
            report.reports[tag],
            timed_out=end.get("status") == "timeout",
            wall_time=float(end.get("wall") or 0.0),
        )
    return out


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
