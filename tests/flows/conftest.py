"""One Prefect test harness for every flow test (its start-up costs 10-20 s), with its own
PREFECT_HOME, and its API URL exported so subprocesses and Dask workers reach the same server.
"""

from __future__ import annotations

import os
from pathlib import Path

import pytest


@pytest.fixture(scope="session")
def prefect_harness(work_dir: Path):
    os.environ.setdefault("PREFECT_HOME", str(work_dir / "prefect"))
    from prefect.settings import PREFECT_API_URL
    from prefect.testing.utilities import prefect_test_harness

    with prefect_test_harness(server_startup_timeout=120):
        before = os.environ.get("PREFECT_API_URL")
        os.environ["PREFECT_API_URL"] = str(PREFECT_API_URL.value())
        try:
            yield str(PREFECT_API_URL.value())
        finally:
            if before is None:
                os.environ.pop("PREFECT_API_URL", None)
            else:
                os.environ["PREFECT_API_URL"] = before
