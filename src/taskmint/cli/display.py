"""What the long commands show while they run, and how every command prints a result.

On a terminal, `RunDisplay` is a live table (per seed: state, candidates done of total,
accepted, rejected, time) with the run's ETA; elsewhere (a log file, CI) it writes one plain
line per event to standard error. `emit_json` prints a result as JSON on standard output.
"""

from __future__ import annotations

import json
import logging
import sys
import threading
import time
from collections.abc import Iterable
from dataclasses import dataclass
from typing import Any, TextIO

from rich.console import Console
from rich.file_proxy import FileProxy
from rich.live import Live
from rich.table import Table

from taskmint.records import to_json_dict

__all__ = ["RunDisplay", "emit_json"]


def emit_json(value: Any) -> None:
    """Print `value` (a record, or plain data holding records) as indented JSON."""
    print(json.dumps(_plain(value), indent=2, default=str))


def _plain(value: Any) -> Any:
    if hasattr(value, "__dataclass_fields__") and not isinstance(value, type):
        return to_json_dict(value)
    if isinstance(value, dict):
        return {str(k): _plain(v) for k, v in value.items()}
    if isinstance(value, list | tuple):
        return [_plain(v) for v in value]
    return value


@dataclass(slots=True)
class _Seed:
    name: str
    started: float
    state: str = "preparing"
    done: int = 0
    total: int = 0
    accepted: int = 0
    finished: float | None = None


def _duration(seconds: float) -> str:
    seconds = max(0, int(seconds))
    return f"{seconds // 60}m{seconds % 60:02d}s" if seconds >= 60 else f"{seconds}s"


def _norm(text: str) -> str:
    return text.lower().replace("-", "_").replace(".", "_")


