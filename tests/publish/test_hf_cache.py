"""A plain `datasets.load_dataset(version_dir, ...)` reads the rows in that folder, not a
cached copy of another folder with the same name (or of this one before a republish).

`datasets` caches a local folder under `<folder name>/<config>/<version>/<hash of the card's
configs>`: neither the folder's path nor its files' contents or mtimes enter the key.
"""

from __future__ import annotations

import shutil
from pathlib import Path

import datasets
import pytest

from taskmint.publish import load_tasks, publish
from taskmint.records import Environment, SeedApp, Task

from .conftest import variants


@pytest.fixture
def hf_cache(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    monkeypatch.setattr(datasets.config, "HF_HUB_OFFLINE", True)
    return tmp_path / "hf-cache"  # one cache for every load of the test


def _ids(version: Path, cache: Path, config: str = "tasks") -> list[str]:
    rows = datasets.load_dataset(str(version), config, split="train", cache_dir=str(cache))
    key = "instance_id" if config == "tasks" else "snapshot_id"
    return sorted(rows[key])


def _publish(tasks: list[Task], seed: SeedApp, env: Environment, root: Path) -> Path:
    seeds = [(seed, env.env_id, env.python_version)]
    version = publish(tasks, seeds, root=root, name="taskmint")
    assert version.version == "v0001" and version.created
    return Path(version.path)


def test_two_versions_with_the_same_name_load_as_themselves(
    tiny_tasks: list[Task],
    tiny_seed: SeedApp,
    tiny_env: Environment,
    tmp_path: Path,
    hf_cache: Path,
) -> None:
    big = variants(tiny_tasks, 7, tag="a")
    small = variants(tiny_tasks, 2, tag="b")
    first = _publish(big, tiny_seed, tiny_env, tmp_path / "one")
    second = _publish(small, tiny_seed, tiny_env, tmp_path / "two")
    assert first.name == second.name == "v0001"

    assert _ids(first, hf_cache) == sorted(t.instance_id for t in big)
    assert _ids(second, hf_cache) == sorted(t.instance_id for t in small)
    assert _ids(first, hf_cache) == sorted(t.instance_id for t in big)  # and back again
    # the default config is `tasks`, keyed the same way
    default = datasets.load_dataset(str(second), split="train", cache_dir=str(hf_cache))
    assert sorted(default["instance_id"]) == sorted(t.instance_id for t in small)
    assert _ids(second, hf_cache, "environments") == [tiny_seed.snapshot_id]
    # taskmint's own loader agrees
    assert sorted(t.instance_id for t in load_tasks(second)) == _ids(second, hf_cache)


def test_republishing_the_same_path_with_other_rows_loads_the_new_rows(
    tiny_tasks: list[Task],
    tiny_seed: SeedApp,
    tiny_env: Environment,
    tmp_path: Path,
    hf_cache: Path,
) -> None:
    before = variants(tiny_tasks, 6, tag="old")
    version = _publish(before, tiny_seed, tiny_env, tmp_path)
    assert _ids(version, hf_cache) == sorted(t.instance_id for t in before)
    assert _ids(version, hf_cache, "environments") == [tiny_seed.snapshot_id]

    shutil.rmtree(tmp_path / "taskmint")  # `make clean`, then publish again: the same v0001
    after = variants(tiny_tasks, 3, tag="new")
    assert _publish(after, tiny_seed, tiny_env, tmp_path) == version
    assert _ids(version, hf_cache) == sorted(t.instance_id for t in after)

    shutil.rmtree(tmp_path / "taskmint")  # as many rows as before, other ones
    again = variants(tiny_tasks, 3, tag="again")
    _publish(again, tiny_seed, tiny_env, tmp_path)
    assert _ids(version, hf_cache) == sorted(t.instance_id for t in again)
    assert _ids(version, hf_cache, "environments") == [tiny_seed.snapshot_id]
