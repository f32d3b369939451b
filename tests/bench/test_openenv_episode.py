"""Benchmark: one OpenEnv episode through the client against a plain `verify` call.

The real server (`taskmint serve-openenv` in a child process) over a version holding the tiny
seed's Python tasks and the tinyjs seed's JavaScript tasks. For the first task of each language,
ROUNDS gold episodes (reset, read_file, shell, edit_file with the gold fix, run_tests, submit)
through `TaskmintEnv`, each step timed, and ROUNDS plain `verify(task, task.patch)` calls in
this process; prints the medians and the ratio.
Run: `.venv/bin/python -m pytest -q -s tests/bench/test_openenv_episode.py`.
"""

from __future__ import annotations

import statistics
import time
from pathlib import Path

import pytest

from taskmint.consumer import load_tasks, verify
from taskmint.openenv import TaskmintAction, TaskmintEnv
from tests.openenv.helpers import gold_edits, running_server

ROUNDS = 5


@pytest.fixture(scope="module")
def dataset(mixed_dataset: Path) -> Path:
    return mixed_dataset


def _episode(url: str, split: str, edits: list) -> dict[str, float]:  # type: ignore[type-arg]
    times: dict[str, float] = {}
    start = time.monotonic()
    with TaskmintEnv(base_url=url).sync() as env:

        def timed(name: str, tool: str, **arguments: object) -> object:
            t0 = time.monotonic()
            result = env.step(TaskmintAction(tool=tool, arguments=arguments))
            times[name] = times.get(name, 0.0) + time.monotonic() - t0
            return result

        t0 = time.monotonic()
        env.reset(split=split, index=0)
        times["reset"] = time.monotonic() - t0
        timed("read_file", "read_file", path=edits[0].path)
        timed("shell", "shell", command="ls")
        for e in edits:
            timed("edit_file", "edit_file", path=e.path, old_text=e.old, new_text=e.new)
        timed("run_tests", "run_tests")
        result = timed("submit", "submit")
        assert result.reward == 1.0, result.observation.output  # type: ignore[attr-defined]
    times["episode"] = time.monotonic() - start
    return times


def test_episode_against_plain_verify(
    dataset: Path, work_dir: Path, cache_dir: Path, tmp_path: Path
) -> None:
    tasks = sorted(load_tasks(dataset, streaming=False), key=lambda t: t.instance_id)
    rows = []
    with running_server(dataset, work_dir, work_dir / "openenv-bench.log") as url:
        for split in ("python", "javascript"):
            task = next(t for t in tasks if t.language == split)
            edits = gold_edits(task, cache_dir, tmp_path / split)
            _episode(url, split, edits)  # the first pays for resolving the seed's runtime
            runs = [_episode(url, split, edits) for _ in range(ROUNDS)]
            plain = []
            for _ in range(ROUNDS):
                t0 = time.monotonic()
                assert verify(task, task.patch, cache_dir=cache_dir).reward == 1.0
                plain.append(time.monotonic() - t0)
            steps = {k: statistics.median(r[k] for r in runs) for k in runs[0]}
            rows.append((split, task.instance_id, steps, statistics.median(plain)))
    print(f"\nOpenEnv episode vs plain verify (median of {ROUNDS})")
    for split, task_id, steps, plain_s in rows:
        episode = steps.pop("episode")
        parts = ", ".join(f"{k} {v:.2f}" for k, v in steps.items())
        print(
            f"{split:10s} {task_id}: episode {episode:.2f} s ({parts}); plain verify "
            f"{plain_s:.2f} s; episode / verify {episode / plain_s:.1f}x"
        )
