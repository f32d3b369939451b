"""The refresh flow: seeds -> acquire -> envs -> index -> excise -> validate -> describe ->
calibrate -> leak scan -> publish, each stage a Prefect task.

Runs in Prefect's ephemeral mode (no server to start by hand): `python -m flows.refresh`, or
`taskmint refresh`. One bad seed becomes an error line in the summary; the others go on.
"""

from __future__ import annotations

import dataclasses
import os
import time
from pathlib import Path
from typing import Any

from prefect import flow, get_run_logger, task, unmapped
from prefect.cache_policies import NO_CACHE
from prefect.task_runners import ThreadPoolTaskRunner

from taskmint.acquire.sources import SeedSource, acquire_source, load_seed_sources
from taskmint.config import PipelineConfig
from taskmint.describe import load_rewriter
from taskmint.envs import build_environment
from taskmint.errors import TaskmintError
from taskmint.excise import ExciseResult, excise
from taskmint.index import index_seed
from taskmint.index.coverage import CoverageMap, coverage_map
from taskmint.pipeline import (
    MintResult,
    SeedSummary,
    apply_leak_scan,
    calibrate_with_models,
    mint_candidate,
    summarize_seed,
)
from taskmint.publish import PublishedVersion, publish
from taskmint.records import Candidate, CodeIndex, Environment, SeedApp, Task
from taskmint.sandbox import open_sandbox
from taskmint.validate import Baseline, run_baseline

__all__ = ["RefreshResult", "refresh", "run_refresh"]


@dataclasses.dataclass(frozen=True, slots=True, kw_only=True)
class RefreshResult:
    """What a refresh did: per-seed summaries and the published version."""

    summaries: tuple[SeedSummary, ...]
    published: PublishedVersion | None
    wall_time: float


@task(name="acquire", cache_policy=NO_CACHE, persist_result=False)
def acquire_task(source: SeedSource, cache_dir: Path) -> SeedApp:
    """Fetch (folder, git commit, sdist or image) and snapshot one seed."""
    return acquire_source(source, cache_dir=cache_dir)


@task(name="envs", retries=1, retry_delay_seconds=5, cache_policy=NO_CACHE, persist_result=False)
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


@task(name="baseline", cache_policy=NO_CACHE, persist_result=False)
def baseline_task(seed: SeedApp, env: Environment, config: PipelineConfig) -> Baseline:
    """Run the original suite several times to find its stable tests."""
    with open_sandbox(config.sandbox) as sandbox:
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


@task(name="coverage-map", cache_policy=NO_CACHE, persist_result=False)
def coverage_task(seed: SeedApp, env: Environment, config: PipelineConfig) -> CoverageMap | None:
    """Record which tests execute which lines (once per snapshot, cached)."""
    with open_sandbox(config.sandbox) as sandbox:
        return coverage_map(
            seed,
            env,
            sandbox,
            limits=config.sandbox.limits.with_wall(4 * seed.manifest.timeout),
            cache_dir=config.cache_dir,
        )


@task(name="mint", cache_policy=NO_CACHE, persist_result=False)
def mint_task(
    candidate: Candidate,
    seed: SeedApp,
    env: Environment,
    baseline: Baseline,
    config: PipelineConfig,
    coverage: CoverageMap | None,
) -> MintResult:
    """Validate, describe and calibrate one candidate."""
    try:
        rewriter = load_rewriter(config.models, config.describe_model, os.environ)
    except TaskmintError as exc:  # rewriting is optional: say why, keep the templates
        get_run_logger().warning("describe_model unusable, using templates: %s", exc)
        rewriter = None
    with open_sandbox(config.sandbox) as sandbox:
        result = mint_candidate(
            candidate, seed, env, baseline, sandbox, config, coverage, rewriter=rewriter
        )
    get_run_logger().info(
        "[%s] %s %s: %s",
        seed.name,
        candidate.units[0],
        result.verdict.status,
        result.verdict.reason,
    )
    return result


@task(name="leak-scan", cache_policy=NO_CACHE, persist_result=False)
def leak_task(
    results: list[MintResult],
    candidates: dict[str, Candidate],
    seed: SeedApp,
    env: Environment,
    config: PipelineConfig,
) -> list[MintResult]:
    """Reject tasks whose removed code is visible inside the sandbox."""
    with open_sandbox(config.sandbox) as sandbox:
        scanned = apply_leak_scan(results, candidates, seed, env, sandbox, config)
    for r in scanned:
        if r.verdict.status == "leak":
            get_run_logger().warning(
                "[%s] %s leak: %s", seed.name, r.verdict.candidate_id, r.verdict.reason
            )
    return scanned


