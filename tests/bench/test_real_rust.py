"""Benchmark: the refresh on real Rust crates nobody here wrote, measured against plain cargo.

The seeds of `seed_apps/real_rust_seeds.toml` (crates of the Rust crate registry at an exact
version, no pinned taskmint.toml) go through the refresh as a user's would (`pipeline.refresh`,
what the flow of `taskmint refresh` runs, on a local pool of 2 workers rather than Prefect's
task runner, whose ephemeral server is slow to start on a loaded machine: acquire, the
environment with its warm build, original runs, candidates, validation, leak scan, describe
and reference solvers, the test-strength gate, publish). Printed per seed:

1. usable, or refused with the seed's recorded error;
2. candidates, accepted (yield), rejected by reason, candidates and accepted per strategy;
3. the tasks' sizes per strategy (lines the breaking patch removes, FAIL_TO_PASS counts) and
   their mutation scores (the strength gate's killed / graded mutants);
4. the cost of a candidate against a plain `cargo test` of the same change, on this machine in
   this run: for up to TASKMINT_BENCH_COST tasks per seed (default 3), the task's breaking
   patch applied to a copy of the seed whose own target folder was built by one `cargo test`
   before (warm), then `cargo test --no-fail-fast` timed; beside it taskmint's whole
   validation of that candidate (`Task.validation_wall_time`, its `validation_runs` runs),
   and one harness run of the same broken tree in the sandbox, split into its phases (the
   harness's `taskmint-phases` line: copy, build, list, tests, doctests), with the share of it
   spent compiling.

Written to OUTPUT/real-rust.md and OUTPUT/real-rust.json. Run: `make bench-rust-real` (needs
the Rust crate registry at acquisition). Knobs: TASKMINT_BENCH_SEEDS (a seeds manifest),
TASKMINT_BENCH_CANDIDATES (per seed, default 10), TASKMINT_BENCH_MUTANTS (per accepted
candidate, default 8; 0 turns the strength gate off), TASKMINT_BENCH_COST, TASKMINT_BENCH_OUTPUT
(default output/bench-rust-real; its sources, vendored folders and environments are reused).
"""

from __future__ import annotations

import json
import os
import shutil
import statistics
import subprocess
import tempfile
import time
from pathlib import Path
from typing import Any

import pytest

from taskmint.acquire.sources import acquire_source, load_seed_sources
from taskmint.config import Limits, PipelineConfig, StrengthConfig
from taskmint.files import copy_tree
from taskmint.languages import build_environment, profile
from taskmint.languages.rust import find_toolchain
from taskmint.languages.rust.environment import phases, vendor_dependencies
from taskmint.patches import apply_patch
from taskmint.pipeline.refresh import refresh
from taskmint.pipeline.steps import LocalExecutor
from taskmint.records import Environment, SeedApp, Task
from taskmint.runners import run_tests
from taskmint.sandbox import LocalSandbox

pytestmark = [pytest.mark.network, pytest.mark.slow]

ROOT = Path(__file__).resolve().parents[2]
LIMITS = Limits(wall_seconds=1800, cpu_seconds=1800)
STRATEGIES = ("stub_body", "remove_function", "remove_method", "remove_class", "feature")


def _removed_lines(patch: str) -> int:
    return sum(1 for ln in patch.splitlines() if ln.startswith("-") and not ln.startswith("---"))


def _cargo_argv(vendor: Path) -> list[str]:
    return [
        find_toolchain().cargo,
        "--config",
        'source.crates-io.replace-with="bench-vendored"',
        "--config",
        f'source.bench-vendored.directory="{vendor}"',
        "test",
        "--offline",
        "--workspace",
        "--no-fail-fast",
        "-q",
    ]


def _plain(seed: SeedApp, vendor: Path, patch: str) -> dict[str, float]:
    """A plain `cargo test` on the host: once on the original (its own target folder, cold),
    then after the breaking patch (warm)."""
    tree = Path(tempfile.mkdtemp(prefix="bench-rust-real-"))
    try:
        copy_tree(Path(seed.root), tree, seed.files)
        argv = _cargo_argv(vendor)
        env = {**find_toolchain().host_env(), "RUST_BACKTRACE": "0"}
        start = time.monotonic()
        subprocess.run(argv, cwd=tree, env=env, capture_output=True, timeout=1800)
        clean = time.monotonic() - start
        apply_patch(tree, patch)
        start = time.monotonic()
        subprocess.run(argv, cwd=tree, env=env, capture_output=True, timeout=1800)
        return {"clean_s": round(clean, 2), "changed_s": round(time.monotonic() - start, 2)}
    finally:
        shutil.rmtree(tree, ignore_errors=True)


