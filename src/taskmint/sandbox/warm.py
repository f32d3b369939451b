"""Warm runs for the local backend: fork servers that pay interpreter start-up once.

A fork server (`runners/inside/forkserver.py`) is a Python interpreter started once, under
bubblewrap with the same root, mounts and environment as a cold run, that has imported pytest,
coverage and the seed's third-party packages. Each run it serves is a fresh fork that enters its
own mount, PID, network, IPC and UTS namespaces, sees only its own workspace, report folder,
/tmp and /dev/shm, takes the run's rlimits, and drops to its own unprivileged uid with no
capabilities and no_new_privs: the isolation of a cold run (the tests in
`tests/sandbox/test_isolation.py` run against both).

What differs from a cold run, by design: the interpreter's hash seed is the server's (one
random seed per server, not per run), and modules the server preloaded are already imported.
Runs that must vary the hash seed (the original suite's flake detection) ask for a cold run with
`RunSpec(warm=False)`.

The host moves a run's workspace and report folder into the server's spool (a rename on the
same file system) for the run, and back afterwards. A server that does not answer within the
run's wall-clock limit plus a grace period is killed, and the run is a sandbox error; a server
that cannot start makes runs fall back to cold ones.

Killing a server means killing its PID namespace. bubblewrap's init of the namespace (the child
of the bubblewrap the host started) runs in a session of its own, so the host's process group
holds the outer bubblewrap alone, and killing that leaves the init, the server and its runs
going: they would exit when the server reads the end of its input, but a stopped (SIGSTOP) or
hung server never reads it (and bubblewrap's `--die-with-parent` is no way out: it would tie the
server to the thread that started it). So the host records the init when it starts, SIGKILLs it
(which works whatever its state and takes every process of the namespace with it) when it closes
the server, and tells the reaper of it, so an owner killed outright leaves nothing.
"""

from __future__ import annotations

import atexit
import base64
import contextlib
import json
import os
import secrets
import select
import shutil
import signal
import subprocess
import tempfile
import threading
import time
from collections.abc import Callable
from pathlib import Path

from taskmint.errors import SandboxError
from taskmint.lifecycle import process_start_time, track_process_group
from taskmint.sandbox.base import (
    Mount,
    RunResult,
    RunSpec,
    copy_all,
    in_cgroup,
    memory_cgroup,
    mount_tmpfs,
    remove_cgroup,
    replace_with,
    unmount,
)
from taskmint.scratch import make_scratch

__all__ = ["SERVER_CAPS", "ForkServer", "WarmPool", "WarmUnavailable", "shared_pool"]

_SHARED: dict[tuple[object, ...], WarmPool] = {}
_SHARED_LOCK = threading.Lock()


def shared_pool(key: tuple[object, ...], make_argv: ServerArgv, spool_bytes: int = 0) -> WarmPool:
    """The process-wide pool for sandboxes configured alike (`key`): sandboxes opened per task
    (as the flows do) then reuse the same warm servers. Stopped when the process exits."""
    with _SHARED_LOCK:
        if not _SHARED:
            atexit.register(_close_shared)
        pool = _SHARED.get(key)
        if pool is None:
            pool = _SHARED[key] = WarmPool(make_argv, spool_bytes=spool_bytes)
        return pool


def _close_shared() -> None:
    with _SHARED_LOCK:
        pools = list(_SHARED.values())
        _SHARED.clear()
    for pool in pools:
        pool.close()


_SERVER = "forkserver.py"
_SPOOL = "/spool"
_FLAGS = ("-I", "-B")
_GRACE = 15.0  # seconds past a run's wall limit before the host kills the server itself
_START_TIMEOUT = 120.0
_INIT_WAIT = 5.0  # seconds for bubblewrap to start the namespace's init (it takes milliseconds)
_SERVER_MEMORY = 512 * 1024**2  # the server's own share of its memory cgroup
SERVER_CAPS = (
    "CAP_SYS_ADMIN",  # unshare and mount, for each run's namespaces
    "CAP_NET_ADMIN",  # bring up loopback in each run's network namespace
    "CAP_SETUID",
    "CAP_SETGID",
    "CAP_SETPCAP",  # empty each run's bounding set
    "CAP_KILL",  # kill a run (another uid) at its deadline
    "CAP_DAC_OVERRIDE",  # reach workspaces owned by the runs' uids
    "CAP_SYS_RESOURCE",
)


class WarmUnavailable(SandboxError):
    """This run cannot be served warm, and nothing of it has run: the caller runs it cold."""


ServerArgv = Callable[[tuple[Mount, ...], tuple[tuple[str, str], ...], str, str], list[str]]


