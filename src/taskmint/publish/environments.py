"""Rows of the `environments` config: one per seed snapshot, with the tree as a tar.gz.

A task's broken tree is its snapshot's `archive` with `breaking_patch` applied; the archive is
deterministic (sorted names, fixed times and owners, no gzip timestamp), so equal trees give
equal bytes and an unchanged seed leaves the content hash alone.
"""

from __future__ import annotations

import io
import json
import os
import tarfile
from pathlib import Path
from typing import Any

from taskmint.records import SeedApp, to_json_dict

__all__ = ["environment_row", "snapshot_archive"]


def snapshot_archive(seed: SeedApp) -> bytes:
    """A deterministic tar.gz of the snapshot (sorted names, fixed times and owners)."""
    buf = io.BytesIO()
    with tarfile.open(fileobj=buf, mode="w:gz", compresslevel=9) as tar:
        for rel in seed.files:
            data = (Path(seed.root) / rel).read_bytes()
            info = tarfile.TarInfo(rel)
            info.size = len(data)
            info.mtime = 946684800
            info.mode = 0o755 if os.access(Path(seed.root) / rel, os.X_OK) else 0o644
            tar.addfile(info, io.BytesIO(data))
    raw = buf.getvalue()
    # gzip stores a timestamp in its header; zero it so equal trees give equal bytes.
    return raw[:4] + b"\0\0\0\0" + raw[8:]


def environment_row(seed: SeedApp, env_id: str, python_version: str) -> dict[str, Any]:
    """The `environments` row of a seed snapshot built as `env_id` with `python_version`."""
    return {
        "snapshot_id": seed.snapshot_id,
        "env_id": env_id,
        "seed": seed.name,
        "language": seed.manifest.language,
        "manifest": json.dumps(to_json_dict(seed.manifest), sort_keys=True),
        "python_version": python_version,
        "dependencies": list(seed.manifest.dependencies),
        "files": list(seed.files),
        "archive": snapshot_archive(seed),
    }
