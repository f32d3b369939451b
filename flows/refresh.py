"""The refresh flow: seeds -> acquire -> envs -> index -> excise -> validate -> describe ->
calibrate -> leak scan -> publish, each stage a Prefect task.

Runs in Prefect's ephemeral mode (no server to start by hand): `python -m flows.refresh`, or
`taskmint refresh`. One bad seed becomes an error line in the summary; the others go on.

Production (see the README): `nightly` is the deployment's entry point (`prefect.yaml`, served
by `taskmint serve`); per-candidate results are cached by content hash (`flows.resume`), so a
rerun after a crash redoes no finished work; infrastructure errors are retried and counted
(`flows.runtime`), and alert a webhook past a threshold or on failure (`taskmint.alerts`); each
run leaves table and markdown artifacts (`flows.summary`).
"""

from __future__ import annotations

import dataclasses
import os
import time
from pathlib import Path
from typing import Any

from prefect import flow, get_run_logger, task, unmapped
from prefect.cache_policies import NO_CACHE

from flows.resume import ResultStore, config_fingerprint, content_key
from flows.runtime import (
    describe_error,
    failure_verdict,
    infra_task,
    is_infrastructure_error,
    make_task_runner,
    slot,
)
from flows.summary import publish_artifacts, summary_markdown, summary_rows
from taskmint.acquire.sources import SeedSource, acquire_source, load_seed_sources
from taskmint.alerts import AlertConfig, post_alert, should_alert
from taskmint.config import PipelineConfig, load_config
from taskmint.describe import load_rewriter
from taskmint.envs import build_environment
from taskmint.errors import SandboxError, TaskmintError
from taskmint.excise import ExciseResult, excise
from taskmint.index import index_seed
from taskmint.index.coverage import CoverageMap, coverage_map
from taskmint.lifecycle import reclaim_signals
from taskmint.pipeline import (
    MintResult,
    SeedSummary,
    apply_leak_scan,
    calibrate_with_models,
    mint_candidate,
    older_pytest,
    summarize_seed,
)
from taskmint.publish import PublishedVersion, publish
from taskmint.records import Candidate, CodeIndex, Environment, SeedApp, Task, Verdict
from taskmint.sandbox import open_sandbox
from taskmint.validate import Baseline, run_baseline, validate_batch
from taskmint.validate.baseline import seed_report

__all__ = ["RefreshResult", "nightly", "refresh", "run_refresh", "spend_of"]


@dataclasses.dataclass(frozen=True, slots=True, kw_only=True)
class RefreshResult:
    """What a refresh did: per-seed summaries and the published version."""

    summaries: tuple[SeedSummary, ...]
    published: PublishedVersion | None
    wall_time: float
    infra_errors: int = 0  # candidates and model attempts lost to infrastructure
    items: int = 0  # candidates and model attempts tried
    tasks: tuple[Task, ...] = ()


@task(name="acquire", cache_policy=NO_CACHE, persist_result=False)
def acquire_task(source: SeedSource, cache_dir: Path) -> SeedApp:
    """Fetch (folder, git commit, sdist or image) and snapshot one seed."""
    return acquire_source(source, cache_dir=cache_dir)


@infra_task(name="envs", retry_delay_seconds=5, cache_policy=NO_CACHE, persist_result=False)
def envs_task(seed: SeedApp, cache_dir: Path) -> Environment:
    """Build or reuse the seed's environment (retried: a failed download is infrastructure)."""
    return build_environment(seed.manifest, cache_dir=cache_dir)


@task(name="index", cache_policy=NO_CACHE, persist_result=False)
def index_task(seed: SeedApp) -> CodeIndex:
    """Index the seed's functions and methods."""
    return index_seed(seed)


@task(name="excise", cache_policy=NO_CACHE, persist_result=False)
def excise_task(
    seed: SeedApp, index: CodeIndex, config: PipelineConfig, cmap: CoverageMap | None
) -> ExciseResult:
    """Choose and make candidates."""
    return excise(
        seed,
        index,
        max_candidates=config.max_candidates_per_seed,
        min_body_lines=config.min_body_lines,
        random_seed=config.random_seed,
        strategies=config.strategies,
        knobs=config.knobs,
        coverage=cmap,
    )


