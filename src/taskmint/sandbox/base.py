"""The sandbox interface shared by every backend."""

from __future__ import annotations

import abc
import collections
import os
import secrets
import shutil
import stat
import subprocess
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from functools import wraps
from types import TracebackType

from taskmint.config import Limits
from taskmint.lifecycle import track_path

__all__ = [
    "CHANNEL_ENV",
    "METER",
    "CappedOutput",
    "Mount",
    "RunMeter",
    "RunResult",
    "RunSpec",
    "Sandbox",
    "copy_all",
    "in_cgroup",
    "memory_cgroup",
    "mount_tmpfs",
    "protect_workspace",
    "remove_cgroup",
    "replace_with",
    "unmount",
]

WORKSPACE = "/workspace"  # where the workspace appears inside every sandbox
REPORT_DIR = "/run/taskmint"  # the out-of-band report folder, outside the workspace
CHANNEL_ENV = "TASKMINT_CHANNEL"  # "IN OUT": the channel's descriptors inside the sandbox


@dataclass(frozen=True, slots=True, kw_only=True)
class Mount:
    """A host path made visible inside the sandbox (read-only unless `writable`)."""

    source: str
    target: str
    writable: bool = False


@dataclass(frozen=True, slots=True, kw_only=True)
class RunSpec:
    """One command to run over a workspace.

    `workspace` is a host folder the backend may modify (it becomes `/workspace`); `report_dir`
    is a host folder that appears at `/run/taskmint` for the structured test report. Everything
    else visible inside is listed in `mounts`, read-only.
    """

    argv: tuple[str, ...]
    workspace: str
    report_dir: str | None = None
    mounts: tuple[Mount, ...] = ()
    env: tuple[tuple[str, str], ...] = ()
    limits: Limits = field(default_factory=Limits)
    cwd: str = WORKSPACE
    # The backend may serve a `python -I -B ...` run from a pre-started interpreter (same
    # isolation; the hash seed is then the server's, not a fresh one). False forces a cold run.
    warm: bool = True
    # The out-of-band channel (backends with `supports_channel`): `channel_input` is readable
    # once on an inherited descriptor, and `channel_report` (a host file, never mounted) is
    # appended to through another; `CHANNEL_ENV` names both descriptors inside. Neither is
    # reachable by any path inside the sandbox.
    channel_input: bytes | None = None
    channel_report: str | None = None
    # Workspace paths (relative) that stay owned by root and read-only for the run; their
    # ancestors, the workspace root included, become root-owned and sticky, so the run can add
    # files beside them but neither change, rename nor delete them.
    readonly: tuple[str, ...] = ()
    # False: the caller deletes the workspace unread after the run (validation's trees), so a
    # backend that runs a copy of it need not copy the run's changes back.
    keep_workspace: bool = True


@dataclass(frozen=True, slots=True, kw_only=True)
class RunResult:
    """What happened to one run. The exit code is information, never a verdict."""

    exit_code: int | None
    timed_out: bool
    wall_time: float
    output: str
    output_truncated: bool = False


