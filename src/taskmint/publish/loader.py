"""Reading dataset versions: the streaming loader a training job uses, and integrity checks.

`load_tasks(uri)` resolves a version (the `LATEST` pointer by default), checks its manifest, and
streams `Task` records shard by shard. The stream wraps a `datasets.IterableDataset` whose data
sources are the version's shards, so `datasets.distributed.split_dataset_by_node` and PyTorch
DataLoader workers split it by shard, and `state_dict()` / `load_state_dict()` resume it. With
the check on, each shard is read whole (shards are bounded in bytes), hashed against the
manifest and only then parsed, one row group at a time.
"""

from __future__ import annotations

import hashlib
import io
import json
import os
import shutil
import tarfile
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Literal, overload

import pyarrow as pa
import pyarrow.parquet as pq

from taskmint.cache import atomic_write
from taskmint.errors import DatasetError
from taskmint.files import copy_tree
from taskmint.publish.layout import (
    LATEST,
    MANIFEST,
    display,
    latest_name,
    read_manifest,
    target,
)
from taskmint.publish.schema import row_to_task
from taskmint.records import SeedApp, SeedManifest, Task, from_json_dict
from taskmint.scratch import make_staging

__all__ = [
    "TaskStream",
    "VersionRef",
    "latest_version",
    "load_seed",
    "load_tasks",
    "resolve_version",
    "verify_manifest",
]


@dataclass(frozen=True, slots=True, kw_only=True)
class VersionRef:
    """A resolved version: its URL, name and manifest."""

    url: str
    version: str
    manifest: dict[str, Any]
    storage_options: dict[str, Any] | None = None

    def shards(self, config: str = "tasks", split: str = "train") -> list[dict[str, Any]]:
        """The manifest's entries (path, rows, bytes, sha256) for one config and split."""
        try:
            return list(self.manifest["splits"][config][split])
        except KeyError:
            if "splits" not in self.manifest:  # format 1: one split, files listed flat
                return [
                    {"path": rel, **meta}
                    for rel, meta in self.manifest.get("files", {}).items()
                    if rel.startswith(f"{config}/") and split == "train"
                ]
            known = sorted(self.manifest["splits"].get(config, {}))
            raise DatasetError(
                f"{self.url} has no split {split!r} in config {config!r}; splits: {known}"
            ) from None


def resolve_version(
    uri: str | os.PathLike[str],
    version: str = "latest",
    *,
    storage_options: dict[str, Any] | None = None,
) -> VersionRef:
    """The version `version` of the dataset at `uri` (a dataset folder or a version folder)."""
    fs, path = target(uri, storage_options)
    fs.invalidate_cache()
    manifest = read_manifest(fs, path)
    if manifest is not None:  # `uri` is a version folder itself
        name = path.rsplit("/", 1)[-1]
        if version not in ("latest", name):
            raise DatasetError(f"{uri} is version {name}, not {version}; give the dataset folder")
        return VersionRef(
            url=display(fs, path), version=name, manifest=manifest, storage_options=storage_options
        )
    name = latest_name(fs, path) if version == "latest" else version
    if name is None:
        raise DatasetError(
            f"no published version under {display(fs, path)}; run `taskmint refresh` "
            "(or `make demo`) first, or check the URL"
        )
    manifest = read_manifest(fs, f"{path}/{name}")
    if manifest is None:
        raise DatasetError(
            f"{display(fs, path)}/{name} has no {MANIFEST}: the version is incomplete or absent; "
            f"load another version (see {LATEST})"
        )
    return VersionRef(
        url=display(fs, f"{path}/{name}"),
        version=name,
        manifest=manifest,
        storage_options=storage_options,
    )


def latest_version(base: str | os.PathLike[str]) -> Path:
    """The local version folder `LATEST` points to under a dataset folder (`<root>/<name>`)."""
    return Path(resolve_version(base).url)


def _read_shard(fs: Any, vpath: str, entry: dict[str, Any], check: bool) -> pq.ParquetFile:
    path = f"{vpath}/{entry['path']}"
    shown = display(fs, path)
    try:
        if not check:
            return pq.ParquetFile(fs.open(path, "rb"))
        data = fs.cat_file(path)
    except FileNotFoundError:
        raise DatasetError(
            f"{shown} is missing (listed in {MANIFEST}); republish the version or load "
            "another one (version='vNNNN')"
        ) from None
    if hashlib.sha256(data).hexdigest() != entry["sha256"]:
        raise DatasetError(
            f"{shown} does not match its sha256 in {MANIFEST} (corrupt or modified); "
            "republish the version, load another one, or pass check=False to read it anyway"
        )
    return pq.ParquetFile(pa.BufferReader(data))


