"""Steps and the executor that runs them: the seam between the pipeline and an orchestrator.

A step is a plain function of the pipeline marked with `@step(name, infra=..., tags=...)`, which
records (`step_of`) its name, whether it may fail on infrastructure (and so be retried) and what
it holds (a sandbox, a model); the function itself is left as it is, so it pickles by name to a
Dask worker. The pipeline never calls a step directly but through an `Executor`: `call` (run it
now), `submit` (run it beside what follows; `.result()` waits) and `map` (run it over items;
each item's value or the exception it raised, in order). `LocalExecutor` runs steps in this
process on a thread pool, with the retries; `taskmint.flows` runs the same steps as Prefect
tasks (its retries, task runners, UI), and nothing else changes.
"""

from __future__ import annotations

import concurrent.futures
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any, Protocol, TypeVar

from taskmint.pipeline.failures import INFRA_RETRIES, is_infrastructure_error

__all__ = ["Executor", "LocalExecutor", "Result", "Step", "step", "step_of"]

T = TypeVar("T")
F = TypeVar("F", bound=Callable[..., Any])
T_co = TypeVar("T_co", covariant=True)


@dataclass(frozen=True, slots=True)
class Step:
    """What an orchestrator needs to know of a pipeline function."""

    name: str
    infra: bool = False  # may fail on infrastructure: retried (INFRA_RETRIES) on such errors
    tags: tuple[str, ...] = ()
    retry_delay: float = 2.0


_STEP = "__taskmint_step__"


def step(
    name: str, *, infra: bool = False, tags: tuple[str, ...] = (), retry_delay: float = 2.0
) -> Callable[[F], F]:
    """Mark a pipeline function as a step (see the module docstring)."""

    def wrap(fn: F) -> F:
        setattr(fn, _STEP, Step(name, infra, tags, retry_delay))
        return fn

    return wrap


def step_of(fn: Callable[..., Any]) -> Step:
    """What `@step` recorded of `fn` (a function that is not a step: its name, no retries)."""
    found = getattr(fn, _STEP, None)
    return found if isinstance(found, Step) else Step(getattr(fn, "__name__", "step"))


class Result(Protocol[T_co]):
    """What `Executor.submit` gives back: a value to wait for."""

    def result(self) -> T_co: ...


class Executor(Protocol):
    """How steps run (see the module docstring)."""

    def call(self, step: Callable[..., T], /, *args: Any) -> T: ...

    def submit(self, step: Callable[..., T], /, *args: Any) -> Result[T]: ...

    def map(
        self, step: Callable[..., T], items: Sequence[Any], /, *args: Any
    ) -> list[T | BaseException]: ...


def run_with_retries(fn: Callable[..., T], *args: Any) -> T:
    """`fn(*args)`, again up to `INFRA_RETRIES` times when the step fails on infrastructure."""
    info = step_of(fn)
    for attempt in range(INFRA_RETRIES + 1):
        try:
            return fn(*args)
        except Exception as exc:
            if not info.infra or not is_infrastructure_error(exc) or attempt == INFRA_RETRIES:
                raise
            time.sleep(info.retry_delay)
    raise AssertionError("unreachable")  # pragma: no cover


class LocalExecutor:
    """Steps in this process: `submit` and `map` on a pool of `workers` threads."""

    def __init__(self, workers: int = 2) -> None:
        self._pool = concurrent.futures.ThreadPoolExecutor(max_workers=max(2, workers))

    def call(self, step: Callable[..., T], /, *args: Any) -> T:
        return run_with_retries(step, *args)

    def submit(self, step: Callable[..., T], /, *args: Any) -> Result[T]:
        return self._pool.submit(run_with_retries, step, *args)

    def map(
        self, step: Callable[..., T], items: Sequence[Any], /, *args: Any
    ) -> list[T | BaseException]:
        futures = [self._pool.submit(run_with_retries, step, item, *args) for item in items]
        out: list[T | BaseException] = []
        for future in futures:
            exc = future.exception()
            out.append(exc if exc is not None else future.result())
        return out

    def close(self) -> None:
        self._pool.shutdown(wait=True, cancel_futures=True)

    def __enter__(self) -> LocalExecutor:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()
