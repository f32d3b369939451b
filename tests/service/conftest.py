"""The real reward service (`taskmint serve-reward` in a child process) over the shared mixed
(Python + JavaScript) version, sharing the session's cache (`--output` is the work folder)."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.service.helpers import Server, running


@pytest.fixture(scope="session")
def reward_server(mixed_dataset: Path, work_dir: Path) -> Iterator[Server]:
    with running(
        mixed_dataset,
        work_dir,
        work_dir / "reward-server.log",
        "--concurrency",
        "2",
        "--state-dir",
        str(work_dir / "reward-state"),
    ) as server:
        yield server
