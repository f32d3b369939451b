"""A refresh: every seed of the manifest -> its candidates minted in one fixed order -> one
published dataset version. Prefect-free: the steps run through an `Executor` (`LocalExecutor`
here, Prefect tasks in `taskmint.flows`). One bad seed becomes an error line in the summary;
one bad candidate a verdict; the others go on.

Per seed (`mint_seed`): prepare (`prepare_seed`) -> excise -> validate every candidate ->
scan the accepted ones for leaks -> grade the survivors' mutants (`gate_candidates`) ->
describe, run the reference solvers and apply the test-strength gate on each survivor (in
parallel) -> calibrate the tasks against the configured models.
"""

from __future__ import annotations

import contextvars
import logging
import time
from collections.abc import Sequence
from concurrent.futures import ThreadPoolExecutor
from dataclasses import asdict, dataclass, replace
from typing import Any

from taskmint.acquire.sources import SeedSource, load_seed_sources
from taskmint.config import PipelineConfig
from taskmint.errors import TaskmintError
from taskmint.excise import ExciseResult
from taskmint.pipeline.alerts import alert_infra_rate
from taskmint.pipeline.calibration import calibrate_seed, spend_of
from taskmint.pipeline.failures import describe_error, failure_verdict, is_infrastructure_error
from taskmint.pipeline.mint import (
    MintResult,
    gate_candidates,
    mint_validated,
    scan_leaks,
    validate_candidates,
)
from taskmint.pipeline.progress import current
from taskmint.pipeline.seed import PreparedSeed, describe_prepared, excise_seed, prepare_seed
from taskmint.pipeline.steps import Executor, step
from taskmint.pipeline.summary import (
    CostReading,
    SeedSummary,
    peak_memory,
    record_seed,
    summarize_seed,
    with_tests,
)
from taskmint.publish import PublishedVersion, publish
from taskmint.publish.report import write_report, write_run_record
from taskmint.records import Candidate, SeedApp, Task

__all__ = [
    "RefreshResult",
    "SeedOutcome",
    "mint_batch",
    "mint_seed",
    "publish_version",
    "refresh",
    "result_or_failure",
]

log = logging.getLogger("taskmint.pipeline")


@dataclass(frozen=True, slots=True, kw_only=True)
class RefreshResult:
    """What a refresh did: per-seed summaries and the published version."""

    summaries: tuple[SeedSummary, ...]
    published: PublishedVersion | None
    wall_time: float
    infra_errors: int = 0  # candidates and model attempts lost to infrastructure
    items: int = 0  # candidates and model attempts tried
    tasks: tuple[Task, ...] = ()
    spend: tuple[tuple[str, float | int], ...] = ()


@dataclass(frozen=True, slots=True, kw_only=True)
class SeedOutcome:
    """What one seed gave: its summary, its tasks, what `publish` needs of it, and the work
    items tried and lost to infrastructure."""

    summary: SeedSummary
    tasks: tuple[Task, ...] = ()
    seed_ref: tuple[SeedApp, str, str] | None = None
    items: int = 0
    infra_errors: int = 0


@step("publish")
def publish_version(
    tasks: list[Task], seeds: list[tuple[SeedApp, str, str]], config: PipelineConfig
) -> PublishedVersion:
    """Write the dataset version."""
    return publish(
        tasks,
        seeds,
        root=config.datasets_dir,
        name=config.dataset_name,
        shard_rows=config.shard_rows,
    )


def report_version(path: str, run: dict[str, Any]) -> None:
    """The run's record and the version's report (`publish.report`) beside the version; a
    failure here is logged, never the run's."""
    try:
        write_run_record(path, run)
        log.info("report: %s", write_report(path))
    except Exception as exc:  # the version is published: the page is a reading aid
        log.error("the report of %s could not be written: %s", path, describe_error(exc))


def result_or_failure(value: MintResult | BaseException, candidate: Candidate) -> MintResult:
    """A mapped step's value, or the failure verdict of the exception it raised."""
    if isinstance(value, BaseException):
        return MintResult(verdict=failure_verdict(candidate.candidate_id, value))
    return value


