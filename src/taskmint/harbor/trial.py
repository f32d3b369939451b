"""A local Harbor trial: one task folder tried on this machine's Docker Engine, in Harbor's order.

`run_trial(task_dir, agent)` does what a Harbor trial does with a task folder (task.toml,
instruction.md, environment/Dockerfile, tests/test.sh, solution/solve.sh), with no registry:

1. read: task.toml gives the agent and verifier timeouts (`[agent]`, `[verifier]`
   `timeout_sec`), the build timeout and the resources (`[environment]` `build_timeout_sec`,
   `cpus`, `memory_mb`); Harbor's defaults where a key is missing.
2. build: environment/ is built into an image tagged by the hash of its content and of the ids
   of the images it builds FROM (`taskmint-harbor:<hash>`), reused when present: a base rebuilt
   under the same tag gives a new tag. Its FROM must name an image on this machine.
3. start: a container from that image with the network off (`network_mode="none"`), the task's
   cpu and memory limits and an idle keeper as pid 1; /logs/agent and /logs/verifier are made.
4. agent: "oracle" copies solution/ to /solution and runs `bash /solution/solve.sh`; "nop" does
   nothing; any other string runs with `bash -c`, a sequence as it is. It runs in the image's
   working directory, as the task's agent user (else the image's user). At the agent timeout
   every process of the container but the keeper is killed; the trial goes on to grading.
5. verify, in the verifier mode of the task (Harbor's rules: `[verifier] environment_mode`,
   else "separate" when there is a `[verifier.environment]`, else "shared"; `verifier_mode=`
   replaces it):
   - shared: only now are the tests copied in, over whatever /tests holds, as Harbor does,
     and `bash /tests/test.sh` runs as the verifier user with the verifier timeout, in the
     agent's container. /logs/verifier is left as the agent left it (Harbor does not empty it
     either): what the agent planted there or in /tests must not count, and that is the
     task's job (its test.sh and its Dockerfile).
   - separate: the task's `artifacts` (and /logs/artifacts) are read out of the agent's
     container through the Engine's archive API (nothing runs in it), sanitized as Harbor's
     upload does (no link or path out of the artifact, no device, no setuid bit, root's), and
     the agent's container is removed. A fresh container starts from the verifier's image
     (`[verifier.environment] docker_image`, else tests/Dockerfile built, both holding
     /tests; else the environment's image, the tests uploaded), with the resources of
     `[verifier.environment]` or else `[environment]`; each artifact is put at its path (a
     folder emptied first) and `bash /tests/test.sh` runs there as the verifier user.
6. collect: /logs/verifier is copied out of the verifier's container. As in Harbor,
   reward.json (an object) is read first and its "reward" is the reward (its other fields are
   the details), else reward.txt (one number).
   A missing or unparsable reward, or a verifier past its timeout, is a reward of 0, with the
   reason in `reward_reason`.
7. teardown: the containers are removed, whatever happened (kept with `keep=True`).

A task that cannot be read, built or started raises `TaskmintError`; `run_trials` records such
an error in that task's result and goes on with the next task. (A build past its timeout is an
error at once, though the daemon finishes that build on its own.)

Differences from Harbor: images are never pulled, the network is always off, `storage_mb`
is not enforced, artifacts are whole paths of the main container (no `exclude`, no `service`),
and an artifact over 2 GiB is a reward of 0. /logs/agent and /logs/verifier are made
world-writable (the worst case of a bind mount), so an agent that writes there is tried as it
would be under Harbor.

It is one module, longer than most, because the seven phases share one container and fill one
result record; split, each part would take the whole trial's state as arguments.
"""

from __future__ import annotations

import contextlib
import hashlib
import io
import json
import math
import os
import posixpath
import shlex
import socket
import tarfile
import tempfile
import threading
import time
import tomllib
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path, PurePosixPath
from typing import Any

from taskmint.errors import SandboxUnavailableError, TaskmintError
from taskmint.lifecycle import track_container

try:  # the `docker` extra; taskmint.sandbox.docker refuses to import without it
    import docker
    import docker.errors
    import requests

    from taskmint.sandbox.docker.client import docker_client, image_exists
except (ImportError, TaskmintError):  # pragma: no cover - without the `docker` extra
    docker = None
    requests = None  # type: ignore[assignment]

__all__ = [
    "IMAGE_REPOSITORY",
    "LABEL",
    "TaskSettings",
    "TrialResult",
    "image_tag",
    "read_reward",
    "read_task_settings",
    "run_trial",
    "run_trials",
]

IMAGE_REPOSITORY = "taskmint-harbor"
LABEL = "taskmint.harbor.trial"  # every trial container: the task folder's name
_OWNER = "taskmint.owner"
_RECIPE = "1"  # part of the image hash: bump when the way images are built changes

# Harbor's defaults for a task.toml key that is missing.
_AGENT_TIMEOUT = 600.0
_VERIFIER_TIMEOUT = 600.0
_BUILD_TIMEOUT = 600.0
_CPUS = 1.0
_MEMORY_MB = 2048

