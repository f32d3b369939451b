"""Writing dataset versions: shards sized for streaming, a manifest, tombstones, `LATEST`.

Every write goes through fsspec, so the target is a local folder by default and any fsspec URL
otherwise (`s3://bucket/datasets`, `hf://datasets/org/name`). A version is append-only: its
shards and card are written first, then `manifest.json` (a version without one is incomplete
and never loaded), then the `LATEST` pointer is replaced, last. Killing `publish` at any point
therefore leaves the previous version intact and `LATEST` unchanged; the next publish removes
the incomplete folder and takes the next number (numbers are never reused).

The parts live beside this module: the folder layout and whole-file writes in `layout`, the
parquet shards in `shards`, the dataset card in `card`, the `environments` rows in
`environments`.
"""

from __future__ import annotations

import datetime as dt
import hashlib
import json
import os
from dataclasses import asdict, dataclass
from typing import Any

import pyarrow.parquet as pq

from taskmint.errors import DatasetError
from taskmint.publish import layout  # every write is `layout.put_file`, looked up per call
from taskmint.publish.card import config_digest, dataset_card
from taskmint.publish.environments import environment_row
from taskmint.publish.layout import (
    LATEST,
    MANIFEST,
    display,
    latest_name,
    list_versions,
    read_manifest,
    target,
)
from taskmint.publish.schema import (
    ENVIRONMENT_SCHEMA,
    FEATURE_NAMES,
    TASK_SCHEMA,
    task_to_row,
    upgrade_task_row,
)
from taskmint.publish.shards import ShardPolicy, assign_shards, write_config
from taskmint.records import SeedApp, Task

__all__ = [
    "ENVIRONMENT_SCHEMA",
    "FEATURE_NAMES",  # defined in taskmint.publish.schema; re-exported for older imports
    "TASK_SCHEMA",
    "PublishedVersion",
    "ShardPolicy",  # defined in taskmint.publish.shards; re-exported for older imports
    "assign_shards",
    "publish",
    "retract",
]

_FORMAT = 2


@dataclass(frozen=True, slots=True, kw_only=True)
class PublishedVersion:
    """Where a version landed and what it holds."""

    path: str
    version: str
    tasks: int
    environments: int
    created: bool  # False when the content equalled the latest version, which is reused
    tombstones: int = 0


# Columns that measure a run rather than describe a task: left out of `content_sha256`, so a
# task minted again (after a resume, on another machine) has the content hash it had.
MEASURED_COLUMNS = frozenset({"validation_wall_time", "created"})


def _parent_ids(fs: Any, base: str, parent: str, manifest: dict[str, Any]) -> dict[str, bool]:
    """instance_id -> retired, for every row of the parent version."""
    out: dict[str, bool] = {}
    for entry in manifest.get("splits", {}).get("tasks", {}).get("train", []):
        with fs.open(f"{base}/{parent}/{entry['path']}", "rb") as fh:
            table = pq.read_table(fh, columns=["instance_id", "retired"])
        for iid, retired in zip(
            table.column("instance_id").to_pylist(),
            table.column("retired").to_pylist(),
            strict=True,
        ):
            out[iid] = bool(retired)
    return out


