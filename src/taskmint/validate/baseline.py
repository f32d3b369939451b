"""Running a seed's original suite several times to find its stable tests.

It stays one module although it is long: the runs (`run_baseline`) and their summary
(`summarize`, `seed_report`) share the `Baseline` record, which the runs make by summarizing
and the summary reads, so a split would leave the two halves importing each other.
"""

from __future__ import annotations

import json
import re
import shutil
from collections.abc import Sequence
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, replace
from pathlib import Path

from taskmint.config import Limits
from taskmint.errors import SandboxError
from taskmint.files import copy_tree
from taskmint.languages import adapter_for
from taskmint.records import (
    Environment,
    RunReport,
    SeedApp,
    SeedManifest,
    from_json_dict,
    to_json_dict,
)
from taskmint.runners import run_tests
from taskmint.runners.adapters import runner_fingerprint
from taskmint.runners.bytecode import build_bytecode, install_bytecode
from taskmint.runners.execute import run_batch
from taskmint.runners.inside.protocol import SNAPSHOT_BYTES, batch_spec, candidate_spec, run_tag
from taskmint.sandbox.base import Sandbox
from taskmint.scratch import make_scratch

__all__ = ["Baseline", "RunPlan", "cut_suite", "run_baseline", "run_plan", "seed_report"]

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
    # ("" for none; see `taskmint.runners.bytecode`)
    bytecode: str = ""
    # (test id, its longest duration in seconds over the runs), for every test that reported
    # one: what a run of part of the suite should take (see `validate.candidate.broken_run_limits`)
    durations: tuple[tuple[str, float], ...] = ()
    # What the project's own configuration selects in a full run (a plain `python -m pytest`
    # over the test paths: its addopts, markers and conftest hooks applied), and how many tests
    # it deselected at collection.
    collected: int = 0
    deselected: int = 0
    # tests that hung or ran past the per-test limit: left out of every later full run too
    hung: tuple[str, ...] = ()
    # (test id or test file, why it is not kept) for every test the project selects that the
    # tasks are not built on: failing, skipped, flaky, hung, cut, or a file that did not collect
    excluded: tuple[tuple[str, str], ...] = ()
    # "<plugin>: <error>" of each installed pytest plugin that failed to load
    plugin_errors: tuple[str, ...] = ()

    @property
    def full_request(self) -> tuple[str, ...] | None:
        """The tests a run of "the whole suite" should ask for: None for every test, the kept
        ones for a cut suite, everything but the hung tests when some hung."""
        if self.cut:
            return self.stable_passed
        if self.hung:
            hung = set(self.hung)
            rest = set(self.stable_passed).union(self.failing, self.flaky) - hung
            return tuple(sorted(rest))
        return None

    @property
    def tests_kept(self) -> int:
        """How many tests the seed's tasks are built on."""
        return len(self.stable_passed)

    @property
    def tests_excluded(self) -> int:
        """Tests left out: failing, skipped, hung or flaky on the original, or cut from a long
        suite."""
        return len(self.failing) + len(self.flaky) + len(self.cut)

    @property
    def usable(self) -> bool:
        """Whether tasks can be minted from this seed at all."""
        return not self.reason


def _workspace(seed: SeedApp, bytecode: Path | None) -> Path:
    ws = make_scratch("taskmint-ws-")
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
            f"{seed.snapshot_id}-{env.env_id}-{runner_fingerprint()}-{runs}-p7"
            f"-t{min_tests}-{max_tests or 0}"
        )
        cache_file = Path(cache_dir) / "baselines" / f"{key}.json"
        if cache_file.exists():
            return from_json_dict(Baseline, json.loads(cache_file.read_text()))
    plans = [run_plan(i) for i in range(runs)]
    bytecode = (
        build_bytecode(
            seed,
            env,
            sandbox,
            adapter=adapter_for(seed.manifest),
            limits=limits,
            cache_dir=cache_dir,
        )
        if cache_dir is not None
        else None
    )
    # A test that hangs where the per-test limit cannot stop it ends its run from outside;
    # the run names it (`RunReport.running`), and the runs are made again without it.
    hung: dict[str, str] = {}
    select: tuple[str, ...] | None = None
    first: list[RunReport] = []
    for _ in range(_HANG_ROUNDS):
        reports, how = _run_plans(seed, env, sandbox, plans, limits, bytecode, workers, select)
        first = first or reports
        found = {
            t: why for t, why in _hung(reports, seed.manifest, limits).items() if t not in hung
        }
        if not found:
            break
        hung.update(found)
        ids = {r.test_id for report in reports for r in report.results}
        select = tuple(sorted(ids - set(hung)))
    baseline = summarize(
        seed,
        env,
        reports,
        runs=runs,
        min_tests=min_tests,
        max_tests=max_tests,
        hung=hung,
        deselected=max((r.deselected for r in first), default=0),
    )
    baseline = replace(
        baseline,
        plans=tuple(f"{p.order}/{p.seed}/{h}" for p, h in zip(plans, how, strict=False)),
        bytecode=str(bytecode) if bytecode is not None else "",
    )
    if cache_file is not None and baseline.usable:
        cache_file.parent.mkdir(parents=True, exist_ok=True)
        tmp = cache_file.with_suffix(".tmp")
        tmp.write_text(json.dumps(to_json_dict(baseline), indent=1))
        tmp.replace(cache_file)
    return baseline


