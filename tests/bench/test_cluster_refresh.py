"""Benchmark: the refresh on a Dask cluster of worker processes against one process.

Side by side in one run, on the same machine: `taskmint refresh` with the threads runner taking
the seeds in turn, then with `--task-runner dask` (a `LocalCluster` of `--workers` processes)
and `--parallel-seeds` seeds at once, each into a fresh output root whose environment and
download caches are shared (so neither pays a venv build the other does not). Printed: each
run's wall time and tasks, the ratio, whether the task ids are the same, and the tasks whose
content differs (a test that one run dropped as flaky, say).

Run: `make bench` (needs the package index for the PyPI seeds). Knobs: TASKMINT_BENCH_SEEDS (a
seeds manifest; default: h11, wsproto and voluptuous of seed_apps/night_seeds.toml),
TASKMINT_BENCH_CANDIDATES (per seed, default 24), TASKMINT_BENCH_WORKERS (default 2),
TASKMINT_BENCH_OUTPUT (default output/bench-cluster).
"""

from __future__ import annotations

import os
import subprocess
import sys
import time
from pathlib import Path

from taskmint.publish import latest_version, load_tasks

ROOT = Path(__file__).resolve().parents[2]
SEEDS = """[[seed]]
pypi = "h11"
version = "0.16.0"

[[seed]]
pypi = "wsproto"
version = "1.3.1"

[[seed]]
pypi = "voluptuous"
version = "0.15.2"
"""
SHARED = ("envs", "sdists", "wheelhouse", "sources")


def _refresh(out: Path, manifest: Path, candidates: int, workers: int, *extra: str) -> float:
    cache = out / "cache"
    cache.mkdir(parents=True, exist_ok=True)
    shared = out.parent / "shared"
    for name in SHARED:
        (shared / name).mkdir(parents=True, exist_ok=True)
        link = cache / name
        if not link.exists():
            link.symlink_to(shared / name, target_is_directory=True)
    cmd = [
        sys.executable, "-m", "taskmint.cli", "--output", str(out), "refresh",
        "--seeds", str(manifest), "--max-candidates", str(candidates),
        "--workers", str(workers), "--name", "cluster", *extra,
    ]  # fmt: skip
    env = {**os.environ, "PREFECT_HOME": str(out / "prefect")}
    started = time.monotonic()
    proc = subprocess.run(cmd, cwd=ROOT, env=env, capture_output=True, text=True, timeout=7200)
    wall = time.monotonic() - started
    assert proc.returncode == 0, proc.stderr[-3000:]
    return wall


def _content(out: Path) -> dict[str, tuple]:
    return {
        t.instance_id: (t.patch, t.breaking_patch, t.FAIL_TO_PASS, t.PASS_TO_PASS)
        for t in load_tasks(latest_version(out / "datasets" / "cluster"))
    }


def test_the_refresh_on_dask_against_one_process() -> None:
    base = Path(os.environ.get("TASKMINT_BENCH_OUTPUT", ROOT / "output" / "bench-cluster"))
    candidates = int(os.environ.get("TASKMINT_BENCH_CANDIDATES", "24"))
    workers = int(os.environ.get("TASKMINT_BENCH_WORKERS", "2"))
    manifest = Path(os.environ.get("TASKMINT_BENCH_SEEDS", base / "seeds.toml"))
    if "TASKMINT_BENCH_SEEDS" not in os.environ:
        base.mkdir(parents=True, exist_ok=True)
        manifest.write_text(SEEDS)
    stamp = time.strftime("%Y%m%d-%H%M%S")
    # a warm-up run fills the shared environments, so the two measured runs start alike
    _refresh(base / f"warm-{stamp}", manifest, 1, workers)
    one = base / f"threads-{stamp}"
    many = base / f"dask-{stamp}"
    one_wall = _refresh(one, manifest, candidates, workers)
    many_wall = _refresh(
        many, manifest, candidates, workers, "--task-runner", "dask",
        "--parallel-seeds", str(workers),
    )  # fmt: skip
    a, b = _content(one), _content(many)
    differ = sorted(k for k in a.keys() & b.keys() if a[k] != b[k])
    print()
    print(f"threads, seeds in turn: {one_wall:.1f} s, {len(a)} tasks")
    print(f"dask ({workers} processes), {workers} seeds at once: {many_wall:.1f} s, {len(b)} tasks")
    print(f"dask / threads: {many_wall / one_wall:.2f}x")
    print(f"same task ids: {sorted(a) == sorted(b)}; tasks whose content differs: {differ}")
    assert sorted(a) == sorted(b)
