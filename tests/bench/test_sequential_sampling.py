"""Benchmark: sequential sampling against a fixed k=16, on simulated tasks with known solve rates.

1,000 tasks x 4 models; each (task, model) has a true solve probability from an item-response
model p = sigmoid(slope * (ability - difficulty)). Two populations: "spread" (many tasks with
mid-range rates) and "polarized" (most tasks always or never solved, as pass@k studies of real
agents report). Misplacement is measured against the true band two ways: strict (the assigned
band is not the true band) and with the indifference zone the stopping rule uses (the true rate
is more than `margin` outside the assigned band).

Rules: the threshold rule with the per-model pooled prior, the optimal rule with that prior,
and the threshold rule with the joint prior (an item-response model shared by the models of each
task, fitted from the attempts alone; the default when the task of each key is known). It also
prints the floor for PER-KEY rules: the Bayes-optimal stopping rule (`stopping_table`) for the
population's TRUE distribution of solve rates, which no rule that treats each (task, model) on
its own can beat on average. The joint prior is not bound by it: it shares what the other models
of a task show. The verdict is for the cheapest rule whose misplacement beyond the margin is at
most 5%. `TASKMINT_BENCH_SEED=N` draws another population and other attempts (default 0).
Run:
`.venv/bin/python -m pytest -q -s tests/bench/test_sequential_sampling.py`.
"""

from __future__ import annotations

import os
import time

import numpy as np
import pytest

from taskmint.calibrate.bands import band_edges, band_of
from taskmint.calibrate.models import DEFAULT_BANDS
from taskmint.calibrate.policy import SequentialPolicy
from taskmint.calibrate.posterior import GRID, stopping_table
from taskmint.calibrate.sequential import run_sequential

TASKS = 1000
ABILITIES = np.array([-1.0, 0.0, 0.8, 1.6])
K_FIXED = 16
LEAN_CONFIDENCE = 0.93
SEED = int(os.environ.get("TASKMINT_BENCH_SEED", "0"))
POPULATIONS = {
    "spread": (1.8, 2.0),  # difficulty sd, median slope
    "polarized": (2.5, 4.0),
}


def _population(name: str, seed: int = 0) -> np.ndarray:
    sd, slope = POPULATIONS[name]
    rng = np.random.default_rng(seed)
    theta = rng.normal(0.0, sd, TASKS)
    slopes = rng.lognormal(np.log(slope), 0.3, TASKS)
    return 1.0 / (1.0 + np.exp(-slopes[:, None] * (ABILITIES[None, :] - theta[:, None])))


def _misplacement(assigned: dict, truth: np.ndarray, margin: float) -> tuple[float, float]:
    edges = {n: (lo, hi) for n, lo, hi in band_edges(DEFAULT_BANDS)}
    strict = zone = 0
    for (t, m), band in assigned.items():
        p = truth[t, m]
        lo, hi = edges[band]
        strict += band_of(p) != band
        zone += p < lo - margin or (hi < 1.0 and p >= hi + margin)
    return strict / len(assigned), zone / len(assigned)