_HANG_ROUNDS = 3  # runs of the suite, each without the tests earlier ones found hanging


def _hung(reports: list[RunReport], manifest: SeedManifest, limits: Limits) -> dict[str, str]:
    """The tests that runs ended from outside were stuck in: running at the end for longer
    than the per-test limit (or half the run's limit when there is none). A run that ended
    while a test had only just started was slow as a whole; no test is blamed for it."""
    limit = manifest.test_timeout if manifest.test_timeout > 0 else float("inf")
    limit = min(limit, limits.wall_seconds / 2)
    out: dict[str, str] = {}
    for report in reports:
        if report.timed_out and report.running and report.running_for >= limit:
            out[report.running] = (
                f"hung: still running after {report.running_for:.0f} s when the run was "
                f"stopped at its limit of {limits.wall_seconds:.0f} s"
            )
    return out


def _run_plans(
    seed: SeedApp,
    env: Environment,
    sandbox: Sandbox,
    plans: list[RunPlan],
    limits: Limits,
    bytecode: Path | None,
    workers: int,
    select: tuple[str, ...] | None,
) -> tuple[list[RunReport], list[str]]:
    """Run the original suite once per plan (the tests `select`, None: all), on up to
    `workers` runs at a time: the reports, and how each run was made ("cold", "warm",
    "forked"). The warm runs share one collection: each is a fork of it (`_forked_runs`)."""

    def one(plan: RunPlan) -> RunReport:
        ws = _workspace(seed, bytecode)
        try:
            return run_tests(
                sandbox,
                ws,
                seed.manifest,
                env,
                adapter=adapter_for(seed.manifest),
                limits=limits,
                test_ids=select,
                order=plan.order,
                seed=plan.seed,
                warm=plan.warm,
                keep_workspace=False,
            )
        finally:
            shutil.rmtree(ws, ignore_errors=True)

    warm = [i for i, p in enumerate(plans) if p.warm]
    forkable = len(warm) >= 2 and adapter_for(seed.manifest).forks and sandbox.supports_channel
    if not forkable:
        warm = []
    forked: dict[int, RunReport] = {}

    def forked_job() -> None:
        forked.update(
            _forked_runs(seed, env, sandbox, [plans[i] for i in warm], limits, bytecode, select)
        )

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
    how = [_how(i, p, warm, forked) for i, p in enumerate(plans[: len(reports)])]
    return reports, how


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
    select: tuple[str, ...] | None = None,
) -> dict[int, RunReport]:
    """The original suite's runs `plans` (of the tests `select`, None: all) as forks of one
    collection of it, in a warm sandbox
    (`runners/inside/forked_runs.py`): the report of each run it served, by position in `plans`.

    A fork of a collected pytest process is what a warm run is after its own collection: the
    same interpreter and hash seed (the server's), the same modules imported by the same code,
    then the whole suite in the plan's order and seed, every test's protocol in a fresh
    process. What the runs no longer repeat is importing and collecting (import-time
    nondeterminism is drawn once for these runs; the cold runs draw it again each). A run the
    batch did not serve (it stopped: a run changed the workspace, the collection left threads
    running; the sandbox failed) is left out, and the caller runs it the ordinary way."""
    every_run = candidate_spec(
        [], list(select) if select is not None else None, [], limits.wall_seconds, repeat_all=True
    )
    spec = batch_spec([every_run], [(p.order, p.seed) for p in plans], SNAPSHOT_BYTES)
    ws = _workspace(seed, bytecode)
    try:
        report, _ = run_batch(
            sandbox,
            ws,
            seed.manifest,
            env,
            adapter=adapter_for(seed.manifest),
            limits=limits.with_wall(limits.wall_seconds * (len(plans) + 1)),
            test_ids=select,
            batch=spec,
        )
    except (SandboxError, OSError):
        return {}
    finally:
        shutil.rmtree(ws, ignore_errors=True)
    out: dict[int, RunReport] = {}
    for index in range(len(plans)):
        tag = run_tag(0, index)
        end = report.ends.get(tag)
        if tag not in report.reports or end is None or end["status"] not in ("ran", "timeout"):
            continue
        out[index] = replace(
            report.reports[tag], timed_out=end["status"] == "timeout", wall_time=end["wall"]
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


# The failure message of a test the plugin's per-test limit stopped (the in-sandbox plugin,
# `runners/inside/taskmint_pytest_report.py`, spells it too: it imports nothing of taskmint).
SLOW_MESSAGE = "taskmint: the test ran longer than its limit of"


def summarize(
    seed: SeedApp,
    env: Environment,
    reports: list[RunReport],
    *,
    runs: int,
    min_tests: int = 1,
    max_tests: int | None = None,
    hung: dict[str, str] | None = None,
    deselected: int = 0,
) -> Baseline:
    """Combine the runs: a test is stable if it passed every time, flaky if its results mixed.

    Failing, skipped, flaky and hung tests (`hung`: test id -> why, found by `_hung`) are
    excluded rather than fatal, each with its reason (`Baseline.excluded`): the seed is usable
    while at least `min_tests` tests pass every time. A test the per-test limit stopped counts
    as hung too, so no later run of the whole suite waits for it again.
    """
    hung = dict(hung or {})
    maps = [r.outcome_map() for r in reports]
    ids = sorted(set().union(*maps) - set(hung)) if maps else []
    stable, flaky, failing = [], [], []
    why: dict[str, str] = {}
    for tid in ids:
        outcomes = [m.get(tid, "missing") for m in maps]
        if set(outcomes) == {"passed"}:
            stable.append(tid)
            continue
        message = _message(reports, tid)
        if SLOW_MESSAGE in message:
            hung[tid] = f"slow: {message.strip()} (run.test_timeout)"
        elif "passed" in outcomes:
            flaky.append(tid)
            why[tid] = f"flaky: passed {outcomes.count('passed')} of {len(outcomes)} runs"
        else:
            failing.append(tid)
            why[tid] = _failure(outcomes, message)
    for tid, text in hung.items():
        if tid in flaky:
            flaky.remove(tid)
        if tid not in failing:
            failing.append(tid)
        why[tid] = text
    failing.sort()
    errors = sorted({e for r in reports for e in r.collection_errors})
    reason = ""
    stuck = [r for r in reports if r.timed_out]
    if stuck:
        ran = max(sum(x.outcome != "missing" for x in r.results) for r in stuck)
        reason = (
            f"the original suite did not finish within run.timeout={stuck[0].wall_time:.0f} s "
            f"({ran} of {max(len(r.results) for r in stuck)} tests had run"
            + (f"; {stuck[0].running} was running" if stuck[0].running else "")
            + "); raise run.timeout in taskmint.toml"
        )
    elif not any(r.complete for r in reports):
        tail = reports[-1].output_tail[-500:] if reports else ""
        reason = f"the original suite did not run to completion: {tail}"
    elif not stable:
        reason = "no test passes reliably on the original tree" + _examples(why, errors)
    elif len(stable) < min_tests:
        reason = (
            f"only {len(stable)} tests pass reliably on the original tree ({len(failing)} "
            f"failing, {len(flaky)} flaky), fewer than min_tests={min_tests}; fix the seed's "
            "dependencies or lower min_tests" + _examples(why, errors)
        )
    longest: dict[str, float] = {}
    for report in reports:
        for result in report.results:
            longest[result.test_id] = max(longest.get(result.test_id, 0.0), result.duration)
    cut: list[str] = []
    if not reason and max_tests is not None and len(stable) > max_tests:
        stable, cut = cut_suite(stable, max_tests)
        why.update((tid, f"cut: the suite has more than max_tests={max_tests}") for tid in cut)
    for error in errors:
        where, _, text = error.partition(": ")
        why[where] = f"collection error: {_gist(text)}"
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
        collected=len(set(ids) | set(hung)),
        deselected=deselected,
        hung=tuple(sorted(hung)),
        excluded=tuple(sorted(why.items())),
        plugin_errors=tuple(sorted({e for r in reports for e in r.plugin_errors})),
    )


