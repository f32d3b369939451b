"""Files of seed trees: what counts as a build or cache artefact (one list, for snapshots and
for every workspace), listing a tree, copying it with uniform timestamps, and stamping it."""

from __future__ import annotations

import functools
import hashlib
import os
import stat
from pathlib import Path, PurePosixPath

__all__ = [
    "ARTEFACT_DIRS",
    "ARTEFACT_FILES",
    "UNIFORM_MTIME",
    "copy_tree",
    "is_artefact",
    "list_tree",
    "stamp_tree",
    "tree_digest",
]

# Build, cache and VCS artefacts never enter a snapshot or a workspace: they can hold copies of
# the code (bytecode, coverage data, built packages) and they are not part of the application.
ARTEFACT_DIRS = frozenset(
    {
        ".git",
        "__pycache__",
        ".pytest_cache",
        ".mypy_cache",
        ".ruff_cache",
        ".hypothesis",
        ".tox",
        ".nox",
        ".venv",
        ".eggs",
        "node_modules",
        "build",
        "dist",
        "htmlcov",
    }
)
ARTEFACT_FILES = frozenset({".coverage", "coverage.xml", ".noseids"})
_ARTEFACT_DIR_SUFFIXES = (".egg-info", ".dist-info")
_ARTEFACT_FILE_SUFFIXES = (".pyc", ".pyo")
# Every file in a workspace gets this mtime, so timestamps cannot tell which file was edited.
UNIFORM_MTIME = 946684800  # 2000-01-01T00:00:00Z


def _artefact_dir(name: str) -> bool:
    return name in ARTEFACT_DIRS or name.endswith(_ARTEFACT_DIR_SUFFIXES)


def _artefact_file(name: str) -> bool:
    return (
        name in ARTEFACT_FILES
        or name.startswith(".coverage.")
        or name.endswith(_ARTEFACT_FILE_SUFFIXES)
    )


@functools.lru_cache(maxsize=1 << 16)
def is_artefact(rel: str) -> bool:
    """Whether a tree's file (a POSIX relative path) is a build, cache or VCS artefact."""
    p = PurePosixPath(rel)
    return any(_artefact_dir(part) for part in p.parts[:-1]) or _artefact_file(p.name)


def list_tree(root: Path) -> list[str]:
    """Regular files under `root` as sorted POSIX relative paths, leaving artefacts out.

    Symlinks, FIFOs, sockets and devices are left out: a snapshot holds regular files only, so
    nothing in it can point outside itself.
    """
    root = Path(root)
    out: list[str] = []
    for dirpath, dirnames, filenames in os.walk(root, followlinks=False):
        dirnames[:] = sorted(
            d
            for d in dirnames
            if not _artefact_dir(d) and not os.path.islink(os.path.join(dirpath, d))
        )
        for name in sorted(filenames):
            if _artefact_file(name):
                continue
            full = os.path.join(dirpath, name)
            try:
                mode = os.lstat(full).st_mode
            except OSError:
                continue
            if stat.S_ISREG(mode):
                out.append(Path(full).relative_to(root).as_posix())
    return sorted(out)


_CHUNK = 1 << 20


def tree_digest(root: Path, files: list[str]) -> str:
    """SHA-256 over the files' paths, executable bits and contents."""
    h = hashlib.sha256()
    for rel in files:
        full = root / rel
        mode = os.stat(full).st_mode
        h.update(rel.encode("utf-8", "surrogateescape") + b"\0")
        h.update(b"x" if mode & stat.S_IXUSR else b"-")
        with open(full, "rb") as fh:
            h.update(hashlib.sha256(fh.read()).digest())
    return h.hexdigest()


def copy_tree(src: Path, dst: Path, files: list[str] | tuple[str, ...] | None = None) -> None:
    """Copy the regular files of `src` (or just `files`) into `dst` with uniform timestamps.

    Every workspace of every run starts here, so it is written with a few system calls per
    file (one folder creation per folder, the mode and time set on the open descriptor)."""
    src_s, dst_s = os.fspath(src), os.fspath(dst)
    os.makedirs(dst_s, exist_ok=True)
    made = {dst_s}
    for rel in files if files is not None else list_tree(Path(src_s)):
        target = os.path.join(dst_s, rel)
        parent = os.path.dirname(target)
        if parent not in made:
            os.makedirs(parent, exist_ok=True)
            made.add(parent)
        with open(os.path.join(src_s, rel), "rb") as fh:
            mode = 0o755 if os.fstat(fh.fileno()).st_mode & stat.S_IXUSR else 0o644
            out = os.open(target, os.O_WRONLY | os.O_CREAT | os.O_TRUNC | os.O_CLOEXEC, mode)
            try:
                while chunk := fh.read(_CHUNK):
                    view = memoryview(chunk)
                    while view:
                        view = view[os.write(out, view) :]
                os.fchmod(out, mode)
                os.utime(out, (UNIFORM_MTIME, UNIFORM_MTIME))
            finally:
                os.close(out)


def stamp_tree(root: Path) -> None:
    """Give every file and folder under `root` the same timestamp."""
    for dirpath, dirnames, filenames in os.walk(root):
        for name in dirnames + filenames:
            os.utime(
                os.path.join(dirpath, name), (UNIFORM_MTIME, UNIFORM_MTIME), follow_symlinks=False
            )
    os.utime(root, (UNIFORM_MTIME, UNIFORM_MTIME))
