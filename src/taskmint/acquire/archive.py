"""Unpacking source archives (sdists, exported image layers) without trusting them.

An archive from a registry is input like any other: a member may be named `../../etc/x`, be an
absolute path, be a symlink or hard link that points out of the destination, be a device file,
or the archive may expand to far more bytes or files than it is worth. `safe_extract` refuses
all of that with an `ArchiveError` naming the member, before anything is written outside
`dest`, and writes regular files and folders only (links inside the tree are skipped: a seed
snapshot holds regular files only).
"""

from __future__ import annotations

import os
import stat
import tarfile
import zipfile
from dataclasses import dataclass
from pathlib import Path, PurePosixPath
from typing import IO

from taskmint.errors import ManifestError

__all__ = ["ArchiveError", "ArchiveLimits", "safe_extract"]


class ArchiveError(ManifestError):
    """A source archive is unsafe or too large to unpack."""


@dataclass(frozen=True, slots=True, kw_only=True)
class ArchiveLimits:
    """How much an archive may expand to."""

    max_bytes: int = 512 * 1024**2
    max_members: int = 50_000
    max_member_bytes: int = 128 * 1024**2


def _member_path(name: str, where: str) -> PurePosixPath:
    if "\0" in name:
        raise ArchiveError(f"{where}: member {name!r} has an invalid name")
    p = PurePosixPath(name)
    if p.is_absolute() or name.startswith(("/", "\\")) or (len(name) > 1 and name[1] == ":"):
        raise ArchiveError(f"{where}: member {name!r} is an absolute path; refusing to unpack")
    if ".." in p.parts:
        raise ArchiveError(f"{where}: member {name!r} climbs out with '..'; refusing to unpack")
    return PurePosixPath(*[part for part in p.parts if part not in ("", ".")])


def _link_stays_inside(member: PurePosixPath, target: str, *, hard: bool) -> bool:
    t = PurePosixPath(target)
    if t.is_absolute():
        return False
    # a symlink resolves from its own folder; a hard link names a path from the archive root
    joined = t if hard else member.parent / t
    depth = 0
    for part in joined.parts:
        if part == "..":
            depth -= 1
            if depth < 0:
                return False
        elif part not in ("", "."):
            depth += 1
    return True


def safe_extract(archive: Path, dest: Path, *, limits: ArchiveLimits | None = None) -> list[str]:
    """Unpack a .tar(.gz/.bz2/.xz) or .zip `archive` into `dest`; return the files written.

    Every member is checked before any is written, so a refused archive leaves `dest` empty.
    """
    limits = limits or ArchiveLimits()
    archive, dest = Path(archive), Path(dest)
    where = archive.name
    dest.mkdir(parents=True, exist_ok=True)
    if zipfile.is_zipfile(archive):
        return _extract_zip(archive, dest, limits, where)
    try:
        with tarfile.open(archive, "r:*") as tar:
            return _extract_tar(tar, dest, limits, where)
    except (tarfile.TarError, EOFError) as exc:
        raise ArchiveError(f"{where}: not a readable tar or zip archive ({exc})") from exc


def _check_totals(
    count: int, total: int, size: int, name: str, limits: ArchiveLimits, where: str
) -> None:
    if count > limits.max_members:
        raise ArchiveError(f"{where}: more than {limits.max_members} members; refusing to unpack")
    if size > limits.max_member_bytes:
        raise ArchiveError(
            f"{where}: member {name!r} is {size} bytes, over the {limits.max_member_bytes} limit"
        )
    if total > limits.max_bytes:
        raise ArchiveError(
            f"{where}: expands to more than {limits.max_bytes} bytes; refusing to unpack"
        )