@infra_task(name="baseline", tags=["sandbox"], cache_policy=NO_CACHE, persist_result=False)
def baseline_task(seed: SeedApp, env: Environment, config: PipelineConfig) -> Baseline:
    """Run the original suite several times to find its stable tests."""
    with slot("sandbox", config.workers), open_sandbox(config.sandbox) as sandbox:
        return run_baseline(
            seed,
            env,
            sandbox,
            runs=config.original_runs,
            limits=config.sandbox.limits.with_wall(seed.manifest.timeout),
            cache_dir=config.cache_dir,
            workers=config.workers,
            min_tests=config.min_tests,
            max_tests=config.max_tests,
        )


@infra_task(name="coverage-map", tags=["sandbox"], cache_policy=NO_CACHE, persist_result=False)
def coverage_task(
    seed: SeedApp,
    env: Environment,
    config: PipelineConfig,
    tests: tuple[str, ...] | None = None,
) -> CoverageMap | None:
    """Record which tests execute which lines (once per snapshot, cached), over `tests`
    (None: the whole suite)."""
    with slot("sandbox", config.workers), open_sandbox(config.sandbox) as sandbox:
        return coverage_map(
            seed,
            env,
            sandbox,
            limits=config.sandbox.limits.with_wall(4 * seed.manifest.timeout),
            cache_dir=config.cache_dir,
            tests=tests,
        )


@infra_task(name="validate-batch", tags=["sandbox"], cache_policy=NO_CACHE, persist_result=False)
def validate_task(
    candidates: list[Candidate],
    seed: SeedApp,
    env: Environment,
    baseline: Baseline,
    config: PipelineConfig,
    coverage: CoverageMap | None,
) -> dict[str, Verdict]:
    """Validate the seed's candidates together (`validate_batch`: forked runs where exact),
    those without a stored result; the mint tasks take their verdicts from here. A
    `sandbox_error` verdict is left out, so its mint task validates it again."""
    store = result_store(config)
    fingerprint = config_fingerprint(config)
    todo = [
        c
        for c in candidates
        if not store.has(content_key("mint", seed.snapshot_id, c.candidate_id, fingerprint))
    ]
    if not todo:
        return {}
    with slot("sandbox", config.workers), open_sandbox(config.sandbox) as sandbox:
        verdicts = validate_batch(
            todo,
            seed,
            env,
            baseline,
            sandbox,
            runs=config.broken_runs,
            limits=config.sandbox.limits.with_wall(seed.manifest.timeout),
            coverage=coverage,
            workers=config.workers,
        )
    return {v.candidate_id: v for v in verdicts if v.status != "sandbox_error"}


def result_store(config: PipelineConfig) -> ResultStore:
    """The run's persisted, content-addressed results (see `flows.resume`)."""
    return ResultStore(config.cache_dir / "results")


@infra_task(name="mint", tags=["sandbox"], cache_policy=NO_CACHE, persist_result=False)
def mint_task(
    candidate: Candidate,
    seed: SeedApp,
    env: Environment,
    baseline: Baseline,
    config: PipelineConfig,
    coverage: CoverageMap | None,
    verdicts: dict[str, Verdict] | None = None,
) -> MintResult:
    """Validate, describe and calibrate one candidate (a stored result is reused; a verdict
    `validate_task` gave it is not made again).

    A `sandbox_error` verdict is the machinery failing, not a verdict: it is raised, so Prefect
    retries it, and never stored.
    """
    store = result_store(config)
    key = content_key("mint", seed.snapshot_id, candidate.candidate_id, config_fingerprint(config))
    found, cached = store.get(key)
    if found:
        result: MintResult = cached
    else:
        try:
            rewriter = load_rewriter(config.models, config.describe_model, os.environ)
        except TaskmintError as exc:  # rewriting is optional: say why, keep the templates
            get_run_logger().warning("describe_model unusable, using templates: %s", exc)
            rewriter = None
        with slot("sandbox", config.workers), open_sandbox(config.sandbox) as sandbox:
            result = mint_candidate(
                candidate,
                seed,
                env,
                baseline,
                sandbox,
                config,
                coverage,
                rewriter=rewriter,
                verdict=(verdicts or {}).get(candidate.candidate_id),
            )
        if result.verdict.status == "sandbox_error":
            raise SandboxError(f"{candidate.candidate_id}: {result.verdict.reason}")
        store.put(key, result)
    get_run_logger().info(
        "[%s] %s %s: %s%s",
        seed.name,
        candidate.units[0],
        result.verdict.status,
        result.verdict.reason,
        " (stored result)" if found else "",
    )
    return result


