"""Benchmark: streaming task rows from a published version, speed on one core and peak memory.

Publishes 10,000 and 100,000 synthetic tasks of realistic size (a ~1 KB problem statement,
~1.5 KB diffs each way, 40 PASS_TO_PASS ids, two calibration rows), then streams each version
with `taskmint.load_tasks` (manifest check on: every shard is hashed) in a fresh process pinned
to one core, and reports rows per CPU-second and per wall-second, and the peak resident memory.
Targets: at least 5,000 rows per second on one core; peak memory at 100k at most 1.2x the peak
at 10k.
Run: `.venv/bin/python -m pytest -q -s tests/bench/test_streaming.py`.
"""

from __future__ import annotations

import json
import random
import subprocess
import sys
import time
from pathlib import Path

from taskmint.publish import publish
from taskmint.records import Calibration, Features, Task

SIZES = (10_000, 100_000)
_WORDS = [
    *("parse", "value", "token", "cell", "range", "sheet", "formula", "error", "index"),
    *("table", "column", "row", "key", "store", "commit", "snapshot", "version", "resolve"),
    *("graph", "node", "edge", "merge", "split", "render", "block", "inline"),
]

_CHILD = """
import json, os, sys, time

def hwm_kb():
    # VmHWM belongs to this process image (ru_maxrss would carry the parent's peak over exec)
    with open("/proc/self/status") as fh:
        return next(int(line.split()[1]) for line in fh if line.startswith("VmHWM:"))

os.sched_setaffinity(0, {min(os.sched_getaffinity(0))})
import taskmint
stream = taskmint.load_tasks(sys.argv[1], check=sys.argv[2] == "1")
base = hwm_kb()
# how much of the core this process gets (other jobs share the machine): a pure-Python spin
spin_cpu, spin_wall = time.process_time(), time.perf_counter()
while time.process_time() - spin_cpu < 0.5:
    pass
share = (time.process_time() - spin_cpu) / (time.perf_counter() - spin_wall)
cpu, wall = time.process_time(), time.perf_counter()
n = 0
chars = 0
for task in stream:
    n += 1
    chars += len(task.patch)
cpu, wall = time.process_time() - cpu, time.perf_counter() - wall
peak = hwm_kb()
print(json.dumps({"rows": n, "cpu": cpu, "wall": wall, "peak_kb": peak, "base_kb": base,
    "share": share}))
"""


def _text(rng: random.Random, chars: int) -> str:
    out: list[str] = []
    size = 0
    while size < chars:
        word = rng.choice(_WORDS)
        out.append(word)
        size += len(word) + 1
    return " ".join(out)


def _diff(rng: random.Random, path: str, lines: int, sign: str) -> str:
    body = "\n".join(f"{sign}    {_text(rng, 50)}" for _ in range(lines))
    return (
        f"diff --git a/{path} b/{path}\n--- a/{path}\n+++ b/{path}\n@@ -1,{lines} +1,0 @@\n{body}\n"
    )


def synthetic(n: int, seed: int = 0) -> list[Task]:
    rng = random.Random(seed)
    tasks = []
    for i in range(n):
        path = f"pkg/mod{i % 40}.py"
        tasks.append(
            Task(
                instance_id=f"bench-{i:07d}",
                seed="bench",
                snapshot_id="0" * 24,
                env_id="1" * 16,
                language="python",
                strategy=rng.choice(["stub_body", "remove_function", "remove_class"]),
                units=(f"{path}::f{i}",),
                files=(path,),
                problem_statement=_text(rng, 1000),
                hints=tuple(_text(rng, 120) for _ in range(3)),
                breaking_patch=_diff(rng, path, 25, "-"),
                patch=_diff(rng, path, 25, "+"),
                FAIL_TO_PASS=tuple(f"tests/test_m.py::test_{i}_{j}" for j in range(3)),
                PASS_TO_PASS=tuple(f"tests/test_m.py::test_keep_{j}" for j in range(40)),
                test_paths=("tests",),
                source_paths=("pkg",),
                test_command="python -m pytest -p no:cacheprovider tests",
                removed_code=_text(rng, 400),
                features=Features(
                    lines_removed=rng.randint(2, 60),
                    units=1,
                    files=1,
                    complexity=3,
                    callers=1,
                    has_docstring=True,
                    fail_to_pass=3,
                ),
                calibration=tuple(
                    Calibration(
                        solver_kind="model",
                        solver_name=m,
                        hint_level=0,
                        attempts=8,
                        solves=rng.randint(0, 8),
                        rate=0.5,
                        interval_low=0.2,
                        interval_high=0.8,
                        date="2026-12-01",
                    )
                    for m in ("model-a", "model-b")
                ),
                validation_runs=7,
                validation_wall_time=rng.random() * 10,
                created="2026-12-01T00:00:00Z",
            )
        )
    return tasks


def _stream(base: Path, check: bool) -> dict[str, float]:
    out = subprocess.run(
        [sys.executable, "-c", _CHILD, str(base), "1" if check else "0"],
        capture_output=True,
        text=True,
        check=True,
    )
    return json.loads(out.stdout.strip().splitlines()[-1])


def test_streaming_speed_and_flat_memory(tmp_path: Path) -> None:
    results = {}
    for n in SIZES:
        started = time.perf_counter()
        version = publish(synthetic(n), [], root=tmp_path, name=f"d{n}")
        took = time.perf_counter() - started
        manifest = json.loads((Path(version.path) / "manifest.json").read_text())
        shards = manifest["splits"]["tasks"]["train"]
        size = sum(s["bytes"] for s in shards)
        print(
            f"\npublished {n:,} rows in {took:.1f} s: {len(shards)} shards, "
            f"{size / 2**20:.1f} MiB, max {max(s['rows'] for s in shards)} rows per shard"
        )
        results[n] = _stream(tmp_path / f"d{n}", check=True)
        r = results[n]
        assert r["rows"] == n
        print(
            f"{n:>7,} rows: {n / r['cpu']:,.0f} rows per CPU-second, {n / r['wall']:,.0f} rows "
            f"per wall-second (one core, {r['share']:.0%} of it free; sha256 check on); "
            f"peak RSS {r['peak_kb'] / 1024:.0f} MiB "
            f"({(r['peak_kb'] - r['base_kb']) / 1024:.0f} MiB over the {r['base_kb'] / 1024:.0f} "
            "MiB after import)"
        )
    unchecked = _stream(tmp_path / f"d{SIZES[-1]}", check=False)
    print(f"{SIZES[-1]:>7,} rows, check=False: {SIZES[-1] / unchecked['cpu']:,.0f} rows/CPU-s")
    small, big = results[SIZES[0]], results[SIZES[-1]]
    print(
        f"peak memory {SIZES[-1]:,} / {SIZES[0]:,} rows: "
        f"{big['peak_kb'] / small['peak_kb']:.2f}x (target <= 1.2x); slowest rate "
        f"{min(n / results[n]['cpu'] for n in SIZES):,.0f} rows per CPU-second (target >= 5,000)"
    )
