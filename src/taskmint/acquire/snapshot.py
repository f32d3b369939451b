"""Content-addressed snapshots of seed trees."""

from __future__ import annotations

import hashlib
import os
import shutil
import stat
from dataclasses import replace
from pathlib import Path

from taskmint.acquire.manifest import load_manifest
from taskmint.errors import ManifestError
from taskmint.records import SeedApp
from taskmint.scratch import make_staging

__all__ = [
    "IGNORED_NAMES",
    "acquire",
    "copy_tree",
    "list_tree",
    "snapshot_tree",
    "stamp_tree",
]

# Build and cache artefacts never enter a snapshot: they can hold copies of the code (bytecode,
# coverage data) and they are not part of the application.
IGNORED_NAMES = frozenset(
    {
        ".git",
        "__pycache__",
        ".pytest_cache",
        ".mypy_cache",
        ".ruff_cache",
        ".coverage",
        "node_modules",
        ".tox",
        ".venv",
        "build",
        "dist",
        ".hypothesis",
    }
)
_IGNORED_SUFFIXES = (".pyc", ".pyo", ".egg-info")
# Every file in a workspace gets this mtime, so timestamps cannot tell which file was edited.
UNIFORM_MTIME = 946684800  # 2000-01-01T00:00:00Z


def list_tree(root: Path) -> list[str]:
    """Regular files under `root` as sorted POSIX relative paths, ignoring artefacts.

    Symlinks, FIFOs, sockets and devices are left out: a snapshot holds regular files only, so
    nothing in it can point outside itself.
    """
    root = Path(root)
    out: list[str] = []
    for dirpath, dirnames, filenames in os.walk(root, followlinks=False):
        dirnames[:] = sorted(
            d
            for d in dirnames
            if d not in IGNORED_NAMES
            and not d.endswith(_IGNORED_SUFFIXES)
            and not os.path.islink(os.path.join(dirpath, d))
        )
        for name in sorted(filenames):
            if name in IGNORED_NAMES or name.endswith(_IGNORED_SUFFIXES):
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


def _tree_digest(root: Path, files: list[str]) -> str:
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


def snapshot_tree(seed_dir: Path, cache_dir: Path, *, name: str = "") -> SeedApp:
    """Snapshot `seed_dir` into `cache_dir/snapshots/<id>/` and return the `SeedApp`.

    Idempotent: an existing snapshot with the same id is reused. The copy is written to a
    temporary folder and renamed, so a crash never leaves a half snapshot under its final name.
    `name`, when given, is the seed's name whatever its taskmint.toml says (the seeds manifest
    renamed it); the files, and so the snapshot id, are left as they are.
    """
    seed_dir = Path(seed_dir).resolve()
    if not seed_dir.is_dir():
        raise ManifestError(f"seed folder {seed_dir} does not exist")
    manifest = load_manifest(seed_dir)
    if name and name != manifest.name:
        manifest = replace(manifest, name=name)
    files = list_tree(seed_dir)
    snapshot_id = _tree_digest(seed_dir, files)[:24]
    final = Path(cache_dir) / "snapshots" / snapshot_id
    if not (final / "tree").is_dir():
        final.parent.mkdir(parents=True, exist_ok=True)
        tmp = make_staging(f".{snapshot_id}.", final.parent)
        try:
            copy_tree(seed_dir, tmp / "tree", files)
            try:
                os.rename(tmp, final)
            except OSError:
                if not (final / "tree").is_dir():  # lost a race only if the winner finished
                    raise
        finally:
            shutil.rmtree(tmp, ignore_errors=True)
    return SeedApp(
        name=manifest.name,
        snapshot_id=snapshot_id,
        root=str(final / "tree"),
        manifest=manifest,
        files=tuple(files),
        origin=str(seed_dir),
    )


def acquire(seed_dir: Path, *, cache_dir: Path) -> SeedApp:
    """The `acquire` verb: a local seed folder -> a content-addressed `SeedApp`."""
    return snapshot_tree(seed_dir, cache_dir)