_PIDS_LIMIT = 4096
_OUTPUT_BYTES = 256 * 1024  # the tail of each phase's output kept in the result
_FILE_BYTES = 1024 * 1024  # a file of /logs/verifier kept up to this size
_FILES = 200  # at most this many files of /logs/verifier
_ARCHIVE_BYTES = 256 * 1024**2  # /logs/verifier is not copied out past this size
_KILL_GRACE = 30.0  # seconds to wait for an exec to end after its processes are killed
_STREAM_GRACE = 2.0  # seconds to wait for the rest of an ended exec's output
_POLL = 0.5  # seconds between looks at a running exec
_SETUP_TIMEOUT = 120.0
_ARTIFACTS_DIR = "/logs/artifacts"  # Harbor always carries this one to a separate verifier
_ARTIFACT_BYTES = 2 * 1024**3  # an artifact past this size is not graded
_SPOOL_BYTES = 64 * 1024**2  # an artifact is kept in memory up to this size, then on disk

# Kills every process of the container but pid 1 (the keeper) and itself, three rounds so
# that processes forked meanwhile go too.
_KILL_ALL = (
    "for r in 1 2 3; do for d in /proc/[0-9]*; do p=${d#/proc/}; "
    '[ "$p" = 1 ] || [ "$p" = $$ ] || kill -9 "$p" 2>/dev/null; done; done; true'
)


@dataclass(frozen=True, slots=True)
class TaskSettings:
    """What a trial takes from task.toml."""

    agent_timeout: float = _AGENT_TIMEOUT
    verifier_timeout: float = _VERIFIER_TIMEOUT
    build_timeout: float = _BUILD_TIMEOUT
    cpus: float = _CPUS
    memory_mb: int = _MEMORY_MB
    agent_user: str | None = None
    verifier_user: str | None = None
    # Harbor's verifier mode: "shared" (the agent's container) or "separate" (a fresh one)
    verifier_mode: str = "shared"
    artifacts: tuple[str, ...] = ()  # paths carried from the agent's container (separate)
    verifier_cpus: float = _CPUS  # [verifier.environment], else [environment] (separate)
    verifier_memory_mb: int = _MEMORY_MB
    verifier_image: str | None = None  # [verifier.environment] docker_image (separate)


@dataclass(slots=True, kw_only=True)
class TrialResult:
    """The outcome of one trial. `error` is set (and the reward 0) when the trial could not run."""

    task: str
    task_dir: Path
    agent: str
    reward: float = 0.0
    details: dict[str, Any] = field(default_factory=dict)
    reward_reason: str | None = None  # why the reward is 0 when no reward could be read
    agent_exit_code: int | None = None  # None: no agent ran ("nop"), or it timed out
    agent_timed_out: bool = False
    verifier_exit_code: int | None = None
    verifier_timed_out: bool = False
    seconds: dict[str, float] = field(default_factory=dict)  # per phase, in order, and "total"
    logs: dict[str, str] = field(default_factory=dict)  # "build", "agent", "verifier", files
    image: str | None = None
    container: str | None = None  # its id (still there only with keep=True)
    verifier_mode: str = "shared"  # where the verifier ran: "shared" or "separate"
    verifier_image: str | None = None  # the separate verifier's image
    verifier_container: str | None = None  # the separate verifier's container
    artifacts: dict[str, int] = field(default_factory=dict)  # path -> entries carried over
    error: str | None = None


