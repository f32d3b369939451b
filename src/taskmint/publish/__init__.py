"""Stage 8, `publish`: tasks -> an immutable dataset version, and the loader that streams it.

A dataset lives under `<root>/<name>/` (a local folder or any fsspec URL) as append-only versions
`v0001`, `v0002`, ... Each holds the `tasks` and `environments` configs as parquet shards sized
for streaming (`ShardPolicy`), a README.md dataset card whose YAML `configs` let
`datasets.load_dataset(<version>)` read it with no taskmint code, and a `manifest.json` (shards
with sha256 and row counts, the parent version, tombstones), written last; the `LATEST` pointer
is switched after it. `schema` holds the column types and their documentation; `dataset`
writes versions (`publish`, `retract`) with `shards`, `card` and `environments`; `loader` streams
`Task` records back (`load_tasks`); both find a version's files through `layout`.
"""

from taskmint.publish.dataset import PublishedVersion, publish, retract
from taskmint.publish.loader import (
    TaskStream,
    VersionRef,
    latest_version,
    load_seed,
    load_tasks,
    resolve_version,
    verify_manifest,
)
from taskmint.publish.shards import ShardPolicy, assign_shards

__all__ = [
    "PublishedVersion",
    "ShardPolicy",
    "TaskStream",
    "VersionRef",
    "assign_shards",
    "latest_version",
    "load_seed",
    "load_tasks",
    "publish",
    "resolve_version",
    "retract",
    "verify_manifest",
]
