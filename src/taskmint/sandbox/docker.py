"""The `docker` backend: one container per run, or a warm pool of containers for `verify`.

The run's image comes from its mounts: the seed's venv (the mount whose source holds a
`pyvenv.cfg`) becomes the environment image built by `taskmint.sandbox.images` (the interpreter
prefix and its emptied site-packages/test are already in that image); every other read-only
mount (taskmint's runner files, a leak scan's needles) is a read-only bind mount.

Every container runs with no network (`network_mode="none"`), a read-only root, tmpfs at
/workspace, /tmp and /run/taskmint, all capabilities dropped, `no-new-privileges`, memory,
CPU and pids limits, and `docker-init` as pid 1 with an idle keeper process under a uid the
command cannot signal. The command itself runs under a uid of its own (distinct per container,
so `RLIMIT_NPROC` counts only that container's processes and leaves the pids cgroup headroom
for taskmint's own clean-up) with rlimits on CPU time, address space, processes, file size and
open files.

One run is two `exec`s. The first streams a tar of the workspace and the report folder's inputs
on stdin, unpacks it and `exec`s the command; the wall clock is enforced from here (the SDK's
exec has none): on expiry the whole container is killed. The second kills every process of the
command's uid, streams the report folder out as a tar (so nothing the command left running can
write to it afterwards) and, for a warm container, wipes every writable place so the next use
starts pristine; a container whose reset fails, or that timed out, is removed, never reused.
Containers are removed on every path: after each cold run, by `close()` (and at exit), on
errors and interrupts; those left by a killed process are swept by the next `DockerSandbox` and
end on their own when their keeper's lifetime runs out (they are started with auto-remove).
"""

from __future__ import annotations

import atexit
import collections
import contextlib
import io
import itertools
import os
import socket
import tarfile
import threading
import time
import uuid
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from taskmint.config import Limits, SandboxConfig
from taskmint.errors import SandboxError
from taskmint.sandbox.base import (
    REPORT_DIR,
    WORKSPACE,
    CappedOutput,
    Mount,
    RunResult,
    RunSpec,
    Sandbox,
)
from taskmint.sandbox.images import (
    DEFAULT_BASE_IMAGE,
    KEEPER_UID,
    build_environment_image,
    build_runtime_image,
    docker_client,
    image_exists,
)

__all__ = ["DockerOptions", "DockerSandbox"]

_LABEL = "taskmint.sandbox"
_OWNER = "taskmint.owner"
_UID_BASE = 300_000  # apart from the local backend's range
_UID_SPAN = 50_000
_uid_counter = itertools.count()
_PID_HEADROOM = 16  # pids beyond the command's own limit, for the keeper and the clean-up exec
_COLLECT_SECONDS = 60  # killing, copying the report out, wiping: far less in practice

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


@dataclass(frozen=True, slots=True, kw_only=True)
class DockerOptions:
    """Settings of the docker backend (the limits themselves come with each `RunSpec`)."""

    base_image: str = DEFAULT_BASE_IMAGE
    # Containers kept ready per image and limits; 0 runs every command in a fresh container.
    warm: int = 0
    cpus: float = 1.0
    workspace_bytes: int = 1024**3
    report_bytes: int = 64 * 1024**2
    shm_bytes: int = 64 * 1024**2
    # A container's own lifetime: its keeper exits then and the daemon removes it, so even a
    # SIGKILLed taskmint leaves nothing behind for long.
    keeper_seconds: int = 3600
    # Build a missing environment image on first use (else: a clear error).
    build_images: bool = True
    # Bind the host venv and interpreter prefix read-only (as the local backend does) instead
    # of reading them from the environment image: the same files, faster to start on storage
    # drivers such as fuse-overlayfs; only for a daemon on this machine.
    bind_environment: bool = False
    docker_host: str | None = None

    def __post_init__(self) -> None:
        if self.warm < 0 or self.cpus <= 0 or self.keeper_seconds < 60:
            raise SandboxError("docker options: warm >= 0, cpus > 0, keeper_seconds >= 60")


@dataclass(frozen=True, slots=True)
class _Key:
    image: str
    binds: tuple[tuple[str, str, bool], ...]
    memory: int
    processes: int
    tmp_bytes: int


@dataclass(slots=True)
class _Box:
    cid: str
    uid: int
    key: _Key
    born: float


