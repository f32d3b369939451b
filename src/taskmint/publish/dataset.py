"""Writing dataset versions: shards sized for streaming, a manifest, tombstones, `LATEST`.

Every write goes through fsspec, so the target is a local folder by default and any fsspec URL
otherwise (`s3://bucket/datasets`, `hf://datasets/org/name`). A version is append-only: its
shards and card are written first, then `manifest.json` (a version without one is incomplete
and never loaded), then the `LATEST` pointer is replaced, last. Killing `publish` at any point
therefore leaves the previous version intact and `LATEST` unchanged; the next publish removes
the incomplete folder and takes the next number (numbers are never reused).
"""

from __future__ import annotations

import datetime as dt
import hashlib
import io
import json
import os
import tarfile
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Any

import fsspec
import pyarrow as pa
import pyarrow.parquet as pq
from fsspec.implementations.local import LocalFileSystem

from taskmint.errors import DatasetError
from taskmint.publish.schema import (
    COLUMN_DOCS,
    ENVIRONMENT_COLUMN_DOCS,
    ENVIRONMENT_SCHEMA,
    FEATURE_NAMES,
    TASK_SCHEMA,
    task_to_row,
)
from taskmint.records import SeedApp, Task, to_json_dict

__all__ = [
    "ENVIRONMENT_SCHEMA",
    "FEATURE_NAMES",  # defined in taskmint.publish.schema; re-exported for older imports
    "TASK_SCHEMA",
    "PublishedVersion",
    "ShardPolicy",
    "assign_shards",
    "publish",
    "retract",
]

MANIFEST = "manifest.json"
LATEST = "LATEST"
_FORMAT = 2


@dataclass(frozen=True, slots=True, kw_only=True)
class ShardPolicy:
    """How rows are cut into parquet shards.

    A shard holds at most `max_rows` rows and about `max_bytes` bytes (measured on the rows'
    JSON, an upper bound of the compressed file); row groups hold `row_group_rows` rows, the
    unit a streaming reader holds in memory. The shard count is a multiple of `divisor` (pick
    nodes x loader workers, or a multiple of it) so every worker gets the same number of
    shards. A task goes to shard `hash(instance_id) mod count`: while the count stays the same a
    refresh keeps every task in its shard, and when it doubles a task in shard k moves to k or
    k + count only.
    """

    max_rows: int = 2000
    max_bytes: int = 64 << 20
    row_group_rows: int = 256
    divisor: int = 8

    def __post_init__(self) -> None:
        if min(self.max_rows, self.max_bytes, self.row_group_rows, self.divisor) < 1:
            raise DatasetError("every ShardPolicy bound must be at least 1")


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


def _bucket(key: str) -> int:
    return int.from_bytes(hashlib.sha256(key.encode("utf-8")).digest()[:8], "big")


