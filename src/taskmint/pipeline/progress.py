"""What a long run tells whoever watches it, seed by seed: the candidates it plans, how many
are done (accepted, rejected; `candidates_done` sets the counts at a stage's end,
`candidate_finished` moves them one candidate at a time as each is decided, from any thread of
this process), and when the seed is finished. The CLI shows it as a live
display on a terminal and as log lines elsewhere; the default reporter says nothing."""

from __future__ import annotations

import threading
from typing import Protocol

__all__ = ["NullProgress", "Progress", "current", "reporting"]


class Progress(Protocol):
    """Receives a run's events (from any thread)."""

    def seed_started(self, seed: str, index: int, total: int) -> None: ...

    def candidates_done(self, seed: str, done: int, total: int, accepted: int) -> None: ...

    def candidate_finished(self, seed: str, accepted: bool) -> None: ...

    def seed_finished(
        self, seed: str, accepted: int, candidates: int, error: str | None
    ) -> None: ...


class NullProgress:
    """Says nothing."""

    def seed_started(self, seed: str, index: int, total: int) -> None:
        pass

    def candidates_done(self, seed: str, done: int, total: int, accepted: int) -> None:
        pass

    def candidate_finished(self, seed: str, accepted: bool) -> None:
        pass

    def seed_finished(self, seed: str, accepted: int, candidates: int, error: str | None) -> None:
        pass


_lock = threading.Lock()
_current: list[Progress] = [NullProgress()]


def current() -> Progress:
    """The reporter of the run in this process (`reporting` sets it)."""
    with _lock:
        return _current[-1]


class reporting:
    """`with reporting(progress): ...` makes `progress` the run's reporter for the block (the
    flows run in this process, so the CLI's display sees their events)."""

    def __init__(self, progress: Progress) -> None:
        self.progress = progress

    def __enter__(self) -> Progress:
        with _lock:
            _current.append(self.progress)
        return self.progress

    def __exit__(self, *exc: object) -> None:
        with _lock:
            _current.remove(self.progress)
