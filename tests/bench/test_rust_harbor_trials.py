"""Benchmark: every Rust task of a published version, exported to Harbor and tried with the
oracle and nop agents on this machine's Docker Engine.

Needs a published version holding Rust tasks (a refresh over seed_apps/cronplan, for one) and
the output root it was published under (its cache holds the seeds' Rust environments):

    TASKMINT_RUST_DATASET=/tmp/out/datasets/taskmint/v0001 TASKMINT_OUTPUT=/tmp/out \\
        .venv/bin/python -m pytest -q -s tests/bench/test_rust_harbor_trials.py

It builds each Rust seed's environment image (`build_environment_image`: seconds and size),
exports every Rust task (`export_harbor`), runs `run_trials` with "oracle" then "nop" on every
folder and prints the counts (oracle 1, nop 0, errors) and each trial's seconds: the whole
trial and the verifier's (grading: the cargo build and run in the verifier's container).
Oracle must get 1 and nop 0 on every task.
"""

from __future__ import annotations

import json
import os
import statistics
import time
from pathlib import Path

import pytest

from taskmint.harbor import export_harbor, run_trials
from taskmint.harbor.export import EXPORT_RECORD
from taskmint.harbor.trial import TrialResult
from taskmint.publish import load_tasks

DATASET = os.environ.get("TASKMINT_RUST_DATASET")
OUTPUT = os.environ.get("TASKMINT_OUTPUT")


def _graded(result: TrialResult) -> float:
    """The grader's own seconds (grade.json's wall_time: the cargo build and run)."""
    try:
        return float(json.loads(result.logs["verifier/grade.json"])["wall_time"])
    except (KeyError, ValueError, TypeError):
        return 0.0


def _phases(result: TrialResult) -> str:
    """The cargo harness's seconds per phase in the verifier (grade.json's runner_phases)."""
    try:
        phases = json.loads(result.logs["verifier/grade.json"]).get("runner_phases") or {}
    except (KeyError, ValueError):
        return "-"
    return " ".join(f"{k} {float(v):.1f}" for k, v in phases.items())


def _trial(r: TrialResult) -> str:
    return (
        f"  {r.agent:6} {r.task}: reward {r.reward} "
        f"({r.details.get('passed')}/{r.details.get('expected')}), grader {_graded(r):.1f}, "
        + ", ".join(f"{k} {v:.1f}" for k, v in r.seconds.items())
        + (f", error {r.error}" if r.error else "")
        + f"; harness phases {_phases(r)}"
    )


def _line(name: str, results: list[TrialResult]) -> str:
    total = [r.seconds.get("total", 0.0) for r in results]
    verify = [r.seconds.get("verify", 0.0) for r in results]
    graded = [_graded(r) for r in results]
    rewards = [r.reward for r in results]
    return (
        f"{name:7} n={len(results)} reward 1: {rewards.count(1.0)}, 0: {rewards.count(0.0)}, "
        f"errors: {sum(r.error is not None for r in results)}; trial s median "
        f"{statistics.median(total):.1f} (min {min(total):.1f}, max {max(total):.1f}); "
        f"verifier s median {statistics.median(verify):.1f} (min {min(verify):.1f}, "
        f"max {max(verify):.1f}); grader s median {statistics.median(graded):.1f}"
    )


@pytest.mark.timeout(0)  # 16 trials of a cargo build and run each: no per-test limit
@pytest.mark.skipif(not DATASET or not OUTPUT, reason="set TASKMINT_RUST_DATASET, TASKMINT_OUTPUT")
def test_oracle_and_nop_on_every_rust_task(tmp_path: Path) -> None:
    from taskmint.config import PipelineConfig
    from taskmint.harbor.rust_image import register
    from taskmint.languages import build_environment
    from taskmint.publish.loader import load_seed as load_snapshot
    from taskmint.sandbox.docker.base_image import build_base_image
    from taskmint.sandbox.docker.client import docker_client
    from taskmint.sandbox.docker.images import build_environment_image

    register()  # the Rust environment image, as `taskmint images build` registers it
    assert DATASET and OUTPUT
    cache = PipelineConfig(output_root=Path(OUTPUT)).cache_dir
    tasks = [t for t in load_tasks(DATASET, streaming=False) if t.language == "rust"]
    assert tasks, f"no Rust task in {DATASET}"
    client = docker_client()
    base = build_base_image(client)
    for snapshot in sorted({t.snapshot_id for t in tasks}):
        origin = next(t.origin for t in tasks if t.snapshot_id == snapshot)
        seed = load_snapshot(origin, snapshot, cache_dir=cache)
        env = build_environment(seed, cache_dir=cache)
        start = time.monotonic()
        tag = build_environment_image(env, client, base=base)
        size = client.api.inspect_image(tag)["Size"] / 1e6
        print(f"\n{seed.name}: image {tag} in {time.monotonic() - start:.1f} s, {size:.0f} MB")

    start = time.monotonic()
    folders = export_harbor(
        DATASET, tmp_path / "harbor", task_ids=[t.instance_id for t in tasks], cache_dir=cache
    )
    record = json.loads((tmp_path / "harbor" / EXPORT_RECORD).read_text())
    print(f"{len(folders)} Rust tasks exported in {time.monotonic() - start:.1f} s")
    assert record["skipped"] == [], record["skipped"]

    oracle: list[TrialResult] = []
    nop: list[TrialResult] = []
    for folder in folders:  # printed as they come (a trial grades a whole cargo build and run)
        for agent, results in (("oracle", oracle), ("nop", nop)):
            results += run_trials([folder], agent)
            print(_trial(results[-1]), flush=True)
    print(_line("oracle", oracle))
    print(_line("nop", nop))
    assert [r.error for r in oracle + nop] == [None] * (2 * len(folders))
    assert [r.reward for r in oracle] == [1.0] * len(folders)
    assert [r.reward for r in nop] == [0.0] * len(folders)
