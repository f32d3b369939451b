"""Benchmark: what grading costs now against another taskmint version, side by side.

For every task of a version (TASKMINT_BENCH_DATASET, e.g. the output of `make demo`), the gold
patch is graded by `taskmint.verify` of the git ref TASKMINT_BENCH_BASE (default `HEAD~1`,
checked out into a temporary worktree and run with its `src` first on the path, with this
environment's packages) and then by this checkout's, ROUNDS times each after a first round that
builds the snapshots and environments. Prints the median seconds per language for both and
their ratio; every gold patch must get 1 from both.
Run: `TASKMINT_BENCH_DATASET=output/datasets/taskmint TASKMINT_BENCH_BASE=<ref>
.venv/bin/python -m pytest -q -s tests/bench/test_verify_cost_by_version.py`.
"""

from __future__ import annotations

import json
import os
import statistics
import subprocess
import sys
import tempfile
from collections import defaultdict
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
ROUNDS = int(os.environ.get("TASKMINT_BENCH_ROUNDS", "3"))
# One process per version grades every task ROUNDS times and prints the seconds as JSON.
GRADER = """
import json, sys, time
from taskmint import load_tasks, verify
tasks = load_tasks(sys.argv[1], streaming=False)
out = []
for round in range(int(sys.argv[2]) + 1):  # round 0 builds the snapshots and environments
    for t in tasks:
        start = time.monotonic()
        r = verify(t, t.patch, cache_dir=sys.argv[3])
        if round:
            out.append([t.instance_id, t.language, time.monotonic() - start, r.reward])
print(json.dumps(out))
"""


def _grade(src: Path, dataset: str, cache: Path) -> list[list]:
    env = {**os.environ, "PYTHONPATH": str(src), "TASKMINT_REWARD_URL": ""}
    proc = subprocess.run(
        [sys.executable, "-c", GRADER, dataset, str(ROUNDS), str(cache)],
        env=env,
        capture_output=True,
        text=True,
        timeout=7200,
    )
    assert proc.returncode == 0, proc.stderr[-3000:]
    return json.loads(proc.stdout.strip().splitlines()[-1])


@pytest.mark.timeout(4 * 3600)
def test_verify_cost_against_another_version(tmp_path: Path) -> None:
    dataset = os.environ.get("TASKMINT_BENCH_DATASET")
    if not dataset:
        pytest.fail("set TASKMINT_BENCH_DATASET to a published version (e.g. make demo's output)")
    base = os.environ.get("TASKMINT_BENCH_BASE", "HEAD~1")
    tree = tmp_path / "base"
    subprocess.run(["git", "worktree", "add", "--detach", str(tree), base], cwd=ROOT, check=True)
    try:
        times: dict[tuple[str, str], list[float]] = defaultdict(list)
        for name, src in (("base", tree / "src"), ("this", ROOT / "src")):
            with tempfile.TemporaryDirectory() as cache:
                for _, language, seconds, reward in _grade(src, dataset, Path(cache)):
                    assert reward == 1.0, (name, language)
                    times[name, language].append(seconds)
    finally:
        subprocess.run(["git", "worktree", "remove", "--force", str(tree)], cwd=ROOT)
    print(f"\nverify(gold) seconds, median over tasks x {ROUNDS} rounds ({base} vs this checkout)")
    for language in sorted({lang for _, lang in times}):
        old = statistics.median(times["base", language])
        new = statistics.median(times["this", language])
        n = len(times["this", language]) // ROUNDS
        print(f"{language:11} {n:3} tasks  base {old:6.2f}  this {new:6.2f}  ratio {new / old:.2f}")