def _harness(seed: SeedApp, env: Environment, patch: str) -> dict[str, Any]:
    """One whole-suite run of taskmint's harness over the broken tree, in the sandbox."""
    ws = Path(tempfile.mkdtemp(prefix="bench-rust-real-ws-"))
    try:
        copy_tree(Path(seed.root), ws, seed.files)
        apply_patch(ws, patch)
        start = time.monotonic()
        report = run_tests(
            LocalSandbox(),
            ws,
            seed.manifest,
            env,
            adapter=profile("rust").adapter,
            limits=LIMITS,
        )
        wall = time.monotonic() - start
        split = phases(report.output_tail)
        return {
            "run_s": round(wall, 2),
            "phases": {k: round(v, 2) for k, v in split.items()},
            "compile_share": round(split.get("build", 0.0) / wall, 2) if wall else None,
            "failed": sum(r.outcome == "failed" for r in report.results),
        }
    finally:
        shutil.rmtree(ws, ignore_errors=True)


def _task_row(task: Task) -> dict[str, Any]:
    return {
        "id": task.instance_id,
        "strategy": task.strategy,
        "removed_lines": _removed_lines(task.breaking_patch),
        "f2p": len(task.FAIL_TO_PASS),
        "p2p": len(task.PASS_TO_PASS),
        "mutation_score": task.mutation_score,
        "mutants": task.mutants,
        "killed": task.mutants_killed,
        "validation_s": round(task.validation_wall_time, 2),
        "validation_runs": task.validation_runs,
    }


def _sizes(tasks: list[dict[str, Any]]) -> dict[str, dict[str, Any]]:
    out: dict[str, dict[str, Any]] = {}
    for strategy in sorted({t["strategy"] for t in tasks}):
        mine = [t for t in tasks if t["strategy"] == strategy]
        removed = sorted(t["removed_lines"] for t in mine)
        f2p = sorted(t["f2p"] for t in mine)
        out[strategy] = {
            "tasks": len(mine),
            "removed_lines": [removed[0], statistics.median(removed), removed[-1]],
            "f2p": [f2p[0], statistics.median(f2p), f2p[-1]],
        }
    return out


def _cost(source: Any, config: PipelineConfig, tasks: list[Task], count: int) -> list[dict]:
    if not tasks or count <= 0:
        return []
    seed = acquire_source(source, cache_dir=config.cache_dir)
    env = build_environment(seed, cache_dir=config.cache_dir, sandbox=config.sandbox)
    vendor = vendor_dependencies(Path(seed.root), config.cache_dir)
    # one task per strategy first, then the rest
    picked: list[Task] = []
    for t in sorted(tasks, key=lambda t: t.instance_id):
        if t.strategy not in {p.strategy for p in picked}:
            picked.append(t)
    picked += [t for t in sorted(tasks, key=lambda t: t.instance_id) if t not in picked]
    rows = []
    for task in picked[:count]:
        plain = _plain(seed, vendor, task.breaking_patch)
        ours = _harness(seed, env, task.breaking_patch)
        rows.append(
            {
                "task": task.instance_id,
                "strategy": task.strategy,
                "validation_s": round(task.validation_wall_time, 2),
                "validation_runs": task.validation_runs,
                **ours,
                **{f"plain_{k}": v for k, v in plain.items()},
                "run_x_plain": round(ours["run_s"] / max(plain["changed_s"], 0.01), 2),
                "validation_x_plain": round(
                    task.validation_wall_time / max(plain["changed_s"], 0.01), 2
                ),
            }
        )
        print(json.dumps(rows[-1]), flush=True)
    return rows


def _fmt3(values: list[Any]) -> str:
    return f"{values[0]} / {values[1]:g} / {values[2]}"