class ForkServer:
    """One fork server process and its spool folder; serves one run at a time."""

    def __init__(
        self,
        make_argv: ServerArgv,
        mounts: tuple[Mount, ...],
        env: tuple[tuple[str, str], ...],
        python: str,
        spool_bytes: int = 0,
        memory_bytes: int = 0,
    ) -> None:
        self.python = python
        self.spool = make_scratch("taskmint-spool-")
        os.chmod(self.spool, 0o755)
        self.capped = False
        if spool_bytes:
            # One run at a time lives in the spool: capping it caps that run's disk use.
            try:
                mount_tmpfs(str(self.spool), spool_bytes)
            except OSError as exc:
                shutil.rmtree(self.spool, ignore_errors=True)
                raise WarmUnavailable(str(exc)) from exc
            self.capped = True
        runner = next((m.target for m in mounts if m.source.endswith("inside")), None)
        if runner is None:
            raise WarmUnavailable("the runner files are not mounted")
        options = json.dumps({"preload": "auto"})
        argv = make_argv(mounts, env, str(self.spool), _SPOOL)
        argv += [python, *_FLAGS, f"{runner}/{_SERVER}", options]
        # The server serves one run at a time: its memory cap (the run's plus the server's
        # own, preloaded interpreter) bounds that run as a whole.
        self.cgroup = memory_cgroup(memory_bytes + _SERVER_MEMORY) if memory_bytes else None
        argv = in_cgroup(self.cgroup, argv)
        self.log = tempfile.TemporaryFile()  # noqa: SIM115 - lives as long as the server
        try:
            self.proc = subprocess.Popen(
                argv,
                stdin=subprocess.PIPE,
                stdout=subprocess.PIPE,
                stderr=self.log,
                start_new_session=True,
            )
        except OSError as exc:
            self.close()
            raise WarmUnavailable(f"could not start the fork server: {exc}") from exc
        track_process_group(self.proc.pid)  # killed by the reaper if taskmint dies first
        # The namespace's init, in a session of its own: tracked on its own (see the module's
        # docstring), before the server runs anything.
        self.inits: list[tuple[int, str]] = []
        self._find_inits(_INIT_WAIT)
        line = self._readline(_START_TIMEOUT)
        if line is None or not json.loads(line).get("ready"):
            self.close()
            raise WarmUnavailable(f"the fork server did not start: {self._log_tail()}")
        if not self.inits:  # started slower than `_INIT_WAIT`: it is there now
            self._find_inits(0.0)
        self.runs = 0

    def _find_inits(self, wait: float) -> None:
        """Record (and tell the reaper of) the children of the process the host started: for
        bubblewrap, the init of the server's PID namespace."""
        deadline = time.monotonic() + wait
        while True:
            children = _children(self.proc.pid)
            if children or self.proc.poll() is not None or time.monotonic() >= deadline:
                break
            time.sleep(0.005)
        for pid in children:
            start = process_start_time(pid)
            if start is not None:
                self.inits.append((pid, start))
                track_process_group(pid)  # killed by the reaper if taskmint dies first

    def _log_tail(self) -> str:
        self.log.seek(0)
        return self.log.read().decode("utf-8", "replace")[-2000:]

    def _readline(self, timeout: float) -> bytes | None:
        assert self.proc.stdout is not None
        fd = self.proc.stdout.fileno()
        deadline = time.monotonic() + timeout
        buf = b""
        while not buf.endswith(b"\n"):
            left = deadline - time.monotonic()
            if left <= 0:
                return None
            ready, _, _ = select.select([fd], [], [], left)
            if not ready:
                return None
            chunk = os.read(fd, 1 << 20)
            if not chunk:
                return None
            buf += chunk
        return buf

    @property
    def alive(self) -> bool:
        """Whether the server process is still running."""
        return self.proc.poll() is None

    def run(self, spec: RunSpec, uid: int) -> RunResult:
        """Serve `spec` as uid `uid`; the workspace comes back modified, as after a cold run."""
        run_id = secrets.token_hex(8)
        run_dir = self.spool / run_id
        run_dir.mkdir(mode=0o755)
        ws = run_dir / "ws"
        report = run_dir / "report"
        moved: list[tuple[Path, Path]] = []
        copied: list[tuple[Path, Path]] = []
        start = time.monotonic()
        try:
            try:
                pairs = [(spec.workspace, ws)]
                if spec.report_dir is not None:
                    pairs.append((spec.report_dir, report))
                for host, inside in pairs:
                    if self.capped:  # another file system: copy in, and back afterwards
                        copy_all(host, str(inside))
                        if spec.keep_workspace or host != spec.workspace:
                            copied.append((inside, Path(host)))
                    else:
                        os.rename(host, inside)
                        moved.append((inside, Path(host)))
            except OSError as exc:
                raise WarmUnavailable(f"cannot move the workspace into the spool: {exc}") from exc
            channel = spec.channel_report is not None
            if channel:
                # Opened by the run's first process before the spool is covered: the run
                # inherits descriptors to them and can reach them by no path.
                chan = run_dir / "chan"
                chan.mkdir(mode=0o700)
                (chan / "in").write_bytes(spec.channel_input or b"")
                (chan / "out").touch(mode=0o600)
            request = {
                "run": run_id,
                "argv": list(spec.argv),
                "env": [list(kv) for kv in spec.env],
                "cwd": spec.cwd,
                "uid": uid,
                "report": spec.report_dir is not None,
                "channel": channel,
                "limits": {
                    "wall_seconds": spec.limits.wall_seconds,
                    "cpu_seconds": spec.limits.cpu_seconds,
                    "memory_bytes": spec.limits.memory_bytes,
                    "processes": spec.limits.processes,
                    "file_bytes": spec.limits.file_bytes,
                    "output_bytes": spec.limits.output_bytes,
                    "open_files": spec.limits.open_files,
                },
            }
            assert self.proc.stdin is not None
            try:
                self.proc.stdin.write(json.dumps(request).encode() + b"\n")
                self.proc.stdin.flush()
            except OSError as exc:
                raise WarmUnavailable(f"the fork server is gone: {exc}") from exc
            line = self._readline(spec.limits.wall_seconds + _GRACE)
            if line is None:
                # No answer in time: the server itself is stuck or dead (it enforces the run's
                # wall limit and answers within the grace period, so a run that ran out its
                # limit is answered as timed out). Kill it and everything it started. The run
                # may have changed the workspace: no cold retry over it.
                self.close()
                if time.monotonic() - start >= spec.limits.wall_seconds:
                    raise SandboxError(
                        f"the fork server did not answer within the run's limit plus {_GRACE:g} s"
                    )
                raise SandboxError(f"the fork server died during a run: {self._log_tail()}")
            resp = json.loads(line)
            if resp.get("error"):
                raise SandboxError(f"the fork server could not run it: {resp['error']}")
            if channel:
                assert spec.channel_report is not None
                with open(spec.channel_report, "ab") as fh:
                    fh.write((run_dir / "chan" / "out").read_bytes())
            self.runs += 1
            return RunResult(
                exit_code=resp["exit_code"],
                timed_out=bool(resp["timed_out"]),
                wall_time=time.monotonic() - start,
                output=base64.b64decode(resp["output"]).decode("utf-8", "replace"),
                output_truncated=bool(resp["truncated"]),
            )
        finally:
            for src, dst in reversed(moved):
                with contextlib.suppress(OSError):
                    os.rename(src, dst)
            for src, dst in reversed(copied):
                with contextlib.suppress(OSError):
                    replace_with(str(src), str(dst))
            shutil.rmtree(run_dir, ignore_errors=True)

    def close(self) -> None:
        """Stop the server and everything it started, whatever their state (stopped, hung, or
        left behind by a bubblewrap killed from outside): SIGKILL needs no cooperation."""
        if getattr(self, "proc", None) is not None and self.proc.poll() is None:
            with contextlib.suppress(ProcessLookupError, PermissionError):
                os.killpg(self.proc.pid, signal.SIGKILL)
        inits, self.inits = getattr(self, "inits", []), []
        for pid, start in inits:
            if process_start_time(pid) == start:  # not a pid reused since
                with contextlib.suppress(ProcessLookupError, PermissionError):
                    os.kill(pid, signal.SIGKILL)  # the namespace, and all in it, goes with it
        if getattr(self, "proc", None) is not None:
            with contextlib.suppress(subprocess.TimeoutExpired):
                self.proc.wait(timeout=10)
        _wait_gone(inits, timeout=10)  # before the cgroup and the spool are removed
        self._cleanup()

    def _cleanup(self) -> None:
        proc = getattr(self, "proc", None)
        if proc is not None:
            for stream in (proc.stdin, proc.stdout):
                if stream is not None:
                    with contextlib.suppress(OSError):
                        stream.close()
        if getattr(self, "capped", False):
            unmount(str(self.spool))
        if getattr(self, "cgroup", None) is not None:
            remove_cgroup(self.cgroup)  # type: ignore[arg-type]
            self.cgroup = None
        shutil.rmtree(self.spool, ignore_errors=True)