def _message(reports: list[RunReport], tid: str) -> str:
    """The first message any run gave for `tid` (a failure's crash line, a skip's reason)."""
    for report in reports:
        for result in report.results:
            if result.test_id == tid and result.message:
                return result.message
    return ""


def _failure(outcomes: Sequence[str], message: str) -> str:
    """Why a test that never passed is excluded, from its outcomes and first message."""
    kind = max(set(outcomes), key=outcomes.count)
    label = {
        "skipped": "skipped",
        "xfailed": "xfail",
        "xpassed": "xpass",
        "error": "error",
        "missing": "not run",
    }.get(kind, "failed")
    text = " ".join(message.split()).removeprefix("Skipped: ")[:300]
    return f"{label}: {text}" if text else label


_EXCEPTION_LINE = re.compile(r"^(?:E\s+)?([A-Za-z_][\w.]*(?:Error|Exception|Exit)\b.*)$")


def _gist(text: str) -> str:
    """The line of a failure's text that says what went wrong (the last exception line of a
    traceback: `ModuleNotFoundError: No module named 'pytz'`), else its start."""
    for line in reversed(text.splitlines()):
        m = _EXCEPTION_LINE.match(line.strip())
        if m:
            return m.group(1)[:300]
    return " ".join(text.split())[:300]


