"""The `local` backend: bubblewrap namespaces, an unprivileged uid, rlimits, an outside timeout.

Inside the sandbox the command sees a fresh root holding only: the programs and shared libraries
of `/usr` (`SandboxConfig.system_paths`, and the merged-/usr links), `/proc`, a minimal `/dev`,
a private size-capped `/tmp`, the workspace at `/workspace` (the only writable tree besides /tmp
and the report folder), and the read-only mounts the caller lists (the interpreter, the seed's
environment, taskmint's runner files). There is no network namespace peer (only loopback), no
IPC or PID sharing with the host, and the command runs as a high, otherwise unused uid with no
capabilities and `no_new_privs`, so `RLIMIT_NPROC` really bounds its processes. The wall-clock
limit is enforced from outside: bubblewrap's process group is killed with SIGKILL. Its init of
the PID namespace runs in a session of its own, outside that group, but `--die-with-parent`
kills it with bubblewrap, and every process inside goes with the init (stopped ones too),
including grandchildren that hold pipes open. (A fork server's bubblewrap must outlive the
thread that started it, so it has no `--die-with-parent`: `sandbox.warm` kills its init itself.)
"""

from __future__ import annotations

import contextlib
import dataclasses
import glob
import itertools
import os
import shutil
import signal
import subprocess
import tempfile
import threading
import time
from pathlib import Path

from taskmint.config import Limits, SandboxConfig
from taskmint.errors import SandboxError, SandboxUnavailableError
from taskmint.lifecycle import track_path, track_process_group
from taskmint.sandbox.base import (
    CHANNEL_ENV,
    REPORT_DIR,
    WORKSPACE,
    CappedOutput,
    Mount,
    RunResult,
    RunSpec,
    Sandbox,
    copy_all,
    in_cgroup,
    memory_cgroup,
    mount_tmpfs,
    protect_workspace,
    remove_cgroup,
    replace_with,
    unmount,
)
from taskmint.sandbox.warm import SERVER_CAPS, WarmUnavailable, shared_pool

__all__ = ["LocalSandbox", "bwrap_path"]

_SETPRIV = "/usr/bin/setpriv"
_PRLIMIT = "/usr/bin/prlimit"
_uid_counter = itertools.count()
_UID_BASE = 200_000
_UID_SPAN = 50_000


def bwrap_path() -> str:
    """The bubblewrap binary, or a clear error naming the package to install."""
    path = shutil.which("bwrap")
    if path is None:
        raise SandboxUnavailableError(
            "bubblewrap is not installed: the local sandbox needs `bwrap`. Install the Debian "
            "package `bubblewrap` (`apt-get install bubblewrap`; `make setup` does this)."
        )
    for tool in (_SETPRIV, _PRLIMIT):
        if not os.path.exists(tool):
            raise SandboxUnavailableError(
                f"{tool} is missing: install the Debian package `util-linux`."
            )
    return path


def _system_mounts(patterns: tuple[str, ...]) -> list[Mount]:
    mounts: list[Mount] = []
    for pattern in patterns:
        for path in sorted(glob.glob(pattern)) if glob.has_magic(pattern) else [pattern]:
            if os.path.isdir(path):
                mounts.append(Mount(source=path, target=path))
    return mounts


def _root_links() -> list[str]:
    args: list[str] = []
    for name in ("bin", "lib", "lib64", "sbin", "lib32", "libx32"):
        host = Path("/") / name
        if host.is_symlink():
            args += ["--symlink", os.readlink(host), f"/{name}"]
        elif host.is_dir():
            args += ["--ro-bind", str(host), f"/{name}"]
    return args


def _chown_tree(root: str, uid: int, gid: int) -> None:
    os.chown(root, uid, gid)
    for dirpath, dirnames, filenames in os.walk(root):
        for name in dirnames + filenames:
            os.lchown(os.path.join(dirpath, name), uid, gid)


