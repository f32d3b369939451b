"""Benchmark: taskmint on real projects nobody here wrote, measured against plain pytest.

For every seed of `seed_apps/real_seeds.toml` (PyPI sdists that ship their tests, pinned, their
taskmint.toml detected as a new user's would be), one process, side by side:

1. plain pytest: `python -m pytest TEST_PATHS` in the seed's environment (`tests.plain`): the
   ids it collects under the project's own configuration, its passed / failed / skipped /
   deselected counts and its wall time (one run);
2. the per-seed fixed cost: the 5 original runs and the coverage run, side by side on 2
   workers as the refresh flow runs them, as seconds and as a multiple of the plain run;
3. whether taskmint's original test ids equal plain pytest's, and every exclusion with its
   reason;
4. candidates (all five strategies), validated together (`validate_batch`), then described
   and checked by the reference solvers (`mint_candidate`) and the leak scan, as the refresh
   does: accepted, yield by strategy, and the host CPU seconds per candidate (this process,
   every thread) against the sandbox seconds per candidate (the summed wall time of its
   sandbox runs).

Printed: a Markdown table per seed and the totals the issue asks for (share of usable seeds,
yield, the largest host/sandbox ratio); written to OUTPUT/real.md and OUTPUT/real.json.

Run: `make bench-real` (needs the package index). Knobs: TASKMINT_BENCH_SEEDS (a seeds
manifest), TASKMINT_BENCH_CANDIDATES (per seed, default 24), TASKMINT_BENCH_ONLY (comma-separated
seed names: only they run again, the other rows are read from the last run's real.json),
TASKMINT_BENCH_OUTPUT (default output/bench-real; its downloads, sources and
environments are reused, its original runs and coverage maps never).
"""

from __future__ import annotations

import dataclasses
import json
import os
import resource
import shutil
import threading
import time
import traceback
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Any

from taskmint.acquire.sources import acquire_source, load_seed_sources
from taskmint.config import PipelineConfig
from taskmint.excise import excise
from taskmint.index import index_seed
from taskmint.index.coverage import CoverageMap, coverage_map
from taskmint.languages import build_environment
from taskmint.pipeline import MintResult, fallback_manifest
from taskmint.pipeline.mint import describe_and_reference, leaks_in
from taskmint.records import Environment, SeedApp
from taskmint.sandbox import LocalSandbox
from taskmint.sandbox.base import RunResult, RunSpec
from taskmint.validate import Baseline, run_baseline, validate_batch
from taskmint.validate.baseline import seed_report
from taskmint.verify import Grader
from tests.plain import plain_pytest

ROOT = Path(__file__).resolve().parents[2]


class TimedSandbox(LocalSandbox):
    """The local sandbox, adding up the wall time of its runs (every thread's)."""

    def __init__(self) -> None:
        super().__init__()
        self.seconds = 0.0
        self._lock = threading.Lock()

    def run(self, spec: RunSpec) -> RunResult:
        started = time.monotonic()
        try:
            return super().run(spec)
        finally:
            with self._lock:
                self.seconds += time.monotonic() - started


def _cpu() -> float:
    usage = resource.getrusage(resource.RUSAGE_SELF)
    return usage.ru_utime + usage.ru_stime


def _original(
    seed: SeedApp, env: Environment, box: TimedSandbox, config: PipelineConfig
) -> tuple[Baseline, CoverageMap | None]:
    """The 5 original runs with the coverage run beside them, as the refresh flow makes them
    (and the coverage run again without the hung tests when it waited for one)."""
    limits = config.sandbox.limits.with_wall(seed.manifest.timeout)
    with ThreadPoolExecutor(1) as pool:
        cov = pool.submit(
            coverage_map,
            seed,
            env,
            box,
            limits=limits.with_wall(4 * seed.manifest.timeout),
            cache_dir=config.cache_dir,
        )
        baseline = run_baseline(
            seed,
            env,
            box,
            runs=config.original_runs,
            limits=limits,
            cache_dir=config.cache_dir,
            workers=config.workers,
            max_tests=config.max_tests,
        )
        cmap = cov.result()
    if cmap is None and baseline.usable and baseline.hung:
        cmap = coverage_map(
            seed,
            env,
            box,
            limits=limits.with_wall(4 * seed.manifest.timeout),
            cache_dir=config.cache_dir,
            tests=baseline.full_request,
        )
    return baseline, cmap


