"""Benchmark: the whole refresh pipeline on real PyPI packages, pulled as sdists.

Every seed in `seed_apps/pypi_seeds.toml` is downloaded (pinned version, sdist only), unpacked
safely, given its pinned taskmint.toml, installed from the wheelhouse (never the package itself),
triaged (failing and flaky tests excluded), and minted from by the real Prefect flow.
Printed: a Markdown table per seed (tests kept / excluded, candidates, accepted, yield, wall
time), the one in docs/seeds.md and docs/benchmarks.md.

Run: `make bench-pypi`. Knobs: TASKMINT_BENCH_CANDIDATES (per seed, default 12),
TASKMINT_BENCH_OUTPUT (default output/bench-pypi; its cache is reused between runs, delete it
for a cold run).
"""

from __future__ import annotations

import os
import time
from pathlib import Path

from taskmint.config import load_config

ROOT = Path(__file__).resolve().parents[2]


def test_pypi_seeds_pipeline() -> None:
    from taskmint.flows.refresh import run_refresh

    out = Path(os.environ.get("TASKMINT_BENCH_OUTPUT", ROOT / "output" / "bench-pypi"))
    config = load_config(
        None,
        output_root=out,
        seeds_manifest=ROOT / "seed_apps" / "pypi_seeds.toml",
        max_candidates_per_seed=int(os.environ.get("TASKMINT_BENCH_CANDIDATES", "12")),
        workers=2,
    )
    started = time.monotonic()
    result = run_refresh(config)
    wall = time.monotonic() - started
    lines = [
        "| package | tests kept | tests excluded | candidates | accepted | yield | wall time |",
        "|---|---:|---:|---:|---:|---:|---:|",
    ]
    for s in result.summaries:
        rate = f"{s.accepted / s.candidates:.0%}" if s.candidates else "-"
        note = f" (rejected: {s.error[:80]})" if s.error else ""
        lines.append(
            f"| {s.seed}{note} | {s.tests_kept} | {s.tests_excluded} | {s.candidates} | "
            f"{s.accepted} | {rate} | {s.wall_time:.0f} s |"
        )
    made = sum(s.candidates for s in result.summaries)
    ok = sum(s.accepted for s in result.summaries)
    lines.append(
        f"| **total** | {sum(s.tests_kept for s in result.summaries)} | "
        f"{sum(s.tests_excluded for s in result.summaries)} | {made} | {ok} | "
        f"{ok / made if made else 0:.0%} | {wall:.0f} s |"
    )
    table = "\n".join(lines)
    print("\n" + table)
    out.mkdir(parents=True, exist_ok=True)
    (out / "table.md").write_text(table + "\n", encoding="utf-8")
