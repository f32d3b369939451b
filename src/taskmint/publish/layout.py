"""Where a dataset's files are: the target filesystem, version folders, manifests, `LATEST`.

Shared by the writer (`dataset`) and the loader. A dataset lives under `<root>/<name>/` (a local
folder or any fsspec URL) as version folders `v0001`, `v0002`, ...; a version is complete once
its `manifest.json` exists, and the `LATEST` file names the current one. Every file is written
whole (`put_file`): a temporary name and a rename locally, one PUT on object stores.
"""

from __future__ import annotations

import json
import os
from pathlib import Path
from typing import Any

import fsspec
from fsspec.implementations.local import LocalFileSystem

from taskmint.cache import atomic_write
from taskmint.errors import DatasetError

__all__ = [
    "LATEST",
    "MANIFEST",
    "display",
    "is_local",
    "latest_name",
    "list_versions",
    "put_file",
    "read_manifest",
    "target",
]

MANIFEST = "manifest.json"
LATEST = "LATEST"


def target(root: str | os.PathLike[str], storage_options: dict[str, Any] | None) -> Any:
    """(filesystem, path without a trailing slash) of a local folder or an fsspec URL."""
    fs, path = fsspec.core.url_to_fs(str(root), **(storage_options or {}))
    return fs, path.rstrip("/")


def is_local(fs: Any) -> bool:
    """Whether `fs` is the local filesystem."""
    return isinstance(fs, LocalFileSystem)


def display(fs: Any, path: str) -> str:
    """A path as users write it: a plain path locally, a URL (`s3://...`) elsewhere."""
    return path if is_local(fs) else str(fs.unstrip_protocol(path))


def put_file(fs: Any, path: str, data: bytes) -> None:
    """Write one file whole: a temporary name and a rename locally, one PUT on object stores."""
    if is_local(fs):
        atomic_write(Path(path), data)
    else:
        fs.pipe_file(path, data)


def list_versions(fs: Any, base: str) -> list[str]:
    """Every `vNNNN` folder under `base`, complete or not, in number order."""
    fs.invalidate_cache(base)
    try:
        names = [p.rstrip("/").rsplit("/", 1)[-1] for p in fs.ls(base, detail=False)]
    except FileNotFoundError:
        return []
    found = [n for n in names if len(n) >= 5 and n[0] == "v" and n[1:].isdigit()]
    return sorted(found, key=lambda n: int(n[1:]))


def read_manifest(fs: Any, version_path: str) -> dict[str, Any] | None:
    """A version's manifest, or None when it has none (an incomplete or absent version)."""
    try:
        data: dict[str, Any] = json.loads(fs.cat_file(f"{version_path}/{MANIFEST}"))
    except FileNotFoundError:
        return None
    except (OSError, ValueError) as exc:
        url = display(fs, f"{version_path}/{MANIFEST}")
        raise DatasetError(f"{url} is unreadable ({exc}); load another version") from exc
    return data


def latest_name(fs: Any, base: str) -> str | None:
    """The version `LATEST` names, or the newest complete version when there is no pointer."""
    try:
        name = fs.cat_file(f"{base}/{LATEST}").decode("utf-8").strip()
    except FileNotFoundError:
        name = ""
    if name and fs.exists(f"{base}/{name}/{MANIFEST}"):
        return name
    complete = [v for v in list_versions(fs, base) if fs.exists(f"{base}/{v}/{MANIFEST}")]
    return complete[-1] if complete else None
