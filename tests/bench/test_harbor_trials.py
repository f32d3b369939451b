"""Benchmark: Harbor export and local trials against a plain `verify`, side by side.

A version holding the tiny seed's Python tasks and the tinyjs seed's JavaScript tasks is
exported with `export_harbor` (seconds per task), then every folder is tried with
`run_trials`: oracle (the task images built, unless an earlier run left them), oracle again
(images reused), and nop; and `verify(task, task.patch)` runs on each task in this process.
Prints the medians per language and the ratio of a warm oracle trial to a plain `verify`,
then the verifier's seconds in shared and in separate mode (warm oracle trials of every
folder in each), and the grader's environment check among them.
Run: `.venv/bin/python -m pytest -q -s tests/bench/test_harbor_trials.py`.
"""

from __future__ import annotations

import json
import statistics
import time
from pathlib import Path

import pytest

from taskmint.consumer import load_tasks, verify
from taskmint.harbor import export_harbor, run_trials
from taskmint.harbor.export import EXPORT_RECORD
from taskmint.harbor.trial import TrialResult
from taskmint.records import Environment, SeedApp, Task


@pytest.fixture(scope="module")
def dataset(
    mixed_dataset: Path, tiny_env: Environment, tinyjs: tuple[SeedApp, Environment, list[Task]]
) -> Path:
    """The shared mixed version, with both seeds' environment images built."""
    from taskmint.sandbox.docker.base_image import build_base_image
    from taskmint.sandbox.docker.client import docker_client
    from taskmint.sandbox.docker.images import build_environment_image

    client = docker_client()
    base = build_base_image(client)
    for env in (tiny_env, tinyjs[1]):
        build_environment_image(env, client, base=base)
    return mixed_dataset


def _seconds(result: TrialResult) -> float:
    return result.seconds["total"]


def _median(values: list[float]) -> str:
    return f"{statistics.median(values):.2f}" if values else "-"


def test_export_and_trials_against_verify(dataset: Path, cache_dir: Path, tmp_path: Path) -> None:
    tasks = {t.instance_id: t for t in load_tasks(dataset, streaming=False)}
    start = time.monotonic()
    folders = export_harbor(dataset, tmp_path / "harbor", cache_dir=cache_dir)
    export_wall = time.monotonic() - start
    record = json.loads((tmp_path / "harbor" / EXPORT_RECORD).read_text())
    assert len(folders) == len(tasks) and record["skipped"] == []

    cold = run_trials(folders, "oracle")
    warm = run_trials(folders, "oracle")
    nop = run_trials(folders, "nop")
    plain: dict[str, float] = {}
    for task in tasks.values():
        begin = time.monotonic()
        assert verify(task, task.patch, cache_dir=cache_dir).reward == 1.0
        plain[task.instance_id] = time.monotonic() - begin
    assert [r.reward for r in cold + warm] == [1.0] * (2 * len(folders))
    assert [r.reward for r in nop] == [0.0] * len(folders)

    print(f"\n{len(folders)} tasks exported in {export_wall:.2f} s")
    print("language    n  export/task  oracle 1st   oracle warm  nop  verify  warm/verify")
    for language in sorted({t.language for t in tasks.values()}):
        ids = [i for i, t in tasks.items() if t.language == language]

        def of(results: list[TrialResult], ids: list[str] = ids) -> list[float]:
            return [_seconds(r) for r in results if r.task in ids]

        exports = [record["seconds"][i] for i in ids]
        ratio = statistics.median(of(warm)) / statistics.median([plain[i] for i in ids])
        print(
            f"{language:<10} {len(ids):>2}  {_median(exports):>11}  {_median(of(cold)):>11}"
            f"  {_median(of(warm)):>11}  {_median(of(nop)):>3}"
            f"  {_median([plain[i] for i in ids]):>6}  {ratio:>10.1f}x"
        )
    phases = sorted({p for r in warm for p in r.seconds} - {"total"})
    print(
        "warm oracle, median seconds per phase:",
        {p: round(statistics.median(r.seconds.get(p, 0.0) for r in warm), 2) for p in phases},
    )

    # The verifier's cost in each mode, warm: shared (test.sh in the agent's container) against
    # separate (the artifacts copied out, a fresh container, test.sh there), and of the grader's
    # environment check inside it.
    shared = run_trials(folders, "oracle", verifier_mode="shared")
    separate = run_trials(folders, "oracle", verifier_mode="separate")
    assert [r.reward for r in shared + separate] == [1.0] * (2 * len(folders))
    print("language    verifier: shared  separate  (artifacts)  check  grader")
    for language in sorted({t.language for t in tasks.values()}):
        ids = {i for i, t in tasks.items() if t.language == language}
        mine = [r for r in shared if r.task in ids]
        apart = [r for r in separate if r.task in ids]
        grades = [json.loads(r.logs["verifier/grade.json"]) for r in mine + apart]
        print(
            f"{language:<10} {_median([r.seconds['verify'] for r in mine]):>16}"
            f"  {_median([r.seconds['artifacts'] + r.seconds['verify'] for r in apart]):>8}"
            f"  {_median([r.seconds['artifacts'] for r in apart]):>11}"
            f"  {_median([g['check_seconds'] for g in grades]):>5}"
            f"  {_median([g['wall_time'] for g in grades]):>6}"
        )