class DockerSandbox(Sandbox):
    """Runs commands in containers of the local Docker Engine (see the module docstring)."""

    name = "docker"

    def __init__(
        self,
        config: SandboxConfig | None = None,
        *,
        options: DockerOptions | None = None,
        client: Any = None,
    ) -> None:
        self.config = config or SandboxConfig()
        self.options = options or DockerOptions()
        if client is None:
            client = docker_client(self.options.docker_host)
        self.client = client
        self.api = client.api
        self._session = uuid.uuid4().hex[:12]
        self._lock = threading.Lock()
        self._idle: dict[_Key, list[_Box]] = collections.defaultdict(list)
        self._live: dict[str, _Box] = {}
        self._images: dict[tuple[str, str], str] = {}
        self._closed = False
        self.sweep_stale()
        atexit.register(self.close)

    # --- containers ---------------------------------------------------------------------

    def sweep_stale(self) -> int:
        """Remove containers left by taskmint processes of this host that no longer run."""
        removed = 0
        host = socket.gethostname()
        for c in self.api.containers(all=True, filters={"label": _LABEL}):
            owner = (c.get("Labels") or {}).get(_OWNER, "")
            owner_host, _, pid = owner.rpartition(":")
            if owner_host != host or not pid.isdigit() or _pid_alive(int(pid)):
                continue
            with contextlib.suppress(Exception):
                self.api.remove_container(c["Id"], force=True)
                removed += 1
        return removed

    def _new_uid(self) -> int:
        return _UID_BASE + (os.getpid() * 64 + next(_uid_counter)) % _UID_SPAN

    def _create(self, key: _Key) -> _Box:
        import docker.types

        uid = self._new_uid()
        opts = self.options
        mine = f"uid={uid},gid={uid}"
        host_config = self.api.create_host_config(
            network_mode="none",
            read_only=True,
            cap_drop=["ALL"],
            security_opt=["no-new-privileges"],
            mem_limit=key.memory,
            memswap_limit=key.memory,
            pids_limit=key.processes + _PID_HEADROOM,
            nano_cpus=int(opts.cpus * 1e9),
            shm_size=opts.shm_bytes,
            init=True,
            auto_remove=True,
            ipc_mode="private",
            tmpfs={
                WORKSPACE: f"rw,exec,nosuid,nodev,size={opts.workspace_bytes},mode=0755,{mine}",
                REPORT_DIR: f"rw,noexec,nosuid,nodev,size={opts.report_bytes},mode=0755,{mine}",
                "/tmp": f"rw,exec,nosuid,nodev,size={key.tmp_bytes},mode=1777",
            },
            binds=[f"{src}:{dst}:{'rw' if rw else 'ro'}" for src, dst, rw in key.binds],
            ulimits=[docker.types.Ulimit(name="core", soft=0, hard=0)],
        )
        try:
            created = self.api.create_container(
                key.image,
                command=["/bin/sleep", str(self.options.keeper_seconds)],
                user=f"{KEEPER_UID}:{KEEPER_UID}",
                hostname="sandbox",
                network_disabled=True,
                working_dir="/",
                environment={},
                labels={
                    _LABEL: self._session,
                    _OWNER: f"{socket.gethostname()}:{os.getpid()}",
                },
                host_config=host_config,
            )
        except Exception as exc:
            raise SandboxError(f"could not create a container from {key.image}: {exc}") from exc
        box = _Box(cid=created["Id"], uid=uid, key=key, born=time.monotonic())
        with self._lock:
            self._live[box.cid] = box
        try:
            self.api.start(box.cid)
        except Exception as exc:
            self._discard(box)
            raise SandboxError(f"could not start a container from {key.image}: {exc}") from exc
        return box

    def _discard(self, box: _Box) -> None:
        with self._lock:
            self._live.pop(box.cid, None)
        try:
            self.api.remove_container(box.cid, force=True)
        except Exception:
            # Already being removed (auto-remove after a kill): wait until it is gone.
            with contextlib.suppress(Exception):
                self.api.wait(box.cid, timeout=30, condition="removed")

    def _checkout(self, key: _Key) -> _Box:
        fresh_after = time.monotonic() - (self.options.keeper_seconds - 120)
        stale: list[_Box] = []
        found: _Box | None = None
        with self._lock:
            idle = self._idle[key]
            while idle and found is None:
                box = idle.pop()
                if box.born > fresh_after:
                    found = box
                else:
                    stale.append(box)  # its keeper is about to end
        for box in stale:
            self._discard(box)
        return found if found is not None else self._create(key)

    def _checkin(self, box: _Box) -> None:
        with self._lock:
            if not self._closed and len(self._idle[box.key]) < self.options.warm:
                self._idle[box.key].append(box)
                return
        self._discard(box)

    def prepare(self, spec: RunSpec, count: int = 1) -> None:
        """Start up to `count` warm containers for runs like `spec` ahead of the first run."""
        key = self._key(spec)
        with self._lock:
            missing = min(count, self.options.warm) - len(self._idle[key])
        for _ in range(max(missing, 0)):
            self._checkin(self._create(key))

    def close(self) -> None:
        """Remove every container this sandbox started (idle or, after an interrupt, busy)."""
        with self._lock:
            self._closed = True
            boxes = list(self._live.values())
            self._idle.clear()
        for box in boxes:
            self._discard(box)
        atexit.unregister(self.close)

    # --- images and mounts --------------------------------------------------------------

    def _image_for(self, venv: Mount | None) -> str:
        slot = (venv.source, venv.target) if venv else ("", "")
        with self._lock:
            cached = self._images.get(slot)
        if cached is not None:
            return cached
        base = self.options.base_image
        if venv is None:
            image = build_runtime_image(self.client, base=base)
        else:
            tag = f"taskmint-env:{Path(venv.source).name}"
            if not self.options.build_images and image_exists(self.client, tag) is None:
                raise SandboxError(
                    f"no image {tag} for the environment at {venv.source}; build it with "
                    "`taskmint images build` or allow build_images in the docker options"
                )
            image = build_environment_image(
                Path(venv.source), self.client, base=base, target=venv.target
            )
        with self._lock:
            self._images[slot] = image
        return image

    def _key(self, spec: RunSpec) -> _Key:
        venvs = [m for m in spec.mounts if Path(m.source, "pyvenv.cfg").is_file()]
        if len(venvs) > 1:
            raise SandboxError("a docker run takes at most one venv mount")
        venv = venvs[0] if venvs else None
        if self.options.bind_environment:
            return _Key(
                image=self._image_for(None),
                binds=tuple(
                    (os.path.realpath(m.source), m.target, m.writable) for m in spec.mounts
                ),
                memory=spec.limits.memory_bytes,
                processes=spec.limits.processes,
                tmp_bytes=spec.limits.file_bytes,
            )
        prefix = _venv_home(Path(venv.source)) if venv else None
        binds: list[tuple[str, str, bool]] = []
        for m in spec.mounts:
            if m is venv:
                continue
            if prefix is not None and _in_image(m, prefix):
                continue
            binds.append((os.path.realpath(m.source), m.target, m.writable))
        limits = spec.limits
        return _Key(
            image=self._image_for(venv),
            binds=tuple(binds),
            memory=limits.memory_bytes,
            processes=limits.processes,
            tmp_bytes=limits.file_bytes,
        )

    # --- running ------------------------------------------------------------------------

    def run(self, spec: RunSpec) -> RunResult:
        """Run `spec` in a container (a warm one when the pool has one), bounded by its limits.

        The host workspace is only read; outcomes travel back through the report folder.
        """
        if not os.path.isdir(spec.workspace):
            raise SandboxError(f"workspace {spec.workspace} is not a folder")
        if self._closed:
            raise SandboxError("this docker sandbox is closed")
        key = self._key(spec)
        inputs = _pack_inputs(spec)
        box = self._checkout(key)
        keep = False
        try:
            exit_code, timed_out, wall, reader = self._run_in(box, spec, inputs)
            report, clean = (None, False) if timed_out else self._collect(box, wipe=self._warm)
            # Everything of the command is dead now (or the container is), so the output ends.
            reader.join(timeout=5)
            if spec.report_dir is not None and report is not None:
                _unpack_report(report, Path(spec.report_dir))
            keep = clean
            output, truncated = reader.text()
            return RunResult(
                exit_code=exit_code,
                timed_out=timed_out,
                wall_time=wall,
                output=output,
                output_truncated=truncated,
            )
        finally:
            if keep:
                self._checkin(box)
            else:
                self._discard(box)

    @property
    def _warm(self) -> bool:
        return self.options.warm > 0

    def _exec(self, box: _Box, cmd: list[str], *, stdin: bool) -> tuple[str, Any]:
        try:
            eid = self.api.exec_create(
                box.cid,
                cmd,
                stdin=stdin,
                stdout=True,
                stderr=True,
                tty=False,
                user=f"{box.uid}:{box.uid}",
            )["Id"]
            sock = self.api.exec_start(eid, socket=True)
        except Exception as exc:
            raise SandboxError(f"could not exec in container {box.cid[:12]}: {exc}") from exc
        return eid, sock

    def _run_in(
        self, box: _Box, spec: RunSpec, inputs: bytes
    ) -> tuple[int | None, bool, float, _FrameReader]:
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
        eid, sock = self._exec(box, cmd, stdin=True)
        reader = _FrameReader(sock, limits.output_bytes)
        reader.start()
        raw = _raw_socket(sock)
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

    def _collect(self, box: _Box, *, wipe: bool) -> tuple[bytes | None, bool]:
        script = _COLLECT + (_WIPE if wipe else "")
        try:
            eid, sock = self._exec(box, ["/bin/sh", "-c", script], stdin=False)
        except SandboxError:
            return None, False
        reader = _FrameReader(sock, 1 << 62, keep_stdout_only=True)
        reader.start()
        reader.join(timeout=_COLLECT_SECONDS)
        if reader.is_alive():
            return None, False  # the caller removes the container, which ends the stream
        code = self.api.exec_inspect(eid).get("ExitCode")
        if code not in (0, 4):  # 3: tar failed; anything else: the clean-up did not finish
            return None, False
        return bytes(reader.output.head), code == 0


