"""Benchmark: what every strategy removes, and what strategy `feature` yields, on the bundled
seeds and on real projects nobody here wrote.

Each seed goes through the pipeline's own steps, Prefect-free (`prepare_seed`, `excise_seed`,
`mint_batch`: validation, the leak scan, describe, the reference solvers and the test-strength
gate), with every Python strategy. Printed, per strategy: candidates, tasks, yield, the
distribution of removed lines, units and files over the tasks, and the share of tasks that
remove 200 lines or more across 2 files or more; per seed, the feature strategy's candidates,
the groups whose feature fell outside the size, tasks and rejections; per seed and strategy,
the mutation scores and the gate's rejections.

Run: `make bench` (or this file alone). Knobs: TASKMINT_BENCH_OUTPUT (default
output/bench-feature; its cache is reused), TASKMINT_BENCH_REAL (real projects from
seed_apps/real_seeds.toml, comma-separated; "" for the bundled seeds alone),
TASKMINT_BENCH_CANDIDATES (per seed, default 48: 8 per strategy), TASKMINT_BENCH_STRATEGIES
(comma-separated; default: the config's).
"""

from __future__ import annotations

import json
import os
import statistics
import time
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import pytest

from taskmint.acquire.sources import load_seed_sources
from taskmint.config import load_config
from taskmint.pipeline.refresh import mint_batch
from taskmint.pipeline.seed import excise_seed, prepare_seed
from taskmint.pipeline.steps import LocalExecutor

ROOT = Path(__file__).resolve().parents[2]
REAL = "boltons,attrs,marshmallow,h11,tomlkit,sqlparse,cleo,structlog"


def _quartiles(values: Sequence[float]) -> str:
    if not values:
        return "-"
    v = sorted(values)
    if len(v) == 1:
        return f"{v[0]:g}"
    q = statistics.quantiles(v, n=4, method="inclusive")
    return f"{q[0]:g} / {q[1]:g} / {q[2]:g} / {v[-1]:g}"


def _rows(source: Any, config: Any, ex: LocalExecutor) -> list[dict[str, Any]]:
    prepared = prepare_seed(source, config, ex)
    if prepared is None or not prepared.baseline.usable:
        reason = prepared.baseline.reason if prepared is not None else "not prepared"
        return [{"seed": source.name, "error": reason}]
    excised = ex.call(excise_seed, prepared, config)
    too_small = sum(
        "(feature)" in s.path and "outside the feature size" in s.reason for s in excised.skipped
    )
    started = time.monotonic()
    results = mint_batch(ex, prepared, list(excised.candidates), config)
    wall = time.monotonic() - started
    rows = []
    for cand, result in zip(excised.candidates, results, strict=True):
        f = cand.features
        task = result.task
        rows.append(
            {
                "seed": prepared.seed.name,
                "strategy": cand.strategy,
                "status": result.verdict.status if task is None else "task",
                "reason": result.verdict.reason[:300] if task is None else "",
                "lines": f.lines_removed if f else None,
                "units": f.units if f else None,
                "files": f.files if f else None,
                "fail_to_pass": len(result.verdict.fail_to_pass),
                "pass_to_pass": len(result.verdict.pass_to_pass),
                "validation_s": result.verdict.wall_time,
                "mutation_score": task.mutation_score if task else None,
                "mutants": task.mutants if task else None,
                "level": task.statement_level if task else None,
            }
        )
    rows.append({"seed": prepared.seed.name, "feature_too_small": too_small, "mint_s": wall})
    return rows


def _strategy_table(rows: list[dict[str, Any]]) -> str:
    lines = [
        "| strategy | candidates | tasks | yield | lines p25/p50/p75/max | units p50 / max "
        "| files p50 / max | tasks with >= 200 lines over >= 2 files |",
        "|---|---:|---:|---:|---|---|---|---:|",
    ]
    for name in sorted({r["strategy"] for r in rows if "strategy" in r}):
        mine = [r for r in rows if r.get("strategy") == name]
        tasks = [r for r in mine if r["status"] == "task"]
        big = sum(r["lines"] >= 200 and r["files"] >= 2 for r in tasks)
        units = [r["units"] for r in tasks]
        files = [r["files"] for r in tasks]
        lines.append(
            f"| {name} | {len(mine)} | {len(tasks)} | {len(tasks) / len(mine):.0%} | "
            f"{_quartiles([r['lines'] for r in tasks])} | "
            f"{statistics.median(units) if units else '-'} / {max(units, default='-')} | "
            f"{statistics.median(files) if files else '-'} / {max(files, default='-')} | "
            f"{big} ({big / len(tasks):.0%})"
            if tasks
            else f"| {name} | {len(mine)} | 0 | 0% | - | - | - | - |"
        )
    return "\n".join(lines)