def _publish_rows(
    task_rows: list[dict[str, Any]],
    env_rows: list[dict[str, Any]],
    *,
    root: str | os.PathLike[str],
    name: str,
    policy: ShardPolicy,
    storage_options: dict[str, Any] | None,
    retractions: dict[str, str],
) -> PublishedVersion:
    fs, root_path = target(root, storage_options)
    base = f"{root_path}/{name}"
    fs.makedirs(base, exist_ok=True)
    ids = [r["instance_id"] for r in task_rows]
    if len(set(ids)) != len(ids):
        raise DatasetError("duplicate instance_id in the tasks to publish")

    parent = latest_name(fs, base)
    parent_manifest = read_manifest(fs, f"{base}/{parent}") if parent else None
    tombstones: dict[str, dict[str, Any]] = {
        t["instance_id"]: t for t in (parent_manifest or {}).get("tombstones", [])
    }
    # A retracted id stays retracted: a refresh that re-mints it (ids are stable) skips it.
    kept = [
        r
        for r in task_rows
        if r["instance_id"] not in retractions
        and tombstones.get(r["instance_id"], {}).get("status") != "retracted"
    ]
    kept.sort(key=lambda r: r["instance_id"])
    kept_ids = {r["instance_id"] for r in kept}
    for iid in kept_ids:
        tombstones.pop(iid, None)

    used = {r["snapshot_id"] for r in kept}
    env_rows = sorted(
        (r for r in env_rows if r["snapshot_id"] in used), key=lambda r: r["snapshot_id"]
    )
    h = hashlib.sha256()
    sizes = []
    for row in kept:
        blob = json.dumps(row, sort_keys=True, default=str).encode("utf-8")
        sizes.append(len(blob))
        # the content, not the measurements: the same tasks minted again hash alike
        content = {k: v for k, v in row.items() if k not in MEASURED_COLUMNS}
        h.update(json.dumps(content, sort_keys=True, default=str).encode("utf-8"))
    h.update(json.dumps(sorted(retractions.items())).encode("utf-8"))
    content_hash = h.hexdigest()
    if parent_manifest is not None and parent_manifest.get("content_sha256") == content_hash:
        return PublishedVersion(
            path=display(fs, f"{base}/{parent}"),
            version=str(parent),
            tasks=len(kept),
            environments=len(env_rows),
            created=False,
            tombstones=len(tombstones),
        )

    existing = list_versions(fs, base)
    number = int(existing[-1][1:]) + 1 if existing else 1
    version = f"v{number:04d}"
    stamp = dt.datetime.now(dt.UTC).strftime("%Y-%m-%dT%H:%M:%SZ")
    if parent_manifest is not None:
        for iid, retired in _parent_ids(fs, base, str(parent), parent_manifest).items():
            if iid in kept_ids or iid in tombstones:
                continue
            status = "retracted" if iid in retractions else "retired" if retired else "removed"
            tombstones[iid] = {
                "instance_id": iid,
                "status": status,
                "reason": retractions.get(iid, "not in the refreshed set" if not retired else ""),
                "since": version,
            }
    for iid, reason in retractions.items():
        tombstones.setdefault(
            iid, {"instance_id": iid, "status": "retracted", "reason": reason, "since": version}
        )

    # Versions that never got a manifest are debris of a killed publish: nothing points to them.
    for old in existing:
        if old != parent and not fs.exists(f"{base}/{old}/{MANIFEST}"):
            fs.rm(f"{base}/{old}", recursive=True)
    vpath = f"{base}/{version}"
    files: dict[str, dict[str, Any]] = {}
    task_shards = write_config(
        fs, vpath, "tasks", kept, [r["instance_id"] for r in kept], sizes,
        TASK_SCHEMA, policy, policy.divisor, files,
    )  # fmt: skip
    env_shards = write_config(
        fs, vpath, "environments", env_rows, [r["snapshot_id"] for r in env_rows],
        [len(r["archive"]) + 1024 for r in env_rows], ENVIRONMENT_SCHEMA, policy, 1, files,
    )  # fmt: skip
    digests = {"tasks": config_digest(task_shards), "environments": config_digest(env_shards)}
    seed_names = sorted({r["seed"] for r in kept})
    card = dataset_card(name, version, len(kept), seed_names, parent, digests).encode("utf-8")
    layout.put_file(fs, f"{vpath}/README.md", card)
    files["README.md"] = {"sha256": hashlib.sha256(card).hexdigest(), "bytes": len(card)}
    manifest = {
        "format": _FORMAT,
        "name": name,
        "version": version,
        "parent": parent,
        "created": stamp,
        "content_sha256": content_hash,
        "tasks": len(kept),
        "environments": len(env_rows),
        "shard_policy": asdict(policy),
        "splits": {"tasks": {"train": task_shards}, "environments": {"train": env_shards}},
        "tombstones": sorted(tombstones.values(), key=lambda t: t["instance_id"]),
        "files": dict(sorted(files.items())),
    }
    # The manifest is written last: a version without one is incomplete and never loaded.
    layout.put_file(fs, f"{vpath}/{MANIFEST}", json.dumps(manifest, indent=1).encode("utf-8"))
    # And `LATEST` after it, in one atomic replace (a rename here, a single PUT on S3).
    layout.put_file(fs, f"{base}/{LATEST}", f"{version}\n".encode())
    return PublishedVersion(
        path=display(fs, vpath),
        version=version,
        tasks=len(kept),
        environments=len(env_rows),
        created=True,
        tombstones=len(tombstones),
    )


