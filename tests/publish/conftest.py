"""Fixtures for the publish tests: many tasks made from the real tiny ones, published once."""

from __future__ import annotations

import dataclasses
from pathlib import Path

import pytest

from taskmint.publish import ShardPolicy, publish
from taskmint.records import Environment, SeedApp, Task


def variants(tasks: list[Task], n: int, tag: str = "x") -> list[Task]:
    """`n` distinct tasks cut from the real ones (new ids, the same seed and patches)."""
    return [
        dataclasses.replace(tasks[i % len(tasks)], instance_id=f"{tag}{i:05d}") for i in range(n)
    ]


@pytest.fixture(scope="module")
def many_dataset(
    tiny_tasks: list[Task],
    tiny_seed: SeedApp,
    tiny_env: Environment,
    tmp_path_factory: pytest.TempPathFactory,
) -> Path:
    """300 tasks in 8 shards of at most 50 rows (a shard count that 1, 2, 4 and 8 divide)."""
    root = tmp_path_factory.mktemp("many")
    publish(
        variants(tiny_tasks, 300),
        [(tiny_seed, tiny_env.env_id, tiny_env.python_version)],
        root=root,
        name="many",
        policy=ShardPolicy(max_rows=50, row_group_rows=16, divisor=4),
    )
    return root / "many"
