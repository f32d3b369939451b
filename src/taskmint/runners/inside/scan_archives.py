"""The leak scan's second half, run INSIDE the sandbox: search compressed files for needles.

`grep -rI` skips binary files, so a wheel, sdist, egg or zip holding a copy of the removed code
would go unseen. This opens every archive under the given roots and prints, for each member
holding a needle, "ARCHIVE!MEMBER\\0NEEDLE" (the same form as `grep -oHZ`). Imports nothing of
taskmint; bounded per member so one huge archive cannot stall the scan.

Usage: python -I -B scan_archives.py NEEDLES_FILE ROOT...
"""

from __future__ import annotations

import gzip
import os
import sys
import tarfile
import zipfile

_MEMBER_CAP = 16 * 1024 * 1024
_ZIPS = (".whl", ".zip", ".egg", ".jar", ".pyz")
_TARS = (".tar", ".tar.gz", ".tgz", ".tar.bz2", ".tbz2", ".tar.xz", ".txz")


def _report(path: str, data: bytes, needles: list[str]) -> None:
    text = data.decode("utf-8", "replace")
    for needle in needles:
        if needle in text:
            sys.stdout.write(f"{path}\0{needle}\n")


def _scan(path: str, needles: list[str]) -> None:
    name = path.lower()
    if name.endswith(_ZIPS):
        with zipfile.ZipFile(path) as zf:
            for info in zf.infolist():
                if not info.is_dir() and info.file_size <= _MEMBER_CAP:
                    _report(f"{path}!{info.filename}", zf.read(info), needles)
    elif name.endswith(_TARS):
        with tarfile.open(path) as tf:
            for member in tf:
                if member.isfile() and member.size <= _MEMBER_CAP:
                    fh = tf.extractfile(member)
                    if fh is not None:
                        _report(f"{path}!{member.name}", fh.read(), needles)
    elif name.endswith(".gz"):
        with gzip.open(path) as gz:
            _report(f"{path}!", gz.read(_MEMBER_CAP), needles)


def main() -> int:
    with open(sys.argv[1], encoding="utf-8") as fh:
        needles = [line.rstrip("\n") for line in fh if line.strip()]
    for root in sys.argv[2:]:
        for dirpath, _, files in os.walk(root):
            for f in files:
                path = os.path.join(dirpath, f)
                if os.path.islink(path) or not os.path.isfile(path):
                    continue
                try:
                    _scan(path, needles)
                except Exception:  # a broken or unreadable archive holds nothing we can read
                    continue
    sys.stdout.flush()
    return 0


if __name__ == "__main__":
    sys.exit(main())