class LocalSandbox(Sandbox):
    """Runs commands under bubblewrap on this machine (the embedded default backend)."""

    name = "local"
    supports_channel = True

    def __init__(self, config: SandboxConfig | None = None) -> None:
        self.config = config or SandboxConfig()
        self.bwrap = bwrap_path()
        self.warm = (
            shared_pool(
                (self.bwrap, self.config.system_paths, self.config.workspace_bytes),
                self.server_command,
                spool_bytes=self.config.workspace_bytes,
            )
            if self.config.warm
            else None
        )

    def server_command(
        self,
        mounts: tuple[Mount, ...],
        env: tuple[tuple[str, str], ...],
        spool: str,
        spool_target: str,
    ) -> list[str]:
        """bubblewrap's argv for a fork server (see `sandbox.warm`): the root of a cold run
        with the spool in place of the workspace, and the capabilities the server needs to
        give each run its own namespaces and uid (each run drops them all)."""
        argv = self._namespace_args(mounts, Limits(), env)
        for folder in (WORKSPACE, "/run", REPORT_DIR):
            argv += ["--perms", "0755", "--dir", folder]
        argv += ["--bind", spool, spool_target, "--chdir", "/"]
        for cap in SERVER_CAPS:
            argv += ["--cap-add", cap]
        return [*argv, "--"]

    def close(self) -> None:
        """Nothing to release: the fork servers are shared by the process's local sandboxes
        (see `sandbox.warm.shared_pool`) and stop when it exits."""

    def _allocate_uid(self) -> int:
        # A distinct uid per concurrent run, so one run's process limit is not another's.
        return _UID_BASE + (os.getpid() * 64 + next(_uid_counter)) % _UID_SPAN

    def _namespace_args(
        self, mounts: tuple[Mount, ...], limits: Limits, env: tuple[tuple[str, str], ...]
    ) -> list[str]:
        """bubblewrap's options shared by cold runs and fork servers: namespaces, the root
        (system paths, `mounts`), /proc, /dev, a size-capped /tmp and a clean environment."""
        argv = [
            self.bwrap,
            "--unshare-ipc",
            "--unshare-pid",
            "--unshare-net",
            "--unshare-uts",
            "--unshare-cgroup-try",
            "--new-session",
            "--hostname",
            "sandbox",
            *_root_links(),
            "--proc",
            "/proc",
            "--dev",
            "/dev",
            "--perms",
            "1777",
            "--size",
            str(limits.file_bytes),
            "--tmpfs",
            "/tmp",
        ]
        ordered = sorted(
            [*_system_mounts(self.config.system_paths), *mounts],
            key=lambda m: m.target.count("/"),
        )
        created: set[str] = {"/", "/proc", "/dev", "/tmp"}
        for mount in ordered:
            argv += self._ancestors(mount.target, created, ordered)
            argv += ["--bind" if mount.writable else "--ro-bind", mount.source, mount.target]
            created.add(mount.target)
        argv.append("--clearenv")
        for key, value in env:
            argv += ["--setenv", key, value]
        return argv

    def command(self, spec: RunSpec, uid: int) -> list[str]:
        """The full host argv for `spec` (exposed for inspection and tests)."""
        limits = spec.limits
        argv = self._namespace_args(spec.mounts, limits, spec.env)
        argv.insert(1, "--die-with-parent")
        argv += ["--bind", spec.workspace, WORKSPACE]
        if spec.report_dir is not None:
            argv += ["--perms", "0755", "--dir", "/run", "--bind", spec.report_dir, REPORT_DIR]
        argv += ["--chdir", spec.cwd]
        argv += ["--cap-add", "CAP_SETUID", "--cap-add", "CAP_SETGID", "--"]
        argv += [
            _PRLIMIT,
            f"--cpu={limits.cpu_seconds}",
            f"--as={limits.memory_bytes}",
            f"--nproc={limits.processes}",
            f"--fsize={limits.file_bytes}",
            f"--nofile={limits.open_files}",
            "--core=0",
            "--",
            _SETPRIV,
            f"--reuid={uid}",
            f"--regid={uid}",
            "--clear-groups",
            "--inh-caps=-all",
            "--bounding-set=-all",
            "--no-new-privs",
            "--",
            *spec.argv,
        ]
        return argv

    @staticmethod
    def _ancestors(target: str, created: set[str], mounts: list[Mount]) -> list[str]:
        # bubblewrap copies the mode of the host's parent folders (e.g. /root is 0700), which
        # would hide the mount from the unprivileged uid; create ancestors as 0755 instead,
        # unless they lie inside another mount.
        out: list[str] = []
        parts = Path(target).parts
        for i in range(2, len(parts)):
            anc = str(Path(*parts[:i]))
            if anc in created or any(
                anc.startswith(m.target.rstrip("/") + "/") for m in mounts if m.target != target
            ):
                continue
            out += ["--perms", "0755", "--dir", anc]
            created.add(anc)
        return out

    def run(self, spec: RunSpec) -> RunResult:
        """Run `spec` under bubblewrap, as an unprivileged uid, bounded by `spec.limits`."""
        if not os.path.isdir(spec.workspace):
            raise SandboxError(f"workspace {spec.workspace} is not a folder")
        uid = self._allocate_uid()
        protect_workspace(spec.workspace, spec.readonly, uid)
        if spec.report_dir is not None:
            _chown_tree(spec.report_dir, uid, uid)
        if self.warm is not None and self.warm.eligible(spec):
            with contextlib.suppress(WarmUnavailable):  # then it runs cold, below
                return self.warm.run(spec, uid)
        with contextlib.ExitStack() as stack:
            fds = _open_channel(spec, stack)
            if fds:
                # The descriptors are inherited through bubblewrap, prlimit and setpriv; the
                # files behind them are not mounted, so nothing inside can reopen them.
                channel = (CHANNEL_ENV, f"{fds[0]} {fds[1]}")
                spec = dataclasses.replace(spec, env=(*spec.env, channel))
            if self.config.workspace_bytes:
                spec = self._capped(spec, stack)
            return self._run_cold(spec, uid, fds)

    def _capped(self, spec: RunSpec, stack: contextlib.ExitStack) -> RunSpec:
        """`spec` with its workspace and report folder copied onto a size-capped tmpfs (and
        copied back when the run ends, unless `keep_workspace` is False): no run can fill the
        host's disk."""
        cap = tempfile.mkdtemp(prefix="taskmint-cap-")
        track_path(cap)  # unmounted and removed by the reaper if taskmint dies first
        stack.callback(os.rmdir, cap)
        try:
            mount_tmpfs(cap, self.config.workspace_bytes)
        except OSError as exc:
            raise SandboxError(
                f"{exc}; the local sandbox caps each workspace on a tmpfs, which needs root. "
                "Set sandbox.workspace_bytes = 0 to run without the cap."
            ) from exc
        stack.callback(unmount, cap)
        ws = os.path.join(cap, "ws")
        try:
            copy_all(spec.workspace, ws)
            if spec.keep_workspace:
                stack.callback(replace_with, ws, spec.workspace)
            report = None
            if spec.report_dir is not None:
                report = os.path.join(cap, "report")
                copy_all(spec.report_dir, report)
                stack.callback(replace_with, report, spec.report_dir)
        except OSError as exc:
            raise SandboxError(f"the workspace does not fit in its cap: {exc}") from exc
        return dataclasses.replace(spec, workspace=ws, report_dir=report)

    def _run_cold(self, spec: RunSpec, uid: int, fds: tuple[int, ...]) -> RunResult:
        # The whole sandbox shares one memory cap (RLIMIT_AS alone bounds each process).
        cgroup = memory_cgroup(spec.limits.memory_bytes)
        try:
            return self._run_cold_in(spec, uid, fds, cgroup)
        finally:
            if cgroup is not None:
                remove_cgroup(cgroup)

    def _run_cold_in(
        self, spec: RunSpec, uid: int, fds: tuple[int, ...], cgroup: str | None
    ) -> RunResult:
        argv = in_cgroup(cgroup, self.command(spec, uid))
        start = time.monotonic()
        try:
            proc = subprocess.Popen(
                argv,
                stdin=subprocess.DEVNULL,
                stdout=subprocess.PIPE,
                stderr=subprocess.STDOUT,
                start_new_session=True,
                pass_fds=fds,
            )
        except OSError as exc:
            raise SandboxError(f"could not start bubblewrap: {exc}") from exc
        track_process_group(proc.pid)  # bubblewrap dies with us; its group is killed too
        reader = _CappedReader(proc, spec.limits.output_bytes)
        reader.start()
        timed_out = False
        try:
            proc.wait(timeout=spec.limits.wall_seconds)
        except subprocess.TimeoutExpired:
            timed_out = True
        finally:
            _kill_group(proc)
        reader.join(timeout=10)
        wall = time.monotonic() - start
        output, truncated = reader.text()
        if not timed_out and proc.returncode < 0:
            # bubblewrap itself was killed: nothing inside the sandbox can signal it (another
            # uid, outside the run's PID namespace), so this came from outside.
            raise SandboxError(f"the sandbox was killed from outside (signal {-proc.returncode})")
        return RunResult(
            exit_code=None if timed_out else proc.returncode,
            timed_out=timed_out,
            wall_time=wall,
            output=output,
            output_truncated=truncated,
        )