@pytest.mark.parametrize("population", ["spread", "polarized"])
def test_sequential_sampling_against_fixed_k16(population: str) -> None:
    truth = _population(population, SEED)
    keys = [(t, m) for t in range(TASKS) for m in range(len(ABILITIES))]
    policy = SequentialPolicy(prior="pooled")
    rng = np.random.default_rng(SEED + 1)

    solves = rng.binomial(K_FIXED, truth)
    fixed = {k: band_of(solves[k] / K_FIXED) for k in keys}
    fixed_rollouts = K_FIXED * len(keys)
    fixed_strict, fixed_zone = _misplacement(fixed, truth, policy.margin)

    def sample(batch: list[tuple[int, int]]) -> list[bool | None]:
        return [bool(rng.random() < truth[k]) for k in batch]

    started = time.monotonic()
    estimates = run_sequential(keys, sample, policy, group=lambda k: k[1])
    seconds = time.monotonic() - started
    seq = {k: e.band for k, e in estimates.items()}
    seq_rollouts = sum(e.attempts for e in estimates.values())
    seq_strict, seq_zone = _misplacement(seq, truth, policy.margin)
    ratio = seq_rollouts / fixed_rollouts
    decided = sum(e.decided for e in estimates.values()) / len(keys)

    print(
        f"\n[{population}, seed {SEED}] {TASKS} tasks x {len(ABILITIES)} models, "
        f"bands {DEFAULT_BANDS}"
    )
    print(f"  true band counts: {np.bincount([_idx(band_of(p)) for p in truth.ravel()])}")
    print(
        f"  fixed k=16 : rollouts {fixed_rollouts:6d}  misplaced strict {fixed_strict:.3f}  "
        f"beyond +-{policy.margin} {fixed_zone:.3f}"
    )
    print(
        f"  sequential (threshold rule, pooled prior): rollouts {seq_rollouts:6d}  "
        f"misplaced strict {seq_strict:.3f}  "
        f"beyond +-{policy.margin} {seq_zone:.3f}  ({decided:.0%} decided before the cap, "
        f"{seconds:.1f}s)"
    )
    other = SequentialPolicy(rule="optimal", target_error=0.05)
    est = run_sequential(keys, sample, other, group=lambda k: k[1])
    o_strict, o_zone = _misplacement({k: e.band for k, e in est.items()}, truth, other.margin)
    o_ratio = sum(e.attempts for e in est.values()) / fixed_rollouts
    print(
        f"  optimal rule (target 0.05, prior pooled): ratio {o_ratio:.3f}x  misplaced strict "
        f"{o_strict:.3f}  beyond +-{other.margin} {o_zone:.3f}"
    )
    joint = SequentialPolicy()  # prior "auto": joint, since the task of each key is given
    started = time.monotonic()
    est = run_sequential(keys, sample, joint, group=lambda k: k[1], task=lambda k: k[0])
    j_seconds = time.monotonic() - started
    j_strict, j_zone = _misplacement({k: e.band for k, e in est.items()}, truth, joint.margin)
    j_ratio = sum(e.attempts for e in est.values()) / fixed_rollouts
    print(
        f"  threshold rule, joint prior (the default with tasks): ratio {j_ratio:.3f}x  "
        f"misplaced strict {j_strict:.3f}  beyond +-{joint.margin} {j_zone:.3f}  "
        f"({j_seconds:.1f}s)"
    )
    # The joint prior at 0.95 misplaces well under 5%; `confidence = 0.93` (a setting of the
    # models file) spends that slack. Seeds 0-4: spread 0.30-0.31x at 2.9-4.0%, polarized
    # 0.23x at 1.6-2.7% (k=16: 3.0-3.7% and 1.2-1.7%).
    lean = SequentialPolicy(confidence=LEAN_CONFIDENCE)
    est = run_sequential(keys, sample, lean, group=lambda k: k[1], task=lambda k: k[0])
    l_strict, l_zone = _misplacement({k: e.band for k, e in est.items()}, truth, lean.margin)
    l_ratio = sum(e.attempts for e in est.values()) / fixed_rollouts
    print(
        f"  threshold rule, joint prior, confidence {LEAN_CONFIDENCE}: ratio {l_ratio:.3f}x  "
        f"misplaced strict {l_strict:.3f}  beyond +-{lean.margin} {l_zone:.3f}"
    )
    for label in ("likeliest", "safest"):
        floor = _floor(truth, label)
        print(
            f"  floor for per-key rules, {label} band recorded (optimal rule, true rates "
            f"known): {floor[0]:.3f}x at expected misplacement beyond +-0.1 of {floor[1]:.3f}"
        )
    rules = {
        "threshold, pooled": (ratio, seq_zone),
        "optimal, pooled": (o_ratio, o_zone),
        "threshold, joint": (j_ratio, j_zone),
        f"threshold, joint, confidence {LEAN_CONFIDENCE}": (l_ratio, l_zone),
    }
    best = min((r for r in rules.items() if r[1][1] <= 0.05), key=lambda r: r[1][0])
    verdict = "MET" if best[1][0] <= 0.35 else "NOT MET"
    print(
        f"  best rule within 5% misplacement: {best[0]}, ratio {best[1][0]:.3f}x at "
        f"{best[1][1]:.3f} (target <= 0.35x): {verdict}"
    )

    # the asserts are on the joint prior, the best one here; the pooled prior's threshold rule
    # lands at 4.8-5.1% over seeds 0-4, so it is only printed
    assert j_zone <= 0.05 and l_zone <= 0.05
    assert best[0].startswith("threshold, joint")
    assert seq_rollouts < 0.6 * fixed_rollouts
    assert j_ratio < ratio  # sharing across the models of a task saves rollouts
    # measured over seeds 0-4 (joint, default confidence 0.95): polarized 0.264-0.275x, spread
    # 0.348-0.354x (pooled: 0.54-0.58x); at confidence 0.93, 0.23x and 0.30-0.31x
    assert best[1][0] <= 0.35


def _floor(truth: np.ndarray, label: str) -> tuple[float, float]:
    """Rollouts (as a fraction of k=16) and misplacement of the optimal rule per model, when
    the prior is the histogram of the true rates, at 5% expected misplacement."""
    ratios, errors = [], []
    for m in range(truth.shape[1]):
        cell = np.clip(np.searchsorted(GRID, truth[:, m]), 0, len(GRID) - 1)
        prior = np.bincount(cell, minlength=len(GRID)) / truth.shape[0]
        policy = SequentialPolicy(target_error=0.05, label=label)  # type: ignore[arg-type]
        table = stopping_table(prior, policy)
        ratios.append(table.expected_attempts / K_FIXED)
        errors.append(table.expected_error)
    return float(np.mean(ratios)), float(np.mean(errors))


def _idx(band: str) -> int:
    names = [n for n, _, _ in band_edges(DEFAULT_BANDS)]
    return names.index(band)
