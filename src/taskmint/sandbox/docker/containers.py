"""The containers of the `docker` backend: how each is made, pooled, reused and removed.

Every container runs with no network (`network_mode="none"`), a read-only root, tmpfs at
/workspace, /tmp and /run/taskmint, all capabilities dropped, `no-new-privileges`, memory,
CPU and pids limits, and `docker-init` as pid 1 with an idle keeper process under a uid the
command cannot signal. The command itself runs under a uid of its own (distinct per container,
so `RLIMIT_NPROC` counts only that container's processes and leaves the pids cgroup headroom
for taskmint's own clean-up).

A warm container goes back to the pool after a use and is made pristine in the background
(`ContainerPool.checkin`, by the `prep` step the sandbox hands the pool); a container whose
reset fails, or that timed out, is removed, never reused. Containers are removed on every path:
by `ContainerPool.discard`, by `close()` (and at exit), on errors and interrupts; those left by
a killed process are swept by the next pool (`sweep_stale`) and end on their own when their
keeper's lifetime runs out (they are started with auto-remove).
"""

from __future__ import annotations

import collections
import contextlib
import itertools
import os
import socket
import threading
import time
import uuid
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import docker.types

from taskmint.errors import SandboxError
from taskmint.lifecycle import track_container
from taskmint.sandbox.base import REPORT_DIR, WORKSPACE, RunSpec
from taskmint.sandbox.docker.base_image import DEFAULT_BASE_IMAGE
from taskmint.sandbox.docker.images import KEEPER_UID

__all__ = [
    "COLLECT_SECONDS",
    "Box",
    "ContainerKey",
    "ContainerPool",
    "DockerOptions",
    "Standby",
]

LABEL = "taskmint.sandbox"  # every container of a pool: the pool's session
_OWNER = "taskmint.owner"
_TOKEN = "taskmint.box"
_UID_BASE = 300_000  # apart from the local backend's range
_UID_SPAN = 50_000
_uid_counter = itertools.count()
_PID_HEADROOM = 16  # pids beyond the command's own limit, for the keeper and the clean-up exec
COLLECT_SECONDS = 60  # killing, copying the report out, wiping: far less in practice


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
class ContainerKey:
    """What makes two runs able to share a container: its image, mounts and limits."""

    image: str
    binds: tuple[tuple[str, str, bool], ...]
    memory: int
    processes: int
    tmp_bytes: int
    volumes: tuple[tuple[str, str], ...] = ()  # (volume, target), read-only


@dataclass(slots=True)
class Standby:
    """A preloaded interpreter waiting in a warm container for its one run (see
    `execs.prepare_container`)."""

    python: str
    env: tuple[tuple[str, str], ...]
    eid: str
    sock: Any


@dataclass(slots=True)
class Box:
    """One container of the pool."""

    cid: str
    uid: int
    key: ContainerKey
    born: float
    # Set while the container is being made pristine (and a standby started) in the
    # background after a use; `checkout` waits for it and drops the container if it failed.
    prep: threading.Thread | None = None
    ready: bool = True
    standby: Standby | None = None


# Makes a used container pristine (for a spec: with a standby started for the next run like
# it), setting `box.ready` and `box.standby`: `execs.prepare_container`, bound to the API.
Prep = Callable[[Box, RunSpec | None], None]


class ContainerPool:
    """The containers of one sandbox: made on demand, kept warm up to `options.warm` per key,
    each removed when it is no longer fit for use."""

    def __init__(self, api: Any, options: DockerOptions, session: str, prep: Prep) -> None:
        self.api = api
        self.options = options
        self.session = session
        self.prep = prep
        self.closed = False
        self._lock = threading.Lock()
        self._idle: dict[ContainerKey, list[Box]] = collections.defaultdict(list)
        self._live: dict[str, Box] = {}
        self._adding = 0  # pooled containers being started in the background

    def sweep_stale(self) -> int:
        """Remove containers left by taskmint processes of this host that no longer run."""
        removed = 0
        host = socket.gethostname()
        for c in self.api.containers(all=True, filters={"label": LABEL}):
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

    def create(self, key: ContainerKey) -> Box:
        """Create and start a container for runs of `key` (removed again if that fails)."""
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
                    LABEL: self.session,
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
        box = Box(cid=created["Id"], uid=uid, key=key, born=time.monotonic())
        with self._lock:
            self._live[box.cid] = box
        try:
            self.api.start(box.cid)
        except BaseException as exc:
            self.discard(box)
            if not isinstance(exc, Exception):
                raise
            raise SandboxError(f"could not start a container from {key.image}: {exc}") from exc
        return box

    def discard(self, box: Box) -> None:
        """Remove `box`'s container (and end its standby)."""
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

    def checkout(self, key: ContainerKey) -> Box:
        """A container for a run of `key`: a pooled one that is ready, else a new one."""
        fresh_after = time.monotonic() - (self.options.keeper_seconds - 120)
        stale: list[Box] = []
        found: Box | None = None
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
                    box.prep.join(COLLECT_SECONDS)
                except BaseException:  # an interrupt: this container is no one's now
                    for b in (box, *stale):
                        self.discard(b)
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
            self.discard(box)
        return found if found is not None else self.create(key)

    def checkin(self, box: Box, standby: RunSpec | None = None) -> None:
        """Return a used container to the pool: made pristine in the background (and, for a
        `standby` spec, a preloaded interpreter started for the next run like it)."""
        with self._lock:
            if not self.closed and len(self._idle[box.key]) < self.options.warm:
                box.ready = False
                box.prep = threading.Thread(target=self.prep, args=(box, standby), daemon=True)
                box.prep.start()
                self._idle[box.key].append(box)
                pooled = sum(b.key == box.key for b in self._live.values()) + self._adding
                if standby is not None and pooled < self.options.warm:
                    # Fill the pool: the next run need not wait for this container's reset.
                    self._adding += 1
                    threading.Thread(target=self._add, args=(box.key, standby), daemon=True).start()
                return
        self.discard(box)

    def _add(self, key: ContainerKey, spec: RunSpec) -> None:
        """Start one more pooled container for runs like `spec`, its standby ready (in the
        background; a failure only leaves the pool smaller)."""
        try:
            box = self.create(key)
        except Exception:
            return
        finally:
            with self._lock:
                self._adding -= 1
        self.prep(box, spec)
        with self._lock:
            if box.ready and not self.closed and len(self._idle[box.key]) < self.options.warm:
                self._idle[box.key].append(box)
                return
        self.discard(box)

    def prepare(self, key: ContainerKey, count: int = 1) -> None:
        """Start up to `count` warm containers for runs of `key` ahead of the first run."""
        with self._lock:
            missing = min(count, self.options.warm) - len(self._idle[key])
        for _ in range(max(missing, 0)):
            box = self.create(key)
            with self._lock:
                self._idle[key].append(box)

    def close(self) -> None:
        """Remove every container of the pool (idle or, after an interrupt, busy)."""
        with self._lock:
            self.closed = True
            boxes = list(self._live.values())
            self._idle.clear()
        for box in boxes:
            self.discard(box)
        for box in boxes:  # their background resets end with their containers
            if box.prep is not None and box.prep is not threading.current_thread():
                box.prep.join(timeout=10)


def _pid_alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    return True
