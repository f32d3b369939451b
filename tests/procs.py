"""The processes a test started, named by (pid, start time) and found by ancestry while their
starter lives: a check that nothing is left then looks at those alone, never at the sandboxes
other test sessions on the machine run at the same time (nor at a pid reused since)."""

from __future__ import annotations

import contextlib
import os
import signal
import time

from taskmint.lifecycle import process_start_time


def _by_parent() -> dict[int, list[int]]:
    found: dict[int, list[int]] = {}
    for entry in os.listdir("/proc"):
        if entry.isdigit():
            with contextlib.suppress(OSError, ValueError, IndexError):
                with open(f"/proc/{entry}/stat") as fh:
                    ppid = int(fh.read().rsplit(")", 1)[1].split()[1])
                found.setdefault(ppid, []).append(int(entry))
    return found


def children(pid: int) -> set[int]:
    """The children of `pid` now."""
    return set(_by_parent().get(pid, []))


def process_tree(root: int) -> dict[int, str]:
    """The descendants of `root` now: pid -> start time."""
    by_parent = _by_parent()
    found: dict[int, str] = {}
    todo = list(by_parent.get(root, []))
    while todo:
        pid = todo.pop()
        todo += by_parent.get(pid, [])
        start = process_start_time(pid)
        if start is not None:
            found[pid] = start
    return found


def command(pid: int) -> list[str]:
    """The command line of `pid` ([] if it is gone)."""
    try:
        with open(f"/proc/{pid}/cmdline", "rb") as fh:
            raw = fh.read()
    except OSError:
        return []
    return [arg.decode("utf-8", "replace") for arg in raw.split(b"\0")[:-1]]


def still_running(procs: dict[int, str]) -> dict[int, str]:
    """Those of `procs` that still run (a zombie has ended): pid -> state and command line."""
    left = {}
    for pid, start in procs.items():
        try:
            with open(f"/proc/{pid}/stat") as fh:
                fields = fh.read().rsplit(")", 1)[1].split()
        except OSError:
            continue
        if fields[19] == start and fields[0] not in ("Z", "X"):
            left[pid] = f"{fields[0]} {' '.join(command(pid))[:160]}"
    return left


def left_after(procs: dict[int, str], timeout: float) -> dict[int, str]:
    """`still_running(procs)` once none runs, or once `timeout` seconds have passed."""
    deadline = time.monotonic() + timeout
    while (left := still_running(procs)) and time.monotonic() < deadline:
        time.sleep(0.1)
    return left


def kill_all(procs: dict[int, str]) -> None:
    """SIGKILL those of `procs` that still run (a test's clean-up when it failed)."""
    for pid in still_running(procs):
        with contextlib.suppress(ProcessLookupError, PermissionError):
            os.kill(pid, signal.SIGKILL)
