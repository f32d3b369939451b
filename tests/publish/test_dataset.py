"""Publishing dataset versions and reading them back, with and without taskmint."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

from taskmint.errors import DatasetError
from taskmint.publish import latest_version, load_seed, load_tasks, publish, verify_manifest
from taskmint.publish.schema import ENVIRONMENT_FEATURES, TASK_FEATURES


def test_version_layout_and_manifest(tiny_dataset: Path, tiny_tasks):
    assert tiny_dataset.name == "v0001"
    manifest = verify_manifest(tiny_dataset)
    assert manifest["tasks"] == len(tiny_tasks)
    shards = manifest["splits"]["tasks"]["train"]
    assert len(shards) == 8  # the default ShardPolicy divisor
    assert sum(s["rows"] for s in shards) == len(tiny_tasks)
    assert set(manifest["files"]) == {
        "README.md",
        "environments/train-00000-of-00001.parquet",
        *(s["path"] for s in shards),
    }
    assert manifest["parent"] is None and manifest["tombstones"] == []
    assert (tiny_dataset.parent / "LATEST").read_text().strip() == "v0001"
    assert latest_version(tiny_dataset.parent) == tiny_dataset


def test_records_round_trip(tiny_dataset: Path, tiny_tasks):
    assert sorted(load_tasks(tiny_dataset), key=lambda t: t.instance_id) == sorted(
        tiny_tasks, key=lambda t: t.instance_id
    )


def test_datasets_reads_it_without_taskmint(tiny_dataset: Path, tiny_tasks):
    code = f"""
import json, sys
assert "taskmint" not in sys.modules
import datasets
root = {str(tiny_dataset)!r}
by_dir = datasets.load_dataset(root, "tasks", split="train")
by_files = datasets.load_dataset("parquet", data_files=root + "/tasks/*.parquet", split="train")
envs = datasets.load_dataset(root, "environments", split="train")
default = datasets.load_dataset(root, split="train")
row = by_dir[0]
print(json.dumps({{"n": len(by_dir), "m": len(by_files), "d": len(default), "e": len(envs),
    "cols": by_dir.column_names, "env_cols": envs.column_names,
    "features": by_dir.features.to_dict(), "env_features": envs.features.to_dict(),
    "row": {{k: str(type(v).__name__) for k, v in row.items()}},
    "f2p": row["FAIL_TO_PASS"], "archive": len(envs[0]["archive"]),
    "cal": [[c["solver_kind"], c["solver_name"], c["hint_level"]] for c in row["calibration"]],
    "taskmint": "taskmint" in sys.modules}}))
"""
    out = subprocess.run(
        [sys.executable, "-c", code],
        capture_output=True,
        text=True,
        check=True,
        cwd=tiny_dataset,
        env={"HF_DATASETS_OFFLINE": "1", "HOME": str(tiny_dataset.parent), "PATH": "/usr/bin:/bin"},
    )
    info = json.loads(out.stdout.strip().splitlines()[-1])
    assert info["n"] == info["m"] == info["d"] == len(tiny_tasks)
    assert info["e"] == 1
    assert not info["taskmint"]
    # every column, with the published types, and every row value present
    assert info["cols"] == list(TASK_FEATURES)
    assert info["env_cols"] == list(ENVIRONMENT_FEATURES)
    assert info["features"] == TASK_FEATURES.to_dict()
    assert info["env_features"] == ENVIRONMENT_FEATURES.to_dict()
    assert set(info["row"]) == set(TASK_FEATURES) and "NoneType" not in info["row"].values()
    assert info["archive"] > 0
    assert info["f2p"]
    assert info["cal"] == [["reference", "null", 0], ["reference", "oracle", 0]]


def test_republishing_the_same_tasks_reuses_the_version(tiny_tasks, tiny_seed, tiny_env, tmp_path):
    seeds = [(tiny_seed, tiny_env.env_id, tiny_env.python_version)]
    first = publish(tiny_tasks, seeds, root=tmp_path, name="d")
    again = publish(tiny_tasks, seeds, root=tmp_path, name="d")
    assert again.version == first.version == "v0001" and not again.created
    second = publish(tiny_tasks[:2], seeds, root=tmp_path, name="d")
    assert second.version == "v0002" and second.created
    assert json.loads((tmp_path / "d" / "v0002" / "manifest.json").read_text())["parent"] == "v0001"
    assert latest_version(tmp_path / "d").name == "v0002"


def test_corrupt_or_missing_shards_are_named(tiny_tasks, tiny_seed, tiny_env, tmp_path):
    seeds = [(tiny_seed, tiny_env.env_id, tiny_env.python_version)]
    version = Path(publish(tiny_tasks, seeds, root=tmp_path, name="d").path)
    entry = next(s for s in verify_manifest(version)["splits"]["tasks"]["train"] if s["rows"])
    shard = version / entry["path"]
    name = shard.name.replace(".", r"\.")
    shard.write_bytes(shard.read_bytes()[:-10] + b"0123456789")  # same size, other bytes
    with pytest.raises(DatasetError, match=rf"{name} does not match its sha256.*republish"):
        list(load_tasks(version))
    with pytest.raises(DatasetError, match=rf"{name} does not match its sha256"):
        verify_manifest(version)
    shard.write_bytes(b"truncated")
    with pytest.raises(DatasetError, match=rf"{name} has 9 bytes, manifest.json says"):
        load_tasks(version)
    shard.unlink()
    with pytest.raises(DatasetError, match=rf"{name} is missing .*republish the version"):
        load_tasks(version)


def test_an_incomplete_version_is_never_latest(tiny_tasks, tiny_seed, tiny_env, tmp_path):
    seeds = [(tiny_seed, tiny_env.env_id, tiny_env.python_version)]
    publish(tiny_tasks, seeds, root=tmp_path, name="d")
    (tmp_path / "d" / "v0002" / "tasks").mkdir(parents=True)  # a crash before the manifest
    (tmp_path / "d" / "LATEST").write_text("v0002\n")
    assert latest_version(tmp_path / "d").name == "v0001"
    with pytest.raises(DatasetError, match="no published version"):
        latest_version(tmp_path / "nothing")


def test_duplicate_ids_are_refused(tiny_tasks, tmp_path):
    with pytest.raises(DatasetError, match="duplicate"):
        publish([tiny_tasks[0], tiny_tasks[0]], [], root=tmp_path, name="d")


def test_seed_snapshot_comes_back_from_the_archive(tiny_dataset, tiny_seed, tmp_path):
    seed = load_seed(tiny_dataset, tiny_seed.snapshot_id, cache_dir=tmp_path)
    assert seed.files == tiny_seed.files
    for rel in seed.files:
        assert (Path(seed.root) / rel).read_bytes() == (Path(tiny_seed.root) / rel).read_bytes()
