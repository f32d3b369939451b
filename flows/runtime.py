"""Runtime policy of the flows: which failures are retried, how much runs at once, and on what.

- **Retries for infrastructure, never for verdicts.** `infra_task` is Prefect's `task` with
  retries whose `retry_condition_fn` lets only infrastructure errors through: a sandbox that
  fails to start (`SandboxError`), an environment download (`EnvironmentBuildError`), a
  network error or a model endpoint's 5xx/timeout. A rejected candidate is a `Verdict` value,
  not an exception, so it completes the task and is never retried; a malformed input
  (`ManifestError`, `PatchError`, ...) fails at once.
- **Concurrency limits.** `slot("sandbox", config.workers)` bounds the sandboxes open at once
  in one process (a thread pool or a Dask worker); `slot("model")` bounds the calibration
  stages that call models at once (each model's own request concurrency is its `concurrency`
  in the models TOML). The tasks also carry the tags `sandbox` / `model`, so a Prefect
  server's tag concurrency limits (`prefect concurrency-limit create sandbox 8`) bound them
  across all workers.
- **Task runners.** `make_task_runner("threads" | "dask", ...)`: a thread pool, or prefect-dask's
  `DaskTaskRunner` on a temporary `distributed.LocalCluster` or on an existing scheduler's
  address.
"""

from __future__ import annotations

import contextlib
import os
import threading
from collections.abc import Callable, Iterator
from typing import Any

from prefect import task

from taskmint.errors import EnvironmentBuildError, SandboxError
from taskmint.lifecycle import track_process_group
from taskmint.records import Verdict

__all__ = [
    "INFRA_RETRIES",
    "configure_slots",
    "describe_error",
    "failure_verdict",
    "infra_task",
    "is_infrastructure_error",
    "make_task_runner",
    "slot",
]

INFRA_RETRIES = 2

_SLOTS: dict[str, threading.BoundedSemaphore] = {}
_LIMITS = {"sandbox": 2, "model": 4}
_SLOTS_LOCK = threading.Lock()


def is_infrastructure_error(exc: BaseException) -> bool:
    """Whether `exc` is the machinery failing (worth a retry), not the work's own result."""
    if isinstance(exc, SandboxError | EnvironmentBuildError | ConnectionError | TimeoutError):
        return True
    try:  # the model endpoint: 5xx, connection failures and timeouts (not 4xx)
        import openai

        if isinstance(exc, openai.APIConnectionError | openai.APITimeoutError):
            return True
        if isinstance(exc, openai.APIStatusError):
            return exc.status_code >= 500
    except ImportError:  # pragma: no cover - openai is a dependency
        pass
    # the cause chain: an infrastructure error wrapped in another exception
    cause = exc.__cause__ or exc.__context__
    return cause is not None and cause is not exc and is_infrastructure_error(cause)


def describe_error(exc: BaseException) -> str:
    """`Type: message` of an exception (and of the infrastructure error it wraps, if any)."""
    text = f"{type(exc).__name__}: {exc}".strip().rstrip(":")
    cause = exc.__cause__
    if cause is not None and cause is not exc and str(cause) not in text:
        text += f" (from {type(cause).__name__}: {cause})"
    return text[:2000]


def failure_verdict(candidate_id: str, exc: BaseException) -> Verdict:
    """What a candidate whose step raised becomes: one rule for every per-item failure.

    Infrastructure (after its retries) is `sandbox_error`; anything else is `internal_error`,
    a taskmint bug on this one candidate. Either way the real type and message are the reason,
    the batch goes on, and nothing is stored for it, so a rerun tries it again.
    """
    if is_infrastructure_error(exc):
        return Verdict(
            candidate_id=candidate_id,
            status="sandbox_error",
            reason=f"infrastructure error after retries: {describe_error(exc)}",
        )
    return Verdict(
        candidate_id=candidate_id,
        status="internal_error",
        reason=f"taskmint failed on this candidate: {describe_error(exc)}",
    )


def _retry_condition(task: Any, task_run: Any, state: Any) -> bool:
    data = getattr(state, "data", None)
    return isinstance(data, BaseException) and is_infrastructure_error(data)


def infra_task(
    *, name: str, retries: int = INFRA_RETRIES, retry_delay_seconds: float = 2, **options: Any
) -> Callable[[Callable[..., Any]], Any]:
    """`@task` that retries infrastructure errors only (see the module docstring)."""
    return task(
        name=name,
        retries=retries,
        retry_delay_seconds=retry_delay_seconds,
        retry_condition_fn=_retry_condition,
        **options,
    )


def configure_slots(sandboxes: int | None = None, model_calls: int | None = None) -> None:
    """Set this process's default limits (used by `slot` calls that give none)."""
    with _SLOTS_LOCK:
        if sandboxes is not None:
            _LIMITS["sandbox"] = max(1, sandboxes)
        if model_calls is not None:
            _LIMITS["model"] = max(1, model_calls)


@contextlib.contextmanager
def slot(kind: str, limit: int | None = None) -> Iterator[None]:
    """Hold one of this process's `kind` slots ("sandbox" or "model") for the block.

    At most `limit` (default: the configured limit of `kind`) blocks hold a slot of the same
    kind and limit at once.
    """
    size = max(1, limit if limit is not None else _LIMITS.get(kind, 1))
    with _SLOTS_LOCK:
        sem = _SLOTS.get(f"{kind}:{size}")
        if sem is None:
            sem = _SLOTS[f"{kind}:{size}"] = threading.BoundedSemaphore(size)
    with sem:
        yield


def make_task_runner(kind: str = "threads", *, workers: int = 2, address: str | None = None) -> Any:
    """A Prefect task runner: "threads" (a pool of `workers`) or "dask".

    "dask" starts a `LocalCluster` of `workers` single-threaded worker processes for the run,
    or, given `address` (e.g. "tcp://scheduler:8786"), uses that existing cluster.
    """
    if kind == "threads":
        from prefect.task_runners import ThreadPoolTaskRunner

        return ThreadPoolTaskRunner(max_workers=workers)
    if kind == "dask":
        try:
            from prefect_dask import DaskTaskRunner
        except ImportError as exc:  # pragma: no cover - a dependency
            raise RuntimeError("the dask task runner needs prefect-dask and distributed") from exc
        if address:
            return DaskTaskRunner(address=address)
        return DaskTaskRunner(
            cluster_class="distributed.LocalCluster",
            cluster_kwargs={
                "n_workers": workers,
                "threads_per_worker": 1,
                "processes": True,
                "dashboard_address": None,
            },
        )
    raise ValueError(f"unknown task runner {kind!r}; choose 'threads' or 'dask'")


def _track_temporary_server() -> None:
    """Tell the reaper of Prefect's temporary API server when Prefect starts one, so a killed
    run does not leave it running (it is a plain child process, in no session of its own).
    Only where there is no API URL to use instead (importing the server module takes seconds)."""
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
