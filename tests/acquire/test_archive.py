"""Unpacking untrusted archives: crafted tarballs and zips that try to escape or to explode."""

from __future__ import annotations

import io
import stat
import tarfile
import zipfile
from pathlib import Path

import pytest

from taskmint.acquire.archive import ArchiveError, ArchiveLimits, safe_extract


def _tar(path: Path, members: list[tuple[tarfile.TarInfo, bytes | None]]) -> Path:
    with tarfile.open(path, "w:gz") as tf:
        for info, data in members:
            if data is not None:
                info.size = len(data)
                tf.addfile(info, io.BytesIO(data))
            else:
                tf.addfile(info)
    return path


def _file(name: str, mode: int = 0o644) -> tarfile.TarInfo:
    info = tarfile.TarInfo(name)
    info.mode = mode
    return info


def _link(name: str, target: str, kind: bytes = tarfile.SYMTYPE) -> tarfile.TarInfo:
    info = tarfile.TarInfo(name)
    info.type = kind
    info.linkname = target
    return info


def test_a_normal_sdist_unpacks_with_modes_and_inner_links_skipped(tmp_path):
    arc = _tar(
        tmp_path / "pkg-1.0.tar.gz",
        [
            (_file("pkg-1.0/pkg/__init__.py"), b"X = 1\n"),
            (_file("pkg-1.0/run.sh", 0o755), b"#!/bin/sh\n"),
            (_link("pkg-1.0/pkg/alias.py", "__init__.py"), None),
            (_file("./pkg-1.0/tests/test_x.py"), b"def test(): pass\n"),
        ],
    )
    files = safe_extract(arc, tmp_path / "out")
    assert files == ["pkg-1.0/pkg/__init__.py", "pkg-1.0/run.sh", "pkg-1.0/tests/test_x.py"]
    assert (tmp_path / "out/pkg-1.0/pkg/__init__.py").read_text() == "X = 1\n"
    assert (tmp_path / "out/pkg-1.0/run.sh").stat().st_mode & stat.S_IXUSR
    assert not (tmp_path / "out/pkg-1.0/pkg/alias.py").exists()


@pytest.mark.parametrize(
    ("member", "data", "message"),
    [
        (_file("../evil.py"), b"x", "climbs out"),
        (_file("pkg/../../evil.py"), b"x", "climbs out"),
        (_file("/tmp/evil.py"), b"x", "absolute"),
        (_link("pkg/up", "../../etc/passwd"), None, "outside"),
        (_link("pkg/abs", "/etc/passwd"), None, "outside"),
        (_link("pkg/hard", "../outside", tarfile.LNKTYPE), None, "outside"),
        (_link("dev", "", tarfile.CHRTYPE), None, "device"),
        (_link("fifo", "", tarfile.FIFOTYPE), None, "device"),
    ],
)
def test_escapes_and_devices_are_refused_before_anything_is_written(
    tmp_path, member, data, message
):
    arc = _tar(tmp_path / "bad.tar.gz", [(_file("pkg/ok.py"), b"ok"), (member, data)])
    with pytest.raises(ArchiveError, match=message):
        safe_extract(arc, tmp_path / "out")
    assert list((tmp_path / "out").iterdir()) == []
    assert not (tmp_path / "evil.py").exists()


def test_size_and_member_limits(tmp_path):
    arc = _tar(tmp_path / "big.tar.gz", [(_file(f"f{i}.py"), b"x" * 1000) for i in range(5)])
    with pytest.raises(ArchiveError, match="more than 3 members"):
        safe_extract(arc, tmp_path / "a", limits=ArchiveLimits(max_members=3))
    with pytest.raises(ArchiveError, match="expands to more than"):
        safe_extract(arc, tmp_path / "b", limits=ArchiveLimits(max_bytes=2500))
    with pytest.raises(ArchiveError, match="over the 999 limit"):
        safe_extract(arc, tmp_path / "c", limits=ArchiveLimits(max_member_bytes=999))
    assert len(safe_extract(arc, tmp_path / "d")) == 5


def test_a_compression_bomb_is_refused_by_its_declared_size(tmp_path):
    arc = _tar(tmp_path / "bomb.tar.gz", [(_file("zeros.bin"), b"\0" * 3_000_000)])
    assert arc.stat().st_size < 20_000  # it compresses very well
    with pytest.raises(ArchiveError, match="expands to more than"):
        safe_extract(arc, tmp_path / "out", limits=ArchiveLimits(max_bytes=1_000_000))


def _zip(path: Path, entries: list[tuple[str, bytes, int]]) -> Path:
    with zipfile.ZipFile(path, "w") as zf:
        for name, data, mode in entries:
            info = zipfile.ZipInfo(name)
            info.external_attr = mode << 16
            zf.writestr(info, data)
    return path


def test_zip_archives_are_checked_the_same_way(tmp_path):
    good = _zip(
        tmp_path / "good.zip",
        [("pkg/a.py", b"A = 1\n", 0o100644), ("pkg/link", b"a.py", stat.S_IFLNK | 0o777)],
    )
    assert safe_extract(good, tmp_path / "g") == ["pkg/a.py"]
    for name, entries, message in [
        ("slip.zip", [("../../evil.py", b"x", 0o100644)], "climbs out"),
        ("abs.zip", [("/etc/evil.py", b"x", 0o100644)], "absolute"),
        ("link.zip", [("pkg/l", b"../../../etc/passwd", stat.S_IFLNK | 0o777)], "outside"),
    ]:
        with pytest.raises(ArchiveError, match=message):
            safe_extract(_zip(tmp_path / name, entries), tmp_path / name.replace(".", "_"))
    many = _zip(tmp_path / "many.zip", [(f"f{i}", b"x", 0o100644) for i in range(4)])
    with pytest.raises(ArchiveError, match="more than 2 members"):
        safe_extract(many, tmp_path / "m", limits=ArchiveLimits(max_members=2))


def test_not_an_archive_is_a_clear_error(tmp_path):
    junk = tmp_path / "junk.tar.gz"
    junk.write_bytes(b"this is not an archive")
    with pytest.raises(ArchiveError, match="not a readable tar or zip"):
        safe_extract(junk, tmp_path / "out")


def test_an_existing_symlink_in_the_destination_is_not_followed(tmp_path):
    dest = tmp_path / "out"
    (dest / "pkg").mkdir(parents=True)
    outside = tmp_path / "outside"
    outside.mkdir()
    (dest / "pkg" / "sub").symlink_to(outside)
    arc = _tar(tmp_path / "a.tar.gz", [(_file("pkg/sub/x.py"), b"x")])
    with pytest.raises(ArchiveError, match="outside the destination"):
        safe_extract(arc, dest)
    assert not (outside / "x.py").exists()
