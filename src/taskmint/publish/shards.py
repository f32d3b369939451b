"""Writing a config's rows as parquet shards sized for streaming.

`ShardPolicy` bounds a shard's rows and bytes and makes the shard count a multiple of the
loader's workers; `assign_shards` places each row by the hash of its key, so a refresh keeps a
task in its shard; `write_config` writes the shards of one config and lists them for the
manifest.
"""

from __future__ import annotations

import hashlib
import io
from dataclasses import dataclass
from typing import Any

import pyarrow as pa
import pyarrow.parquet as pq

from taskmint.errors import DatasetError
from taskmint.publish import layout  # every write is `layout.put_file`, looked up per call

__all__ = ["ShardPolicy", "assign_shards", "shard_bytes", "write_config"]


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


def shard_bytes(rows: list[dict[str, Any]], schema: pa.Schema, policy: ShardPolicy) -> bytes:
    """One parquet shard of `rows` (zstd, row groups of `policy.row_group_rows`)."""
    buf = io.BytesIO()
    with pq.ParquetWriter(buf, schema, compression="zstd") as writer:
        # An empty shard gets no row group at all: readers size batches by the first one.
        if rows:
            table = pa.Table.from_pylist(rows, schema=schema)
            writer.write_table(table, row_group_size=policy.row_group_rows)
    return buf.getvalue()


def write_config(
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
    """Write the rows of one config (`tasks`, `environments`) as shards under `vpath`.

    Rows go to shards by `keys` (`assign_shards`, with the shard count a multiple of
    `divisor`), sorted by key within a shard. Returns the manifest entries (path, rows, bytes,
    sha256) in shard order, and adds each shard to `files`.
    """
    shards = assign_shards(keys, sizes, policy, divisor=divisor)
    listed = []
    for i, members in enumerate(shards):
        rel = f"{config}/train-{i:05d}-of-{len(shards):05d}.parquet"
        data = shard_bytes([rows[j] for j in sorted(members, key=keys.__getitem__)], schema, policy)
        layout.put_file(fs, f"{vpath}/{rel}", data)
        entry = {
            "path": rel,
            "rows": len(members),
            "bytes": len(data),
            "sha256": hashlib.sha256(data).hexdigest(),
        }
        listed.append(entry)
        files[rel] = {k: entry[k] for k in ("sha256", "bytes", "rows")}
    return listed
