"""Benchmark: sequential sampling against a fixed k=16, on simulated tasks with known solve rates.

1,000 tasks x 4 models; each (task, model) has a true solve probability from an item-response
model p = sigmoid(slope * (ability - difficulty)). Two populations: "spread" (many tasks with
mid-range rates) and "polarized" (most tasks always or never solved, as pass@k studies of real
agents report). Misplacement is measured against the true band two ways: strict (the assigned
band is not the true band) and with the indifference zone the stopping rule uses (the true rate
is more than `margin` outside the assigned band).

Besides the two rules, it prints the floor: the Bayes-optimal stopping rule (`stopping_table`)
for the population's TRUE distribution of solve rates, which no rule that only sees attempts can
beat on average; its expected rollouts at 5% expected misplacement bound what is achievable.
Run:
`.venv/bin/python -m pytest -q -s tests/bench/test_sequential_sampling.py`.
"""

from __future__ import annotations

import time

import numpy as np
import pytest

from taskmint.calibrate.bands import band_edges, band_of
from taskmint.calibrate.models import DEFAULT_BANDS
from taskmint.calibrate.sequential import (
    _GRID,
    SequentialPolicy,
    run_sequential,
    stopping_table,
)

TASKS = 1000
ABILITIES = np.array([-1.0, 0.0, 0.8, 1.6])
K_FIXED = 16
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
    truth = _population(population)
    keys = [(t, m) for t in range(TASKS) for m in range(len(ABILITIES))]
    policy = SequentialPolicy()
    rng = np.random.default_rng(1)

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

    print(f"\n[{population}] {TASKS} tasks x {len(ABILITIES)} models, bands {DEFAULT_BANDS}")
    print(f"  true band counts: {np.bincount([_idx(band_of(p)) for p in truth.ravel()])}")
    print(
        f"  fixed k=16 : rollouts {fixed_rollouts:6d}  misplaced strict {fixed_strict:.3f}  "
        f"beyond +-{policy.margin} {fixed_zone:.3f}"
    )
    print(
        f"  sequential (threshold rule, the default): rollouts {seq_rollouts:6d}  "
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
    for label in ("likeliest", "safest"):
        floor = _floor(truth, label)
        print(
            f"  floor, {label} band recorded (optimal rule, true rates known): "
            f"{floor[0]:.3f}x at expected misplacement beyond +-0.1 of {floor[1]:.3f}"
        )
    verdict = "MET" if ratio <= 0.35 and seq_zone <= 0.05 else "NOT MET"
    print(f"  ratio {ratio:.3f}x (target <= 0.35x at <= 5% misplacement): {verdict}")

    assert seq_zone <= 0.05  # the stopping rule's own guarantee holds
    assert seq_rollouts < 0.6 * fixed_rollouts
    if population == "polarized":
        assert ratio <= 0.35


def _floor(truth: np.ndarray, label: str) -> tuple[float, float]:
    """Rollouts (as a fraction of k=16) and misplacement of the optimal rule per model, when
    the prior is the histogram of the true rates, at 5% expected misplacement."""
    ratios, errors = [], []
    for m in range(truth.shape[1]):
        cell = np.clip(np.searchsorted(_GRID, truth[:, m]), 0, len(_GRID) - 1)
        prior = np.bincount(cell, minlength=len(_GRID)) / truth.shape[0]
        policy = SequentialPolicy(target_error=0.05, label=label)  # type: ignore[arg-type]
        table = stopping_table(prior, policy)
        ratios.append(table.expected_attempts / K_FIXED)
        errors.append(table.expected_error)
    return float(np.mean(ratios)), float(np.mean(errors))


def _idx(band: str) -> int:
    names = [n for n, _, _ in band_edges(DEFAULT_BANDS)]
    return names.index(band)
