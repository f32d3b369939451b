"""Fixtures shared by the calibration tests that grade model attempts."""

from __future__ import annotations

from pathlib import Path

import pytest

from taskmint.publish import load_seed
from taskmint.records import SeedApp, Task


@pytest.fixture(scope="session")
def stub_task_and_seed(
    published_tasks: list[Task], tiny_dataset: Path, cache_dir: Path
) -> tuple[Task, SeedApp]:
    """The tiny seed's `top_words` task made by `stub_body`, and its seed."""
    task = next(
        t
        for t in published_tasks
        if t.units[0].endswith("::top_words") and t.strategy == "stub_body"
    )
    return task, load_seed(tiny_dataset, task.snapshot_id, cache_dir=cache_dir)
