"""The reaper: cleans up after a taskmint process that died (see `taskmint.lifecycle`).

`python -I .../taskmint/reaper.py OWNER_PID` reads lines on stdin until end of input, which
comes when the owner exits, however it exits (the kernel closes the pipe of a killed process).
Each line is
tab-separated: `group PID START` (kill that process group if its leader is still the process
that started at START), `container NAME` (`docker rm -f`), `path PATH` (unmount what is mounted
inside, then remove), `cgroup PATH` (rmdir, once its processes are gone). At end of input it
does all of that, in that order, for what still exists, and exits. It runs as a script and
imports nothing of taskmint's, so it starts fast and cannot fail on the owner's state.
"""

from __future__ import annotations

import contextlib
import os
import shutil
import signal
import subprocess
import sys
import time
from pathlib import Path


def _start_time(pid: int) -> str | None:
    try:
        stat = Path(f"/proc/{pid}/stat").read_text()
    except OSError:
        return None
    return stat.rsplit(")", 1)[1].split()[19]


def _running(pid: int, start: str) -> bool:
    """Whether `pid` is still the process that started at `start` and has not ended (a zombie,
    killed and waiting for its parent to collect it, has)."""
    try:
        fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    except OSError:
        return False
    return fields[19] == start and fields[0] not in ("Z", "X")


def _mounts_under(path: str) -> list[str]:
    """Mount points at or under `path`, deepest first."""
    try:
        lines = Path("/proc/self/mountinfo").read_text().splitlines()
    except OSError:
        return []
    found = []
    for line in lines:
        fields = line.split()
        if len(fields) > 4:
            point = fields[4].encode().decode("unicode_escape")
            if point == path or point.startswith(path.rstrip("/") + "/"):
                found.append(point)
    return sorted(found, key=len, reverse=True)


def _kill_groups(groups: dict[int, str]) -> None:
    # SIGKILL, which a stopped (SIGSTOP) or hung process cannot ignore or postpone. A sandbox's
    # PID namespace init is one of the groups: everything in its namespace dies with it.
    for pid, start in groups.items():
        if _start_time(pid) == start:
            try:
                os.killpg(pid, signal.SIGKILL)
            except OSError:  # not a group leader (Prefect's server): the process alone
                with contextlib.suppress(OSError):
                    os.kill(pid, signal.SIGKILL)
    deadline = time.monotonic() + 5
    while time.monotonic() < deadline and any(
        _running(pid, start) for pid, start in groups.items()
    ):
        time.sleep(0.05)


def _remove_containers(names: list[str]) -> None:
    if names and shutil.which("docker"):
        subprocess.run(
            ["docker", "rm", "-f", *names], capture_output=True, timeout=120, check=False
        )


def _remove_paths(paths: list[str]) -> None:
    for path in paths:
        if not os.path.lexists(path):
            continue
        if not os.path.isdir(path) or os.path.islink(path):
            with contextlib.suppress(OSError):
                os.unlink(path)
            continue
        for point in _mounts_under(path):
            subprocess.run(["umount", "-l", point], capture_output=True, timeout=30, check=False)
        shutil.rmtree(path, ignore_errors=True)


def _remove_cgroups(paths: list[str]) -> None:
    pending = [p for p in paths if os.path.isdir(p)]
    for _ in range(100):
        left = []
        for path in pending:
            try:
                os.rmdir(path)
            except FileNotFoundError:
                pass
            except OSError:
                left.append(path)
        if not left:
            return
        pending = left
        time.sleep(0.05)


_PRUNE_EVERY = 10_000  # lines


def _prune(groups: dict[int, str], paths: dict[str, None]) -> None:
    """Forget the process groups whose leader is gone and the paths already removed, so the
    reaper of a process that runs for days holds only what is live."""
    for pid in [pid for pid, start in groups.items() if _start_time(pid) != start]:
        del groups[pid]
    for path in [path for path in paths if not os.path.lexists(path)]:
        del paths[path]


def main(argv: list[str]) -> int:
    groups: dict[int, str] = {}
    containers: dict[str, None] = {}
    paths: dict[str, None] = {}
    cgroups: dict[str, None] = {}
    signal.signal(signal.SIGINT, signal.SIG_IGN)  # the owner's Ctrl-C is not for us
    for seen, raw in enumerate(sys.stdin.buffer, 1):
        if seen % _PRUNE_EVERY == 0:  # a long-lived owner: keep only what still exists
            _prune(groups, paths)
        kind, _, rest = raw.decode("utf-8", "surrogateescape").rstrip("\n").partition("\t")
        if kind == "group":
            pid, _, start = rest.partition("\t")
            groups[int(pid)] = start
        elif kind == "container":
            containers[rest] = None
        elif kind == "path":
            paths[rest] = None
        elif kind == "cgroup":
            cgroups[rest] = None
    _kill_groups(groups)
    _remove_containers(list(containers))
    _remove_paths(list(paths))
    _remove_cgroups(list(cgroups))
    return 0


if __name__ == "__main__":
    raise SystemExit(main(sys.argv[1:]))
