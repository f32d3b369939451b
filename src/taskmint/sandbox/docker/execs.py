"""The execs of the `docker` backend: how a run goes into a container and how it comes out.

One cold run is two `exec`s. The first streams a tar of the workspace and the report folder's
inputs on stdin, unpacks it and `exec`s the command (under the container's own uid, with
rlimits on CPU time, address space, processes, file size and open files, and `env -i` plus
exactly the spec's environment); the wall clock is enforced from here (the SDK's exec has none):
on expiry the whole container is killed. The second kills every process of the command's uid
and streams the report folder out as a tar (so nothing the command left running can write to
it afterwards).

A warm container is wiped in the background after each use (every writable place) so the next
use starts pristine; for `python -I -B` runs the same background `exec` then starts the next
run's interpreter, preloaded, as the run's uid (a standby: `forkserver.serve_once`), which
receives the next run's request and inputs on stdin and becomes that one run; its supervisor
(`forkserver.standby`) sends the report and the exit code when the run is over.
"""

from __future__ import annotations

import contextlib
import json
import socket
import time
from typing import Any

from taskmint.config import Limits
from taskmint.errors import SandboxError
from taskmint.sandbox.base import RunSpec
from taskmint.sandbox.docker.containers import COLLECT_SECONDS, Box, Standby
from taskmint.sandbox.docker.streams import FrameReader, frames, raw_socket

__all__ = ["ContainerExecs", "runner_dir"]

_READY = b"taskmint-standby-ready\n"  # forkserver.READY
_COLLECTED = b"taskmint-collected\n"  # the last line of _COLLECT, on stderr
_STANDBY_COLLECTED = b"taskmint-collected "  # forkserver.COLLECTED: then the exit code

# Unpack the inputs, enter the working folder, then become the command.
_START = 'tar -x -f - -C / || exit 125; cd "$0" || exit 125; exec "$@" </dev/null'
# Kill every process of this uid (kill -1 spares only the caller; it reports success whenever
# another process exists, so wait until /proc shows none of ours), then stream the report out.
_COLLECT = """
while :; do
  kill -9 -1 2>/dev/null
  left=
  for p in /proc/[0-9]*; do
    if [ "${p#/proc/}" != "$$" ] && [ -O "$p" ]; then left=1; fi
  done
  [ -z "$left" ] && break
done
tar -c -f - -C /run/taskmint . || exit 3
echo taskmint-collected >&2
"""
# Make every writable place pristine again.
_WIPE = """
chmod -R u+rwX /workspace /tmp /run/taskmint /dev/shm 2>/dev/null
find /workspace /tmp /run/taskmint /dev/shm -mindepth 1 -delete 1>&2 || exit 4
set -- /dev/mqueue/*
if [ -e "$1" ]; then rm -f /dev/mqueue/* || exit 4; fi
ipc=
for f in /proc/sysvipc/shm /proc/sysvipc/sem /proc/sysvipc/msg; do
  { read -r _ && read -r _ && ipc=1; } < "$f" 2>/dev/null
done
if [ -n "$ipc" ]; then ipcrm --all 2>/dev/null; fi
chmod 0755 /workspace /run/taskmint || exit 4
"""