def _examples(why: dict[str, str], errors: list[str]) -> str:
    """A few excluded tests and collection errors with their reasons, for a refusal."""
    out = ""
    if errors:
        where, _, text = errors[0].partition(": ")
        out = f"; {len(errors)} test files failed to collect ({where}: {_gist(text)})"
    parts = [f"{tid} ({text[:160]})" for tid, text in list(why.items())[:3]]
    return out + ("; e.g. " + "; ".join(parts) if parts else "")


_MISSING_MODULE = re.compile(r"No module named '([A-Za-z0-9_.]+)'")
_KINDS = (
    ("hung", "hung (stopped at the run's limit)", "they are left out of every run"),
    ("slow", "ran past run.test_timeout", "raise [run] test_timeout if they are slow but sound"),
    ("failed", "failed on the original", "check the seed's dependencies and environment"),
    ("error", "errored on the original", "check the seed's dependencies and environment"),
    ("skipped", "skipped", "the project's own skips (optional dependencies, platforms)"),
    ("xfail", "xfail", "marked expected-to-fail by the project"),
    ("xpass", "xpass", "marked expected-to-fail by the project"),
    ("flaky", "flaky across the original runs", "order- or state-dependent tests"),
    ("not run", "not run", "the run stopped before them"),
    ("cut", "cut", "the suite has more stable tests than max_tests"),
    ("collection error", "test files that did not collect", "fix the import error"),
)


def seed_report(baseline: Baseline, *, limit: int = 3) -> tuple[str, ...]:
    """What a person should know about a seed's original suite, one line each, saying what to
    do: the tests not kept grouped by why (with a few ids), dependencies the tests import that
    the environment lacks, and pytest plugins that failed to load. Empty when every test the
    project selects is kept."""
    lines: list[str] = []
    missing: dict[str, int] = {}
    for _, text in baseline.excluded:
        for name in _MISSING_MODULE.findall(text):
            missing[name.split(".")[0]] = missing.get(name.split(".")[0], 0) + 1
    for module, count in sorted(missing.items(), key=lambda kv: (-kv[1], kv[0])):
        lines.append(
            f'missing dependency: {count} test(s) or file(s) fail with "No module named '
            f"'{module}'\"; add its distribution to [seed] dependencies of taskmint.toml (pin "
            "the edited file with the seeds manifest's `manifest` key)"
        )
    for error in baseline.plugin_errors:
        lines.append(
            f"pytest plugin failed to load: {error[:300]}; pin a version that works with this "
            "pytest in [seed] dependencies"
        )
    groups: dict[str, list[tuple[str, str]]] = {}
    for tid, text in baseline.excluded:
        groups.setdefault(text.split(":", 1)[0], []).append((tid, text))
    for key, label, advice in _KINDS:
        items = groups.pop(key, [])
        if items:
            shown = "; ".join(
                f"{tid} ({text[len(key) + 1 :].strip()[:120]})" for tid, text in items[:limit]
            )
            more = f" and {len(items) - limit} more" if len(items) > limit else ""
            lines.append(f"{len(items)} excluded, {label} ({advice}): {shown}{more}")
    for key, items in sorted(groups.items()):
        lines.append(f"{len(items)} excluded ({key}): " + "; ".join(t for t, _ in items[:limit]))
    return tuple(lines)