def _extract_tar(tar: tarfile.TarFile, dest: Path, limits: ArchiveLimits, where: str) -> list[str]:
    plan: list[tuple[tarfile.TarInfo, PurePosixPath]] = []
    total = 0
    try:
        members = tar.getmembers()
    except (tarfile.TarError, OSError, EOFError) as exc:
        raise ArchiveError(f"{where}: corrupt tar archive ({exc})") from exc
    for count, m in enumerate(members, start=1):
        rel = _member_path(m.name, where)
        if m.ischr() or m.isblk() or m.isfifo() or m.isdev():
            raise ArchiveError(f"{where}: member {m.name!r} is a device or FIFO; refusing")
        if m.issym() or m.islnk():
            if not _link_stays_inside(rel, m.linkname, hard=m.islnk()):
                raise ArchiveError(
                    f"{where}: link {m.name!r} -> {m.linkname!r} points outside the archive"
                )
            continue  # links are not written: a snapshot holds regular files only
        total += max(m.size, 0)
        _check_totals(count, total, m.size, m.name, limits, where)
        if m.isreg() or m.isdir():
            plan.append((m, rel))
    written: list[str] = []
    for m, rel in plan:
        if not rel.parts:
            continue
        target = dest.joinpath(*rel.parts)
        if m.isdir():
            target.mkdir(parents=True, exist_ok=True)
            continue
        _ensure_inside(dest, target, where, m.name)
        target.parent.mkdir(parents=True, exist_ok=True)
        src = tar.extractfile(m)
        if src is None:
            continue
        with src, open(target, "wb") as out:
            _copy_limited(src, out, m.size, where, m.name)
        os.chmod(target, 0o755 if m.mode & stat.S_IXUSR else 0o644)
        written.append(rel.as_posix())
    return sorted(written)


def _extract_zip(archive: Path, dest: Path, limits: ArchiveLimits, where: str) -> list[str]:
    with zipfile.ZipFile(archive) as zf:
        infos = zf.infolist()
        total = 0
        plan: list[tuple[zipfile.ZipInfo, PurePosixPath]] = []
        for count, info in enumerate(infos, start=1):
            rel = _member_path(info.filename, where)
            mode = info.external_attr >> 16
            if stat.S_ISLNK(mode):
                link = zf.read(info).decode("utf-8", "replace")
                if not _link_stays_inside(rel, link, hard=False):
                    raise ArchiveError(
                        f"{where}: link {info.filename!r} -> {link!r} points outside the archive"
                    )
                continue
            if mode and (stat.S_ISCHR(mode) or stat.S_ISBLK(mode) or stat.S_ISFIFO(mode)):
                raise ArchiveError(f"{where}: member {info.filename!r} is a device or FIFO")
            total += info.file_size
            _check_totals(count, total, info.file_size, info.filename, limits, where)
            plan.append((info, rel))
        written: list[str] = []
        for info, rel in plan:
            if not rel.parts:
                continue
            target = dest.joinpath(*rel.parts)
            if info.is_dir():
                target.mkdir(parents=True, exist_ok=True)
                continue
            _ensure_inside(dest, target, where, info.filename)
            target.parent.mkdir(parents=True, exist_ok=True)
            with zf.open(info) as src, open(target, "wb") as out:
                _copy_limited(src, out, info.file_size, where, info.filename)
            mode = info.external_attr >> 16
            os.chmod(target, 0o755 if mode & stat.S_IXUSR else 0o644)
            written.append(rel.as_posix())
    return sorted(written)


def _ensure_inside(dest: Path, target: Path, where: str, name: str) -> None:
    # No link is ever written, but `dest` may already hold one from elsewhere: never follow it.
    real_dest = os.path.realpath(dest)
    real_parent = os.path.realpath(target.parent)
    if os.path.commonpath([real_dest, real_parent]) != real_dest or os.path.islink(target):
        raise ArchiveError(f"{where}: member {name!r} would be written outside the destination")


def _copy_limited(src: IO[bytes], out: IO[bytes], declared: int, where: str, name: str) -> None:
    # The declared size is what the limits checked; a member that inflates past it is refused.
    written = 0
    while chunk := src.read(1 << 20):
        written += len(chunk)
        if written > declared:
            raise ArchiveError(f"{where}: member {name!r} is larger than its header says")
        out.write(chunk)
