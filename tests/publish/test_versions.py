"""Versions: shard policy, tombstones and retraction, and a publish killed at any point."""

from __future__ import annotations

import dataclasses
import json
import pickle
import subprocess
import sys
import textwrap
from pathlib import Path

import pyarrow.parquet as pq
import pytest

import taskmint
from taskmint.errors import DatasetError
from taskmint.publish import ShardPolicy, assign_shards, load_tasks, publish, retract
from taskmint.publish.dataset import PublishedVersion

from .conftest import variants


def test_shards_are_bounded_divisible_and_stable() -> None:
    policy = ShardPolicy(max_rows=100, max_bytes=10_000, divisor=6)
    keys = [f"task{i}" for i in range(1000)]
    shards = assign_shards(keys, [50] * 1000, policy)
    assert len(shards) % 6 == 0
    assert all(len(s) <= 100 and len(s) * 50 <= 10_000 for s in shards)
    assert sorted(i for s in shards for i in s) == list(range(1000))
    assert assign_shards(keys, [50] * 1000, policy) == shards  # deterministic
    where = {keys[i]: n for n, s in enumerate(shards) for i in s}
    # a refresh that adds tasks without changing the count keeps every old task in its shard
    grown = assign_shards([*keys, "new1", "new2"], [50] * 1002, policy)
    assert len(grown) == len(shards)
    assert all(where[keys[i]] == n for n, s in enumerate(grown) for i in s if i < 1000)
    # bytes bound the shard too: big rows make more shards
    assert len(assign_shards(keys, [5000] * 1000, policy)) >= 500
    # bounds that hashing cannot meet still hold, without a runaway shard count
    tight = assign_shards(keys, [50] * 1000, ShardPolicy(max_rows=1, divisor=6))
    assert all(len(s) == 1 for s in tight if s) and len(tight) % 6 == 0 and len(tight) < 1006
    with pytest.raises(DatasetError):
        ShardPolicy(divisor=0)


def test_row_groups_follow_the_policy(many_dataset: Path) -> None:
    version = many_dataset / "v0001"
    for entry in json.loads((version / "manifest.json").read_text())["splits"]["tasks"]["train"]:
        meta = pq.ParquetFile(version / entry["path"]).metadata
        assert meta.num_rows == entry["rows"] <= 50
        assert all(meta.row_group(i).num_rows <= 16 for i in range(meta.num_row_groups))


def _publish(tasks, seed, env, root) -> PublishedVersion:  # type: ignore[no-untyped-def]
    return publish(tasks, [(seed, env.env_id, env.python_version)], root=root, name="d")


def _manifest(root: Path, version: str) -> dict:  # type: ignore[type-arg]
    return json.loads((root / "d" / version / "manifest.json").read_text())


def test_tombstones_and_retraction(tiny_tasks, tiny_seed, tiny_env, tmp_path: Path) -> None:
    a, b, c = variants(tiny_tasks, 3, tag="t")
    retired = dataclasses.replace(variants(tiny_tasks, 4, tag="t")[3], retired=True)
    assert _publish([a, b, c, retired], tiny_seed, tiny_env, tmp_path).version == "v0001"
    v2 = _publish([a, b], tiny_seed, tiny_env, tmp_path)
    assert v2.version == "v0002" and v2.tombstones == 2
    stones = {t["instance_id"]: t for t in _manifest(tmp_path, "v0002")["tombstones"]}
    assert stones[c.instance_id]["status"] == "removed"
    assert stones[retired.instance_id]["status"] == "retired"
    assert _manifest(tmp_path, "v0002")["parent"] == "v0001"

    v3 = retract(tmp_path, "d", {b.instance_id: "flaky on the grader"})
    assert v3.version == "v0003"
    stones = {t["instance_id"]: t for t in _manifest(tmp_path, "v0003")["tombstones"]}
    assert stones[b.instance_id] == {
        "instance_id": b.instance_id,
        "status": "retracted",
        "reason": "flaky on the grader",
        "since": "v0003",
    }
    assert c.instance_id in stones  # carried from the parent
    assert [t.instance_id for t in load_tasks(tmp_path / "d")] == [a.instance_id]

    # a refresh mints the same ids again (ids are stable): the retracted one stays out
    v4 = _publish([a, b, c], tiny_seed, tiny_env, tmp_path)
    assert sorted(t.instance_id for t in load_tasks(tmp_path / "d")) == sorted(
        [a.instance_id, c.instance_id]
    )
    stones = {t["instance_id"]: t["status"] for t in _manifest(tmp_path, v4.version)["tombstones"]}
    assert stones == {b.instance_id: "retracted", retired.instance_id: "retired"}
    # every version stays readable and unchanged (append-only)
    assert sorted(t.instance_id for t in load_tasks(tmp_path / "d", "v0001")) == sorted(
        t.instance_id for t in (a, b, c, retired)
    )
    with pytest.raises(DatasetError, match="no task 'nope'"):
        retract(tmp_path, "d", {"nope": "x"})


