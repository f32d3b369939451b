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
command's uid and streams the report folder out as a tar (so nothing the command left running
can write to it afterwards). A warm container then goes back to the pool and is wiped in the
background (every writable place) so the next use starts pristine; for `python -I -B` runs the
same background `exec` then starts the next run's interpreter, preloaded, as the run's uid (a
standby: `forkserver.serve_once`), which receives the next run's request and inputs on stdin
and becomes that one run. A container whose reset fails, or that timed out, is removed, never
reused.
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
import json
import os
import socket
import struct
import tarfile
import threading
import time
import uuid
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from taskmint.config import Limits, SandboxConfig
from taskmint.errors import SandboxError
from taskmint.lifecycle import track_container
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
from taskmint.sandbox.warm import WarmPool

__all__ = ["DockerOptions", "DockerSandbox", "sweep_environment_volumes"]

_LABEL = "taskmint.sandbox"
_OWNER = "taskmint.owner"
_TOKEN = "taskmint.box"
_UID_BASE = 300_000  # apart from the local backend's range
_UID_SPAN = 50_000
_uid_counter = itertools.count()
_PID_HEADROOM = 16  # pids beyond the command's own limit, for the keeper and the clean-up exec
_COLLECT_SECONDS = 60  # killing, copying the report out, wiping: far less in practice
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
    # Read the environment image's venv and interpreter prefix through named volumes filled
    # once from the image (read-only in every run) instead of through the image's layers: the
    # same files, but storage drivers such as fuse-overlayfs make every file access of the
    # interpreter slow (importing pytest there costs twice the CPU). Works for any daemon; if
    # the volumes cannot be made, runs read the image as before.
    environment_volumes: bool = True
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
    volumes: tuple[tuple[str, str], ...] = ()  # (volume, target), read-only


@dataclass(slots=True)
class _Standby:
    """A preloaded interpreter waiting in a warm container for its one run (see `_prep`)."""

    python: str
    env: tuple[tuple[str, str], ...]
    eid: str
    sock: Any