@infra_task(name="leak-scan", tags=["sandbox"], cache_policy=NO_CACHE, persist_result=False)
def leak_task(
    results: list[MintResult],
    candidates: dict[str, Candidate],
    seed: SeedApp,
    env: Environment,
    config: PipelineConfig,
) -> list[MintResult]:
    """Reject tasks whose removed code is visible inside the sandbox (stored like mint)."""
    accepted = sorted(r.verdict.candidate_id for r in results if r.task is not None)
    key = content_key("leak", seed.snapshot_id, *accepted, config_fingerprint(config))

    def scan() -> list[MintResult]:
        with slot("sandbox", config.workers), open_sandbox(config.sandbox) as sandbox:
            return apply_leak_scan(results, candidates, seed, env, sandbox, config)

    scanned: list[MintResult] = result_store(config).cached(key, scan)
    for r in scanned:
        if r.verdict.status == "leak":
            get_run_logger().warning(
                "[%s] %s leak: %s", seed.name, r.verdict.candidate_id, r.verdict.reason
            )
    return scanned


@infra_task(name="calibrate-models", tags=["model"], cache_policy=NO_CACHE, persist_result=False)
def calibrate_task(
    tasks: list[Task], seed: SeedApp, env: Environment, config: PipelineConfig
) -> tuple[list[Task], int, int]:
    """Calibrate a seed's accepted tasks against the configured models (if any).

    Returns the tasks, the model attempts made and those lost to infrastructure errors. A
    seed's calibration is stored like a candidate's result, keyed by its tasks.
    """
    key = content_key(
        "calibrate",
        seed.snapshot_id,
        *sorted(t.instance_id for t in tasks),
        config_fingerprint(config),
    )

    def run() -> tuple[list[Task], list[str]]:
        with slot("model"), open_sandbox(config.sandbox) as sandbox:
            return calibrate_with_models(
                tasks, seed, env, sandbox, config, environ=os.environ, store=result_store(config)
            )

    calibrated, errors = result_store(config).cached(key, run)
    for error in errors[:20]:
        get_run_logger().warning("[%s] calibration: %s", seed.name, error)
    rows = [c for t in calibrated for c in t.calibration]
    attempts = sum(c.attempts for c in rows if not c.model.startswith("reference/"))
    return calibrated, attempts + len(errors), len(errors)