def _one(source: Any, config: PipelineConfig, candidates: int) -> dict[str, Any]:
    row: dict[str, Any] = {"seed": source.name, "source": source.label}
    started = time.monotonic()
    seed = acquire_source(source, cache_dir=config.cache_dir)
    env = build_environment(seed.manifest, cache_dir=config.cache_dir)
    row["setup_s"] = round(time.monotonic() - started, 1)
    box = TimedSandbox()
    fixed = time.monotonic()
    baseline, cmap = _original(seed, env, box, config)
    row["pytest"] = seed.manifest.pytest or "taskmint's"
    row["fixed_final_s"] = round(time.monotonic() - fixed, 1)
    tried = seed, baseline
    while (older := fallback_manifest(tried[0].manifest, tried[1])) is not None:
        again = dataclasses.replace(seed, manifest=older)
        env_again = build_environment(again.manifest, cache_dir=config.cache_dir)
        attempt = time.monotonic()
        baseline_again, cmap_again = _original(again, env_again, box, config)
        row.setdefault("pytest_tried", []).append(older.pytest)
        tried = again, baseline_again
        if baseline_again.tests_kept > baseline.tests_kept:
            seed, env, baseline, cmap = again, env_again, baseline_again, cmap_again
            row["pytest"] = older.pytest
            row["fixed_final_s"] = round(time.monotonic() - attempt, 1)
    limits = config.sandbox.limits.with_wall(seed.manifest.timeout)
    row["fixed_s"] = round(time.monotonic() - fixed, 1)
    collected = plain_pytest(seed, env)
    # Ids that change from one collection to the next (marshmallow parametrizes a test with
    # the current time) cannot be equal across runs: such a test is compared by its function.
    unstable = set(collected.ids) ^ set(plain_pytest(seed, env).ids)
    moving = {_function(i) for i in unstable}
    plain = plain_pytest(seed, env, collect_only=False)
    row["plain"] = {
        "collected": len(set(collected.ids)),
        "duplicate_ids": len(collected.ids) - len(set(collected.ids)),
        "unstable_ids": len(unstable),
        **plain.counts,
        "seconds": plain.seconds,
        "returncode": plain.returncode,
    }
    if not collected.ids:
        row["plain"]["tail"] = collected.tail[-600:]
    row["fixed_x_plain"] = round(row["fixed_s"] / max(plain.seconds, 0.01), 1)
    row["fixed_final_x_plain"] = round(row["fixed_final_s"] / max(plain.seconds, 0.01), 1)
    ours = {*baseline.stable_passed, *baseline.failing, *baseline.flaky, *baseline.hung}
    theirs = set(collected.ids)
    if moving:
        ours = {i if _function(i) not in moving else _function(i) for i in ours}
        theirs = {i if _function(i) not in moving else _function(i) for i in theirs}
    row["taskmint"] = {
        "collected": baseline.collected,
        "deselected": baseline.deselected,
        "kept": baseline.tests_kept,
        "excluded": len(baseline.excluded),
        "same_ids": ours == theirs,
        "only_plain": sorted(theirs - ours)[:5],
        "only_taskmint": sorted(ours - theirs)[:5],
        "coverage_map": cmap is not None,
    }
    row["report"] = list(seed_report(baseline))
    row["reason"] = baseline.reason
    if not baseline.usable:
        row["wall_s"] = round(time.monotonic() - started, 1)
        return row
    index = index_seed(seed)
    made = excise(
        seed,
        index,
        max_candidates=candidates,
        min_body_lines=config.min_body_lines,
        random_seed=config.random_seed,
        strategies=config.strategies,
        coverage=cmap,
    ).candidates
    cpu, box.seconds = _cpu(), 0.0
    verdicts = validate_batch(
        list(made),
        seed,
        env,
        baseline,
        box,
        runs=config.broken_runs,
        limits=limits,
        coverage=cmap,
        workers=config.workers,
    )
    by_id = {v.candidate_id: v for v in verdicts}
    accepted = [c for c in made if by_id[c.candidate_id].accepted]
    leaks = leaks_in(accepted, seed, env, box, config)
    grade = Grader(seed=seed, env=env, sandbox=box, limits=limits, config=config.verify)

    def mint(c: Any) -> MintResult:
        verdict = by_id[c.candidate_id]
        if not verdict.accepted:
            return MintResult(verdict=verdict)
        if c.candidate_id in leaks:
            return MintResult(verdict=dataclasses.replace(verdict, status="leak"))
        return describe_and_reference(c, verdict, seed, env, config, grade)

    with ThreadPoolExecutor(config.workers) as pool:
        results = list(pool.map(mint, made))
    host, sandbox = _cpu() - cpu, box.seconds
    strategies: dict[str, list[int]] = {}
    rejected: dict[str, int] = {}
    for cand, result in zip(made, results, strict=True):
        counts = strategies.setdefault(cand.strategy, [0, 0])
        counts[0] += 1
        counts[1] += int(result.task is not None)
        if result.task is None:
            rejected[result.verdict.status] = rejected.get(result.verdict.status, 0) + 1
    row["candidates"] = len(made)
    row["accepted"] = sum(r.task is not None for r in results)
    row["by_strategy"] = strategies
    row["rejected"] = rejected
    row["host_s_per_candidate"] = round(host / max(len(made), 1), 3)
    row["sandbox_s_per_candidate"] = round(sandbox / max(len(made), 1), 3)
    row["host_over_sandbox"] = round(host / sandbox, 3) if sandbox else None
    row["wall_s"] = round(time.monotonic() - started, 1)
    return row


