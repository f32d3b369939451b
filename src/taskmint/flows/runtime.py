"""How the pipeline's steps run under Prefect: as tasks with retries, on a task runner.

- **Retries for infrastructure, never for verdicts.** A step marked `infra` becomes a Prefect
  task with retries whose `retry_condition_fn` lets only infrastructure errors through
  (`taskmint.pipeline.failures.is_infrastructure_error`): a sandbox that fails to start, an
  environment download, a network error or a model endpoint's 5xx/timeout. A rejected
  candidate is a `Verdict` value, not an exception, so it is never retried.
- **Concurrency limits.** The steps hold `taskmint.pipeline.slots` slots in their process; the
  tasks also carry the tags `sandbox` / `model`, so a Prefect server's tag concurrency limits
  (`prefect concurrency-limit create sandbox 8`) bound them across all workers.
- **Task runners.** `make_task_runner("threads" | "dask", ...)`: a thread pool, or prefect-dask's
  `DaskTaskRunner` on a temporary `distributed.LocalCluster` or on an existing scheduler's
  address.
"""

from __future__ import annotations

import contextlib
import logging
import os
import threading
from collections.abc import Callable, Iterator, Sequence
from typing import Any, TypeVar

from prefect import Task, get_run_logger, task, unmapped
from prefect.artifacts import create_markdown_artifact, create_table_artifact
from prefect.cache_policies import NO_CACHE
from prefect.exceptions import MissingContextError
from prefect.task_runners import ThreadPoolTaskRunner

from taskmint.lifecycle import track_process_group
from taskmint.pipeline.failures import INFRA_RETRIES, is_infrastructure_error
from taskmint.pipeline.steps import Result, step_of

try:  # scale-out on Dask: prefect-dask and distributed (both in the `flows` extra)
    import prefect_dask
except ImportError:  # pragma: no cover - installed with the flows extra
    prefect_dask = None  # type: ignore[assignment]

__all__ = [
    "PrefectExecutor",
    "make_task_runner",
    "pipeline_logs",
    "prefect_task",
    "publish_artifacts",
]

T = TypeVar("T")

_TASKS: dict[str, Task[..., Any]] = {}
_TASKS_LOCK = threading.Lock()


def _retry_condition(task: Any, task_run: Any, state: Any) -> bool:
    data = getattr(state, "data", None)
    return isinstance(data, BaseException) and is_infrastructure_error(data)


def prefect_task(fn: Callable[..., T]) -> Task[..., T]:
    """The Prefect task of a pipeline step (made once): its name and tags, and retries of
    infrastructure errors when the step is marked `infra`."""
    step = step_of(fn)
    with _TASKS_LOCK:
        made = _TASKS.get(step.name)
        if made is None:
            made = _TASKS[step.name] = task(
                name=step.name,
                tags=list(step.tags),
                cache_policy=NO_CACHE,
                persist_result=False,
                retries=INFRA_RETRIES if step.infra else 0,
                retry_delay_seconds=step.retry_delay,
                retry_condition_fn=_retry_condition if step.infra else None,
            )(fn)
        return made


def runner_started() -> None:
    """A task that does nothing: submitted once, it starts the flow's task runner."""


class PrefectExecutor:
    """The pipeline's `Executor` inside a Prefect flow: each step a task run."""

    def start(self) -> None:
        """Start the flow's task runner now, before several threads submit at once:
        prefect-dask makes its client (and its `LocalCluster`) on the first submission, and two
        threads submitting first start two clusters, one of which fails."""
        prefect_task(runner_started).submit().result()

    def call(self, step: Callable[..., T], /, *args: Any) -> T:
        return prefect_task(step)(*args)

    def submit(self, step: Callable[..., T], /, *args: Any) -> Result[T]:
        return prefect_task(step).submit(*args)

    def map(
        self, step: Callable[..., T], items: Sequence[Any], /, *args: Any
    ) -> list[T | BaseException]:
        if not items:
            return []
        futures = prefect_task(step).map(list(items), *(unmapped(arg) for arg in args))
        return [f.result(raise_on_failure=False) for f in futures]


def make_task_runner(kind: str = "threads", *, workers: int = 2, address: str | None = None) -> Any:
    """A Prefect task runner: "threads" (a pool of `workers`) or "dask".

    "dask" starts a `LocalCluster` of `workers` single-threaded worker processes for the run,
    or, given `address` (e.g. "tcp://scheduler:8786"), uses that existing cluster.
    """
    if kind == "threads":
        return ThreadPoolTaskRunner(max_workers=workers)
    if kind == "dask":
        if prefect_dask is None:  # pragma: no cover - installed with the flows extra
            raise RuntimeError("the dask task runner needs prefect-dask and distributed")
        if address:
            return prefect_dask.DaskTaskRunner(address=address)
        return prefect_dask.DaskTaskRunner(
            cluster_class="distributed.LocalCluster",
            cluster_kwargs={
                "n_workers": workers,
                "threads_per_worker": 1,
                "processes": True,
                "dashboard_address": None,
            },
        )
    raise ValueError(f"unknown task runner {kind!r}; choose 'threads' or 'dask'")


class _RunLogs(logging.Handler):
    """Hands a `taskmint.*` log record to the Prefect run (flow or task) it happens in."""

    def emit(self, record: logging.LogRecord) -> None:
        try:
            logger: Any = get_run_logger()
        except MissingContextError:  # outside a run (a helper thread): Prefect's own logger
            logger = logging.getLogger("prefect.taskmint")
        logger.log(record.levelno, record.getMessage())


@contextlib.contextmanager
def pipeline_logs(level: int = logging.INFO) -> Iterator[None]:
    """For the block, the pipeline's log lines (`taskmint.*`) go to the Prefect run's log:
    the console, and the server's UI when there is one."""
    logger = logging.getLogger("taskmint")
    handler = _RunLogs()
    saved = logger.level, logger.propagate
    logger.addHandler(handler)
    logger.setLevel(level)
    logger.propagate = False
    try:
        yield
    finally:
        logger.removeHandler(handler)
        logger.setLevel(saved[0])
        logger.propagate = saved[1]


def publish_artifacts(key: str, markdown: str, rows: list[dict[str, Any]]) -> None:
    """Create the run's table and markdown artifacts (inside a flow run)."""
    create_table_artifact(table=rows or [{"seed": "-"}], key=f"{key}-table")
    create_markdown_artifact(markdown=markdown, key=f"{key}-summary")


def _track_temporary_server() -> None:
    """Tell the reaper of Prefect's temporary API server when Prefect starts one, so a killed
    run does not leave it running (it is a plain child process, in no session of its own).
    Only where there is no API URL to use instead: importing the server module takes seconds,
    so it is imported here, not at the top."""
    if os.environ.get("PREFECT_API_URL"):
        return
    from prefect.server.api import server

    cls: Any = server.SubprocessASGIServer
    start = cls._run_uvicorn_command
    if getattr(start, "taskmint_tracked", False):
        return

    def run_uvicorn(self: Any) -> Any:
        proc = start(self)
        track_process_group(proc.pid)
        return proc

    run_uvicorn.taskmint_tracked = True  # type: ignore[attr-defined]
    cls._run_uvicorn_command = run_uvicorn


_track_temporary_server()
