"""The public API is pinned: changing it is a deliberate act."""

from __future__ import annotations

import dataclasses
import pickle

import taskmint
from taskmint import records


def test_public_api():
    assert sorted(taskmint.__all__) == [
        "Candidate",
        "CodeIndex",
        "Environment",
        "PipelineConfig",
        "Reward",
        "RewardClient",
        "SeedApp",
        "Task",
        "TaskmintError",
        "Verdict",
        "__version__",
        "load_tasks",
        "verify",
        "workspace",
    ]
    assert taskmint.verify is taskmint.consumer.verify  # the function, not the subpackage


def test_records_are_frozen_picklable_and_json_round_trip(published_tasks):
    task = published_tasks[0]
    assert pickle.loads(pickle.dumps(task)) == task
    assert records.from_json_dict(records.Task, records.to_json_dict(task)) == task
    try:
        task.instance_id = "x"  # type: ignore[misc]
    except dataclasses.FrozenInstanceError:
        pass
    else:
        raise AssertionError("records must be frozen")


def test_stable_ids():
    assert records.stable_id("a", 1) == records.stable_id("a", 1)
    assert records.stable_id("a", 1) != records.stable_id("a", 2)
