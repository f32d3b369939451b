"""The harder-batch flow: `taskmint.pipeline.harder` with each step a Prefect task (see that
module for what a harder batch does), its artifacts, and the alert when it fails."""

from __future__ import annotations

from prefect import flow

from taskmint.config import PipelineConfig
from taskmint.flows.runtime import (
    PrefectExecutor,
    make_task_runner,
    pipeline_logs,
    publish_artifacts,
)
from taskmint.lifecycle import reclaim_signals
from taskmint.pipeline.alerts import alert_failure
from taskmint.pipeline.harder import HarderRequest, HarderResult, harder
from taskmint.pipeline.summary import summary_markdown, summary_rows

__all__ = ["harder_batch", "run_harder_batch"]


@flow(name="taskmint-harder-batch", log_prints=True)
def harder_batch(request: HarderRequest, config: PipelineConfig) -> HarderResult:
    """Find `request.n` tasks in the target."""
    reclaim_signals()  # the CLI's prompt stop, not the flow engine's wind-down
    try:
        with pipeline_logs():
            result = harder(request, config, PrefectExecutor())
    except Exception as exc:
        alert_failure(config, "harder batch", exc)
        raise
    markdown = summary_markdown(
        f"taskmint harder batch: {len(result.tasks)}/{request.n} ({result.stop_reason})",
        result.summaries,
        result.tasks,
        result.spend,
        float(result.spend.get("wall_seconds", 0.0)),
        result.published,
    )
    markdown += "\n## Rounds\n\n" + "".join(f"- {line}\n" for line in result.rounds)
    markdown += f"\n{result.why}\n"
    publish_artifacts("taskmint-harder-batch", markdown, summary_rows(result.summaries))
    return result


def run_harder_batch(
    request: HarderRequest,
    config: PipelineConfig,
    task_runner: str = "threads",
    dask_address: str | None = None,
) -> HarderResult:
    """Run the flow on a thread pool (or Dask) sized by `config.workers`."""
    runner = make_task_runner(task_runner, workers=config.workers, address=dask_address)
    return harder_batch.with_options(task_runner=runner)(request, config)
