"""A published version with Python and JavaScript tasks, and the real OpenEnv server over it.

The version is the shared `mixed_dataset` (tests/conftest.py: the tiny seed's Python tasks and
the tinyjs seed's JavaScript ones). The server is `taskmint serve-openenv` in a child process,
sharing the session's cache (its `--output` is the session's work folder).
"""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.openenv.helpers import running_server


@pytest.fixture(scope="session")
def openenv_url(mixed_dataset: Path, work_dir: Path) -> Iterator[str]:
    with running_server(mixed_dataset, work_dir, work_dir / "openenv-server.log") as url:
        yield url