@dataclass(slots=True)
class _Box:
    cid: str
    uid: int
    key: _Key
    born: float
    # Set while the container is being made pristine (and a standby started) in the
    # background after a use; `_checkout` waits for it and drops the container if it failed.
    prep: threading.Thread | None = None
    ready: bool = True
    standby: _Standby | None = None


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
        self._volumes: dict[tuple[str, tuple[str, ...]], tuple[tuple[str, str], ...]] = {}
        self._closed = False
        self._adding = 0  # pooled containers being started in the background
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
            mounts=[
                docker.types.Mount(dst, name, type="volume", read_only=True)
                for name, dst in key.volumes
            ],
            ulimits=[docker.types.Ulimit(name="core", soft=0, hard=0)],
        )
        token = uuid.uuid4().hex  # finds the container if the answer to its creation is lost
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
                    _TOKEN: token,
                },
                host_config=host_config,
            )
        except BaseException as exc:
            # An interrupt (or a lost answer) may leave the container created all the same.
            with contextlib.suppress(Exception):
                for c in self.api.containers(all=True, filters={"label": f"{_TOKEN}={token}"}):
                    self.api.remove_container(c["Id"], force=True)
            if not isinstance(exc, Exception):
                raise
            raise SandboxError(f"could not create a container from {key.image}: {exc}") from exc
        track_container(created["Id"])  # removed by the reaper if taskmint dies first
        box = _Box(cid=created["Id"], uid=uid, key=key, born=time.monotonic())
        with self._lock:
            self._live[box.cid] = box
        try:
            self.api.start(box.cid)
        except BaseException as exc:
            self._discard(box)
            if not isinstance(exc, Exception):
                raise
            raise SandboxError(f"could not start a container from {key.image}: {exc}") from exc
        return box

    def _discard(self, box: _Box) -> None:
        with self._lock:
            self._live.pop(box.cid, None)
        if box.standby is not None:
            with contextlib.suppress(Exception):
                box.standby.sock.close()
            box.standby = None
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
        while found is None:
            with self._lock:
                idle = self._idle[key]
                # A container that is ready first; else the one whose reset began earliest.
                done = [b for b in idle if b.prep is None or not b.prep.is_alive()]
                box = done[-1] if done else (idle[0] if idle else None)
                if box is not None:
                    idle.remove(box)
            if box is None:
                break
            if box.prep is not None:
                try:
                    box.prep.join(_COLLECT_SECONDS)
                except BaseException:  # an interrupt: this container is no one's now
                    for b in (box, *stale):
                        self._discard(b)
                    raise
            if (
                box.born > fresh_after
                and box.ready
                and (box.prep is None or not box.prep.is_alive())
            ):
                box.prep = None
                found = box
            else:
                stale.append(box)  # its keeper is about to end, or its reset failed
        for box in stale:
            self._discard(box)
        return found if found is not None else self._create(key)

    def _checkin(self, box: _Box, standby: RunSpec | None = None) -> None:
        """Return a used container to the pool: made pristine in the background (and, for a
        `standby` spec, a preloaded interpreter started for the next run like it)."""
        with self._lock:
            if not self._closed and len(self._idle[box.key]) < self.options.warm:
                box.ready = False
                box.prep = threading.Thread(target=self._prep, args=(box, standby), daemon=True)
                box.prep.start()
                self._idle[box.key].append(box)
                pooled = sum(b.key == box.key for b in self._live.values()) + self._adding
                if standby is not None and pooled < self.options.warm:
                    # Fill the pool: the next run need not wait for this container's reset.
                    self._adding += 1
                    threading.Thread(target=self._add, args=(standby,), daemon=True).start()
                return
        self._discard(box)

    def _add(self, spec: RunSpec) -> None:
        """Start one more pooled container for runs like `spec`, its standby ready (in the
        background; a failure only leaves the pool smaller)."""
        try:
            box = self._create(self._key(spec))
        except Exception:
            return
        finally:
            with self._lock:
                self._adding -= 1
        self._prep(box, spec)
        with self._lock:
            if box.ready and not self._closed and len(self._idle[box.key]) < self.options.warm:
                self._idle[box.key].append(box)
                return
        self._discard(box)

    def prepare(self, spec: RunSpec, count: int = 1) -> None:
        """Start up to `count` warm containers for runs like `spec` ahead of the first run."""
        key = self._key(spec)
        with self._lock:
            missing = min(count, self.options.warm) - len(self._idle[key])
        for _ in range(max(missing, 0)):
            box = self._create(key)
            with self._lock:
                self._idle[key].append(box)

    def close(self) -> None:
        """Remove every container this sandbox started (idle or, after an interrupt, busy)."""
        with self._lock:
            self._closed = True
            boxes = list(self._live.values())
            self._idle.clear()
        for box in boxes:
            self._discard(box)
        for box in boxes:  # their background resets end with their containers
            if box.prep is not None and box.prep is not threading.current_thread():
                box.prep.join(timeout=10)
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
        targets = [venv.target] if venv else []
        for m in spec.mounts:
            if m is venv:
                continue
            if prefix is not None and _in_image(m, prefix):
                if m.target == prefix:
                    targets.append(prefix)
                continue
            binds.append((os.path.realpath(m.source), m.target, m.writable))
        limits = spec.limits
        image = self._image_for(venv)
        return _Key(
            image=image,
            binds=tuple(binds),
            memory=limits.memory_bytes,
            processes=limits.processes,
            tmp_bytes=limits.file_bytes,
            volumes=self._volumes_for(image, tuple(targets)) if venv else (),
        )

    def _volumes_for(self, image: str, targets: tuple[str, ...]) -> tuple[tuple[str, str], ...]:
        """Named volumes holding the image's own files at `targets` (see `environment_volumes`),
        made once per image and machine; () to read them from the image instead."""
        if not self.options.environment_volumes or not targets:
            return ()
        slot = (image, targets)
        with self._lock:
            cached = self._volumes.get(slot)
        if cached is None:
            try:
                cached = _environment_volumes(self.api, image, targets)
            except Exception:
                cached = ()  # the image's layers serve as before
            with self._lock:
                self._volumes[slot] = cached
        return cached

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
            standby, box.standby = box.standby, None
            warmable = self._warm and WarmPool.eligible(spec) and _runner_dir(spec) is not None
            if standby is not None and not (
                warmable and (standby.python, standby.env) == (spec.argv[0], spec.env)
            ):
                with contextlib.suppress(Exception):
                    standby.sock.close()  # it exits at the end of its input
                standby = None
            if standby is not None:
                exit_code, timed_out, wall, reader, (report, clean) = self._run_standby(
                    box, spec, inputs, standby
                )
            else:
                exit_code, timed_out, wall, reader = self._run_in(box, spec, inputs)
                report, clean = (None, False) if timed_out else self._collect(box)
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
                self._checkin(box, spec if warmable else None)
            else:
                self._discard(box)

    @property
    def _warm(self) -> bool:
        return self.options.warm > 0

    def _exec(
        self, box: _Box, cmd: list[str], *, stdin: bool, eid: str | None = None
    ) -> tuple[str, Any]:
        """Start `cmd` in the container as its uid (`eid`: an exec of it created already)."""
        try:
            if eid is None:
                eid = self._exec_create(box, cmd, stdin=stdin)
            sock = self.api.exec_start(eid, socket=True)
        except Exception as exc:
            raise SandboxError(f"could not exec in container {box.cid[:12]}: {exc}") from exc
        return eid, sock

    def _exec_create(self, box: _Box, cmd: list[str], *, stdin: bool) -> str:
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
        return self._feed_and_wait(box, spec, eid, sock, inputs, start)

    def _run_standby(
        self, box: _Box, spec: RunSpec, inputs: bytes, standby: _Standby
    ) -> tuple[int | None, bool, float, _FrameReader, tuple[bytes | None, bool]]:
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
        reader = _FrameReader(standby.sock, limits.output_bytes, protocol=True)
        reader.start()
        raw = _raw_socket(standby.sock)
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
        self, box: _Box, spec: RunSpec, eid: str, sock: Any, inputs: bytes, start: float
    ) -> tuple[int | None, bool, float, _FrameReader]:
        limits = spec.limits
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

    def _collect(self, box: _Box) -> tuple[bytes | None, bool]:
        """Kill what is left of the command and stream the report folder out."""
        try:
            _eid, sock = self._exec(box, ["/bin/sh", "-c", _COLLECT], stdin=False)
        except SandboxError:
            return None, False
        reader = _FrameReader(sock, 1 << 62, keep_stdout_only=True)
        reader.start()
        reader.join(timeout=_COLLECT_SECONDS)
        if reader.is_alive():
            return None, False  # the caller removes the container, which ends the stream
        # The script's last word (no round trip to ask for its exit code): nothing of the
        # command is alive by then to write to this stream.
        if not reader.err.endswith(_COLLECTED):  # tar failed, or the clean-up did not finish
            return None, False
        return bytes(reader.output.head), True

    def _prep(self, box: _Box, spec: RunSpec | None) -> None:
        """In the background after a use: wipe every writable place; for a `spec`, start in the
        same exec a preloaded interpreter (the run's uid, environment and interpreter, no
        privilege: `forkserver.serve_once`) and wait until it says it is ready. `box.ready`
        says whether all of it worked; if not, the container is never used again."""
        try:
            if spec is None:
                eid, sock = self._exec(box, ["/bin/sh", "-c", _WIPE], stdin=False)
                reader = _FrameReader(sock, 1 << 16)
                reader.start()
                reader.join(timeout=_COLLECT_SECONDS)
                box.ready = (
                    not reader.is_alive() and self.api.exec_inspect(eid).get("ExitCode") == 0
                )
                return
            runner = _runner_dir(spec)
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
            eid, sock = self._exec(box, cmd, stdin=True)
            raw = _raw_socket(sock)
            raw.settimeout(_COLLECT_SECONDS)
            got = b""
            frames = _frames(sock)
            while not got.endswith(_READY):
                frame = next(frames, None)
                if frame is None:
                    raise OSError("the standby ended before it was ready")
                if frame[0] == 1:
                    got += frame[1]
            raw.settimeout(None)
            if got != _READY:
                raise OSError(f"unexpected output from the standby: {got[:200]!r}")
            box.standby = _Standby(python=spec.argv[0], env=spec.env, eid=eid, sock=sock)
            box.ready = True
        except Exception:
            box.ready = False