def mint_batch(
    ex: Executor, prepared: PreparedSeed, candidates: Sequence[Candidate], config: PipelineConfig
) -> list[MintResult]:
    """validate -> leak scan -> describe and reference solvers, for the seed's candidates; a
    result per candidate, in their order (see the module docstring)."""
    seed = prepared.seed.name
    progress = current()
    try:
        verdicts = ex.call(validate_candidates, list(candidates), prepared, config)
    except Exception as exc:  # the step failed after its retries: every candidate says why
        verdicts = {c.candidate_id: failure_verdict(c.candidate_id, exc) for c in candidates}
    accepted = [c for c in candidates if verdicts[c.candidate_id].accepted]
    progress.candidates_done(seed, len(candidates) - len(accepted), len(candidates), 0)
    try:
        leaks = ex.call(scan_leaks, accepted, prepared, config)
    except Exception as exc:  # the scan could not run: its tasks cannot be vouched for
        leaks = {}
        for c in accepted:
            verdicts[c.candidate_id] = failure_verdict(c.candidate_id, exc)
        accepted = []
    for c in accepted:
        if c.candidate_id in leaks:
            progress.candidate_finished(seed, False)
            where = leaks[c.candidate_id]
            verdicts[c.candidate_id] = replace(
                verdicts[c.candidate_id], status="leak", reason=f"removed code visible at {where}"
            )
    survivors = [c for c in accepted if c.candidate_id not in leaks]
    try:  # the survivors' mutants graded together; `mint_validated` applies the gate
        ex.call(
            gate_candidates, [(c, verdicts[c.candidate_id]) for c in survivors], prepared, config
        )
    except Exception as exc:  # each is then measured alone in `mint_validated`
        log.warning("[%s] test-strength batch failed: %s", seed, describe_error(exc))
    minted = ex.map(
        mint_validated, [(c, verdicts[c.candidate_id]) for c in survivors], prepared, config
    )
    by_id = {
        c.candidate_id: result_or_failure(v, c) for c, v in zip(survivors, minted, strict=True)
    }
    results = [
        by_id.get(c.candidate_id) or MintResult(verdict=verdicts[c.candidate_id])
        for c in candidates
    ]
    for c, r in zip(candidates, results, strict=True):
        log.info("[%s] %s %s: %s", seed, c.units[0], r.verdict.status, r.verdict.reason)
    ok = sum(r.task is not None for r in results)
    progress.candidates_done(seed, len(candidates), len(candidates), ok)
    return results


def _seed_error(source: SeedSource, exc: BaseException, cost: CostReading) -> SeedOutcome:
    """A seed that could not be prepared: its row is named as the seeds file names it, and
    its reason says which pin failed (a git commit, a version) when the name does not."""
    reason = str(exc) if isinstance(exc, TaskmintError) else describe_error(exc)
    if source.label != source.name and source.label not in reason:
        reason = f"{source.label}: {reason}"
    log.error("seed %s skipped: %s", source.name, reason)
    lost = int(is_infrastructure_error(exc))  # a seed lost to infrastructure counts too
    summary = cost.charge(summarize_seed(source.name, [], cost.wall, error=reason))
    return SeedOutcome(summary=summary, items=lost, infra_errors=lost)


def mint_seed(
    ex: Executor,
    source: SeedSource,
    config: PipelineConfig,
    *,
    prepared: PreparedSeed | None = None,
    excised: ExciseResult | None = None,
) -> SeedOutcome:
    """One seed's tasks, in the fixed order of the module docstring (`prepared` and `excised`
    when the caller has them already)."""
    cost = CostReading.now()
    started = cost.wall
    try:
        if prepared is None:
            prepared = prepare_seed(source, config, ex)
        if prepared is None:  # pragma: no cover - no language filter: every seed is prepared
            raise TaskmintError(f"seed {source.label} was not prepared")
        if excised is None:
            excised = ex.call(excise_seed, prepared, config)
    except Exception as exc:  # one seed's failure is its own: recorded, the others go on
        return _seed_error(source, exc, cost)
    prepared_at = time.monotonic()
    seed = prepared.seed
    for line in describe_prepared(prepared, len(excised.candidates)):
        log.info("%s", line)
    if not prepared.baseline.usable:
        log.error("[%s] original suite unusable: %s", seed.name, prepared.baseline.reason)
        summary = summarize_seed(seed.name, [], started, error=prepared.baseline.reason)
        summary = cost.charge(with_tests(summary, prepared.baseline), prepared_at)
        return SeedOutcome(summary=summary)
    candidates = list(excised.candidates)
    results = mint_batch(ex, prepared, candidates, config)
    tasks = [r.task for r in results if r.task is not None]
    items = len(results)
    infra = sum(r.verdict.status == "sandbox_error" for r in results)
    if config.models is not None and tasks:
        try:
            outcome = ex.call(calibrate_seed, tasks, prepared, config)
        except Exception as exc:  # a bug or an outage in calibration: the tasks stay
            log.error("[%s] calibration failed: %s", seed.name, describe_error(exc))
            items, infra = items + 1, infra + 1
        else:
            for error in outcome.errors[:20]:
                log.warning("[%s] calibration: %s", seed.name, error)
            tasks = list(outcome.tasks)
            items += outcome.attempts
            infra += len(outcome.errors)
    summary = summarize_seed(
        seed.name,
        results,
        started,
        strategies={c.candidate_id: c.strategy for c in candidates},
        names={c.candidate_id: f"{c.strategy} {c.units[0]}" for c in candidates},
    )
    summary = cost.charge(with_tests(summary, prepared.baseline), prepared_at)
    log.info(
        "[%s] %d/%d accepted in %.0fs (fixed %.0fs; host CPU %.0fs; %d sandbox runs, %.0fs)",
        seed.name,
        summary.accepted,
        summary.candidates,
        summary.wall_time,
        summary.prepare_seconds,
        summary.host_seconds,
        summary.sandbox_runs,
        summary.sandbox_seconds,
    )
    return SeedOutcome(
        summary=summary,
        tasks=tuple(tasks),
        seed_ref=prepared.seed_ref,
        items=items,
        infra_errors=infra,
    )