def _open_channel(spec: RunSpec, stack: contextlib.ExitStack) -> tuple[int, ...]:
    """The channel's (input, report) descriptors for a cold run, or () without a channel."""
    if spec.channel_report is None:
        return ()
    data = spec.channel_input or b""
    with tempfile.TemporaryFile() as fh:  # unlinked at once: no path leads to it
        fh.write(data)
        fh.flush()
        fd_in = os.dup(fh.fileno())
    stack.callback(os.close, fd_in)
    os.lseek(fd_in, 0, os.SEEK_SET)
    fd_out = os.open(spec.channel_report, os.O_WRONLY | os.O_CREAT | os.O_APPEND, 0o600)
    stack.callback(os.close, fd_out)
    return fd_in, fd_out


def _kill_group(proc: subprocess.Popen[bytes]) -> None:
    with contextlib.suppress(ProcessLookupError, PermissionError):
        os.killpg(proc.pid, signal.SIGKILL)
    try:
        proc.wait(timeout=10)
    except subprocess.TimeoutExpired:  # pragma: no cover - SIGKILL does not fail
        proc.kill()
        proc.wait()


class _CappedReader(threading.Thread):
    """Drains a pipe into a `CappedOutput`."""

    def __init__(self, proc: subprocess.Popen[bytes], cap: int) -> None:
        super().__init__(daemon=True)
        assert proc.stdout is not None
        self.stream = proc.stdout
        self.output = CappedOutput(cap)

    def run(self) -> None:
        while True:
            chunk = self.stream.read1(65536)  # type: ignore[attr-defined]
            if not chunk:
                break
            self.output.add(chunk)
        self.stream.close()

    def text(self) -> tuple[str, bool]:
        return self.output.text()