def _feature_table(rows: list[dict[str, Any]]) -> str:
    lines = [
        "| seed | feature candidates | groups outside the size | tasks | rejected (status: n) "
        "| lines of the tasks |",
        "|---|---:|---:|---:|---|---|",
    ]
    for seed in dict.fromkeys(r["seed"] for r in rows):
        mine = [r for r in rows if r["seed"] == seed and r.get("strategy") == "feature"]
        small = sum(r.get("feature_too_small", 0) for r in rows if r["seed"] == seed)
        error = next((r["error"] for r in rows if r["seed"] == seed and "error" in r), None)
        if error:
            lines.append(f"| {seed} (unusable: {error[:60]}) | - | - | - | - | - |")
            continue
        tasks = [r for r in mine if r["status"] == "task"]
        rejected: dict[str, int] = {}
        for r in mine:
            if r["status"] != "task":
                rejected[r["status"]] = rejected.get(r["status"], 0) + 1
        shown = ", ".join(f"{k}: {v}" for k, v in sorted(rejected.items())) or "-"
        sizes = ", ".join(str(r["lines"]) for r in sorted(tasks, key=lambda r: r["lines"]))
        lines.append(
            f"| {seed} | {len(mine)} | {small} | {len(tasks)} | {shown} | {sizes or '-'} |"
        )
    return "\n".join(lines)


def _gate_table(rows: list[dict[str, Any]]) -> str:
    lines = [
        "| seed | strategy | tasks | weak_tests | mutation score p25/p50/p75 (min) |",
        "|---|---|---:|---:|---|",
    ]
    keys = dict.fromkeys((r["seed"], r["strategy"]) for r in rows if "strategy" in r)
    for seed, name in keys:
        mine = [r for r in rows if r["seed"] == seed and r.get("strategy") == name]
        tasks = [r for r in mine if r["status"] == "task"]
        weak = sum(r["status"] == "weak_tests" for r in mine)
        scores = [r["mutation_score"] for r in tasks if r["mutation_score"] is not None]
        q = _quartiles([round(s, 2) for s in scores])
        low = f" ({min(scores):.2f})" if scores else ""
        lines.append(f"| {seed} | {name} | {len(tasks)} | {weak} | {q}{low} |")
    return "\n".join(lines)


@pytest.mark.timeout(6 * 3600)
def test_feature_strategy() -> None:
    out = Path(os.environ.get("TASKMINT_BENCH_OUTPUT", ROOT / "output" / "bench-feature"))
    real = [n for n in os.environ.get("TASKMINT_BENCH_REAL", REAL).split(",") if n]
    strategies = os.environ.get("TASKMINT_BENCH_STRATEGIES", "")
    manifest = out / "seeds.toml"
    out.mkdir(parents=True, exist_ok=True)
    bundled = ROOT / "seed_apps"
    entries = [
        f'[[seed]]\npath = "{bundled / s.name}"\n'
        for s in load_seed_sources(bundled / "seeds.toml")
    ]
    real_sources = {s.name: s for s in load_seed_sources(bundled / "real_seeds.toml")}
    for name in real:
        source = real_sources[name]
        entries.append(f'[[seed]]\npypi = "{name}"\nversion = "{source.ref}"\n')
    manifest.write_text("\n".join(entries), encoding="utf-8")
    config = load_config(
        None,
        output_root=out,
        seeds_manifest=manifest,
        max_candidates_per_seed=int(os.environ.get("TASKMINT_BENCH_CANDIDATES", "48")),
        workers=2,
        **({"strategies": strategies.split(",")} if strategies else {}),
    )
    ex = LocalExecutor()
    rows: list[dict[str, Any]] = []
    for source in load_seed_sources(manifest):
        started = time.monotonic()
        try:
            found = _rows(source, config, ex)
        except Exception as exc:  # one bad seed is a row, not the end of the benchmark
            found = [{"seed": source.name, "error": f"{type(exc).__name__}: {exc}"}]
        found.append({"seed": source.name, "seed_s": round(time.monotonic() - started, 1)})
        rows.extend(found)
        print(source.name, json.dumps(found[-2:], default=str)[:300], flush=True)
        (out / "feature.json").write_text(json.dumps(rows, indent=1, default=str))
    report = "\n\n".join([_strategy_table(rows), _feature_table(rows), _gate_table(rows)])
    print("\n" + report)
    (out / "feature.md").write_text(report + "\n", encoding="utf-8")
    assert any(r.get("strategy") == "feature" for r in rows)