def read_task_settings(task_dir: Path) -> TaskSettings:
    """The timeouts, resources and users of the task folder `task_dir` (its task.toml)."""
    path = Path(task_dir) / "task.toml"
    try:
        data = tomllib.loads(path.read_text(encoding="utf-8"))
    except FileNotFoundError as exc:
        raise TaskmintError(f"{task_dir}: no task.toml") from exc
    except (OSError, UnicodeDecodeError, tomllib.TOMLDecodeError) as exc:
        raise TaskmintError(f"{path}: not readable TOML ({exc})") from exc

    def table(name: str) -> Mapping[str, Any]:
        value = data.get(name, {})
        if not isinstance(value, dict):
            raise TaskmintError(f"{path}: [{name}] is not a table")
        return value

    def number(section: str, key: str, default: float) -> float:
        value = table(section).get(key, default)
        if isinstance(value, bool) or not isinstance(value, int | float) or not value > 0:
            raise TaskmintError(f"{path}: [{section}] {key} must be a positive number")
        return float(value)

    def user(section: str) -> str | None:
        value = table(section).get("user")
        if value is None:
            return None
        if isinstance(value, bool) or not isinstance(value, str | int):
            raise TaskmintError(f"{path}: [{section}] user must be a name or a uid")
        return str(value)

    cpus = number("environment", "cpus", _CPUS)
    memory_mb = int(number("environment", "memory_mb", _MEMORY_MB))
    # Harbor's rules (harbor.models.task.verifier_mode): an explicit environment_mode, else
    # "separate" when [verifier.environment] is there, else "shared"; a separate verifier's
    # environment is [verifier.environment], else a copy of [environment]
    verifier = table("verifier")
    own = verifier.get("environment")
    if own is not None and not isinstance(own, dict):
        raise TaskmintError(f"{path}: [verifier.environment] is not a table")
    mode = verifier.get("environment_mode", "separate" if own is not None else "shared")
    if mode not in ("shared", "separate"):
        raise TaskmintError(f'{path}: [verifier] environment_mode must be "shared" or "separate"')
    if mode == "shared" and own is not None:
        raise TaskmintError(
            f'{path}: [verifier] environment_mode = "shared" cannot have a '
            "[verifier.environment]: remove one"
        )
    venv: Mapping[str, Any] = own or table("environment")

    def positive(key: str, default: float) -> float:
        value = venv.get(key, default)
        if isinstance(value, bool) or not isinstance(value, int | float) or not value > 0:
            raise TaskmintError(f"{path}: the verifier's {key} must be a positive number")
        return float(value)

    image = (own or {}).get("docker_image")
    if image is not None and not isinstance(image, str):
        raise TaskmintError(f"{path}: [verifier.environment] docker_image must be a string")
    return TaskSettings(
        agent_timeout=number("agent", "timeout_sec", _AGENT_TIMEOUT),
        verifier_timeout=number("verifier", "timeout_sec", _VERIFIER_TIMEOUT),
        build_timeout=number("environment", "build_timeout_sec", _BUILD_TIMEOUT),
        cpus=cpus,
        memory_mb=memory_mb,
        agent_user=user("agent"),
        verifier_user=user("verifier"),
        verifier_mode=mode,
        artifacts=_artifacts(path, data.get("artifacts", [])),
        verifier_cpus=positive("cpus", _CPUS),
        verifier_memory_mb=int(positive("memory_mb", _MEMORY_MB)),
        verifier_image=image,
    )


def _artifacts(path: Path, value: Any) -> tuple[str, ...]:
    """task.toml's `artifacts`: absolute paths in the agent's container (a string, or a table
    with `source`; a `destination` only names the host copy). `exclude` and `service` are
    refused: this runner has one container and copies whole paths."""
    if not isinstance(value, list):
        raise TaskmintError(f"{path}: artifacts must be a list")
    out = []
    for item in value:
        if isinstance(item, dict):
            if item.get("exclude") or item.get("service") not in (None, "main"):
                raise TaskmintError(
                    f"{path}: artifacts with `exclude` or a `service` are not supported by the "
                    "local trial runner"
                )
            item = item.get("source")
        if not isinstance(item, str) or not item.startswith("/") or ".." in item.split("/"):
            raise TaskmintError(f"{path}: an artifact must be an absolute path ({item!r})")
        out.append(item.rstrip("/") or "/")
    return tuple(dict.fromkeys(out))


def base_images(environment_dir: Path) -> list[str]:
    """The images the folder's Dockerfile builds FROM (stage names and `scratch` left out)."""
    dockerfile = Path(environment_dir) / "Dockerfile"
    try:
        lines = dockerfile.read_text(encoding="utf-8").splitlines()
    except (OSError, UnicodeDecodeError):
        return []
    stages: set[str] = set()
    out: list[str] = []
    for line in lines:
        words = line.split()
        if len(words) < 2 or words[0].upper() != "FROM":
            continue
        args = [w for w in words[1:] if not w.startswith("--")]
        if not args:
            continue
        if args[0].lower() not in stages and args[0] != "scratch":
            out.append(args[0])
        if len(args) >= 3 and args[1].upper() == "AS":
            stages.add(args[2].lower())
    return out


def image_tag(environment_dir: Path, base_ids: Sequence[str] = ()) -> str:
    """The image tag of an environment folder: a hash of its files' paths, modes and bytes, and
    of `base_ids`, the ids of the images it builds FROM (a base rebuilt under the same tag
    gives another tag: an image built on the old one is not reused)."""
    digest = hashlib.sha256(f"taskmint-harbor-env {_RECIPE}\n".encode())
    for base in base_ids:
        digest.update(f"B {base}\n".encode())
    root = Path(environment_dir)
    for path in sorted(root.rglob("*"), key=lambda p: p.relative_to(root).as_posix()):
        rel = path.relative_to(root).as_posix()
        if path.is_symlink():
            digest.update(f"L {rel} {os.readlink(path)}\n".encode())
        elif path.is_file():
            data = path.read_bytes()
            executable = "x" if os.access(path, os.X_OK) else "-"
            digest.update(f"F {rel} {executable} {len(data)}\n".encode())
            digest.update(data)
        elif path.is_dir():
            digest.update(f"D {rel}\n".encode())
    return f"{IMAGE_REPOSITORY}:{digest.hexdigest()[:20]}"