def _children(pid: int) -> list[int]:
    """The children of `pid` (none if it is gone)."""
    try:
        tasks = os.listdir(f"/proc/{pid}/task")
    except OSError:
        return []
    found: list[int] = []
    for task in tasks:
        try:
            with open(f"/proc/{pid}/task/{task}/children") as fh:
                found += [int(child) for child in fh.read().split()]
        except FileNotFoundError:  # a kernel without CONFIG_PROC_CHILDREN: by their parent
            return _children_by_parent(pid)
        except (OSError, ValueError):  # the thread ended meanwhile
            continue
    return found


def _children_by_parent(pid: int) -> list[int]:
    found = []
    for entry in os.listdir("/proc"):
        if entry.isdigit():
            with (
                contextlib.suppress(OSError, ValueError, IndexError),
                open(f"/proc/{entry}/stat") as fh,
            ):
                if int(fh.read().rsplit(")", 1)[1].split()[1]) == pid:
                    found.append(int(entry))
    return found


def _wait_gone(procs: list[tuple[int, str]], timeout: float) -> None:
    """Until none of `procs` (pid, start time) runs any more (a zombie has ended)."""
    deadline = time.monotonic() + timeout
    for pid, start in procs:
        while time.monotonic() < deadline:
            try:
                with open(f"/proc/{pid}/stat") as fh:
                    fields = fh.read().rsplit(")", 1)[1].split()
            except OSError:
                break
            if fields[19] != start or fields[0] in ("Z", "X"):
                break
            time.sleep(0.01)