def _pid_alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    return True


def _venv_home(venv: Path) -> str | None:
    for line in (venv / "pyvenv.cfg").read_text(encoding="utf-8").splitlines():
        key, _, value = line.partition("=")
        if key.strip() == "home":
            return os.path.dirname(os.path.realpath(value.strip()))
    return None


def _in_image(mount: Mount, prefix: str) -> bool:
    """Whether the environment image already provides `mount`: the interpreter prefix itself,
    or the emptied site-packages/test folders under it."""
    if mount.writable:
        return False
    if os.path.realpath(mount.source) == prefix and mount.target == prefix:
        return True
    lib = Path(prefix, "lib")
    target = Path(mount.target)
    hidden = target.parent.parent == lib and target.name in ("site-packages", "test")
    return hidden and os.path.isdir(mount.source) and not os.listdir(mount.source)


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


def _pack_inputs(spec: RunSpec) -> bytes:
    """A tar of the workspace (as `workspace/`) and the report folder's inputs (as
    `run/taskmint/`); only folders, regular files and symlinks."""

    def keep(info: tarfile.TarInfo) -> tarfile.TarInfo | None:
        if not (info.isdir() or info.isreg() or info.issym()):
            return None
        info.uid = info.gid = 0
        info.uname = info.gname = ""
        info.mode |= 0o700 if info.isdir() else 0o600
        return info

    buf = io.BytesIO()
    with tarfile.open(fileobj=buf, mode="w", format=tarfile.PAX_FORMAT) as tar:
        tar.add(spec.workspace, arcname=WORKSPACE.lstrip("/"), filter=keep)
        if spec.report_dir is not None:
            tar.add(spec.report_dir, arcname=REPORT_DIR.lstrip("/"), filter=keep)
    return buf.getvalue()