def assign_shards(
    keys: list[str], sizes: list[int], policy: ShardPolicy, *, divisor: int | None = None
) -> list[list[int]]:
    """Indices of `keys` per shard: deterministic, bounded in rows and bytes."""
    div = policy.divisor if divisor is None else divisor
    need = max(1, -(-len(keys) // policy.max_rows), -(-sum(sizes) // policy.max_bytes))
    count = div * -(-need // div)
    buckets = [_bucket(k) for k in keys]

    def fits(shards: list[list[int]]) -> bool:
        return all(
            len(s) <= policy.max_rows
            and (len(s) <= 1 or sum(sizes[i] for i in s) <= policy.max_bytes)
            for s in shards
        )

    for _ in range(4):  # up to 8x the needed count, doubling (tasks move to k or k + count)
        shards: list[list[int]] = [[] for _ in range(count)]
        for i, b in enumerate(buckets):
            shards[b % count].append(i)
        if fits(shards):
            return shards
        count *= 2
    # Tight bounds that hashing cannot meet (say max_rows=1): runs of the hash order, cut
    # where a bound would be crossed; still deterministic, no longer stable across refreshes.
    order = sorted(range(len(keys)), key=lambda i: (buckets[i], keys[i]))
    shards = [[]]
    used = 0
    for i in order:
        if shards[-1] and (
            len(shards[-1]) >= policy.max_rows or used + sizes[i] > policy.max_bytes
        ):
            shards.append([])
            used = 0
        shards[-1].append(i)
        used += sizes[i]
    shards += [[] for _ in range(-len(shards) % div)]
    return shards


# --- the target --------------------------------------------------------------------------


def _target(root: str | os.PathLike[str], storage_options: dict[str, Any] | None) -> Any:
    fs, path = fsspec.core.url_to_fs(str(root), **(storage_options or {}))
    return fs, path.rstrip("/")


def _local(fs: Any) -> bool:
    return isinstance(fs, LocalFileSystem)


def _display(fs: Any, path: str) -> str:
    """A path as users write it: a plain path locally, a URL (`s3://...`) elsewhere."""
    return path if _local(fs) else str(fs.unstrip_protocol(path))


def _put(fs: Any, path: str, data: bytes) -> None:
    """Write one file whole: a temporary name and a rename locally, one PUT on object stores."""
    if isinstance(fs, LocalFileSystem):
        os.makedirs(os.path.dirname(path), exist_ok=True)
        tmp = f"{path}.tmp-{os.getpid()}"
        with open(tmp, "wb") as fh:
            fh.write(data)
            fh.flush()
            os.fsync(fh.fileno())
        os.replace(tmp, path)
    else:
        fs.pipe_file(path, data)


def _versions(fs: Any, base: str) -> list[str]:
    """Every `vNNNN` folder under `base`, complete or not, in number order."""
    fs.invalidate_cache(base)
    try:
        names = [p.rstrip("/").rsplit("/", 1)[-1] for p in fs.ls(base, detail=False)]
    except FileNotFoundError:
        return []
    found = [n for n in names if len(n) >= 5 and n[0] == "v" and n[1:].isdigit()]
    return sorted(found, key=lambda n: int(n[1:]))


def _read_manifest(fs: Any, version_path: str) -> dict[str, Any] | None:
    try:
        data: dict[str, Any] = json.loads(fs.cat_file(f"{version_path}/{MANIFEST}"))
    except FileNotFoundError:
        return None
    except (OSError, ValueError) as exc:
        url = _display(fs, f"{version_path}/{MANIFEST}")
        raise DatasetError(f"{url} is unreadable ({exc}); load another version") from exc
    return data


def _latest_name(fs: Any, base: str) -> str | None:
    """The version `LATEST` names, or the newest complete version when there is no pointer."""
    try:
        name = fs.cat_file(f"{base}/{LATEST}").decode("utf-8").strip()
    except FileNotFoundError:
        name = ""
    if name and fs.exists(f"{base}/{name}/{MANIFEST}"):
        return name
    complete = [v for v in _versions(fs, base) if fs.exists(f"{base}/{v}/{MANIFEST}")]
    return complete[-1] if complete else None


# --- rows --------------------------------------------------------------------------------


def _archive(seed: SeedApp) -> bytes:
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


def _env_row(seed: SeedApp, env_id: str, python_version: str) -> dict[str, Any]:
    return {
        "snapshot_id": seed.snapshot_id,
        "env_id": env_id,
        "seed": seed.name,
        "language": seed.manifest.language,
        "manifest": json.dumps(to_json_dict(seed.manifest), sort_keys=True),
        "python_version": python_version,
        "dependencies": list(seed.manifest.dependencies),
        "files": list(seed.files),
        "archive": _archive(seed),
    }


def _columns_table(docs: dict[str, str], schema: pa.Schema) -> str:
    lines = ["| column | type | meaning |", "|---|---|---|"]
    for f in schema:
        lines.append(f"| `{f.name}` | `{f.type}` | {docs.get(f.name, '')} |")
    return "\n".join(lines)


def _config_digest(shards: list[dict[str, Any]]) -> str:
    """The sha256 of a config's `sha256sum` lines (`<sha256>  <path>`, one per shard, in order).

    It goes into the card as the config's `description`. `datasets` caches a local folder under
    `<folder name>/<config>/<version>/<hash>`, and the hash covers the card's `configs` (as
    builder configs, `description` included; `data_files` only as the unresolved patterns) but
    neither the folder's path nor the files' contents or mtimes. Without the digest every
    `v0001` would share one cache entry, whichever root it is under and whatever rows it holds.
    """
    lines = "".join(f"{s['sha256']}  {s['path']}\n" for s in shards)
    return hashlib.sha256(lines.encode("utf-8")).hexdigest()


def _card(
    name: str,
    version: str,
    n_tasks: int,
    seeds: list[str],
    parent: str | None,
    digests: dict[str, str],
) -> str:
    return f"""---
configs:
- config_name: tasks
  description: 'shards sha256 {digests["tasks"]}'
  data_files:
  - split: train
    path: tasks/*.parquet
  default: true
- config_name: environments
  description: 'shards sha256 {digests["environments"]}'
  data_files:
  - split: train
    path: environments/*.parquet
license: apache-2.0
task_categories:
- text-generation
tags:
- code
- reinforcement-learning
- taskmint
---

# {name} {version}

Verifiable coding tasks minted by taskmint: a feature was removed from a working application,
and the tests named in `FAIL_TO_PASS` fail until it is restored (those in `PASS_TO_PASS` must
keep passing). Columns follow SWE-bench where one exists (`instance_id`, `problem_statement`,
`patch` is the gold diff, `FAIL_TO_PASS`, `PASS_TO_PASS`).

- tasks: {n_tasks}
- seeds: {", ".join(seeds) or "none"}
- parent version: {parent or "none"}

Load with `datasets.load_dataset("<this folder>", "tasks")` (or `"environments"`); no taskmint
code is needed. `manifest.json` lists every shard with its sha256 and row count, the parent
version, and tombstones (ids retired or retracted since an earlier version). Each config's
`description` holds the sha256 of its shards' `sha256sum` lines (`<sha256>  <path>`, in
manifest order): `datasets` keys its cache on the card, so a folder with other rows (another
`{version}`, or this one republished) never reads this one's cached copy.

## Config `tasks` (one row per task)

{_columns_table(COLUMN_DOCS, TASK_SCHEMA)}

## Config `environments` (one row per seed snapshot)

A task's broken tree is its snapshot's `archive` with `breaking_patch` applied.

{_columns_table(ENVIRONMENT_COLUMN_DOCS, ENVIRONMENT_SCHEMA)}
"""


def _shard_bytes(rows: list[dict[str, Any]], schema: pa.Schema, policy: ShardPolicy) -> bytes:
    buf = io.BytesIO()
    with pq.ParquetWriter(buf, schema, compression="zstd") as writer:
        # An empty shard gets no row group at all: readers size batches by the first one.
        if rows:
            table = pa.Table.from_pylist(rows, schema=schema)
            writer.write_table(table, row_group_size=policy.row_group_rows)
    return buf.getvalue()


def _write_config(
    fs: Any,
    vpath: str,
    config: str,
    rows: list[dict[str, Any]],
    keys: list[str],
    sizes: list[int],
    schema: pa.Schema,
    policy: ShardPolicy,
    divisor: int,
    files: dict[str, dict[str, Any]],
) -> list[dict[str, Any]]:
    shards = assign_shards(keys, sizes, policy, divisor=divisor)
    listed = []
    for i, members in enumerate(shards):
        rel = f"{config}/train-{i:05d}-of-{len(shards):05d}.parquet"
        data = _shard_bytes(
            [rows[j] for j in sorted(members, key=keys.__getitem__)], schema, policy
        )
        _put(fs, f"{vpath}/{rel}", data)
        entry = {
            "path": rel,
            "rows": len(members),
            "bytes": len(data),
            "sha256": hashlib.sha256(data).hexdigest(),
        }
        listed.append(entry)
        files[rel] = {k: entry[k] for k in ("sha256", "bytes", "rows")}
    return listed


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
    fs, root_path = _target(root, storage_options)
    base = f"{root_path}/{name}"
    fs.makedirs(base, exist_ok=True)
    ids = [r["instance_id"] for r in task_rows]
    if len(set(ids)) != len(ids):
        raise DatasetError("duplicate instance_id in the tasks to publish")

    parent = _latest_name(fs, base)
    parent_manifest = _read_manifest(fs, f"{base}/{parent}") if parent else None
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
            path=_display(fs, f"{base}/{parent}"),
            version=str(parent),
            tasks=len(kept),
            environments=len(env_rows),
            created=False,
            tombstones=len(tombstones),
        )

    existing = _versions(fs, base)
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
    task_shards = _write_config(
        fs, vpath, "tasks", kept, [r["instance_id"] for r in kept], sizes,
        TASK_SCHEMA, policy, policy.divisor, files,
    )  # fmt: skip
    env_shards = _write_config(
        fs, vpath, "environments", env_rows, [r["snapshot_id"] for r in env_rows],
        [len(r["archive"]) + 1024 for r in env_rows], ENVIRONMENT_SCHEMA, policy, 1, files,
    )  # fmt: skip
    digests = {"tasks": _config_digest(task_shards), "environments": _config_digest(env_shards)}
    seed_names = sorted({r["seed"] for r in kept})
    card = _card(name, version, len(kept), seed_names, parent, digests).encode("utf-8")
    _put(fs, f"{vpath}/README.md", card)
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
    _put(fs, f"{vpath}/{MANIFEST}", json.dumps(manifest, indent=1).encode("utf-8"))
    # And `LATEST` after it, in one atomic replace (a rename here, a single PUT on S3).
    _put(fs, f"{base}/{LATEST}", f"{version}\n".encode())
    return PublishedVersion(
        path=_display(fs, vpath),
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
        [_env_row(s, e, v) for s, e, v in seeds],
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
    fs, root_path = _target(root, storage_options)
    base = f"{root_path}/{name}"
    latest = _latest_name(fs, base)
    manifest = _read_manifest(fs, f"{base}/{latest}") if latest else None
    if manifest is None:
        raise DatasetError(f"no published version under {_display(fs, base)} to retract")
    rows: dict[str, list[dict[str, Any]]] = {}
    for config in ("tasks", "environments"):
        rows[config] = []
        for entry in manifest["splits"][config]["train"]:
            with fs.open(f"{base}/{latest}/{entry['path']}", "rb") as fh:
                rows[config].extend(pq.read_table(fh).to_pylist())
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
