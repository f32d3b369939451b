"""Benchmark: taskmint's validation against the naive way, over the same candidates of every seed.

Naive (what SWE-smith does): per seed, one cold run of the original suite; per candidate, copy
the tree, apply the breaking patch and run the whole suite once, cold, in the sandbox, one after
another. FAIL_TO_PASS = passed on the original, not passed on the broken tree; accepted when it
is not empty and the run finished (taskmint's timeout rule for a run of the whole suite: four
times the original run's wall time plus 5 s, at least 10 s; a broken tree that hangs is
rejected, not accepted with every unfinished test counted as failing). taskmint's runs of part of
the suite get that share of it plus 3 s (`broken_run_limits`), so a hang in a small selection
costs about 3 s instead of 10.

taskmint: per seed, 5 original runs (declared, reversed, shuffled orders; cold and warm), the
per-test coverage map, then every candidate validated twice on the broken tree (exact test
selection; `validate_batch`: forked runs of one collection for the body-level candidates that
allow them, warm runs for the rest) on a bounded pool of workers. All of it is timed, with
empty caches.

Compared per candidate: accept/reject and the FAIL_TO_PASS set (tests found flaky by either side
are set aside). Printed: the speed-up, taskmint's time per candidate against its floor (the
summed durations of every test phase its broken runs executed), candidates per minute, and
peak memory (host process; the largest sandbox's memory cgroup, which is one worker).
Run: `make bench` or `.venv/bin/python -m pytest -q -s tests/bench/test_validation_speed.py`.
Knobs: TASKMINT_BENCH_CANDIDATES (per seed; default the refresh's own `max_candidates_per_seed`,
36, so per-seed work is shared over as many candidates as in a refresh), TASKMINT_BENCH_SEEDS
(comma list of bundled seeds, and of `pypi:NAME` for a real package of
`seed_apps/pypi_seeds.toml`, fetched before anything is timed; `pypi:all` for all of them).
"""

from __future__ import annotations

import os
import resource
import shutil
import statistics
import tempfile
import threading
import time
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

from taskmint.acquire import acquire
from taskmint.acquire.sources import acquire_source, load_seed_sources
from taskmint.config import Limits, PipelineConfig, SandboxConfig
from taskmint.excise import excise
from taskmint.files import copy_tree
from taskmint.index import index_seed
from taskmint.index.coverage import coverage_map
from taskmint.languages import adapter_for, build_environment
from taskmint.patches import apply_patch
from taskmint.records import Candidate, Environment, SeedApp, Verdict
from taskmint.runners import run_tests
from taskmint.sandbox import LocalSandbox
from taskmint.validate import run_baseline, validate_batch
from taskmint.validate.forked import unforkable
from taskmint.validate.selection import select_tests

ROOT = Path(__file__).resolve().parents[2]
SEEDS = os.environ.get("TASKMINT_BENCH_SEEDS", "sheetcalc,depsolve,kvstore,minisql,mdrender")
PER_SEED = int(
    os.environ.get("TASKMINT_BENCH_CANDIDATES", PipelineConfig().max_candidates_per_seed)
)
LIMITS = Limits(wall_seconds=120)
CGROUPS = Path("/sys/fs/cgroup/memory/taskmint")


def naive(
    seed: SeedApp, env: Environment, cands: list[Candidate], box: LocalSandbox
) -> tuple[float, dict[str, tuple[bool, frozenset[str]]], float]:
    """Wall time, (accepted, FAIL_TO_PASS) per candidate, and the summed test durations of the
    broken runs."""
    start = time.monotonic()
    test_time = 0.0

    def full_run(patch: str | None, limits: Limits) -> tuple[dict[str, str], bool]:
        nonlocal test_time
        ws = Path(tempfile.mkdtemp(prefix="naive-"))
        try:
            copy_tree(Path(seed.root), ws, seed.files)
            if patch:
                apply_patch(ws, patch)
            report = run_tests(
                box, ws, seed.manifest, env, adapter=adapter_for(seed.manifest), limits=limits
            )
            if patch:
                test_time += sum(r.duration for r in report.results)
            return dict(report.outcome_map()), report.timed_out
        finally:
            shutil.rmtree(ws, ignore_errors=True)

    t0 = time.monotonic()
    original, _ = full_run(None, LIMITS)
    broken_limits = LIMITS.with_wall(max(10.0, 4 * (time.monotonic() - t0) + 5.0))
    passed = {t for t, o in original.items() if o == "passed"}
    out: dict[str, tuple[bool, frozenset[str]]] = {}
    for cand in cands:
        broken, timed_out = full_run(cand.breaking_patch, broken_limits)
        if timed_out:
            out[cand.candidate_id] = (False, frozenset())
            continue
        f2p = frozenset(t for t in passed if broken.get(t) != "passed")
        out[cand.candidate_id] = (bool(f2p), f2p)
    return time.monotonic() - start, out, test_time