def built_image_tag(client: Any, environment_dir: Path) -> str:
    """The tag `run_trial` builds `environment_dir` under on this machine: `image_tag` with the
    ids its FROM images have here (a name not on this machine hashed as it is)."""
    bases = []
    for base in base_images(environment_dir):
        info = image_exists(client, base)
        bases.append(str(info["Id"]) if info is not None else base)
    return image_tag(environment_dir, bases)


def read_reward(files: Mapping[str, bytes]) -> tuple[float, dict[str, Any], str | None]:
    """(reward, details, reason) from the files of /logs/verifier (name -> bytes).

    As Harbor does: reward.json, when present, must be a JSON object; its "reward" is the
    reward (else reward.txt's) and all its fields are the details. Otherwise reward.txt holds
    one number. A missing, empty or unparsable reward is 0, with the reason.
    """
    details: dict[str, Any] = {}
    if "reward.json" in files:
        try:
            parsed = json.loads(files["reward.json"].decode("utf-8"))
        except (UnicodeDecodeError, ValueError) as exc:
            return 0.0, details, f"reward.json is not JSON ({exc})"
        if not isinstance(parsed, dict):
            return 0.0, details, "reward.json is not a JSON object"
        details = parsed
        value = parsed.get("reward")
        if value is not None:
            if isinstance(value, bool) or not isinstance(value, int | float):
                return 0.0, details, f"reward.json: reward is not a number ({value!r})"
            if not math.isfinite(value):
                return 0.0, details, f"reward.json: reward is not finite ({value!r})"
            return float(value), details, None
    if "reward.txt" not in files:
        where = "reward.json has no reward and there is no reward.txt" if details else None
        return 0.0, details, where or "no reward.txt or reward.json in /logs/verifier"
    text = files["reward.txt"].decode("utf-8", "replace").strip()
    if not text:
        return 0.0, details, "reward.txt is empty"
    try:
        reward = float(text)
    except ValueError:
        return 0.0, details, f"reward.txt is not a number ({text[:80]!r})"
    if not math.isfinite(reward):
        return 0.0, details, f"reward.txt is not finite ({text[:80]!r})"
    return reward, details, None


def run_trial(
    task_dir: Path,
    agent: str | Sequence[str] = "oracle",
    *,
    timeout: float | None = None,
    keep: bool = False,
    verifier_mode: str | None = None,
) -> TrialResult:
    """Try the Harbor task folder `task_dir` with `agent` ("oracle", "nop", or a command run in
    the container) as a Harbor trial does (see the module's docstring).

    `timeout` replaces the task's agent timeout. `keep` leaves the containers (stopped agent,
    graded state) for inspection: remove them with `docker rm -f`. `verifier_mode` replaces
    the task's: "shared" grades in the agent's container, as a harness without separate
    verifiers does; "separate" in a fresh one. Raises `TaskmintError` when the task cannot be
    read, built or started, or Docker fails during the trial.
    """
    trial = _Trial(
        _client(), Path(task_dir), agent, timeout=timeout, keep=keep, verifier_mode=verifier_mode
    )
    return trial.run()


def run_trials(
    task_dirs: Iterable[Path],
    agent: str | Sequence[str] = "oracle",
    *,
    timeout: float | None = None,
    keep: bool = False,
    verifier_mode: str | None = None,
) -> list[TrialResult]:
    """`run_trial` for each folder in turn; a task that fails to run gets a result with its
    `error` (and a reward of 0) and the next task runs. Raises only when Docker is unreachable."""
    client = _client()
    results = []
    for task_dir in task_dirs:
        trial = _Trial(
            client, Path(task_dir), agent, timeout=timeout, keep=keep, verifier_mode=verifier_mode
        )
        try:
            results.append(trial.run())
        except Exception as exc:
            known = isinstance(exc, TaskmintError) and str(exc)
            trial.result.error = known or f"{type(exc).__name__}: {exc}"
            trial.result.reward = 0.0
            results.append(trial.result)
    return results


def _client() -> Any:
    if docker is None:
        raise SandboxUnavailableError(
            "a local Harbor trial needs the `docker` Python package: install taskmint[docker]"
        )
    return docker_client()


def _describe(agent: str | Sequence[str]) -> str:
    return agent if isinstance(agent, str) else shlex.join(agent)


class _Tail:
    """The last `limit` bytes written to it."""

    def __init__(self, limit: int = _OUTPUT_BYTES) -> None:
        self.limit = limit
        self.data = bytearray()
        self.dropped = 0

    def add(self, chunk: bytes) -> None:
        self.data += chunk
        extra = len(self.data) - self.limit
        if extra > 0:
            del self.data[:extra]
            self.dropped += extra

    def text(self) -> str:
        text = self.data.decode("utf-8", "replace")
        return f"[{self.dropped} bytes before this]\n{text}" if self.dropped else text