class ContainerExecs:
    """The execs of one sandbox's runs, through the daemon's low-level `api`."""

    def __init__(self, api: Any) -> None:
        self.api = api

    def start(
        self, box: Box, cmd: list[str], *, stdin: bool, eid: str | None = None
    ) -> tuple[str, Any]:
        """Start `cmd` in the container as its uid (`eid`: an exec of it created already)."""
        try:
            if eid is None:
                eid = self._create(box, cmd, stdin=stdin)
            sock = self.api.exec_start(eid, socket=True)
        except Exception as exc:
            raise SandboxError(f"could not exec in container {box.cid[:12]}: {exc}") from exc
        return eid, sock

    def _create(self, box: Box, cmd: list[str], *, stdin: bool) -> str:
        created = self.api.exec_create(
            box.cid,
            cmd,
            stdin=stdin,
            stdout=True,
            stderr=True,
            tty=False,
            user=f"{box.uid}:{box.uid}",
        )
        return str(created["Id"])

    def run_cold(
        self, box: Box, spec: RunSpec, inputs: bytes
    ) -> tuple[int | None, bool, float, FrameReader]:
        """Start the command with its inputs on stdin; wait for it, at most the wall limit."""
        limits = spec.limits
        cmd = [
            "/bin/sh",
            "-c",
            _START,
            spec.cwd,
            *_prlimit(limits),
            "/usr/bin/env",
            "-i",
            *(f"{k}={v}" for k, v in spec.env),
            *spec.argv,
        ]
        start = time.monotonic()
        eid, sock = self.start(box, cmd, stdin=True)
        return self._feed_and_wait(box, spec, eid, sock, inputs, start)

    def run_standby(
        self, box: Box, spec: RunSpec, inputs: bytes, standby: Standby
    ) -> tuple[int | None, bool, float, FrameReader, tuple[bytes | None, bool]]:
        """Hand the run to the container's preloaded interpreter: its request, then its inputs.
        The run's output comes on the exec's stderr; its supervisor (`forkserver.standby`)
        kills what is left of it and then sends the report tar and the exit code on stdout,
        so the end of the stream is the end of the run and its clean-up (no other exec, no
        round trip to ask for the exit code)."""
        limits = spec.limits
        request = json.dumps(
            {
                "argv": list(spec.argv),
                "env": [list(kv) for kv in spec.env],
                "cwd": spec.cwd,
                "limits": {
                    "cpu_seconds": limits.cpu_seconds,
                    "memory_bytes": limits.memory_bytes,
                    "processes": limits.processes,
                    "file_bytes": limits.file_bytes,
                    "open_files": limits.open_files,
                },
            }
        ).encode()
        payload = b"%010d" % len(request) + request + inputs
        start = time.monotonic()
        reader = FrameReader(standby.sock, limits.output_bytes, protocol=True)
        reader.start()
        raw = raw_socket(standby.sock)
        with contextlib.suppress(OSError):  # a command that ends early need not read it all
            raw.sendall(payload)
            raw.shutdown(socket.SHUT_WR)
        reader.join(timeout=max(start + limits.wall_seconds - time.monotonic(), 0))
        wall = time.monotonic() - start
        if reader.is_alive():
            # Processes in the container may be legion; only killing it all is certain.
            with contextlib.suppress(Exception):
                self.api.kill(box.cid)
            return None, True, wall, reader, (None, False)
        head, found, tail = bytes(reader.protocol).rpartition(_STANDBY_COLLECTED)
        if found and tail.endswith(b"\n") and tail[:-1].isdigit():
            return int(tail[:-1]), False, wall, reader, (head, True)
        # The supervisor did not finish (the run killed it, or a clean-up failed): the
        # container is not reused, and there is no report.
        exit_code = None
        with contextlib.suppress(Exception):
            exit_code = self.api.exec_inspect(standby.eid).get("ExitCode")
        return exit_code, False, wall, reader, (None, False)

    def _feed_and_wait(
        self, box: Box, spec: RunSpec, eid: str, sock: Any, inputs: bytes, start: float
    ) -> tuple[int | None, bool, float, FrameReader]:
        limits = spec.limits
        reader = FrameReader(sock, limits.output_bytes)
        reader.start()
        raw = raw_socket(sock)
        with contextlib.suppress(OSError):  # a command that ends early need not read it all
            raw.sendall(inputs)
            raw.shutdown(socket.SHUT_WR)
        deadline = start + limits.wall_seconds
        while True:
            # The output ends when the command does (unless a grandchild holds it open): wake
            # at once then, else look every 50 ms.
            reader.join(timeout=max(min(0.05, deadline - time.monotonic()), 0))
            state = self.api.exec_inspect(eid)
            if not state.get("Running"):
                return state.get("ExitCode"), False, time.monotonic() - start, reader
            if time.monotonic() >= deadline:
                break
        wall = time.monotonic() - start
        # Processes in the container may be legion; only killing the whole container is certain.
        with contextlib.suppress(Exception):
            self.api.kill(box.cid)
        return None, True, wall, reader

    def collect(self, box: Box) -> tuple[bytes | None, bool]:
        """Kill what is left of the command and stream the report folder out."""
        try:
            _eid, sock = self.start(box, ["/bin/sh", "-c", _COLLECT], stdin=False)
        except SandboxError:
            return None, False
        reader = FrameReader(sock, 1 << 62, keep_stdout_only=True)
        reader.start()
        reader.join(timeout=COLLECT_SECONDS)
        if reader.is_alive():
            return None, False  # the caller removes the container, which ends the stream
        # The script's last word (no round trip to ask for its exit code): nothing of the
        # command is alive by then to write to this stream.
        if not reader.err.endswith(_COLLECTED):  # tar failed, or the clean-up did not finish
            return None, False
        return bytes(reader.output.head), True

    def prepare(self, box: Box, spec: RunSpec | None) -> None:
        """In the background after a use: wipe every writable place; for a `spec`, start in the
        same exec a preloaded interpreter (the run's uid, environment and interpreter, no
        privilege: `forkserver.serve_once`) and wait until it says it is ready. `box.ready`
        says whether all of it worked; if not, the container is never used again."""
        try:
            if spec is None:
                eid, sock = self.start(box, ["/bin/sh", "-c", _WIPE], stdin=False)
                reader = FrameReader(sock, 1 << 16)
                reader.start()
                reader.join(timeout=COLLECT_SECONDS)
                box.ready = (
                    not reader.is_alive() and self.api.exec_inspect(eid).get("ExitCode") == 0
                )
                return
            runner = runner_dir(spec)
            cmd = [
                "/bin/sh",
                "-c",
                "(\n" + _WIPE + '\n) >/dev/null 2>&1 </dev/null || exit 4\nexec "$@"',
                "prep",
                "/usr/bin/env",
                "-i",
                *(f"{k}={v}" for k, v in spec.env),
                spec.argv[0],
                *spec.argv[1:3],
                f"{runner}/forkserver.py",
                json.dumps({"preload": "auto", "once": True, "coverage": _measures_coverage(spec)}),
            ]
            eid, sock = self.start(box, cmd, stdin=True)
            raw = raw_socket(sock)
            raw.settimeout(COLLECT_SECONDS)
            got = b""
            stream = frames(sock)
            while not got.endswith(_READY):
                frame = next(stream, None)
                if frame is None:
                    raise OSError("the standby ended before it was ready")
                if frame[0] == 1:
                    got += frame[1]
            raw.settimeout(None)
            if got != _READY:
                raise OSError(f"unexpected output from the standby: {got[:200]!r}")
            box.standby = Standby(python=spec.argv[0], env=spec.env, eid=eid, sock=sock)
            box.ready = True
        except Exception:
            box.ready = False


def _measures_coverage(spec: RunSpec) -> bool:
    """Whether a run like `spec` measures coverage (its runner's options in the argv say so):
    only then does its standby preload `coverage`, which a graded run never imports."""
    for arg in spec.argv:
        if arg.startswith("{") and '"coverage"' in arg:
            with contextlib.suppress(ValueError):
                options = json.loads(arg)
                if isinstance(options, dict) and options.get("coverage"):
                    return True
    return False


def runner_dir(spec: RunSpec) -> str | None:
    """Where taskmint's runner files (`forkserver.py`) are mounted in this run, if they are."""
    return next((m.target for m in spec.mounts if m.source.endswith("inside")), None)


def _prlimit(limits: Limits) -> list[str]:
    return [
        "/usr/bin/prlimit",
        f"--cpu={limits.cpu_seconds}",
        f"--as={limits.memory_bytes}",
        f"--nproc={limits.processes}",
        f"--fsize={limits.file_bytes}",
        f"--nofile={limits.open_files}",
        "--core=0",
        "--",
    ]