_KILLER = textwrap.dedent(
    """
    import os, pickle, signal, sys
    from taskmint.publish import dataset, layout

    tasks, seeds, root, kill_at = pickle.loads(open(sys.argv[1], "rb").read())
    real_put = layout.put_file
    calls = 0

    def put(fs, path, data):
        global calls
        calls += 1
        if calls == kill_at:
            # killed mid-write: half the file is on disk under the temporary name
            os.makedirs(os.path.dirname(path), exist_ok=True)
            with open(f"{path}.tmp-{os.getpid()}", "wb") as fh:
                fh.write(data[: len(data) // 2])
            os.kill(os.getpid(), signal.SIGKILL)
        real_put(fs, path, data)

    layout.put_file = put
    dataset.publish(tasks, seeds, root=root, name="d", policy=dataset.ShardPolicy(divisor=4))
    print(calls)
    """
)


def test_killing_publish_leaves_the_previous_version_intact(
    tiny_tasks, tiny_seed, tiny_env, cache_dir: Path, tmp_path: Path
) -> None:
    seeds = [(tiny_seed, tiny_env.env_id, tiny_env.python_version)]
    root = tmp_path / "out"
    first = publish(tiny_tasks, seeds, root=root, name="d", policy=ShardPolicy(divisor=4))
    before = sorted(t.instance_id for t in load_tasks(root / "d"))
    script = tmp_path / "killer.py"
    script.write_text(_KILLER)
    new_tasks = variants(tiny_tasks, 40, tag="n")

    def run(kill_at: int) -> subprocess.CompletedProcess[str]:
        args = tmp_path / "args.pickle"
        args.write_bytes(pickle.dumps((new_tasks, seeds, str(root), kill_at)))
        return subprocess.run(
            [sys.executable, str(script), str(args)], capture_output=True, text=True, timeout=120
        )

    # a complete publish elsewhere counts the writes: shards, card, manifest, LATEST
    dry = tmp_path / "dry"
    args = tmp_path / "args.pickle"
    args.write_bytes(pickle.dumps((new_tasks, seeds, str(dry), 0)))
    writes = int(
        subprocess.run(
            [sys.executable, str(script), str(args)], capture_output=True, text=True, check=True
        ).stdout.split()[-1]
    )
    assert (
        writes == 4 + 1 + 1 + 1 + 1
    )  # 4 task shards, 1 environments shard, card, manifest, LATEST
    for kill_at in (1, 3, writes - 2, writes - 1, writes):  # shards, card, manifest, LATEST
        proc = run(kill_at)
        assert proc.returncode == -9, proc.stderr
        assert (root / "d" / "LATEST").read_text().strip() == first.version
        stream = load_tasks(root / "d")
        assert stream.version == first.version
        assert sorted(t.instance_id for t in stream) == before
        taskmint.publish.verify_manifest(root / "d" / first.version)

    task = next(iter(load_tasks(root / "d")))
    assert taskmint.verify(task, task.patch, cache_dir=cache_dir).reward == 1.0
    assert taskmint.verify(task, "", cache_dir=cache_dir).reward == 0.0

    # the next publish goes through; debris without a manifest is removed, numbers never reused
    done = run(0)
    assert done.returncode == 0, done.stderr
    versions = sorted(p.name for p in (root / "d").iterdir() if p.name.startswith("v"))
    latest = (root / "d" / "LATEST").read_text().strip()
    assert latest == versions[-1] and latest > "v0002"
    assert all((root / "d" / v / "manifest.json").is_file() for v in versions)
    assert sorted(t.instance_id for t in load_tasks(root / "d")) == sorted(
        t.instance_id for t in new_tasks
    )