class WarmPool:
    """Idle fork servers by key (interpreter, mounts, environment), started on demand.

    At most `max_idle` idle servers per key and `max_total` over all keys (the least recently
    used key's servers are stopped first). A key whose server failed to start runs cold for
    `retry_after` seconds, then tries a server again (a long-lived process, such as the reward
    service, is not left cold for good by one start that was killed or timed out)."""

    def __init__(
        self,
        make_argv: ServerArgv,
        max_idle: int = 2,
        max_total: int = 12,
        spool_bytes: int = 0,
        retry_after: float = 60.0,
    ) -> None:
        self.make_argv = make_argv
        self.retry_after = retry_after
        self.spool_bytes = spool_bytes
        self.max_idle = max_idle
        self.max_total = max_total
        self._idle: dict[tuple[object, ...], list[ForkServer]] = {}
        self._broken: dict[tuple[object, ...], float] = {}  # key -> when its start failed
        self._lock = threading.Lock()
        self.started = 0  # servers started
        self.served = 0  # runs served warm

    @staticmethod
    def eligible(spec: RunSpec) -> bool:
        """Whether `spec` is a `python -I -B SCRIPT|-c CODE ...` run a server can do."""
        argv = spec.argv
        return (
            spec.warm
            and len(argv) >= 4
            and argv[0].startswith("/")
            and tuple(argv[1:3]) == _FLAGS
            and ((argv[3] == "-c" and len(argv) >= 5) or not argv[3].startswith("-"))
        )

    def run(self, spec: RunSpec, uid: int) -> RunResult:
        """Run `spec` on an idle server of its key (starting one if none is idle)."""
        key = (spec.argv[0], spec.mounts, spec.env)
        with self._lock:
            failed = self._broken.get(key)
            if failed is not None and time.monotonic() - failed < self.retry_after:
                raise WarmUnavailable("fork servers for this environment failed to start")
            idle = self._idle.setdefault(key, [])
            server = idle.pop() if idle else None
        if server is not None and not server.alive:
            # bubblewrap died (killed from outside): what it left (the namespace's init, the
            # server, the spool and cgroup) goes too
            server.close()
            server = None
        if server is None:
            try:
                server = ForkServer(
                    self.make_argv,
                    spec.mounts,
                    spec.env,
                    spec.argv[0],
                    self.spool_bytes,
                    spec.limits.memory_bytes,
                )
            except WarmUnavailable:
                with self._lock:
                    self._broken[key] = time.monotonic()
                raise
            self.started += 1
        try:
            result = server.run(spec, uid)
        except BaseException:
            server.close()
            raise
        evicted: list[ForkServer] = []
        with self._lock:
            self.served += 1
            idle = self._idle.pop(key, [])
            self._idle[key] = idle  # most recently used last
            if server.alive and len(idle) < self.max_idle:
                idle.append(server)
                server = None
            while sum(len(v) for v in self._idle.values()) > self.max_total:
                oldest = next(iter(self._idle))
                evicted += self._idle.pop(oldest)
        for stale in [*evicted, *([server] if server is not None else [])]:
            stale.close()
        return result

    def stats(self) -> dict[str, int]:
        """Idle servers now, servers started, runs served warm, keys whose servers failed."""
        with self._lock:
            idle = sum(len(v) for v in self._idle.values())
            broken = len(self._broken)
        return {"idle": idle, "started": self.started, "served": self.served, "broken": broken}

    def close(self) -> None:
        """Stop every idle server."""
        with self._lock:
            servers = [s for idle in self._idle.values() for s in idle]
            self._idle.clear()
        for server in servers:
            server.close()