@task(name="publish", cache_policy=NO_CACHE, persist_result=False)
def publish_task(
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


@dataclasses.dataclass(slots=True)
class _SeedOutcome:
    summary: SeedSummary
    tasks: list[Task]
    seed_ref: tuple[SeedApp, str, str] | None
    items: int = 0
    infra_errors: int = 0


def _collect(futures: list[Any], candidates: list[Candidate]) -> list[MintResult]:
    """Each candidate's result; one whose task raised becomes a verdict saying what it raised
    (`failure_verdict`: `sandbox_error` for infrastructure after its retries, else
    `internal_error`)."""
    out = []
    for candidate, future in zip(candidates, futures, strict=True):
        value = future.result(raise_on_failure=False)
        if isinstance(value, BaseException):
            out.append(MintResult(verdict=failure_verdict(candidate.candidate_id, value)))
        else:
            out.append(value)
    return out


def _unscanned(results: list[MintResult], exc: BaseException) -> list[MintResult]:
    """The results with every accepted task turned into the failure of the leak scan that
    could not vouch for it (`failure_verdict`)."""
    return [
        r if r.task is None else MintResult(verdict=failure_verdict(r.verdict.candidate_id, exc))
        for r in results
    ]


def _original(seed: SeedApp, env: Environment, config: PipelineConfig) -> tuple[Baseline, Any]:
    """The original runs, and the coverage run beside them (a future): it takes the worker
    that the odd original run and the bytecode build leave idle. It is waited for either way,
    and its result (or error) only counts when the original suite is usable."""
    cmap_future = coverage_task.submit(seed, env, config)
    try:
        baseline = baseline_task(seed, env, config)
    finally:
        cmap_future.wait()
    return baseline, cmap_future


def _with_tests(summary: SeedSummary, baseline: Baseline) -> SeedSummary:
    """The summary with what the seed's original suite gave: tests selected by the project,
    deselected, kept and excluded, and the per-seed report (`seed_report`)."""
    return dataclasses.replace(
        summary,
        tests_kept=baseline.tests_kept,
        tests_excluded=baseline.tests_excluded,
        tests_selected=baseline.collected,
        tests_deselected=baseline.deselected,
        report=seed_report(baseline),
    )


def _one_seed(source: SeedSource, config: PipelineConfig) -> _SeedOutcome:
    logger = get_run_logger()
    started = time.monotonic()
    try:
        seed = acquire_task(source, config.cache_dir)
        env = envs_task(seed, config.cache_dir)
        index = index_task(seed)
        baseline, cmap_future = _original(seed, env, config)
        # A suite that breaks on pytest itself runs again under older pytests (see
        # `older_pytest`); the one that keeps the most tests is kept.
        tried = seed, baseline
        while (older := older_pytest(tried[0].manifest, tried[1])) is not None:
            logger.warning(
                "[%s] the suite breaks on pytest itself; again under pytest%s",
                seed.name,
                older.pytest,
            )
            again = dataclasses.replace(seed, manifest=older)
            env_again = envs_task(again, config.cache_dir)
            baseline_again, future_again = _original(again, env_again, config)
            tried = again, baseline_again
            if baseline_again.tests_kept > baseline.tests_kept:
                seed, env, baseline, cmap_future = again, env_again, baseline_again, future_again
        cmap = cmap_future.result() if baseline.usable else None
        if cmap is None and baseline.usable and baseline.hung:
            # the whole suite's coverage run waited for a test that hangs: again without it
            cmap = coverage_task(seed, env, config, baseline.full_request)
        excised = excise_task(seed, index, config, cmap)
    except Exception as exc:  # one seed's failure is its own: recorded, the others go on
        reason = str(exc) if isinstance(exc, TaskmintError) else describe_error(exc)
        logger.error("seed %s skipped: %s", source.label, reason)
        summary = summarize_seed(source.label, [], started, error=reason)
        lost = int(is_infrastructure_error(exc))  # a seed lost to infrastructure counts too
        return _SeedOutcome(summary, [], None, items=lost, infra_errors=lost)
    logger.info(
        "[%s] %d units, %d files skipped, %d candidates; original: %d tests selected by the "
        "project (%d deselected): %d stable, %d flaky, %d failing (%d hung), %d cut",
        seed.name,
        len(index.units),
        len(index.skipped),
        len(excised.candidates),
        baseline.collected,
        baseline.deselected,
        len(baseline.stable_passed),
        len(baseline.flaky),
        len(baseline.failing),
        len(baseline.hung),
        len(baseline.cut),
    )
    for line in seed_report(baseline):
        logger.warning("[%s] %s", seed.name, line)
    if not baseline.usable:
        logger.error("[%s] original suite unusable: %s", seed.name, baseline.reason)
        summary = summarize_seed(seed.name, [], started, error=baseline.reason)
        return _SeedOutcome(_with_tests(summary, baseline), [], None)
    candidates = list(excised.candidates)
    try:
        verdicts = validate_task(candidates, seed, env, baseline, config, cmap)
    except Exception as exc:  # each mint task then validates its own candidate
        logger.warning("[%s] batch validation failed, validating one by one: %s", seed.name, exc)
        verdicts = {}
    futures = mint_task.map(
        candidates,
        seed=seed,
        env=env,
        baseline=baseline,
        config=config,
        coverage=unmapped(cmap),
        verdicts=unmapped(verdicts),
    )
    results = _collect(list(futures), candidates)
    by_id = {c.candidate_id: c for c in excised.candidates}
    try:
        results = leak_task(results, by_id, seed, env, config)
    except Exception as exc:  # the scan could not run: its tasks cannot be vouched for
        results = _unscanned(results, exc)
    tasks = [r.task for r in results if r.task is not None]
    items = len(results)
    infra = sum(r.verdict.status == "sandbox_error" for r in results)
    if config.models is not None and tasks:
        try:
            tasks, attempts, lost = calibrate_task(tasks, seed, env, config)
        except Exception as exc:  # a bug or an outage in calibration: the tasks stay
            logger.error("[%s] calibration failed: %s", seed.name, describe_error(exc))
            attempts = lost = 1
        items += attempts
        infra += lost
    summary = summarize_seed(
        seed.name, results, started, strategies={c: by_id[c].strategy for c in by_id}
    )
    summary = _with_tests(summary, baseline)
    logger.info(
        "[%s] %d/%d accepted in %.0fs",
        seed.name,
        summary.accepted,
        summary.candidates,
        summary.wall_time,
    )
    return _SeedOutcome(summary, tasks, (seed, env.env_id, env.python_version), items, infra)


def spend_of(tasks: list[Task]) -> dict[str, float | int]:
    """Rollouts, tokens and dollars the tasks' calibration rows record."""
    rows = [c for t in tasks for c in t.calibration]
    return {
        "rollouts": sum(c.attempts for c in rows),
        "model_rollouts": sum(c.attempts for c in rows if not c.model.startswith("reference/")),
        "tokens": sum(c.tokens for c in rows),
        "cost_usd": round(sum(c.cost for c in rows), 4),
    }


def _alerts(config: PipelineConfig) -> AlertConfig:
    return AlertConfig(
        webhook_url=config.alert_webhook, infra_error_threshold=config.infra_error_threshold
    )


def alert_failure(config: PipelineConfig, flow_name: str, exc: BaseException) -> None:
    """Post the failure of a run to the configured webhook (if any)."""
    if not config.alert_webhook:
        return
    outcome = post_alert(
        _alerts(config),
        f"taskmint: {flow_name} failed",
        [f"{type(exc).__name__}: {exc}"[:1000]],
        {"output": config.output_root, "seeds": config.seeds_manifest},
    )
    if not outcome.sent:
        get_run_logger().warning("alert not delivered: %s", outcome.error)


def alert_infra_rate(config: PipelineConfig, flow_name: str, infra: int, items: int) -> bool:
    """Post when the infrastructure error rate passes the threshold; whether it did."""
    alerts = _alerts(config)
    if not config.alert_webhook or not should_alert(infra, items, alerts):
        return False
    outcome = post_alert(
        alerts,
        f"taskmint: {flow_name}: infrastructure error rate {infra / items:.0%}",
        [
            f"{infra} of {items} work items failed on infrastructure (threshold "
            f"{alerts.infra_error_threshold:.0%}): sandboxes or model endpoints are failing."
        ],
        {"output": config.output_root, "seeds": config.seeds_manifest},
    )
    if not outcome.sent:
        get_run_logger().warning("alert not delivered: %s", outcome.error)
    return outcome.sent


@flow(name="taskmint-refresh", log_prints=True)
def refresh(config: PipelineConfig) -> RefreshResult:
    """Mint tasks from every seed in the seeds manifest and publish a dataset version."""
    try:
        return _refresh(config)
    except Exception as exc:
        alert_failure(config, "refresh", exc)
        raise


def _refresh(config: PipelineConfig) -> RefreshResult:
    reclaim_signals()  # the CLI's prompt stop, not the flow engine's wind-down
    started = time.monotonic()
    summaries: list[SeedSummary] = []
    tasks: list[Task] = []
    seeds: list[tuple[SeedApp, str, str]] = []
    items = infra = 0
    for source in load_seed_sources(config.seeds_manifest):
        outcome = _one_seed(source, config)
        summaries.append(outcome.summary)
        tasks.extend(outcome.tasks)
        items += outcome.items
        infra += outcome.infra_errors
        if outcome.seed_ref is not None:
            seeds.append(outcome.seed_ref)
    published = publish_task(tasks, seeds, config) if tasks else None
    wall = round(time.monotonic() - started, 1)
    spend = {**spend_of(tasks), "infra_errors": infra, "work_items": items}
    publish_artifacts(
        "taskmint-refresh",
        summary_markdown(
            "taskmint refresh",
            summaries,
            tasks,
            spend,
            wall,
            str(published.path) if published else None,
        ),
        summary_rows(summaries),
    )
    alert_infra_rate(config, "refresh", infra, items)
    return RefreshResult(
        summaries=tuple(summaries),
        published=published,
        wall_time=wall,
        infra_errors=infra,
        items=items,
        tasks=tuple(tasks),
    )


def run_refresh(
    config: PipelineConfig,
    task_runner: str = "threads",
    dask_address: str | None = None,
    **options: Any,
) -> RefreshResult:
    """Run the refresh flow on a thread pool (or Dask) sized by `config.workers`."""
    runner = make_task_runner(task_runner, workers=config.workers, address=dask_address)
    return refresh.with_options(task_runner=runner, **options)(config)


def output_root(uri: str) -> Path:
    """A local path or `file://` URI as a path (other schemes are refused, with the reason)."""
    if uri.startswith("file://"):
        return Path(uri[len("file://") :])
    if "://" in uri:
        raise TaskmintError(
            f"output URI {uri!r}: only local paths and file:// URIs are supported; mount remote "
            "storage and pass its path"
        )
    return Path(uri)


@flow(name="taskmint-nightly-refresh", log_prints=True)
def nightly(
    seeds: str = "seed_apps/seeds.toml",
    output: str = "output",
    models: str | None = None,
    bands: dict[str, float] | None = None,
    max_candidates: int | None = None,
    workers: int = 2,
    wall_seconds: float | None = None,
    dataset_name: str = "taskmint",
    alert_webhook: str | None = None,
    task_runner: str = "threads",
    dask_address: str | None = None,
    config_file: str | None = None,
) -> dict[str, Any]:
    """The deployment's entry point: JSON parameters -> a refresh -> a published version.

    `bands` maps band names to their lowest solve rate; `wall_seconds` is the per-run sandbox
    limit; `alert_webhook` defaults to the TASKMINT_ALERT_WEBHOOK variable.
    """
    webhook = alert_webhook or os.environ.get("TASKMINT_ALERT_WEBHOOK")
    try:
        config = _nightly_config(
            seeds,
            output,
            models,
            bands,
            max_candidates,
            workers,
            dataset_name,
            webhook,
            config_file,
            wall_seconds,
        )
    except Exception as exc:  # a bad parameter: alert too (the config holds no webhook yet)
        if webhook:
            post_alert(
                AlertConfig(webhook_url=webhook),
                "taskmint: nightly refresh failed",
                [f"{type(exc).__name__}: {exc}"[:1000]],
            )
        raise
    runner = make_task_runner(task_runner, workers=config.workers, address=dask_address)
    result = refresh.with_options(task_runner=runner)(config)
    return {
        "published": str(result.published.path) if result.published else None,
        "tasks": result.published.tasks if result.published else 0,
        "infra_errors": result.infra_errors,
        "wall_time": result.wall_time,
    }


def _nightly_config(
    seeds: str,
    output: str,
    models: str | None,
    bands: dict[str, float] | None,
    max_candidates: int | None,
    workers: int,
    dataset_name: str,
    webhook: str | None,
    config_file: str | None,
    wall_seconds: float | None,
) -> PipelineConfig:
    config = load_config(
        Path(config_file) if config_file else None,
        seeds_manifest=seeds,
        output_root=output_root(output),
        models=models,
        bands=bands,
        max_candidates_per_seed=max_candidates,
        workers=workers,
        dataset_name=dataset_name,
        alert_webhook=webhook,
    )
    if wall_seconds is not None:
        config = dataclasses.replace(
            config,
            sandbox=dataclasses.replace(
                config.sandbox, limits=config.sandbox.limits.with_wall(wall_seconds)
            ),
        )
    return config


if __name__ == "__main__":  # pragma: no cover - `make demo` goes through the CLI
    from taskmint.cli import main

    raise SystemExit(main(["refresh"]))
