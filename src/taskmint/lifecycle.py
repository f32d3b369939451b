"""What a taskmint process leaves behind when it stops: nothing, however it stops.

A run starts processes (sandboxes, fork servers, Docker containers, Prefect's temporary server)
and makes scratch folders, tmpfs mounts and memory cgroups. An orderly exit closes them; a
signal or SIGKILL cannot. So the first resource a process tracks starts a **reaper**: a small
process in a session of its own (`taskmint/reaper.py`), told each resource on a pipe.
When taskmint dies, however (SIGKILL included), the kernel closes the pipe; the reaper reads its
end and kills the process groups it was told of, removes the containers, unmounts and removes
the folders and removes the cgroups, then exits. What was removed in the meantime is skipped.

`stopping()` is the flag a signal sets before the process exits (`stop_requested`): results
computed after it (from sandboxes about to be killed) must not be stored.
"""

from __future__ import annotations

import atexit
import contextlib
import os
import signal
import subprocess
import sys
import threading
from collections.abc import Callable
from pathlib import Path
from typing import Any

__all__ = [
    "process_start_time",
    "reclaim_signals",
    "restore_signals",
    "stop_on_signals",
    "stop_requested",
    "stopping",
    "track_container",
    "track_path",
    "track_process_group",
]

_REAPER_SCRIPT = Path(__file__).with_name("reaper.py")
_LOCK = threading.Lock()
_REAPER: subprocess.Popen[bytes] | None = None
_REAPER_PID = -1  # the process that started `_REAPER` (a fork must start its own)
_STOP = threading.Event()


def stopping() -> bool:
    """Whether this process is stopping on a signal: work finishing now is not to be kept."""
    return _STOP.is_set()


def stop_requested() -> None:
    """Say the process is stopping (a signal came): from now on nothing new is stored."""
    _STOP.set()


_HANDLER: Callable[[int, Any], None] | None = None


def stop_on_signals(handler: Callable[[int, Any], None]) -> tuple[Any, Any]:
    """Make `handler` the process's SIGINT and SIGTERM handler (from the main thread); returns
    the handlers it replaced."""
    global _HANDLER
    previous = signal.getsignal(signal.SIGINT), signal.getsignal(signal.SIGTERM)
    _HANDLER = handler
    reclaim_signals()
    return previous


def restore_signals(previous: tuple[Any, Any]) -> None:
    """Put back the handlers `stop_on_signals` replaced."""
    global _HANDLER
    _HANDLER = None
    signal.signal(signal.SIGINT, previous[0])
    signal.signal(signal.SIGTERM, previous[1])


def reclaim_signals() -> None:
    """Reinstall the `stop_on_signals` handler (if any): a flow engine that put its own in
    place for the run (Prefect's SIGTERM bridge, which waits for the run to wind down) is
    overruled. A no-op outside the main thread."""
    if _HANDLER is None or threading.current_thread() is not threading.main_thread():
        return
    signal.signal(signal.SIGINT, _HANDLER)
    signal.signal(signal.SIGTERM, _HANDLER)


def process_start_time(pid: int) -> str | None:
    """The start time of `pid` (clock ticks since boot), or None if there is no such process:
    with the pid, it names one process even after the pid is reused."""
    try:
        stat = Path(f"/proc/{pid}/stat").read_text()
    except OSError:
        return None
    return stat.rsplit(")", 1)[1].split()[19]


def _send(line: str) -> None:
    global _REAPER, _REAPER_PID
    with _LOCK:
        if _REAPER is None or os.getpid() != _REAPER_PID or _REAPER.poll() is not None:
            try:
                _REAPER = subprocess.Popen(
                    [sys.executable, "-I", str(_REAPER_SCRIPT), str(os.getpid())],
                    stdin=subprocess.PIPE,
                    stdout=subprocess.DEVNULL,
                    stderr=subprocess.DEVNULL,
                    start_new_session=True,  # a Ctrl-C or a group kill does not reach it
                    close_fds=True,
                )
            except OSError:  # pragma: no cover - no interpreter to start: nothing to guard
                return
            _REAPER_PID = os.getpid()
        stdin = _REAPER.stdin
        assert stdin is not None
        try:
            stdin.write(line.encode("utf-8", "surrogateescape") + b"\n")
            stdin.flush()
        except OSError:  # pragma: no cover - the reaper died; the next line starts another
            _REAPER = None


def track_process_group(pid: int) -> None:
    """Kill the process group led by `pid` (or `pid` alone, if it leads none) with SIGKILL,
    whatever its state (stopped too), if this process dies first."""
    start = process_start_time(pid)
    if start is not None:
        _send(f"group\t{pid}\t{start}")


def track_container(name: str) -> None:
    """Remove the Docker container `name` if this process dies first."""
    _send(f"container\t{name}")


def track_path(path: str | os.PathLike[str], *, cgroup: bool = False) -> None:
    """Remove the folder (or file) `path`, unmounting what is mounted inside it (a cgroup is
    removed with rmdir), if this process dies first. A path gone by then is skipped."""
    _send(f"{'cgroup' if cgroup else 'path'}\t{os.fspath(path)}")


def _close_reaper() -> None:
    """At an orderly exit: the reaper does its sweep now (what is already gone is skipped)."""
    with _LOCK:
        reaper = _REAPER
    if reaper is not None and os.getpid() == _REAPER_PID and reaper.stdin is not None:
        with contextlib.suppress(OSError):
            reaper.stdin.close()


atexit.register(_close_reaper)
