"""Stage 8, `publish`: tasks -> an immutable dataset version (parquet shards, card, manifest).

A dataset lives under `<root>/<name>/` as versions `v0001`, `v0002`, ... Each version holds the
`tasks` and `environments` configs as parquet shards, a README.md dataset card whose YAML
`configs` let `datasets.load_dataset(<version dir>)` read it with no taskmint code, and a
`manifest.json` with a sha256 per file, written last. A version is built in a temporary folder
and renamed into place; the `LATEST` pointer is replaced atomically after that.
"""

from taskmint.publish.dataset import (
    PublishedVersion,
    latest_version,
    load_seed,
    load_tasks,
    publish,
    verify_manifest,
)

__all__ = [
    "PublishedVersion",
    "latest_version",
    "load_seed",
    "load_tasks",
    "publish",
    "verify_manifest",
]