def _rows(
    shards: list[dict[str, Any]],
    url: str,
    check: bool,
    batch_rows: int,
    storage_options: dict[str, Any] | None,
) -> Iterator[dict[str, Any]]:
    """Row dicts of `shards` in order: the generator behind the IterableDataset."""
    fs, vpath = target(url, storage_options)
    for entry in shards:
        pf = _read_shard(fs, vpath, entry, check)
        for batch in pf.iter_batches(batch_size=batch_rows):
            yield from batch.to_pylist()


class TaskStream:
    """An iterable of `Task` records over a published version, re-iterable and shardable.

    `dataset` is the underlying `datasets.IterableDataset` of rows (one data source per shard);
    pass it to `split_dataset_by_node` through `split_by_node`, or to a DataLoader.
    """

    def __init__(
        self, dataset: Any, *, ref: VersionRef, rows: int | None, part: tuple[int, int] = (0, 1)
    ) -> None:
        self._base = dataset
        self._part = part
        if part == (0, 1):
            self.dataset = dataset
        else:
            from datasets.distributed import split_dataset_by_node

            self.dataset = split_dataset_by_node(dataset, rank=part[0], world_size=part[1])
        self.ref = ref
        self._rows = rows if part == (0, 1) else None

    def __iter__(self) -> Iterator[Task]:
        origin = self.ref.url
        for row in self.dataset:
            yield row_to_task(row, origin=origin)

    def __len__(self) -> int:
        if self._rows is None:
            raise TypeError("the length of a split stream is not known before iterating")
        return self._rows

    @property
    def version(self) -> str:
        """The version being streamed (`v0003`)."""
        return self.ref.version

    @property
    def num_shards(self) -> int:
        """How many data sources (shards) the whole version has."""
        return int(self._base.num_shards)

    def split_by_node(self, rank: int, world_size: int) -> TaskStream:
        """This node's part, by `datasets.distributed.split_dataset_by_node`: shards rank,
        rank + world_size, ... (whole shards when the shard count divides by `world_size`,
        which the publish shard policy arranges; otherwise every world_size-th row)."""
        r, w = self._part
        return self._with_part(r + w * rank, w * world_size)

    def shard(self, num_shards: int, index: int) -> TaskStream:
        """One of `num_shards` disjoint parts of this stream (one per DataLoader worker):
        on node r of W, worker i of K reads global part r + W * i of W * K."""
        return self.split_by_node(index, num_shards)

    def _with_part(self, rank: int, world_size: int) -> TaskStream:
        if not 0 <= rank < world_size:
            raise ValueError(f"rank {rank} is not in [0, {world_size})")
        return TaskStream(self._base, ref=self.ref, rows=None, part=(rank, world_size))

    def state_dict(self) -> dict[str, Any]:
        """Where the stream is: save it with a checkpoint."""
        return dict(self.dataset.state_dict())

    def load_state_dict(self, state: dict[str, Any]) -> None:
        """Resume from `state_dict()` output: the next iteration starts after the last row."""
        self.dataset.load_state_dict(state)


@overload
def load_tasks(
    uri: str | os.PathLike[str],
    version: str = ...,
    *,
    split: str = ...,
    streaming: Literal[True] = ...,
    check: bool = ...,
    storage_options: dict[str, Any] | None = ...,
) -> TaskStream: ...
@overload
def load_tasks(
    uri: str | os.PathLike[str],
    version: str = ...,
    *,
    split: str = ...,
    streaming: Literal[False],
    check: bool = ...,
    storage_options: dict[str, Any] | None = ...,
) -> list[Task]: ...


def load_tasks(
    uri: str | os.PathLike[str],
    version: str = "latest",
    *,
    split: str = "train",
    streaming: bool = True,
    check: bool = True,
    storage_options: dict[str, Any] | None = None,
) -> TaskStream | list[Task]:
    """Tasks of a published version: a `TaskStream` (streaming) or a list.

    `uri` is a dataset folder (`<root>/<name>`, any fsspec URL) or a version folder; `version`
    is `latest` (the `LATEST` pointer) or `vNNNN`. With `check` (the default) every shard is
    checked against the manifest's sha256 before its rows are used; `check=False` skips it.
    """
    from datasets import IterableDataset

    ref = resolve_version(uri, version, storage_options=storage_options)
    shards = ref.shards("tasks", split)
    if check:
        _check_present(ref, shards)
    batch_rows = int(ref.manifest.get("shard_policy", {}).get("row_group_rows", 256))
    dataset = IterableDataset.from_generator(
        _rows,
        gen_kwargs={
            "shards": shards,
            "url": ref.url,
            "check": check,
            "batch_rows": batch_rows,
            "storage_options": storage_options,
        },
    )
    stream = TaskStream(dataset, ref=ref, rows=sum(int(s.get("rows", 0)) for s in shards))
    return stream if streaming else list(stream)


