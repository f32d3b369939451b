"""Content-addressed snapshots of seed trees."""

from __future__ import annotations

import os
import shutil
from dataclasses import replace
from pathlib import Path

from taskmint.acquire.manifest import load_manifest
from taskmint.errors import ManifestError
from taskmint.files import copy_tree, list_tree, tree_digest
from taskmint.records import SeedApp
from taskmint.scratch import make_staging

__all__ = ["acquire", "snapshot_tree"]


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
    snapshot_id = tree_digest(seed_dir, files)[:24]
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
