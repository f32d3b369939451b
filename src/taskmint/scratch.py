"""Where the short-lived folders of a run live: workspaces, report folders, spools.

Every run of a seed's suite starts from a fresh copy of the snapshot and ends by deleting it:
on a disk file system (ext4 here) creating and deleting those files costs the host about ten
times the kernel time it costs on a tmpfs (a 110-file tree: 20-34 ms against 2 ms per copy and
removal), and on a small, fast suite that was most of taskmint's own work per candidate. So
these folders go to `/dev/shm` when it is a tmpfs with room to spare, else to the system's
temporary folder. `TASKMINT_SCRATCH` chooses the folder (an empty value: the system's).
Each is told to the reaper (`taskmint.lifecycle`), so a process killed mid-run leaves none.
"""

from __future__ import annotations

import functools
import os
import tempfile
from pathlib import Path

from taskmint.lifecycle import track_path

__all__ = ["SHM_MIN_FREE", "make_scratch", "make_staging", "scratch_dir"]

SHM_MIN_FREE = 8 * 1024**3  # free bytes /dev/shm needs to be used (it is memory)
_SHM = "/dev/shm"


@functools.cache
def scratch_dir() -> str | None:
    """The folder for scratch folders (None: the system's temporary folder); chosen once per
    process, so a workspace and the spool it is moved into share a file system."""
    chosen = os.environ.get("TASKMINT_SCRATCH")
    if chosen is not None:
        if not chosen:
            return None
        os.makedirs(chosen, exist_ok=True)
        return chosen
    return _SHM if _roomy_tmpfs(_SHM) else None


def _roomy_tmpfs(path: str) -> bool:
    try:
        st = os.statvfs(path)
        with open("/proc/self/mounts", encoding="utf-8") as fh:
            kinds = {line.split()[1]: line.split()[2] for line in fh if len(line.split()) > 2}
    except OSError:
        return False
    if kinds.get(path) != "tmpfs" or not os.access(path, os.W_OK | os.X_OK):
        return False
    return st.f_bavail * st.f_frsize >= SHM_MIN_FREE


def make_scratch(prefix: str) -> Path:
    """A new private folder in `scratch_dir()` (the caller removes it)."""
    path = Path(tempfile.mkdtemp(prefix=prefix, dir=scratch_dir()))
    track_path(path)  # removed by the reaper if the process dies before it does
    return path


def make_staging(prefix: str, parent: Path) -> Path:
    """A fresh folder in `parent` to build a cache entry in before it is renamed into place;
    removed by the reaper if the process dies first (once renamed, there is nothing to
    remove)."""
    path = Path(tempfile.mkdtemp(prefix=prefix, dir=parent))
    track_path(path)
    return path
