"""The sandbox interface shared by every backend."""

from __future__ import annotations

import abc
import collections
from dataclasses import dataclass, field
from types import TracebackType

from taskmint.config import Limits

__all__ = ["CappedOutput", "Mount", "RunResult", "RunSpec", "Sandbox"]

WORKSPACE = "/workspace"  # where the workspace appears inside every sandbox
REPORT_DIR = "/run/taskmint"  # the out-of-band report folder, outside the workspace


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


class Sandbox(abc.ABC):
    """A place to run untrusted commands. Use as a context manager to guarantee cleanup."""

    name: str = "abstract"

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