def _unpack_report(data: bytes, dest: Path) -> None:
    """Unpack the report tar into `dest`: regular files and folders only, inside `dest`."""
    dest.mkdir(parents=True, exist_ok=True)
    with tarfile.open(fileobj=io.BytesIO(data), mode="r") as tar:
        members = [m for m in tar.getmembers() if m.isreg() or m.isdir()]
        tar.extractall(dest, members=members, filter="data")


def _raw_socket(sock: Any) -> socket.socket:
    raw = getattr(sock, "_sock", sock)
    assert isinstance(raw, socket.socket)
    return raw


class _FrameReader(threading.Thread):
    """Reads the multiplexed stdout/stderr of an exec into a `CappedOutput` (or, with
    `keep_stdout_only`, only stdout)."""

    def __init__(self, sock: Any, cap: int, *, keep_stdout_only: bool = False) -> None:
        super().__init__(daemon=True)
        self.sock = sock
        self.stdout_only = keep_stdout_only
        self.output = CappedOutput(cap)

    def run(self) -> None:
        from docker.utils.socket import frames_iter

        try:
            for stream, chunk in frames_iter(self.sock, tty=False):
                if self.stdout_only and stream != 1:
                    continue
                self.output.add(chunk)
        except (OSError, ValueError):
            pass
        finally:
            with contextlib.suppress(Exception):
                self.sock.close()

    @property
    def truncated(self) -> bool:
        return self.output.truncated

    def text(self) -> tuple[str, bool]:
        return self.output.text()