def _markdown(rows: list[dict[str, Any]], wall: float) -> str:
    lines = [
        "| crate | usable | candidates | accepted | rejected by reason | per strategy "
        "(accepted/candidates) | seed wall s |",
        "|---|---|---:|---:|---|---|---:|",
    ]
    for r in rows:
        if r.get("error"):
            lines.append(f"| {r['seed']} | refused: {r['error'][:220]} | | | | | {r['wall_s']} |")
            continue
        rejected = ", ".join(f"{k} {v}" for k, v in r["rejected"].items()) or "-"
        strategies = ", ".join(f"{k} {ok}/{n}" for k, (n, ok) in r["by_strategy"].items())
        lines.append(
            f"| {r['seed']} | yes ({r['tests_kept']} tests kept) | {r['candidates']} | "
            f"{r['accepted']} | {rejected} | {strategies} | {r['wall_s']} |"
        )
    lines += [
        "",
        "| crate | strategy | tasks | removed lines (min / median / max) | F2P (min / median / "
        "max) |",
        "|---|---|---:|---|---|",
    ]
    for r in rows:
        for strategy, s in (r.get("sizes") or {}).items():
            lines.append(
                f"| {r['seed']} | {strategy} | {s['tasks']} | {_fmt3(s['removed_lines'])} | "
                f"{_fmt3(s['f2p'])} |"
            )
    lines += [
        "",
        "| crate | task (strategy) | validation s (runs) | harness run s: copy / build / list / "
        "tests / doctests | compiling share | plain cargo test s: cold, after the patch | "
        "run / plain | validation / plain |",
        "|---|---|---|---|---:|---|---:|---:|",
    ]
    for r in rows:
        for c in r.get("cost") or []:
            p = c["phases"]
            split = " / ".join(
                f"{p.get(k, 0.0):.1f}" for k in ("copy", "build", "list", "tests", "doctests")
            )
            lines.append(
                f"| {r['seed']} | {c['task'].rsplit('-', 1)[-1]} ({c['strategy']}) | "
                f"{c['validation_s']} ({c['validation_runs']}) | {c['run_s']}: {split} | "
                f"{c['compile_share']} | {c['plain_clean_s']}, {c['plain_changed_s']} | "
                f"{c['run_x_plain']}x | {c['validation_x_plain']}x |"
            )
    scores = [
        t["mutation_score"]
        for r in rows
        for t in r.get("tasks", [])
        if t["mutation_score"] is not None
    ]
    lines += [
        "",
        "| crate | tasks with a score | mutation score (min / median / max) | killed / graded |",
    ]
    lines.append("|---|---:|---|---|")
    for r in rows:
        mine = [t for t in r.get("tasks", []) if t["mutation_score"] is not None]
        if not mine:
            continue
        s = sorted(t["mutation_score"] for t in mine)
        lines.append(
            f"| {r['seed']} | {len(mine)} | {s[0]:.2f} / {statistics.median(s):.2f} / "
            f"{s[-1]:.2f} | {sum(t['killed'] for t in mine)} / {sum(t['mutants'] for t in mine)} |"
        )
    usable = [r for r in rows if not r.get("error")]
    made = sum(r["candidates"] for r in usable)
    ok = sum(r["accepted"] for r in usable)
    lines += [
        "",
        f"- usable: {len(usable)} of {len(rows)}; yield {ok} of {made} candidates "
        f"({ok / max(made, 1):.0%}); refresh wall {wall:.0f} s",
    ]
    if scores:
        lines.append(
            f"- mutation score of {len(scores)} tasks: median {statistics.median(scores):.2f}, "
            f"lowest {min(scores):.2f}"
        )
    return "\n".join(lines)


@pytest.mark.timeout(6 * 3600)
def test_real_rust() -> None:
    out = Path(os.environ.get("TASKMINT_BENCH_OUTPUT", ROOT / "output" / "bench-rust-real"))
    manifest = Path(
        os.environ.get("TASKMINT_BENCH_SEEDS", ROOT / "seed_apps" / "real_rust_seeds.toml")
    )
    candidates = int(os.environ.get("TASKMINT_BENCH_CANDIDATES", "10"))
    mutants = int(os.environ.get("TASKMINT_BENCH_MUTANTS", "8"))
    cost = int(os.environ.get("TASKMINT_BENCH_COST", "3"))
    config = PipelineConfig(
        output_root=out,
        seeds_manifest=manifest,
        workers=2,
        max_candidates_per_seed=candidates,
        strategies=STRATEGIES,
        strength=StrengthConfig(mutants=mutants),
    )
    started = time.monotonic()
    with LocalExecutor(config.workers) as ex:
        result = refresh(config, ex)
    wall = time.monotonic() - started
    # a seed that failed is summarized under its source's label
    sources = {n: s for s in load_seed_sources(manifest) for n in (s.name, s.label)}
    rows: list[dict[str, Any]] = []
    for summary in result.summaries:
        row: dict[str, Any] = {
            "seed": summary.seed,
            "source": sources[summary.seed].label if summary.seed in sources else "",
            "wall_s": summary.wall_time,
        }
        if summary.error:
            row["error"] = " ".join(summary.error.split())
            rows.append(row)
            continue
        tasks = [t for t in result.tasks if t.seed == summary.seed]
        row.update(
            candidates=summary.candidates,
            accepted=summary.accepted,
            rejected=summary.rejected,
            by_strategy=summary.by_strategy,
            tests_kept=summary.tests_kept,
            tests_excluded=summary.tests_excluded,
            report=list(summary.report),
            tasks=[_task_row(t) for t in tasks],
        )
        row["sizes"] = _sizes(row["tasks"])
        source = sources.get(summary.seed)
        if source is not None:
            row["cost"] = _cost(source, config, tasks, cost)
        rows.append(row)
        print(json.dumps(row, default=str)[:3000], flush=True)
    out.mkdir(parents=True, exist_ok=True)
    (out / "real-rust.json").write_text(json.dumps(rows, indent=1, default=str))
    table = _markdown(rows, wall)
    print("\n" + table)
    (out / "real-rust.md").write_text(table + "\n", encoding="utf-8")
    assert rows and any(not r.get("error") for r in rows)