class _Oversize(Exception):
    """A folder is too big to copy out."""


@dataclass(slots=True)
class _ExecResult:
    exit_code: int | None
    output: str
    timed_out: bool


@dataclass(slots=True)
class _Artifact:
    """One path of the agent's container, as a sanitized tar rooted at its parent."""

    path: str
    archive: Any  # a file object
    is_dir: bool
    entries: int


class _Trial:
    """One trial's state; `run` goes through the phases."""

    def __init__(
        self,
        client: Any,
        task_dir: Path,
        agent: str | Sequence[str],
        *,
        timeout: float | None,
        keep: bool,
        verifier_mode: str | None = None,
    ) -> None:
        if not isinstance(agent, str) and (not agent or not all(isinstance(a, str) for a in agent)):
            raise TaskmintError("agent: a name, a shell command or a non-empty argv")
        if timeout is not None and not timeout > 0:
            raise TaskmintError("timeout must be a positive number of seconds")
        if verifier_mode not in (None, "shared", "separate"):
            raise TaskmintError('verifier_mode: "shared", "separate" or None (the task\'s)')
        self.client = client
        self.api = client.api
        self.task_dir = task_dir
        self.agent = agent
        self.timeout = timeout
        self.keep = keep
        self.verifier_mode = verifier_mode
        self.cid: str | None = None  # the agent's container (and a shared verifier's)
        self.vcid: str | None = None  # a separate verifier's container
        self.result = TrialResult(task=task_dir.name, task_dir=task_dir, agent=_describe(agent))

    def run(self) -> TrialResult:
        started = time.monotonic()
        try:
            settings = self._phase("read", self._read)
            mode = self.verifier_mode or settings.verifier_mode
            self.result.verifier_mode = mode
            image = self._phase("build", lambda: self._build(settings))
            self._phase("start", lambda: self._start(image, settings))
            self._phase("agent", lambda: self._run_agent(settings))
            if mode == "separate":
                try:
                    artifacts = self._phase("artifacts", lambda: self._take_artifacts(settings))
                except _Oversize as exc:
                    self.result.reward, self.result.reward_reason = 0.0, str(exc)
                    return self.result
                self._phase("verify", lambda: self._verify_apart(image, settings, artifacts))
            else:
                self._phase("verify", lambda: self._verify(settings))
            self._phase("collect", self._collect)
        except (docker.errors.DockerException, requests.RequestException) as exc:
            raise TaskmintError(f"{self.task_dir}: docker failed: {exc}") from exc
        finally:
            try:
                self._phase("teardown", self._teardown)
            finally:
                self.result.seconds["total"] = round(time.monotonic() - started, 3)
        return self.result

    def _phase(self, name: str, step: Any) -> Any:
        started = time.monotonic()
        try:
            return step()
        finally:
            self.result.seconds[name] = round(time.monotonic() - started, 3)

    # -- 1. read ----------------------------------------------------------------------------

    def _read(self) -> TaskSettings:
        if not self.task_dir.is_dir():
            raise TaskmintError(f"{self.task_dir}: not a folder")
        settings = read_task_settings(self.task_dir)
        needed = ["environment/Dockerfile"]
        if settings.verifier_image is None and not (self.task_dir / "tests/Dockerfile").is_file():
            needed.append("tests/test.sh")  # else the verifier's image holds /tests
        if self.agent == "oracle":
            needed.append("solution/solve.sh")
        for rel in needed:
            if not (self.task_dir / rel).is_file():
                raise TaskmintError(f"{self.task_dir}: no {rel}")
        return settings

    # -- 2. build ---------------------------------------------------------------------------

    def _build(self, settings: TaskSettings, folder: str = "environment") -> str:
        """The image of `folder` (environment/, or tests/ for a separate verifier's own)."""
        context = self.task_dir / folder
        tag = built_image_tag(self.client, context)
        key = "build" if folder == "environment" else f"build {folder}"
        if folder == "environment":
            self.result.image = tag
        if image_exists(self.client, tag) is not None:
            self.result.logs[key] = f"reused {tag}"
            return tag
        log = _Tail()
        failure: list[str] = []

        def build() -> None:
            try:
                stream = self.api.build(
                    path=str(context),
                    tag=tag,
                    rm=True,
                    forcerm=True,
                    pull=False,
                    decode=True,
                    labels={LABEL: self.task_dir.name},
                )
                for event in stream:
                    if "stream" in event:
                        log.add(str(event["stream"]).encode())
                    if "error" in event:
                        failure.append(str(event["error"]).strip())
            except Exception as exc:
                failure.append(str(exc))

        worker = threading.Thread(target=build, name=f"build {tag}", daemon=True)
        worker.start()
        worker.join(settings.build_timeout)
        self.result.logs[key] = log.text()
        if worker.is_alive():
            raise TaskmintError(
                f"{self.task_dir}: building {folder}/ took over "
                f"{settings.build_timeout:g} s (build_timeout_sec)"
            )
        if failure or image_exists(self.client, tag) is None:
            reason = failure[-1] if failure else "no image came out"
            raise TaskmintError(
                f"{self.task_dir}: {folder}/Dockerfile failed to build: {reason}\n"
                f"{log.text()[-2000:]}"
            )
        return tag

    # -- 3. start ---------------------------------------------------------------------------

    def _start(self, image: str, settings: TaskSettings) -> None:
        self.cid = self._container(image, settings.cpus, settings.memory_mb, settings)
        self.result.container = self.cid
        self._make_logs(self.cid, "/logs/agent /logs/verifier")

    def _container(self, image: str, cpus: float, memory_mb: int, settings: TaskSettings) -> str:
        """A started container of `image` with the network off, the limits and a keeper."""
        cpus = min(cpus, float(os.cpu_count() or 1))
        memory = memory_mb * 1024**2
        host_config = self.api.create_host_config(
            network_mode="none",
            nano_cpus=int(cpus * 1e9),
            mem_limit=memory,
            memswap_limit=memory,
            pids_limit=_PIDS_LIMIT,
            auto_remove=not self.keep,
        )
        # The keeper ends on its own long after the trial would have, so a container left by
        # a killed process does not stay forever.
        lifetime = int((self.timeout or settings.agent_timeout) + settings.verifier_timeout + 3600)
        try:
            created = self.api.create_container(
                image,
                entrypoint=["sleep", str(lifetime)],
                command=[],
                network_disabled=True,
                labels={LABEL: self.task_dir.name, _OWNER: f"{socket.gethostname()}:{os.getpid()}"},
                host_config=host_config,
            )
            cid = str(created["Id"])
            if not self.keep:
                track_container(cid)  # removed by the reaper if this process dies first
            self.api.start(cid)
        except docker.errors.DockerException as exc:
            raise TaskmintError(f"{self.task_dir}: could not start a container: {exc}") from exc
        return cid

    def _make_logs(self, cid: str, folders: str) -> None:
        made = self._exec(
            ["sh", "-c", f"mkdir -p {folders} && chmod 777 {folders}"],
            user="0",
            timeout=_SETUP_TIMEOUT,
            cid=cid,
        )
        if made.exit_code != 0:
            raise TaskmintError(
                f"{self.task_dir}: could not make {folders} in the container (is there a "
                f"shell?): {made.output[-500:]}"
            )

    # -- 4. agent ---------------------------------------------------------------------------

    def _run_agent(self, settings: TaskSettings) -> None:
        if self.agent == "nop":
            self.result.logs["agent"] = ""
            return
        if self.agent == "oracle":
            self._upload(self.task_dir / "solution", "solution")
            argv = ["bash", "/solution/solve.sh"]
        elif isinstance(self.agent, str):
            argv = ["bash", "-c", self.agent]
        else:
            argv = list(self.agent)
        timeout = self.timeout or settings.agent_timeout
        done = self._exec(argv, user=settings.agent_user, timeout=timeout)
        self.result.agent_exit_code = done.exit_code
        self.result.agent_timed_out = done.timed_out
        note = f"\n[stopped: the agent timeout of {timeout:g} s]" if done.timed_out else ""
        self.result.logs["agent"] = done.output + note

    # -- 5. verify --------------------------------------------------------------------------

    def _verify(self, settings: TaskSettings) -> None:
        """Shared: the tests uploaded into the agent's container and run there."""
        self._make_logs(self._cid(), "/logs/verifier")
        self._upload(self.task_dir / "tests", "tests")
        self._run_tests(settings)

    def _take_artifacts(self, settings: TaskSettings) -> list[_Artifact]:
        """Separate, first: the task's artifacts (and Harbor's /logs/artifacts) read out of
        the agent's container through the Engine's archive API (nothing runs in it), each
        sanitized as Harbor's upload does; then the agent's container goes."""
        taken = []
        for path in dict.fromkeys([*settings.artifacts, _ARTIFACTS_DIR]):
            artifact = self._archive(path)
            if artifact is not None:
                taken.append(artifact)
                self.result.artifacts[path] = artifact.entries
        if not self.keep and self.cid is not None:  # Harbor stops it before the verifier
            with contextlib.suppress(docker.errors.NotFound):
                self.api.remove_container(self.cid, force=True)
        return taken

    def _archive(self, path: str) -> _Artifact | None:
        try:
            stream, _stat = self.api.get_archive(self._cid(), path)
        except docker.errors.NotFound:
            return None  # as in Harbor: a missing artifact is skipped
        top = PurePosixPath(path).name
        clean = tempfile.SpooledTemporaryFile(max_size=_SPOOL_BYTES)  # noqa: SIM115 - returned
        entries, is_dir, refused = 0, False, 0
        with tempfile.SpooledTemporaryFile(max_size=_SPOOL_BYTES) as raw:
            size = 0
            for chunk in stream:
                size += len(chunk)
                if size > _ARTIFACT_BYTES:
                    clean.close()
                    raise _Oversize(
                        f"the artifact {path} holds over {_ARTIFACT_BYTES} bytes: not graded"
                    )
                raw.write(chunk)
            raw.seek(0)
            with (
                tarfile.open(fileobj=raw, mode="r|") as src,
                tarfile.open(fileobj=clean, mode="w", format=tarfile.PAX_FORMAT) as dst,
            ):
                for member in src:
                    kept = _sanitized(member, top)
                    if kept is None:
                        refused += 1
                        continue
                    is_dir = is_dir or (kept.name == top and kept.isdir())
                    dst.addfile(kept, src.extractfile(member) if kept.isreg() else None)
                    entries += 1
        clean.seek(0)
        if refused:
            self.result.logs[f"artifacts {path}"] = f"{refused} unsafe entries skipped"
        return _Artifact(path=path, archive=clean, is_dir=is_dir, entries=entries)

    def _verify_apart(self, image: str, settings: TaskSettings, artifacts: list[_Artifact]) -> None:
        """Separate: a fresh container of the pristine image, the artifacts put in at their
        paths (a folder emptied first, as Harbor does), the tests uploaded, test.sh run."""
        bundled = True
        if settings.verifier_image is not None:  # Harbor's order: the named image first
            vimage = settings.verifier_image
            if image_exists(self.client, vimage) is None:
                raise TaskmintError(
                    f"{self.task_dir}: the verifier's image {vimage} is not on this machine "
                    "(images are never pulled): build or load it"
                )
        elif (self.task_dir / "tests" / "Dockerfile").is_file():
            vimage = self._build(settings, "tests")
        else:
            vimage, bundled = image, False
        self.result.verifier_image = vimage
        self.vcid = self._container(
            vimage, settings.verifier_cpus, settings.verifier_memory_mb, settings
        )
        self.result.verifier_container = self.vcid
        self._make_logs(self.vcid, "/logs/verifier")
        for artifact in artifacts:
            parent = str(PurePosixPath(artifact.path).parent)
            script = (
                'mkdir -p "$1" && find "$1" -mindepth 1 -delete'
                if artifact.is_dir
                else ('mkdir -p "$(dirname "$1")"')
            )
            ready = self._exec(
                ["sh", "-c", script, "sh", artifact.path], user="0", timeout=_SETUP_TIMEOUT
            )
            if ready.exit_code != 0 or not self.api.put_archive(
                self.vcid, parent, artifact.archive
            ):
                raise TaskmintError(
                    f"{self.task_dir}: could not put {artifact.path} into the verifier's "
                    f"container: {ready.output[-500:]}"
                )
            artifact.archive.close()
        if not bundled:
            self._upload(self.task_dir / "tests", "tests")
        self._run_tests(settings)

    def _run_tests(self, settings: TaskSettings) -> None:
        done = self._exec(
            ["bash", "/tests/test.sh"],
            user=settings.verifier_user,
            timeout=settings.verifier_timeout,
        )
        self.result.verifier_exit_code = done.exit_code
        self.result.verifier_timed_out = done.timed_out
        note = (
            f"\n[stopped: the verifier timeout of {settings.verifier_timeout:g} s]"
            if done.timed_out
            else ""
        )
        self.result.logs["verifier"] = done.output + note

    # -- 6. collect -------------------------------------------------------------------------

    def _collect(self) -> None:
        try:
            files = self._download("/logs/verifier")
        except _Oversize as exc:
            self.result.reward, self.result.reward_reason = 0.0, str(exc)
            return
        for name, data in files.items():
            self.result.logs[f"verifier/{name}"] = data.decode("utf-8", "replace")
        reward, details, reason = read_reward(files)
        if self.result.verifier_timed_out:  # as in Harbor: no reward from a verifier cut short
            reward, reason = 0.0, "the verifier timed out (its reward files are not counted)"
        self.result.reward, self.result.details, self.result.reward_reason = reward, details, reason

    # -- 7. teardown ------------------------------------------------------------------------

    def _teardown(self) -> None:
        if self.keep:
            return
        for cid in (self.cid, self.vcid):
            if cid is None:
                continue
            try:
                self.api.remove_container(cid, force=True)
            except docker.errors.NotFound:
                continue
            except docker.errors.DockerException:
                # Already being removed (auto-remove): wait until it is gone.
                with contextlib.suppress(Exception):
                    self.api.wait(cid, timeout=30, condition="removed")

    # -- the containers ---------------------------------------------------------------------

    def _cid(self) -> str:
        """The container the verifier runs in (and, before it starts, the agent's)."""
        cid = self.vcid or self.cid
        assert cid is not None
        return cid

    def _exec(
        self, argv: list[str], *, user: str | None, timeout: float, cid: str | None = None
    ) -> _ExecResult:
        """Run `argv` in the container; at `timeout` kill every process but the keeper."""
        cid = cid or self._cid()
        eid = self.api.exec_create(cid, argv, stdout=True, stderr=True, user=user or "")["Id"]
        out = _Tail()
        broken: list[str] = []

        def pump() -> None:
            try:
                for chunk in self.api.exec_start(eid, stream=True):
                    out.add(chunk)
            except Exception as exc:
                broken.append(str(exc))

        worker = threading.Thread(target=pump, name=f"exec {argv[0]}", daemon=True)
        worker.start()
        # The process's end, not its output's, ends the exec: a process it left behind may hold
        # the output open (as in Harbor, it is left running), and a stream may break early.
        deadline = time.monotonic() + timeout
        info: dict[str, Any] = {}
        unstarted = 0
        while True:
            worker.join(min(_POLL, max(deadline - time.monotonic(), 0.0)))
            info = self.api.exec_inspect(eid)
            if not info.get("Running"):
                if info.get("ExitCode") is not None:
                    break
                unstarted += not worker.is_alive()
                if unstarted > 10:  # its stream is gone and it never ran
                    break
            if time.monotonic() >= deadline:
                break
        timed_out = bool(info.get("Running"))
        if timed_out:
            self._kill_all(cid)
            end = time.monotonic() + _KILL_GRACE
            while self.api.exec_inspect(eid).get("Running") and time.monotonic() < end:
                time.sleep(_POLL / 2)
        worker.join(_STREAM_GRACE)
        if broken:
            out.add(f"\n[the output stream broke: {broken[-1]}]".encode())
        code = info.get("ExitCode")
        return _ExecResult(None if timed_out or code is None else int(code), out.text(), timed_out)

    def _kill_all(self, cid: str) -> None:
        with contextlib.suppress(docker.errors.DockerException):
            eid = self.api.exec_create(cid, ["sh", "-c", _KILL_ALL], user="0")["Id"]
            self.api.exec_start(eid)

    def _upload(self, source: Path, name: str) -> None:
        """Copy the host folder `source` to /`name` in the container, owned by root."""
        buffer = io.BytesIO()
        with tarfile.open(fileobj=buffer, mode="w") as tar:
            for path in [source, *sorted(source.rglob("*"))]:
                arcname = PurePosixPath(name, path.relative_to(source).as_posix()).as_posix()
                info = tar.gettarinfo(str(path), arcname=arcname)
                info.uid = info.gid = 0
                info.uname = info.gname = "root"
                info.mode |= 0o755 if info.isdir() else 0o644
                if info.isreg():
                    with path.open("rb") as fh:
                        tar.addfile(info, fh)
                else:
                    tar.addfile(info)
        if not self.api.put_archive(self._cid(), "/", buffer.getvalue()):
            raise TaskmintError(f"{self.task_dir}: could not copy {name}/ into the container")

    def _download(self, folder: str) -> dict[str, bytes]:
        """The regular files under `folder` in the container (relative name -> bytes), each
        cut at `_FILE_BYTES`; {} when the folder is missing."""
        try:
            stream, _stat = self.api.get_archive(self._cid(), folder)
        except docker.errors.NotFound:
            return {}
        buffer = io.BytesIO()
        for chunk in stream:
            buffer.write(chunk)
            if buffer.tell() > _ARCHIVE_BYTES:
                raise _Oversize(f"{folder} holds over {_ARCHIVE_BYTES} bytes: not read")
        buffer.seek(0)
        files: dict[str, bytes] = {}
        top = PurePosixPath(folder).name
        with tarfile.open(fileobj=buffer, mode="r") as tar:
            for member in tar:
                if not member.isreg() or len(files) >= _FILES:
                    continue
                parts = PurePosixPath(member.name).parts
                if len(parts) < 2 or parts[0] != top or ".." in parts:
                    continue
                handle = tar.extractfile(member)
                if handle is not None:
                    files["/".join(parts[1:])] = handle.read(_FILE_BYTES)
        return files


def _within(name: str, top: str) -> bool:
    parts = PurePosixPath(name).parts
    return bool(parts) and parts[0] == top and ".." not in parts and not name.startswith("/")


def _sanitized(member: tarfile.TarInfo, top: str) -> tarfile.TarInfo | None:
    """`member` of an artifact rooted at `top` as Harbor's upload keeps it (tarfile's "data"
    filter): None for a path or a link that leaves the artifact, or a device or fifo; no
    setuid, setgid or sticky bit, no group or other write bit; owned by root."""
    if not _within(member.name, top):
        return None
    if member.issym():
        target = posixpath.normpath(posixpath.join(posixpath.dirname(member.name), member.linkname))
        if member.linkname.startswith("/") or not _within(target, top):
            return None
    elif member.islnk():
        if not _within(member.linkname, top):
            return None
    elif not (member.isreg() or member.isdir()):
        return None
    member.mode &= 0o755
    member.uid = member.gid = 0
    member.uname = member.gname = "root"
    return member