def taskmint(
    seed: SeedApp, env: Environment, cands: list[Candidate], box: LocalSandbox, workers: int
) -> tuple[float, float, list[Verdict], frozenset[str], set[str]]:
    """Wall time, per-seed time, verdicts, flaky tests, and the candidates forked runs could
    take (`unforkable`; the batch may still hand some back)."""
    cache = Path(tempfile.mkdtemp(prefix="bench-cache-"))
    try:
        start = time.monotonic()
        with ThreadPoolExecutor(1) as side:  # as the refresh flow does: coverage beside them
            cov = side.submit(coverage_map, seed, env, box, limits=LIMITS, cache_dir=cache)
            baseline = run_baseline(
                seed, env, box, runs=5, limits=LIMITS, workers=workers, cache_dir=cache
            )
            cmap = cov.result()
        per_seed = time.monotonic() - start
        verdicts = validate_batch(
            cands, seed, env, baseline, box, runs=2, limits=LIMITS, coverage=cmap, workers=workers
        )
        stable = set(baseline.stable_passed)
        forkable = set()
        for c in cands:
            sel = select_tests(c, cmap, baseline.stable_passed, seed) if cmap else None
            sel = tuple(t for t in sel if t in stable) if sel is not None else None
            if cmap is not None and not unforkable(c, cmap, sel):
                forkable.add(c.candidate_id)
        return time.monotonic() - start, per_seed, verdicts, frozenset(baseline.flaky), forkable
    finally:
        shutil.rmtree(cache, ignore_errors=True)


def seeds(cache: Path) -> list[tuple[str, SeedApp]]:
    """The seeds TASKMINT_BENCH_SEEDS names: bundled folders, or `pypi:NAME` / `pypi:all`."""
    out: list[tuple[str, SeedApp]] = []
    manifest = ROOT / "seed_apps" / "pypi_seeds.toml"
    for name in SEEDS.split(","):
        if name.startswith("pypi:"):
            pypi = {s.location: s for s in load_seed_sources(manifest)}
            wanted = list(pypi) if name == "pypi:all" else [name.removeprefix("pypi:")]
            unknown = [n for n in wanted if n not in pypi]
            if unknown:
                raise ValueError(f"{unknown} not in {manifest} (it has {sorted(pypi)})")
            out += [(n, acquire_source(pypi[n], cache_dir=cache)) for n in wanted]
        else:
            out.append((name, acquire(ROOT / "seed_apps" / name, cache_dir=cache)))
    return out


class PeakWatcher(threading.Thread):
    """The largest `memory.max_usage_in_bytes` of any sandbox memory cgroup seen while running.

    Each sandbox (a cold run, or a fork server with the runs it forks: one worker's sandbox)
    gets its own cgroup, and the kernel keeps its peak; polling only has to see it before the
    cgroup is removed."""

    def __init__(self) -> None:
        super().__init__(daemon=True)
        self.peak = 0
        self.stop = threading.Event()

    def run(self) -> None:
        while not self.stop.wait(0.05):
            for f in CGROUPS.glob("*/memory.max_usage_in_bytes"):
                try:
                    self.peak = max(self.peak, int(f.read_text()))
                except (OSError, ValueError):
                    continue