@task(name="calibrate-models", cache_policy=NO_CACHE, persist_result=False)
def calibrate_task(
    tasks: list[Task], seed: SeedApp, env: Environment, config: PipelineConfig
) -> list[Task]:
    """Calibrate a seed's accepted tasks against the configured models (if any)."""
    with open_sandbox(config.sandbox) as sandbox:
        calibrated, errors = calibrate_with_models(
            tasks, seed, env, sandbox, config, environ=os.environ
        )
    for error in errors[:20]:
        get_run_logger().warning("[%s] calibration: %s", seed.name, error)
    return calibrated


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


def _one_seed(
    source: SeedSource, config: PipelineConfig
) -> tuple[SeedSummary, list[Task], tuple[SeedApp, str, str] | None]:
    logger = get_run_logger()
    started = time.monotonic()
    try:
        seed = acquire_task(source, config.cache_dir)
        env = envs_task(seed, config.cache_dir)
        index = index_task(seed)
        baseline = baseline_task(seed, env, config)
        cmap = coverage_task(seed, env, config) if baseline.usable else None
        excised = excise_task(seed, index, config, cmap)
    except TaskmintError as exc:
        logger.error("seed %s skipped: %s", source.label, exc)
        return summarize_seed(source.label, [], started, error=str(exc)), [], None
    logger.info(
        "[%s] %d units, %d files skipped, %d candidates; original: %d stable, %d flaky, "
        "%d failing tests, %d cut",
        seed.name,
        len(index.units),
        len(index.skipped),
        len(excised.candidates),
        len(baseline.stable_passed),
        len(baseline.flaky),
        len(baseline.failing),
        len(baseline.cut),
    )
    kept, excluded = baseline.tests_kept, baseline.tests_excluded
    if not baseline.usable:
        logger.error("[%s] original suite unusable: %s", seed.name, baseline.reason)
        summary = summarize_seed(seed.name, [], started, error=baseline.reason)
        return dataclasses.replace(summary, tests_kept=kept, tests_excluded=excluded), [], None
    futures = mint_task.map(
        list(excised.candidates),
        seed=seed,
        env=env,
        baseline=baseline,
        config=config,
        coverage=unmapped(cmap),
    )
    results = [f.result() for f in futures]
    by_id = {c.candidate_id: c for c in excised.candidates}
    results = leak_task(results, by_id, seed, env, config)
    tasks = [r.task for r in results if r.task is not None]
    if config.models is not None and tasks:
        tasks = calibrate_task(tasks, seed, env, config)
    summary = summarize_seed(
        seed.name, results, started, strategies={c: by_id[c].strategy for c in by_id}
    )
    summary = dataclasses.replace(summary, tests_kept=kept, tests_excluded=excluded)
    logger.info(
        "[%s] %d/%d accepted in %.0fs",
        seed.name,
        summary.accepted,
        summary.candidates,
        summary.wall_time,
    )
    return summary, tasks, (seed, env.env_id, env.python_version)


@flow(name="taskmint-refresh", log_prints=True)
def refresh(config: PipelineConfig) -> RefreshResult:
    """Mint tasks from every seed in the seeds manifest and publish a dataset version."""
    started = time.monotonic()
    summaries: list[SeedSummary] = []
    tasks: list[Task] = []
    seeds: list[tuple[SeedApp, str, str]] = []
    for source in load_seed_sources(config.seeds_manifest):
        summary, seed_tasks, seed_ref = _one_seed(source, config)
        summaries.append(summary)
        tasks.extend(seed_tasks)
        if seed_ref is not None:
            seeds.append(seed_ref)
    published = publish_task(tasks, seeds, config) if tasks else None
    return RefreshResult(
        summaries=tuple(summaries),
        published=published,
        wall_time=round(time.monotonic() - started, 1),
    )


def run_refresh(config: PipelineConfig, **options: Any) -> RefreshResult:
    """Run the refresh flow with a thread pool sized by `config.workers`."""
    pool: Any = ThreadPoolTaskRunner(max_workers=config.workers)
    runner = refresh.with_options(task_runner=pool, **options)
    return runner(config)


if __name__ == "__main__":  # pragma: no cover - `make demo` goes through the CLI
    from taskmint.cli import main

    raise SystemExit(main(["refresh"]))
