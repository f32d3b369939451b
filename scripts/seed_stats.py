"""Print the table of seeds in docs/seeds.md: size, tests, coverage, suite time, tasks minted.

Usage: .venv/bin/python scripts/seed_stats.py [DATASET_VERSION_DIR]
Coverage is measured outside the sandbox with coverage.py (Python) or node's
--experimental-test-coverage (JavaScript); the suite time is the sandboxed run's.
"""

from __future__ import annotations

import re
import shutil
import subprocess
import sys
import tempfile
from collections import Counter
from pathlib import Path

from taskmint.acquire import acquire, load_seed_list
from taskmint.config import Limits
from taskmint.languages import build_environment
from taskmint.publish import latest_version, load_tasks
from taskmint.sandbox import LocalSandbox
from taskmint.validate import run_baseline

ROOT = Path(__file__).resolve().parents[1]


def python_coverage(seed_dir: Path, package: str) -> float:
    with tempfile.TemporaryDirectory() as tmp:
        work = Path(tmp) / "s"
        shutil.copytree(seed_dir, work)
        run = [sys.executable, "-m", "coverage"]
        subprocess.run(
            [
                *run,
                "run",
                f"--source={package}",
                "-m",
                "pytest",
                "-q",
                "-p",
                "no:cacheprovider",
                "tests",
            ],
            cwd=work,
            check=True,
            capture_output=True,
            env={"PYTHONPATH": ".", "PATH": "/usr/bin:/bin"},
        )
        out = subprocess.run(
            [*run, "report"], cwd=work, check=True, capture_output=True, text=True
        ).stdout
    return float(out.strip().splitlines()[-1].split()[-1].rstrip("%"))


def node_coverage(seed_dir: Path) -> float:
    out = subprocess.run(
        ["node", "--test", "--experimental-test-coverage", "test/"],
        cwd=seed_dir,
        capture_output=True,
        text=True,
    ).stdout
    match = re.search(r"all files\s*\|\s*([\d.]+)", out)
    return float(match.group(1)) if match else float("nan")


def main() -> None:
    cache = ROOT / "output" / "cache"
    minted: Counter[str] = Counter()
    try:
        version = (
            Path(sys.argv[1])
            if len(sys.argv) > 1
            else latest_version(ROOT / "output" / "datasets" / "taskmint")
        )
        minted.update(t.seed for t in load_tasks(version))
    except Exception as exc:  # the table is still useful without a dataset
        print(f"(no dataset: {exc})", file=sys.stderr)
    print(
        "| seed | language | source lines | modules | tests | line coverage | suite time "
        "(sandbox) | tasks minted |"
    )
    print("|---|---|---|---|---|---|---|---|")
    for seed_dir in load_seed_list(ROOT / "seed_apps" / "seeds.toml"):
        seed = acquire(seed_dir, cache_dir=cache)
        m = seed.manifest
        suffix = ".py" if m.language == "python" else ".js"
        files = [
            p
            for s in m.source_paths
            for p in (seed_dir / s).rglob(f"*{suffix}")
            if p.name != "__init__.py"
        ]
        lines = sum(len(p.read_text().splitlines()) for p in files)
        env = build_environment(m, cache_dir=cache)
        base = run_baseline(seed, env, LocalSandbox(), runs=1, limits=Limits(wall_seconds=120))
        cov = (
            python_coverage(seed_dir, m.source_paths[0])
            if m.language == "python"
            else node_coverage(seed_dir)
        )
        print(
            f"| {m.name} | {m.language} | {lines:,} | {len(files)} | "
            f"{len(base.stable_passed)} | {cov:.0f}% | {base.max_wall_time:.1f} s | "
            f"{minted.get(m.name, 0)} |"
        )


if __name__ == "__main__":
    main()