def test_taskmint_validation_against_naive(tmp_path: Path) -> None:
    watcher = PeakWatcher()
    watcher.start()
    cache = tmp_path / "cache"
    cold = LocalSandbox(SandboxConfig(warm=False))
    warm = LocalSandbox(SandboxConfig(warm=True))
    rows = []
    totals = {"naive": 0.0, "tm2": 0.0, "tm1": 0.0, "per_seed": 0.0, "naive_tests": 0.0}
    floors: list[tuple[float, float]] = []
    forked_floors: list[tuple[float, float]] = []
    n_forkable = 0
    agree = disagree = 0
    n_total = 0
    for name, seed in seeds(cache):
        env = build_environment(seed.manifest, cache_dir=cache)
        cands = excise(seed, index_seed(seed), max_candidates=PER_SEED).candidates
        n_total += len(cands)
        t_naive, naive_out, naive_tests = naive(seed, env, cands, cold)
        totals["naive_tests"] += naive_tests
        t_tm2, per_seed, verdicts, flaky, forkable = taskmint(seed, env, cands, warm, workers=2)
        n_forkable += len(forkable)
        t_tm1, _, verdicts1, _, _ = taskmint(seed, env, cands, warm, workers=1)
        for v, v1 in zip(verdicts, verdicts1, strict=True):
            assert (v.status, v.fail_to_pass) == (v1.status, v1.fail_to_pass), v.candidate_id
        seed_agree = 0
        for cand, v in zip(cands, verdicts, strict=True):
            n_acc, n_f2p = naive_out[cand.candidate_id]
            skip = flaky | set(v.dropped_tests)
            same = v.accepted == n_acc and set(v.fail_to_pass) - skip == set(n_f2p) - skip
            if same:
                seed_agree += 1
            else:
                print(
                    f"  DIFFER {name} {cand.strategy} {cand.units}: taskmint {v.status} "
                    f"{sorted(v.fail_to_pass)[:3]} naive {n_acc} {sorted(n_f2p)[:3]} ({v.reason})"
                )
            if v.test_time > 0:
                floors.append((v.wall_time, v.test_time))
                if cand.candidate_id in forkable:
                    forked_floors.append((v.wall_time, v.test_time))
        agree += seed_agree
        disagree += len(cands) - seed_agree
        totals["naive"] += t_naive
        totals["tm2"] += t_tm2
        totals["tm1"] += t_tm1
        totals["per_seed"] += per_seed
        rows.append(
            (
                name,
                len(cands),
                sum(v.accepted for v in verdicts),
                t_naive,
                t_tm2,
                t_tm1,
                per_seed,
                seed_agree,
            )
        )
    warm.close()
    print()
    print(
        f"{'seed':10} {'cands':>5} {'acc':>4} {'naive s':>8} {'tm(2) s':>8} {'tm(1) s':>8} "
        f"{'per-seed':>8} {'x(2)':>6} {'x(1)':>6} {'same':>5}"
    )
    for name, n, acc, tn, t2, t1, ps, same in rows:
        print(
            f"{name:10} {n:5d} {acc:4d} {tn:8.1f} {t2:8.1f} {t1:8.1f} {ps:8.1f} "
            f"{tn / t2:6.1f} {tn / t1:6.1f} {same:5d}"
        )
    print(
        f"{'all':10} {n_total:5d} {'':4} {totals['naive']:8.1f} {totals['tm2']:8.1f} "
        f"{totals['tm1']:8.1f} {totals['per_seed']:8.1f} "
        f"{totals['naive'] / totals['tm2']:6.1f} {totals['naive'] / totals['tm1']:6.1f} "
        f"{agree:5d}"
    )
    print(
        f"same verdict and FAIL_TO_PASS: {agree}/{agree + disagree} "
        f"({100 * agree / max(agree + disagree, 1):.1f}%)"
    )
    print(
        f"speed-up over naive: {totals['naive'] / totals['tm2']:.1f}x with 2 workers, "
        f"{totals['naive'] / totals['tm1']:.1f}x with 1 worker"
    )
    if floors:
        ratios = [w / f for w, f in floors]
        print(
            f"per-candidate validation time / floor (summed test durations of its runs): "
            f"median {statistics.median(ratios):.1f}x, "
            f"total {sum(w for w, _ in floors) / sum(f for _, f in floors):.1f}x "
            f"over {len(floors)} candidates; "
            f"median wall {statistics.median(w for w, _ in floors):.3f}s, "
            f"median floor {statistics.median(f for _, f in floors):.3f}s"
        )
    if forked_floors:
        ratios = [w / f for w, f in forked_floors]
        print(
            f"  of which forked-run candidates ({n_forkable} of {n_total} allowed them): "
            f"median {statistics.median(ratios):.1f}x, "
            f"total {sum(w for w, _ in forked_floors) / sum(f for _, f in forked_floors):.1f}x; "
            f"median wall {statistics.median(w for w, _ in forked_floors):.3f}s"
        )
    tm_tests = sum(f for _, f in floors)
    print(
        f"test time alone (summed durations): naive {totals['naive_tests']:.1f}s in one full run "
        f"per candidate, taskmint {tm_tests:.1f}s in its 2-run exact selections: even with no "
        f"start-up or per-seed cost at all, the speed-up these selections allow is "
        f"{totals['naive_tests'] / max(tm_tests, 1e-9):.1f}x"
    )
    # What the per-seed work and the tests alone leave: taskmint's wall if every candidate cost
    # only its floor (its tests' summed durations, spread over the 2 workers), with no start-up,
    # collection or pytest protocol at all.
    bound = totals["per_seed"] + tm_tests / 2
    print(
        f"headroom: per-seed work {totals['per_seed']:.1f}s + floors {tm_tests:.1f}s / 2 workers "
        f"= {bound:.1f}s, so no candidate overhead at all would give at most "
        f"{totals['naive'] / max(bound, 1e-9):.1f}x over naive"
    )
    print(
        f"candidates per minute: naive {60 * n_total / totals['naive']:.1f}, "
        f"taskmint {60 * n_total / totals['tm2']:.1f} (2 workers), "
        f"{60 * n_total / totals['tm1']:.1f} (1 worker)"
    )
    watcher.stop.set()
    watcher.join()
    host = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
    sandbox = f"{watcher.peak / 2**20:.0f} MiB" if watcher.peak else "not measured (no cgroup)"
    print(f"peak memory: host process {host:.0f} MiB; largest sandbox (one worker) {sandbox}")
    assert agree + disagree == n_total