def publish(
    tasks: list[Task],
    seeds: list[tuple[SeedApp, str, str]],
    *,
    root: str | os.PathLike[str],
    name: str,
    shard_rows: int | None = None,
    policy: ShardPolicy | None = None,
    storage_options: dict[str, Any] | None = None,
) -> PublishedVersion:
    """The `publish` verb: write `tasks` (and their seeds' environments) as a new version.

    `root` is a local folder or any fsspec URL (`storage_options` go to its filesystem).
    `seeds` holds (seed, env_id, python_version) for every snapshot the tasks reference. Ids
    of the parent version that are not in `tasks` become tombstones (`retired` or `removed`);
    ids retracted earlier stay out. If the content equals the latest version's, no version is
    added and the latest is returned.
    """
    if policy is None:
        policy = ShardPolicy() if shard_rows is None else ShardPolicy(max_rows=shard_rows)
    ids = [t.instance_id for t in tasks]
    if len(set(ids)) != len(ids):
        raise DatasetError("duplicate instance_id in the tasks to publish")
    return _publish_rows(
        [task_to_row(t) for t in tasks],
        [environment_row(s, e, v) for s, e, v in seeds],
        root=root,
        name=name,
        policy=policy,
        storage_options=storage_options,
        retractions={},
    )


def retract(
    root: str | os.PathLike[str],
    name: str,
    ids: dict[str, str],
    *,
    policy: ShardPolicy | None = None,
    storage_options: dict[str, Any] | None = None,
) -> PublishedVersion:
    """Publish a new version without the tasks in `ids` (id -> reason), carried as tombstones.

    Later publishes keep them out even when a refresh mints the same ids again.
    """
    fs, root_path = target(root, storage_options)
    base = f"{root_path}/{name}"
    latest = latest_name(fs, base)
    manifest = read_manifest(fs, f"{base}/{latest}") if latest else None
    if manifest is None:
        raise DatasetError(f"no published version under {display(fs, base)} to retract")
    rows: dict[str, list[dict[str, Any]]] = {}
    for config in ("tasks", "environments"):
        rows[config] = []
        for entry in manifest["splits"][config]["train"]:
            with fs.open(f"{base}/{latest}/{entry['path']}", "rb") as fh:
                rows[config].extend(pq.read_table(fh).to_pylist())
    # republished as they are, in the current layout where an older taskmint wrote another
    rows["tasks"] = [upgrade_task_row(r) for r in rows["tasks"]]
    unknown = set(ids) - {r["instance_id"] for r in rows["tasks"]}
    if unknown:
        raise DatasetError(f"no task {sorted(unknown)[0]!r} in {latest}; nothing retracted")
    return _publish_rows(
        rows["tasks"],
        rows["environments"],
        root=root,
        name=name,
        policy=policy or ShardPolicy(**manifest.get("shard_policy", {})),
        storage_options=storage_options,
        retractions=dict(ids),
    )
