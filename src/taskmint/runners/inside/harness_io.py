"""What taskmint's one-process harnesses (`cargo_runner.py`, `node_runner.py`) share: reading
their input, writing their report, and making themselves non-dumpable.

The harnesses run as `python -I -S -B <harness>.py`, which puts no folder on sys.path: they
load this file from their own folder by its path (`runpy.run_path`), so it goes wherever they
go (an adapter's `inside_files` names it). Standard library only.
"""

from __future__ import annotations

import ctypes
import ctypes.util
import json
import os
import sys
from typing import Any

__all__ = ["Report", "non_dumpable", "read_input"]

PR_SET_DUMPABLE = 4


def non_dumpable() -> str | None:
    """Make this process non-dumpable; None on success, else why not."""
    try:
        libc = ctypes.CDLL(ctypes.util.find_library("c") or None, use_errno=True)
        if libc.prctl(PR_SET_DUMPABLE, 0, 0, 0, 0) != 0:
            return f"prctl(PR_SET_DUMPABLE) failed: {os.strerror(ctypes.get_errno())}"
    except (OSError, AttributeError) as exc:
        return f"cannot call prctl: {exc}"
    return None


def read_input(script: str) -> tuple[Any, int | str]:
    """(the input, where the report goes) of `script --channel` (the input read from the
    descriptor $TASKMINT_CHANNEL names first, the report to the second, never inherited) or
    `script REPORT INPUT` (the file INPUT read, then deleted; the report appended to REPORT)."""
    if sys.argv[1:] == ["--channel"]:
        fd_in, fd_out = (int(x) for x in os.environ.pop("TASKMINT_CHANNEL").split())
        chunks = []
        while True:
            chunk = os.read(fd_in, 1 << 20)
            if not chunk:
                break
            chunks.append(chunk)
        os.close(fd_in)
        os.set_inheritable(fd_out, False)
        return json.loads(b"".join(chunks)), fd_out
    if len(sys.argv) != 3:
        raise SystemExit(f"usage: {script} --channel | {script} REPORT INPUT")
    with open(sys.argv[2], "rb") as fh:
        data = json.loads(fh.read())
    os.unlink(sys.argv[2])
    return data, sys.argv[1]


class Report:
    """The report's writer: JSON lines with the nonce, to a descriptor or appended to a file."""

    def __init__(self, target: int | str, nonce: str) -> None:
        if isinstance(target, int):
            self.fd = target
        else:
            self.fd = os.open(target, os.O_WRONLY | os.O_CREAT | os.O_APPEND | os.O_CLOEXEC, 0o600)
        self.nonce = nonce

    def emit(self, record: dict[str, Any]) -> None:
        line = (json.dumps({"nonce": self.nonce, **record}) + "\n").encode()
        while line:
            line = line[os.write(self.fd, line) :]