def _function(test_id: str) -> str:
    """A test id without its parameters."""
    return test_id.split("[", 1)[0]


def _table(rows: list[dict[str, Any]]) -> str:
    head = (
        "| seed | plain: collected / passed / failed / skipped / deselected, s | taskmint: "
        "selected / kept / excluded, same ids | fixed s (x plain; the pytest kept) | candidates | "
        "accepted | "
        "yield by strategy | host s / sandbox s per candidate | wall s |"
    )
    lines = [head, "|" + "---|" * 9]
    for r in rows:
        if "error" in r:
            lines.append(f"| {r['seed']} | ERROR: {r['error'][:160]} |" + " |" * 7)
            continue
        p, t = r["plain"], r["taskmint"]
        plain = (
            f"{p['collected']} / {p.get('passed', 0)} / {p.get('failed', 0)} / "
            f"{p.get('skipped', 0)} / {p.get('deselected', 0)}, {p['seconds']:.1f}"
        )
        if p.get("unstable_ids"):
            plain += f" ({p['unstable_ids']} ids change per collection)"
        ours = (
            f"{t['collected']} / {t['kept']} / {t['excluded']}, {'yes' if t['same_ids'] else 'NO'}"
        )
        if r["reason"]:
            lines.append(
                f"| {r['seed']} | {plain} | {ours} | {_fixed(r)} | "
                f"refused: {r['reason'][:160]} | | | | {r['wall_s']} |"
            )
            continue
        strategies = ", ".join(f"{k} {ok}/{n}" for k, (n, ok) in sorted(r["by_strategy"].items()))
        lines.append(
            f"| {r['seed']} | {plain} | {ours} | {_fixed(r)} | "
            f"{r['candidates']} | {r['accepted']} | {strategies} | "
            f"{r['host_s_per_candidate']} / {r['sandbox_s_per_candidate']} "
            f"({r['host_over_sandbox']}) | {r['wall_s']} |"
        )
    return "\n".join(lines)


