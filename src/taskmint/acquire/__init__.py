"""Stage 1, `acquire`: a seed spec (folder, git commit, PyPI sdist, Docker image) -> a
content-addressed `SeedApp` snapshot.

The snapshot is a copy of the seed's tree under the cache, named by the sha256 of every file's
path, mode and content. Later stages read only the snapshot, never the user's folder, so a seed
that changes on disk after acquisition cannot change a run half-way.
"""

from taskmint.acquire.manifest import load_manifest, load_seed_list
from taskmint.acquire.snapshot import acquire, snapshot_tree
from taskmint.acquire.sources import SeedSource, acquire_source, load_seed_sources

__all__ = [
    "SeedSource",
    "acquire",
    "acquire_source",
    "load_manifest",
    "load_seed_list",
    "load_seed_sources",
    "snapshot_tree",
]
