"""How much runs at once in one process: `slot("sandbox", n)` bounds the sandboxes open at once
(a thread pool's or a Dask worker's threads), `slot("model")` the calibration stages that call
models at once (each model's own request concurrency is its `concurrency` in the models TOML)."""

from __future__ import annotations

import contextlib
import threading
from collections.abc import Iterator

__all__ = ["slot"]

_SLOTS: dict[str, threading.BoundedSemaphore] = {}
_LIMITS = {"sandbox": 2, "model": 4}
_SLOTS_LOCK = threading.Lock()


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
