"""The refresh flow: `taskmint.pipeline.refresh` with each step a Prefect task.

Runs in Prefect's ephemeral mode (no server to start by hand): `taskmint refresh`. `nightly` is
the deployment's entry point (`prefect.yaml`, served by `taskmint serve`). What happens to a
seed is the pipeline's; this adds the task runner, retries (`taskmint.flows.runtime`), the
run's artifacts and the alert when the run fails.
"""

from __future__ import annotations

import dataclasses
import os
from pathlib import Path
from typing import Any

from prefect import flow

from taskmint.config import PipelineConfig, load_config
from taskmint.errors import TaskmintError
from taskmint.flows.runtime import (
    PrefectExecutor,
    make_task_runner,
    pipeline_logs,
    publish_artifacts,
)
from taskmint.lifecycle import reclaim_signals
from taskmint.pipeline.alerts import AlertConfig, alert_failure, post_alert
from taskmint.pipeline.refresh import RefreshResult
from taskmint.pipeline.refresh import refresh as refresh_seeds
from taskmint.pipeline.summary import summary_markdown, summary_rows

__all__ = ["nightly", "output_root", "refresh", "run_refresh"]


@flow(name="taskmint-refresh", log_prints=True)
def refresh(config: PipelineConfig) -> RefreshResult:
    """Mint tasks from every seed in the seeds manifest and publish a dataset version."""
    reclaim_signals()  # the CLI's prompt stop, not the flow engine's wind-down
    try:
        with pipeline_logs():
            ex = PrefectExecutor()
            if config.parallel_seeds > 1:
                ex.start()
            result = refresh_seeds(config, ex)
    except Exception as exc:
        alert_failure(config, "refresh", exc)
        raise
    published = str(result.published.path) if result.published else None
    markdown = summary_markdown(
        "taskmint refresh",
        result.summaries,
        result.tasks,
        dict(result.spend),
        result.wall_time,
        published,
    )
    publish_artifacts("taskmint-refresh", markdown, summary_rows(result.summaries))
    return result


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
    result = run_refresh(config, task_runner=task_runner, dask_address=dask_address)
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