class RunDisplay:
    """The pipeline's `Progress` for a person: live on a terminal, plain lines elsewhere."""

    def __init__(self, title: str, stream: TextIO | None = None, live: bool | None = None):
        self.title = title
        self.stream = stream or sys.stderr
        self.live = self.stream.isatty() if live is None else live
        self.seeds: dict[str, _Seed] = {}
        self.order: list[str] = []
        self.total_seeds = 0
        self.started = time.monotonic()
        self._lock = threading.Lock()
        self._live: Live | None = None
        self._moved: list[tuple[logging.StreamHandler[Any], Any, Any]] = []

    def __enter__(self) -> RunDisplay:
        if self.live:
            console = Console(file=self.stream)
            self._live = Live(self._table(), console=console, refresh_per_second=2)
            self._live.__enter__()
            # log lines (Prefect's and taskmint's) print above the table, not through it
            self._moved = _move_log_streams((self.stream, sys.__stderr__, sys.__stdout__), console)
        return self

    def __exit__(self, *exc: object) -> None:
        if self._live is not None:
            _restore_log_streams(self._moved)
            self._moved = []
            self._live.update(self._table())
            self._live.__exit__(None, None, None)
            self._live = None

    # the pipeline's Progress protocol

    def seed_started(self, seed: str, index: int, total: int) -> None:
        with self._lock:
            self.total_seeds = total
            self.seeds[seed] = _Seed(seed, time.monotonic())
            self.order.append(seed)
        self._show(f"[{index + 1}/{total}] {seed}: preparing")

    def candidates_done(self, seed: str, done: int, total: int, accepted: int) -> None:
        with self._lock:
            s = self._seed(seed)
            s.state, s.done, s.total, s.accepted = "minting", done, total, accepted
        self._show(self._done_line(seed, done, total, accepted))

    def candidate_finished(self, seed: str, accepted: bool) -> None:
        with self._lock:
            s = self._seed(seed)
            s.state = "minting"
            s.done = min(s.done + 1, s.total) if s.total else s.done + 1
            s.accepted += int(accepted)
            done, total, ok = s.done, s.total, s.accepted
        if self._live is not None:
            self._show("")
        else:  # a plain line every tenth candidate (and the last), not one per candidate
            if done == total or done % 10 == 0:
                self._show(self._done_line(seed, done, total, ok))

    def _done_line(self, seed: str, done: int, total: int, accepted: int) -> str:
        return (
            f"{seed}: {done}/{total} candidates done, {accepted} accepted, "
            f"{done - accepted} rejected; ETA {self.eta()}"
        )

    def seed_finished(self, seed: str, accepted: int, candidates: int, error: str | None) -> None:
        with self._lock:
            s = self._seed(seed)
            s.state = "error" if error else "done"
            s.done = s.total = candidates
            s.accepted = accepted
            s.finished = time.monotonic()
        outcome = f"error: {error[:120]}" if error else f"{accepted}/{candidates} accepted"
        self._show(f"{seed}: {outcome} in {_duration(s.finished - s.started)}; ETA {self.eta()}")

    # rendering

    def _seed(self, name: str) -> _Seed:
        """The row of seed `name`. A seed starts under its seeds file's label
        ("click==8.4.2", "repo@e382e72789f8") and reports under its manifest's name: the row
        still preparing whose label holds the name is it (seeds minted at once prepare side by
        side), else the newest row still preparing, else the newest row."""
        if name in self.seeds:
            return self.seeds[name]
        preparing = [k for k in self.order if self.seeds[k].state == "preparing"]
        wanted = _norm(name)
        named = [k for k in preparing if wanted in _norm(k)]
        candidates: list[str | None] = [*(named or preparing or self.order[-1:])] or [None]
        key = candidates[-1]
        row = self.seeds.pop(key) if key is not None else _Seed(name, time.monotonic())
        row.name = name
        if key is not None:
            self.order[self.order.index(key)] = name
        else:
            self.order.append(name)
        self.seeds[name] = row
        return row

    def eta(self) -> str:
        """The time left for the run, from the candidates done: the run's time per candidate
        done (a seed's preparation included) times the candidates left, the seeds not
        started yet counted at the mean number of candidates of those that did."""
        seeds = list(self.seeds.values())
        done = sum(s.done for s in seeds)
        planned = [s.total for s in seeds if s.total]
        if not done or not planned or not self.total_seeds:
            return "unknown"
        left: float = sum(max(s.total - s.done, 0) for s in seeds if s.finished is None)
        left += (self.total_seeds - len(seeds)) * sum(planned) / len(planned)
        return _duration((time.monotonic() - self.started) / done * left)

    def _table(self) -> Table:
        table = Table(
            title=f"{self.title} ({_duration(time.monotonic() - self.started)}, ETA {self.eta()})"
        )
        for col in ("seed", "state", "candidates", "accepted", "rejected", "time"):
            table.add_column(col)
        now = time.monotonic()
        for name in self.order:
            s = self.seeds[name]
            table.add_row(
                s.name,
                s.state,
                f"{s.done}/{s.total}" if s.total else "-",
                str(s.accepted),
                str(s.done - s.accepted),
                _duration((s.finished or now) - s.started),
            )
        return table

    def _show(self, line: str) -> None:
        if self._live is not None:
            with self._lock:
                self._live.update(self._table())
            return
        print(f"taskmint: {line}", file=self.stream, flush=True)


def _move_log_streams(
    streams: Iterable[Any], console: Console
) -> list[tuple[logging.StreamHandler[Any], Any, Any]]:
    """Point every logging handler that writes to one of `streams` (the terminal) at the live
    display's `console`, which prints above the table: a plain handler through a file proxy,
    Prefect's console handler (a rich console of its own) by printing on the display's
    console. Returns what to put back."""
    ours = {id(s) for s in streams if s is not None}
    loggers = [logging.getLogger()] + [
        lg
        for lg in list(logging.Logger.manager.loggerDict.values())
        if isinstance(lg, logging.Logger)
    ]
    proxy = FileProxy(console, console.file)
    moved = []
    for logger in loggers:
        for handler in list(logger.handlers):
            if isinstance(handler, logging.StreamHandler) and id(handler.stream) in ours:
                own = getattr(handler, "console", None)
                moved.append((handler, handler.stream, own))
                handler.setStream(proxy)
                if isinstance(own, Console):
                    handler.console = console  # type: ignore[attr-defined]
    return moved


def _restore_log_streams(moved: list[tuple[logging.StreamHandler[Any], Any, Any]]) -> None:
    for handler, stream, own in moved:
        handler.setStream(stream)
        if own is not None:
            handler.console = own  # type: ignore[attr-defined]
