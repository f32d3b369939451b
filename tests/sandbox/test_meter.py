"""The sandbox meter (`sandbox.base.METER`): every backend's runs counted once, from any thread,
with their wall seconds; a run that raises counts too."""

from __future__ import annotations

import time
from concurrent.futures import ThreadPoolExecutor

import pytest

from taskmint.errors import SandboxError
from taskmint.sandbox import LocalSandbox
from taskmint.sandbox.base import METER, RunResult, RunSpec
from taskmint.sandbox.fake import FakeSandbox


def _slow(spec: RunSpec) -> RunResult:
    time.sleep(0.05)
    if spec.argv[0] == "boom":
        raise SandboxError("the backend failed")
    return RunResult(exit_code=0, timed_out=False, wall_time=0.05, output="")


class Wrapped(FakeSandbox):
    """A backend over another's `run` (as a benchmark's timing sandbox is): one run, not two."""

    def run(self, spec: RunSpec) -> RunResult:
        return super().run(spec)


def test_runs_from_many_threads_are_counted_once_with_their_seconds(tmp_path):
    box = Wrapped(_slow)
    spec = RunSpec(argv=("true",), workspace=str(tmp_path))
    runs, seconds = METER.reading()
    with ThreadPoolExecutor(4) as pool:
        list(pool.map(lambda _: box.run(spec), range(8)))
    with pytest.raises(SandboxError):
        box.run(RunSpec(argv=("boom",), workspace=str(tmp_path)))
    after_runs, after_seconds = METER.reading()
    assert after_runs - runs == 9 and len(box.calls) == 9
    assert 9 * 0.05 <= after_seconds - seconds < 9 * 0.05 + 2.0


def test_the_real_backend_is_metered(tmp_path):
    runs, seconds = METER.reading()
    with LocalSandbox() as box:
        result = box.run(RunSpec(argv=("sh", "-c", "sleep 0.1"), workspace=str(tmp_path)))
    assert result.exit_code == 0
    after_runs, after_seconds = METER.reading()
    assert after_runs - runs == 1 and after_seconds - seconds >= result.wall_time * 0.9