_VOLUME_LABEL = "taskmint.env_volume"  # the id of the image the volume's files come from
# Every file below a target with its type, mode, owner, size and link target: a volume holds
# the image's files exactly when the two listings agree.
_LISTING = (
    'for t in "$@"; do cd "$t" && find . -printf "%y %m %U %G %s %p %l\\n"; done | LC_ALL=C sort'
)


def _environment_volumes(
    api: Any, image: str, targets: tuple[str, ...]
) -> tuple[tuple[str, str], ...]:
    """Named volumes with `image`'s files at `targets`: the daemon fills an empty volume from
    the image the first time a container mounts it; a listing of the files through the
    volumes must then equal the listing from the image itself, and only then is the marker
    volume made that says the set is complete (so an interrupted fill is made again)."""
    import docker.types

    image_id = str(api.inspect_image(image)["Id"]).split(":")[-1][:16]
    names = [(f"taskmint-env-{image_id}-{i}", t) for i, t in enumerate(targets)]
    marker = f"taskmint-env-{image_id}-complete-{len(targets)}"
    found = api.volumes(filters={"label": f"{_VOLUME_LABEL}={image_id}"}).get("Volumes") or []
    have = {v["Name"] for v in found}
    if marker in have and all(n in have for n, _ in names):
        return tuple(names)
    sweep_environment_volumes(api)  # a new set is being made: the stale ones of old images go
    for name, _ in names:
        if name in have:
            api.remove_volume(name, force=True)
        api.create_volume(name, labels={_VOLUME_LABEL: image_id})

    def listing(mounts: list[Any]) -> bytes:
        cid = api.create_container(
            image,
            command=["/bin/sh", "-c", _LISTING, "list", *targets],
            user="0:0",
            network_disabled=True,
            labels={"taskmint.builder": "1"},
            host_config=api.create_host_config(network_mode="none", mounts=mounts),
        )["Id"]
        try:
            api.start(cid)
            if api.wait(cid, timeout=600).get("StatusCode") != 0:
                raise SandboxError(f"listing the environment of {image} failed")
            return bytes(api.logs(cid, stdout=True, stderr=False))
        finally:
            with contextlib.suppress(Exception):
                api.remove_container(cid, force=True)

    filled = listing([docker.types.Mount(t, n, type="volume") for n, t in names])
    if not filled or filled != listing([]):
        raise SandboxError(f"the volumes of {image} do not hold the image's files")
    api.create_volume(marker, labels={_VOLUME_LABEL: image_id})
    return tuple(names)


