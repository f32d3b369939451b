"""The dataset card: the README.md whose YAML `configs` let `datasets` read a version as is.

It names the `tasks` and `environments` configs and their shards, documents every column
(`schema.COLUMN_DOCS`), and carries each config's shard digest (`config_digest`), which keys
the `datasets` cache.
"""

from __future__ import annotations

import hashlib
from typing import Any

import pyarrow as pa

from taskmint.publish.schema import (
    COLUMN_DOCS,
    ENVIRONMENT_COLUMN_DOCS,
    ENVIRONMENT_SCHEMA,
    TASK_SCHEMA,
)

__all__ = ["config_digest", "dataset_card"]


def _columns_table(docs: dict[str, str], schema: pa.Schema) -> str:
    lines = ["| column | type | meaning |", "|---|---|---|"]
    for f in schema:
        lines.append(f"| `{f.name}` | `{f.type}` | {docs.get(f.name, '')} |")
    return "\n".join(lines)


def config_digest(shards: list[dict[str, Any]]) -> str:
    """The sha256 of a config's `sha256sum` lines (`<sha256>  <path>`, one per shard, in order).

    It goes into the card as the config's `description`. `datasets` caches a local folder under
    `<folder name>/<config>/<version>/<hash>`, and the hash covers the card's `configs` (as
    builder configs, `description` included; `data_files` only as the unresolved patterns) but
    neither the folder's path nor the files' contents or mtimes. Without the digest every
    `v0001` would share one cache entry, whichever root it is under and whatever rows it holds.
    """
    lines = "".join(f"{s['sha256']}  {s['path']}\n" for s in shards)
    return hashlib.sha256(lines.encode("utf-8")).hexdigest()


def dataset_card(
    name: str,
    version: str,
    n_tasks: int,
    seeds: list[str],
    parent: str | None,
    digests: dict[str, str],
) -> str:
    """The README.md of version `version` of dataset `name` (`digests`: per config, its
    `config_digest`)."""
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
- report: [report.html](report.html), plots of what this version holds and what the run that
  published it tried (written at publish by a refresh; `taskmint report` writes it again)

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