def refresh(config: PipelineConfig, ex: Executor) -> RefreshResult:
    """Mint tasks from every seed in the seeds manifest and publish a dataset version."""
    started = time.monotonic()
    progress = current()
    summaries: list[SeedSummary] = []
    tasks: list[Task] = []
    seeds: list[tuple[SeedApp, str, str]] = []
    items = infra = 0
    sources = load_seed_sources(config.seeds_manifest)
    stamp = time.strftime("%Y%m%d-%H%M%S", time.gmtime())
    seed_log = config.output_root / "runs" / f"refresh-{stamp}.jsonl"

    def one(i: int, source: SeedSource) -> SeedOutcome:
        progress.seed_started(source.label, i, len(sources))
        outcome = mint_seed(ex, source, config)
        s = outcome.summary
        progress.seed_finished(s.seed, s.accepted, s.candidates, s.error)
        try:
            record_seed(
                seed_log,
                s,
                run=stamp,
                seeds_file=str(config.seeds_manifest),
                parallel_seeds=config.parallel_seeds,
            )
        except OSError as exc:  # the log is a reading aid; the run goes on without it
            log.warning("could not write %s: %s", seed_log, exc)
        return outcome

    if config.parallel_seeds > 1 and len(sources) > 1:
        # Seeds at once, each on its own thread: a seed's serial work (an environment, the
        # index, the excision, the statements) overlaps another's sandbox runs, and on a
        # cluster each seed's steps go to whichever worker is free. The outcomes are taken in
        # the seeds file's order, so the version is the same as a run of one seed at a time.
        # Each thread runs in a copy of this one's context: an orchestrator's run context
        # (Prefect's flow run) lives in context variables, and a seed's steps belong to it.
        contexts = [contextvars.copy_context() for _ in sources]
        with ThreadPoolExecutor(config.parallel_seeds, thread_name_prefix="seed") as pool:
            outcomes = list(
                pool.map(lambda c, i, s: c.run(one, i, s), contexts, range(len(sources)), sources)
            )
    else:
        outcomes = [one(i, source) for i, source in enumerate(sources)]
    for outcome in outcomes:
        summaries.append(outcome.summary)
        tasks.extend(outcome.tasks)
        items += outcome.items
        infra += outcome.infra_errors
        if outcome.seed_ref is not None:
            seeds.append(outcome.seed_ref)
    published = ex.call(publish_version, tasks, seeds, config) if tasks else None
    wall = round(time.monotonic() - started, 1)
    spend = {**spend_of(tasks), "infra_errors": infra, "work_items": items}
    if published is not None and published.created:
        run = {
            "kind": "refresh",
            "seeds": [asdict(s) for s in summaries],
            "spend": spend,
            # above 1, a seed's host and sandbox figures include the seeds beside it
            "parallel_seeds": config.parallel_seeds,
        }
        report_version(published.path, {**run, "wall_time": wall, **peak_memory()})
    alert_infra_rate(config, "refresh", infra, items)
    return RefreshResult(
        summaries=tuple(summaries),
        published=published,
        wall_time=wall,
        infra_errors=infra,
        items=items,
        tasks=tuple(tasks),
        spend=tuple(spend.items()),
    )