def sweep_environment_volumes(api: Any) -> list[str]:
    """Remove the environment volumes (`_environment_volumes`) of images that no longer exist
    (an environment image rebuilt or deleted leaves its volumes behind). A volume still mounted
    by a container stays (the daemon refuses), as do volumes of images that exist. Returns the
    names removed."""
    found = api.volumes(filters={"label": _VOLUME_LABEL}).get("Volumes") or []
    if not found:
        return []
    images = {str(i.get("Id", "")).split(":")[-1][:16] for i in api.images(all=True, quiet=False)}
    removed = []
    for volume in found:
        owner = (volume.get("Labels") or {}).get(_VOLUME_LABEL, "")
        if owner in images:
            continue
        try:
            api.remove_volume(volume["Name"])
        except Exception:  # in use, or gone already: left to a later sweep
            continue
        removed.append(str(volume["Name"]))
    return removed


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


def _runner_dir(spec: RunSpec) -> str | None:
    """Where taskmint's runner files (`forkserver.py`) are mounted in this run, if they are."""
    return next((m.target for m in spec.mounts if m.source.endswith("inside")), None)


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


def _frames(sock: Any) -> Iterator[tuple[int, bytes]]:
    """The (stream, bytes) frames of an exec's multiplexed output, read through the buffered
    reader that the daemon's HTTP answer came through: output that arrived together with that
    answer sits in its buffer, and reading the bare socket (as the SDK's `frames_iter` does)
    would lose it."""
    response = getattr(sock, "_response", None)
    fp = getattr(getattr(getattr(response, "raw", None), "_fp", None), "fp", None)
    if fp is None or not hasattr(fp, "read1"):
        fp = sock

    def exactly(size: int) -> bytes | None:
        buf = bytearray()
        while len(buf) < size:
            chunk = fp.read1(size - len(buf)) if hasattr(fp, "read1") else fp.recv(size)
            if not chunk:
                return None
            buf += chunk
        return bytes(buf)

    while True:
        header = exactly(8)
        if header is None:
            return
        stream, size = struct.unpack(">BxxxL", header)
        data = exactly(size) if size else b""
        if data is None:
            return
        yield stream, data


class _FrameReader(threading.Thread):
    """Reads the multiplexed stdout/stderr of an exec into a `CappedOutput` (or, with
    `keep_stdout_only`, only stdout; with `protocol`, stderr into the output and stdout, a
    standby's supervisor's, whole into `protocol`)."""

    def __init__(
        self, sock: Any, cap: int, *, keep_stdout_only: bool = False, protocol: bool = False
    ) -> None:
        super().__init__(daemon=True)
        self.sock = sock
        self.stdout_only = keep_stdout_only
        self.err = b""  # with `keep_stdout_only`: the end of stderr
        self.output = CappedOutput(cap)
        self.split = protocol
        self.protocol = bytearray()

    def run(self) -> None:
        try:
            for stream, chunk in _frames(self.sock):
                if self.split:
                    if stream == 1:
                        self.protocol += chunk
                    else:
                        self.output.add(chunk)
                    continue
                if self.stdout_only and stream != 1:
                    self.err = (self.err + chunk)[-256:]
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
