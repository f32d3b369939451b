"""Benchmark: Rust tasks of a published version through the CLI, as a user grades them:
`taskmint verify <id> <patch>` with the gold patch (must be 1) and with no patch (must be 0),
on up to TASKMINT_BENCH_TASKS tasks (default 10), with the seconds each took, next to one plain
`cargo test` of the same broken-then-restored tree on the host (no sandbox, no harness; warm
target folder from a first run).

The version: TASKMINT_BENCH_DATASET (a dataset root or version folder, e.g. the output of
`make demo`). Run: `.venv/bin/python -m pytest -q -s tests/bench/test_rust_cli.py`.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import pytest

from taskmint.consumer import load_tasks, workspace
from taskmint.patches import apply_patch

DATASET = os.environ.get("TASKMINT_BENCH_DATASET", "")
COUNT = int(os.environ.get("TASKMINT_BENCH_TASKS", "10"))


def _version(root: Path) -> Path:
    if (root / "manifest.json").is_file():
        return root
    versions = sorted(p for p in root.rglob("v[0-9]*") if p.is_dir())
    if not versions:
        raise FileNotFoundError(f"no dataset version under {root}")
    return versions[-1]


def _cli_verify(version: Path, task_id: str, patch: Path, out: Path) -> tuple[dict, float]:
    start = time.monotonic()
    ran = subprocess.run(
        [
            *(sys.executable, "-m", "taskmint.cli", "--output", str(out), "verify", task_id),
            *(str(patch), "--dataset", str(version), "--json"),
        ],
        capture_output=True,
        text=True,
        check=False,
    )
    took = time.monotonic() - start
    if ran.returncode != 0:
        raise AssertionError(f"taskmint verify exited {ran.returncode}: {ran.stderr[-2000:]}")
    return json.loads(ran.stdout), took


@pytest.mark.skipif(not DATASET, reason="set TASKMINT_BENCH_DATASET to a published version")
def test_rust_tasks_through_the_cli(tmp_path):
    version = _version(Path(DATASET))
    tasks = [t for t in load_tasks(version, streaming=False) if t.language == "rust"]
    assert tasks, f"no Rust task in {version}"
    chosen = tasks[:COUNT]
    empty = tmp_path / "empty.diff"
    empty.write_text("")
    rows = []
    for task in chosen:
        gold = tmp_path / f"{task.instance_id}.diff"
        gold.write_text(task.patch)
        oracle, t_oracle = _cli_verify(version, task.instance_id, gold, tmp_path / "out")
        null, t_null = _cli_verify(version, task.instance_id, empty, tmp_path / "out")
        plain = _plain_cargo_test(task, version, tmp_path)
        rows.append((task, oracle["reward"], t_oracle, null["reward"], t_null, plain))
    print(f"\nRust tasks of {version} through `taskmint verify` ({len(chosen)} of {len(tasks)})")
    print(f"{'task':44} {'strategy':16} {'oracle':>6} {'s':>6} {'null':>5} {'s':>6} {'plain s':>8}")
    for task, r1, t1, r0, t0, plain in rows:
        print(
            f"{task.instance_id[:44]:44} {task.strategy:16} {r1:6.1f} {t1:6.1f} {r0:5.1f} "
            f"{t0:6.1f} {plain:8.1f}"
        )
    ones = sum(1 for row in rows if row[1] == 1.0)
    zeros = sum(1 for row in rows if row[3] == 0.0)
    mean = sum(row[2] for row in rows) / len(rows)
    plain_mean = sum(row[5] for row in rows) / len(rows)
    print(
        f"oracle 1: {ones}/{len(rows)}; null 0: {zeros}/{len(rows)}; mean oracle verify "
        f"{mean:.1f} s against a plain warm `cargo test` of the same tree {plain_mean:.1f} s "
        f"(ratio {mean / plain_mean:.2f})"
    )
    assert ones == len(rows) and zeros == len(rows)


def _plain_cargo_test(task, version: Path, tmp: Path) -> float:  # type: ignore[no-untyped-def]
    """One plain `cargo test` of the gold tree on the host, after a first run warmed its target
    folder (the same work as the harness's warm run: the crate rebuilt, every test run)."""
    cargo = shutil.which("cargo")
    if cargo is None:
        return float("nan")
    folder = Path(tempfile.mkdtemp(dir=tmp))
    ws = folder / "ws"
    ws.mkdir()
    workspace(task, ws, cache_dir=tmp / "cache")
    subprocess.run([cargo, "test", "-q", "--offline"], cwd=ws, capture_output=True, check=False)
    apply_patch(ws, task.patch)
    start = time.monotonic()
    subprocess.run([cargo, "test", "-q", "--offline"], cwd=ws, capture_output=True, check=False)
    return time.monotonic() - start