def _fixed(r: dict[str, Any]) -> str:
    """The fixed seconds (x one plain run); with older pytests tried, the kept one's too."""
    text = f"{r['fixed_s']} ({r['fixed_x_plain']}x"
    if r.get("pytest_tried"):
        text += f"; pytest{r['pytest']}: {r['fixed_final_s']} s, {r['fixed_final_x_plain']}x"
    return text + ")"


def _totals(rows: list[dict[str, Any]]) -> str:
    usable = [r for r in rows if "error" not in r and not r.get("reason")]
    made = sum(r["candidates"] for r in usable)
    ok = sum(r["accepted"] for r in usable)
    ratios = [r["host_over_sandbox"] for r in usable if r.get("host_over_sandbox") is not None]
    same = sum(r["taskmint"]["same_ids"] for r in usable)
    fixed = sorted(r["fixed_final_x_plain"] for r in usable)
    return "\n".join(
        [
            f"- usable: {len(usable)} of {len(rows)} ({len(usable) / max(len(rows), 1):.0%})",
            f"- yield: {ok} of {made} candidates ({ok / max(made, 1):.0%})",
            f"- original ids equal plain pytest's: {same} of {len(usable)} usable seeds",
            f"- host / sandbox seconds per candidate: max {max(ratios, default=0):.3f}, "
            f"median {sorted(ratios)[len(ratios) // 2] if ratios else 0:.3f}",
            f"- fixed cost (under the pytest kept) as a multiple of one plain run: median "
            f"{fixed[len(fixed) // 2] if fixed else 0}x, max {max(fixed, default=0)}x",
        ]
    )


def test_real_seeds() -> None:
    out = Path(os.environ.get("TASKMINT_BENCH_OUTPUT", ROOT / "output" / "bench-real"))
    manifest = Path(os.environ.get("TASKMINT_BENCH_SEEDS", ROOT / "seed_apps" / "real_seeds.toml"))
    candidates = int(os.environ.get("TASKMINT_BENCH_CANDIDATES", "24"))
    only = {n for n in os.environ.get("TASKMINT_BENCH_ONLY", "").split(",") if n}
    config = PipelineConfig(output_root=out, seeds_manifest=manifest, workers=2)
    # Sources, environments and the wheelhouse are reused; the original runs, the coverage
    # maps and the bytecode are made anew, so the fixed cost is measured.
    for stale in ("baselines", "coverage", "bytecode"):
        shutil.rmtree(config.cache_dir / stale, ignore_errors=True)
    # With TASKMINT_BENCH_ONLY, the rows of the other seeds come from the last run's file.
    earlier: dict[str, dict[str, Any]] = {}
    if only and (out / "real.json").is_file():
        earlier = {r["seed"]: r for r in json.loads((out / "real.json").read_text())}
    rows: list[dict[str, Any]] = []
    for source in load_seed_sources(manifest):
        if only and source.name not in only:
            if source.name in earlier:
                rows.append(earlier[source.name])
            continue
        started = time.monotonic()
        try:
            row = _one(source, config, candidates)
        except Exception as exc:  # one bad seed is a row, not the end of the benchmark
            row = {
                "seed": source.name,
                "error": f"{type(exc).__name__}: {exc}",
                "traceback": traceback.format_exc()[-2000:],
                "wall_s": round(time.monotonic() - started, 1),
            }
        rows.append(row)
        print(json.dumps(row, default=str)[:1500], flush=True)
        out.mkdir(parents=True, exist_ok=True)
        (out / "real.json").write_text(json.dumps(rows, indent=1, default=str))
    table = _table(rows) + "\n\n" + _totals(rows)
    print("\n" + table)
    (out / "real.md").write_text(table + "\n", encoding="utf-8")
    assert rows