class CappedOutput:
    """Collects a command's output, keeping its first and last `cap / 2` bytes."""

    def __init__(self, cap: int) -> None:
        self.half = max(cap // 2, 1)
        self.head = bytearray()
        self.tail: collections.deque[bytes] = collections.deque()
        self.tail_len = 0
        self.truncated = False

    def add(self, chunk: bytes) -> None:
        """Take one chunk of output."""
        if len(self.head) < self.half:
            take = self.half - len(self.head)
            self.head += chunk[:take]
            chunk = chunk[take:]
        if chunk:
            self.tail.append(chunk)
            self.tail_len += len(chunk)
            while self.tail_len > self.half:
                self.truncated = True
                drop = self.tail_len - self.half
                first = self.tail[0]
                if len(first) <= drop:
                    self.tail.popleft()
                    self.tail_len -= len(first)
                else:
                    self.tail[0] = first[drop:]
                    self.tail_len -= drop

    def text(self) -> tuple[str, bool]:
        """The kept output (decoded, a marker where bytes were dropped) and whether any were."""
        body = bytes(self.head)
        if self.truncated:
            body += b"\n[... output truncated by taskmint ...]\n"
        body += b"".join(list(self.tail))
        return body.decode("utf-8", "replace"), self.truncated


class RunMeter:
    """The sandbox runs of this process, every backend and thread: how many, and their summed
    wall seconds (what a run costs the machine beside the host's own work). Read it before and
    after a piece of work; the difference is that work's."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._depth = threading.local()
        self.runs = 0
        self.seconds = 0.0

    def reading(self) -> tuple[int, float]:
        """(runs, seconds) so far."""
        with self._lock:
            return self.runs, self.seconds

    def metered(self, run: Callable[[Sandbox, RunSpec], RunResult]) -> Callable[..., RunResult]:
        """`run`, counted once however many backends' `run` it goes through (a subclass that
        calls its parent's is one run)."""

        @wraps(run)
        def counted(sandbox: Sandbox, spec: RunSpec) -> RunResult:
            depth = getattr(self._depth, "value", 0)
            self._depth.value = depth + 1
            started = time.monotonic()
            try:
                return run(sandbox, spec)
            finally:
                self._depth.value = depth
                if depth == 0:
                    elapsed = time.monotonic() - started
                    with self._lock:
                        self.runs += 1
                        self.seconds += elapsed

        counted.__metered__ = True  # type: ignore[attr-defined]
        return counted


METER = RunMeter()


class Sandbox(abc.ABC):
    """A place to run untrusted commands. Use as a context manager to guarantee cleanup.
    Every backend's `run` is counted by `METER`."""

    name: str = "abstract"
    supports_channel: bool = False  # honours RunSpec.channel_input / channel_report

    def __init_subclass__(cls, **kwargs: object) -> None:
        super().__init_subclass__(**kwargs)
        run = cls.__dict__.get("run")
        if run is not None and not getattr(run, "__metered__", False):
            cls.run = METER.metered(run)  # type: ignore[method-assign]

    @abc.abstractmethod
    def run(self, spec: RunSpec) -> RunResult:
        """Run `spec.argv` inside the sandbox and wait for it (bounded by `spec.limits`)."""

    def close(self) -> None:  # noqa: B027 - optional hook
        """Release whatever the backend holds."""

    def __enter__(self) -> Sandbox:
        return self

    def __exit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        self.close()


def protect_workspace(root: str, readonly: tuple[str, ...], uid: int) -> None:
    """Give the workspace to `uid` except `readonly` paths (root-owned, not writable) and their
    ancestors (root-owned, sticky and world-writable: the run adds files beside them but cannot
    rename or delete what it does not own). Symlinks are never followed."""
    keep: set[str] = set()
    ancestors: set[str] = set()
    for rel in readonly:
        parts = [p for p in rel.split("/") if p not in ("", ".")]
        if not parts or ".." in parts:
            continue
        keep.add(os.path.join(root, *parts))
        for i in range(len(parts)):
            ancestors.add(os.path.join(root, *parts[:i]))

    kept_dirs: set[str] = set()  # walked folders that are, or are inside, a kept path

    def own(path: str, is_dir: bool, inside: bool) -> None:
        st = os.lstat(path)
        kept = inside or path in keep
        if stat.S_ISLNK(st.st_mode):
            os.lchown(path, 0 if kept else uid, 0 if kept else uid)
        elif path in ancestors:
            os.chown(path, 0, 0)
            os.chmod(path, 0o1777)
        elif kept:
            os.chown(path, 0, 0)
            os.chmod(path, 0o755 if is_dir else (0o755 if st.st_mode & 0o111 else 0o644))
        else:
            os.chown(path, uid, uid)

    own(root, True, False)
    if root in keep:
        kept_dirs.add(root)
    for dirpath, dirnames, filenames in os.walk(root):
        inside = dirpath in kept_dirs
        for name in dirnames:
            path = os.path.join(dirpath, name)
            own(path, True, inside)
            if inside or path in keep:
                kept_dirs.add(path)
        for name in filenames:
            own(os.path.join(dirpath, name), False, inside)


def mount_tmpfs(path: str, size: int) -> None:
    """Mount a tmpfs of `size` bytes at `path` (needs root), or raise OSError saying why."""
    proc = subprocess.run(
        ["mount", "-t", "tmpfs", "-o", f"size={size},mode=0755", "tmpfs", path],
        capture_output=True,
        text=True,
        timeout=30,
    )
    if proc.returncode != 0:
        raise OSError(f"cannot mount a size-capped tmpfs at {path}: {proc.stderr.strip()}")


def unmount(path: str) -> None:
    """Detach the mount at `path` (lazily: it goes when nothing uses it)."""
    subprocess.run(["umount", "-l", path], capture_output=True, timeout=30)


def copy_all(src: str, dst: str) -> None:
    """Copy the folder `src` to `dst` with owners, modes and links as they are (`cp -a`)."""
    proc = subprocess.run(["cp", "-a", src, dst], capture_output=True, text=True, timeout=300)
    if proc.returncode != 0:
        raise OSError(f"cannot copy {src} to {dst}: {proc.stderr.strip()[:500]}")


def replace_with(src: str, dst: str) -> None:
    """Make the folder `dst` hold what `src` holds (the run's changes, copied back)."""
    shutil.rmtree(dst, ignore_errors=True)
    copy_all(src, dst)


CGROUP_MEMORY = "/sys/fs/cgroup/memory"  # cgroup v1's memory controller


def memory_cgroup(limit: int) -> str | None:
    """A fresh memory cgroup (v1) capped at `limit` bytes for one sandbox, or None where the
    controller is missing or not writable (then only the per-process RLIMIT_AS bounds memory).
    Remove it with `remove_cgroup` once its processes are gone."""
    parent = os.path.join(CGROUP_MEMORY, "taskmint")
    try:
        os.makedirs(parent, exist_ok=True)
        # named for its owner (a process that died with cgroups left can be told from others)
        path = os.path.join(parent, f"{os.getpid()}-{secrets.token_hex(6)}")
        os.mkdir(path)
    except OSError:
        return None
    track_path(path, cgroup=True)  # removed by the reaper if taskmint dies first
    try:
        with open(os.path.join(path, "memory.limit_in_bytes"), "w") as fh:
            fh.write(str(limit))
        swap = os.path.join(path, "memory.memsw.limit_in_bytes")
        if os.path.exists(swap):
            with open(swap, "w") as fh:
                fh.write(str(limit))
    except OSError:
        remove_cgroup(path)
        return None
    return path


def remove_cgroup(path: str) -> None:
    """Remove a cgroup made by `memory_cgroup` (retrying while its last processes exit)."""
    for _ in range(50):
        try:
            os.rmdir(path)
            return
        except FileNotFoundError:
            return
        except OSError:
            time.sleep(0.05)


def in_cgroup(path: str | None, argv: list[str]) -> list[str]:
    """`argv` run inside the cgroup at `path` (the shell joins it, then execs `argv`)."""
    if path is None:
        return argv
    return ["/bin/sh", "-c", 'echo $$ > "$0/cgroup.procs" && exec "$@"', path, *argv]