def _check_present(ref: VersionRef, shards: list[dict[str, Any]]) -> None:
    """Fail before streaming when a listed shard is missing or has the wrong size."""
    fs, vpath = target(ref.url, ref.storage_options)
    for entry in shards:
        path = f"{vpath}/{entry['path']}"
        try:
            size = fs.size(path)
        except FileNotFoundError:
            size = None
        if size is None:
            raise DatasetError(
                f"{display(fs, path)} is missing (listed in {MANIFEST}); republish the version or "
                "load another one (version='vNNNN')"
            )
        if "bytes" in entry and size != entry["bytes"]:
            raise DatasetError(
                f"{display(fs, path)} has {size} bytes, {MANIFEST} says {entry['bytes']} "
                "(corrupt or truncated); republish the version or load another one"
            )


def verify_manifest(
    uri: str | os.PathLike[str], *, storage_options: dict[str, Any] | None = None
) -> dict[str, Any]:
    """Check every file of a version against its manifest's sha256; returns the manifest."""
    ref = resolve_version(uri, storage_options=storage_options)
    fs, vpath = target(ref.url, storage_options)
    for rel, meta in ref.manifest.get("files", {}).items():
        entry = {"path": rel, **meta}
        _check_present(ref, [entry])
        if hashlib.sha256(fs.cat_file(f"{vpath}/{rel}")).hexdigest() != meta["sha256"]:
            raise DatasetError(
                f"{display(fs, vpath + '/' + rel)} does not match its sha256 in {MANIFEST} "
                "(corrupt or modified); republish the version or load another one"
            )
    return ref.manifest


def load_seed(
    uri: str | os.PathLike[str],
    snapshot_id: str,
    *,
    cache_dir: Path,
    storage_options: dict[str, Any] | None = None,
) -> SeedApp:
    """The seed snapshot a task references, unpacked once into `<cache_dir>/snapshots/<id>`.

    Snapshots are content-addressed, so a cached one is reused across versions and datasets.
    """
    final = Path(cache_dir) / "snapshots" / snapshot_id
    meta = Path(cache_dir) / "published" / f"{snapshot_id}.json"
    if meta.is_file() and (final / "tree").is_dir():
        row = json.loads(meta.read_text("utf-8"))
    else:
        ref = resolve_version(uri, storage_options=storage_options)
        row = _environment_row(ref, snapshot_id)
        archive = row.pop("archive")
        if not (final / "tree").is_dir():  # `acquire` may have made it already (same id)
            _unpack(archive, row["files"], final)
        atomic_write(meta, json.dumps(row).encode("utf-8"))
    return SeedApp(
        name=row["seed"],
        snapshot_id=snapshot_id,
        root=str(final / "tree"),
        manifest=from_json_dict(SeedManifest, json.loads(row["manifest"])),
        files=tuple(row["files"]),
        origin=f"{uri}#environments/{snapshot_id}",
    )


def _environment_row(ref: VersionRef, snapshot_id: str) -> dict[str, Any]:
    fs, vpath = target(ref.url, ref.storage_options)
    for entry in ref.shards("environments"):
        pf = _read_shard(fs, vpath, entry, True)
        table = pf.read()
        mask = pa.compute.equal(table.column("snapshot_id"), snapshot_id)
        rows = table.filter(mask).to_pylist()
        if rows:
            return dict(rows[0])
    raise DatasetError(f"snapshot {snapshot_id} is not in {ref.url}/environments")


def _unpack(archive: bytes, files: list[str], final: Path) -> None:
    final.parent.mkdir(parents=True, exist_ok=True)
    tmp = make_staging(f".{final.name}.", final.parent)
    try:
        with tarfile.open(fileobj=io.BytesIO(archive), mode="r:gz") as tar:
            tar.extractall(tmp / "unpacked", filter="data")
        copy_tree(tmp / "unpacked", tmp / "tree", files)
        shutil.rmtree(tmp / "unpacked")
        os.chmod(tmp, 0o755)
        try:
            os.rename(tmp, final)
        except OSError:
            if not (final / "tree").is_dir():  # lost a race only if the winner finished
                raise
    finally:
        shutil.rmtree(tmp, ignore_errors=True)
