"""The bytes of the `docker` backend's execs: the inputs' tar in, multiplexed output out.

Inputs go in, the report comes out, as tar streams over an exec's stdin and stdout; no writable
bind mount exists. The host unpacks only regular files and folders, with `tarfile`'s `data`
filter.
"""

from __future__ import annotations

import contextlib
import io
import socket
import struct
import tarfile
import threading
from collections.abc import Iterator
from pathlib import Path
from typing import Any

from taskmint.sandbox.base import REPORT_DIR, WORKSPACE, CappedOutput, RunSpec

__all__ = ["FrameReader", "frames", "pack_inputs", "raw_socket", "unpack_report"]


def pack_inputs(spec: RunSpec) -> bytes:
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


def unpack_report(data: bytes, dest: Path) -> None:
    """Unpack the report tar into `dest`: regular files and folders only, inside `dest`."""
    dest.mkdir(parents=True, exist_ok=True)
    with tarfile.open(fileobj=io.BytesIO(data), mode="r") as tar:
        members = [m for m in tar.getmembers() if m.isreg() or m.isdir()]
        tar.extractall(dest, members=members, filter="data")


def raw_socket(sock: Any) -> socket.socket:
    """The socket under the SDK's wrapper of an exec's stream."""
    raw = getattr(sock, "_sock", sock)
    assert isinstance(raw, socket.socket)
    return raw


def frames(sock: Any) -> Iterator[tuple[int, bytes]]:
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


class FrameReader(threading.Thread):
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
            for stream, chunk in frames(self.sock):
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
