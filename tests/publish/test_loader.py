"""The training loader: streaming, resuming, sharding, workspaces and rewards of loaded tasks."""

from __future__ import annotations

import os
from pathlib import Path

import pytest
from datasets.distributed import split_dataset_by_node

import taskmint
from taskmint.consumer import workspace
from taskmint.errors import DatasetError
from taskmint.publish import load_tasks, resolve_version
from taskmint.verify import policy_view


def _ids(stream) -> list[str]:  # type: ignore[no-untyped-def]
    return [t.instance_id for t in stream]


def test_streams_every_task_of_the_latest_version(many_dataset: Path) -> None:
    stream = taskmint.load_tasks(many_dataset)
    assert stream.version == "v0001" and stream.num_shards == 8 and len(stream) == 300
    ids = _ids(stream)
    assert sorted(ids) == [f"x{i:05d}" for i in range(300)]
    assert _ids(stream) == ids  # re-iterable, same order
    first = next(iter(stream))
    assert first.origin == str(many_dataset / "v0001")
    assert _ids(load_tasks(many_dataset, "v0001")) == ids
    assert [t.instance_id for t in load_tasks(many_dataset, streaming=False)] == ids
    with pytest.raises(DatasetError, match=r"v0009 has no manifest\.json"):
        load_tasks(many_dataset, "v0009")
    with pytest.raises(DatasetError, match="no split 'test'"):
        load_tasks(many_dataset, split="test")


def test_resumes_where_it_stopped(many_dataset: Path) -> None:
    stream = load_tasks(many_dataset)
    everything = _ids(stream)
    seen = []
    for task in stream:
        seen.append(task.instance_id)
        if len(seen) == 77:  # mid-shard
            break
    state = stream.state_dict()
    resumed = load_tasks(many_dataset)
    resumed.load_state_dict(state)
    rest = _ids(resumed)
    assert seen + rest == everything


@pytest.mark.parametrize("world_size", [2, 4, 8])
def test_nodes_get_whole_disjoint_shards(many_dataset: Path, world_size: int) -> None:
    stream = load_tasks(many_dataset)
    parts = [_ids(stream.split_by_node(rank, world_size)) for rank in range(world_size)]
    assert sorted(i for part in parts for i in part) == sorted(_ids(stream))
    shard_rows = [s["rows"] for s in stream.ref.shards()]
    for rank, part in enumerate(parts):
        # whole shards, not every world_size-th row: rank r gets shards r, r + w, ...
        assert len(part) == sum(shard_rows[rank::world_size])
    # the same through datasets' own function on the underlying IterableDataset
    split = split_dataset_by_node(stream.dataset, rank=world_size - 1, world_size=world_size)
    assert [r["instance_id"] for r in split] == parts[-1]


def test_loader_workers_split_by_shard(many_dataset: Path) -> None:
    stream = load_tasks(many_dataset).split_by_node(0, 2)  # 4 shards on this node
    workers = [_ids(stream.shard(num_shards=2, index=w)) for w in range(2)]
    assert not set(workers[0]) & set(workers[1])
    assert sorted(workers[0] + workers[1]) == sorted(_ids(stream))
    other_node = _ids(load_tasks(many_dataset).split_by_node(1, 2))
    assert not set(other_node) & set(workers[0] + workers[1])


def test_workspace_is_the_policy_view_from_the_version(
    tiny_dataset: Path, tiny_seed, tmp_path: Path
) -> None:
    task = next(iter(load_tasks(tiny_dataset.parent)))
    cache = tmp_path / "cache"  # empty: the snapshot comes out of the environments config
    ws = workspace(task, tmp_path / "ws", cache_dir=cache)
    expected = policy_view(task, tiny_seed, tmp_path / "expected")
    files = sorted(p.relative_to(ws) for p in ws.rglob("*") if p.is_file())
    assert files == sorted(p.relative_to(expected) for p in expected.rglob("*") if p.is_file())
    for rel in files:
        assert (ws / rel).read_bytes() == (expected / rel).read_bytes()
    snapshot = cache / "snapshots" / task.snapshot_id
    before = os.stat(snapshot).st_mtime_ns
    workspace(task, tmp_path / "ws2", cache_dir=cache)  # cached by hash: not unpacked again
    assert os.stat(snapshot).st_mtime_ns == before
    with pytest.raises(FileExistsError):
        workspace(task, ws, cache_dir=cache)


def test_verify_a_loaded_task_needs_nothing_else(tiny_dataset: Path, cache_dir: Path) -> None:
    task = next(iter(taskmint.load_tasks(tiny_dataset.parent)))
    gold = taskmint.verify(task, task.patch, cache_dir=cache_dir)
    assert gold.reward == 1.0, gold.reason
    empty = taskmint.verify(task, "", cache_dir=cache_dir)
    assert empty.reward == 0.0


def test_a_task_without_origin_says_how_to_get_one(tiny_tasks, tmp_path: Path) -> None:
    with pytest.raises(DatasetError, match=r"load it with taskmint\.load_tasks"):
        workspace(tiny_tasks[0], tmp_path / "ws", cache_dir=tmp_path)


def test_a_version_folder_is_a_uri_too(many_dataset: Path) -> None:
    ref = resolve_version(many_dataset / "v0001")
    assert ref.version == "v0001"
    with pytest.raises(DatasetError, match="is version v0001, not v0002"):
        resolve_version(many_dataset / "v0001", "v0002")
