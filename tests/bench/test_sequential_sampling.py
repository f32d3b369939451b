"""Benchmark: sequential sampling against a fixed k=16, on simulated tasks with known solve rates.

1,000 tasks x 4 models; each (task, model) has a true solve probability from an item-response
model p = sigmoid(slope * (ability - difficulty)). Two populations: "spread" (many tasks with
mid-range rates) and "polarized" (most tasks always or never solved, as pass@k studies of real
agents report). Misplacement is measured against the true band two ways: strict (the assigned
band is not the true band) and with the indifference zone the stopping rule uses (the true rate
is more than `margin` outside the assigned band). Run:
`.venv/bin/python -m pytest -q -s tests/bench/test_sequential_sampling.py`.
"""

from __future__ import annotations

import time

import numpy as np
import pytest

from taskmint.calibrate.bands import band_edges, band_of
from taskmint.calibrate.models import DEFAULT_BANDS
from taskmint.calibrate.sequential import SequentialPolicy, run_sequential

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
        f"  sequential : rollouts {seq_rollouts:6d}  misplaced strict {seq_strict:.3f}  "
        f"beyond +-{policy.margin} {seq_zone:.3f}  ({decided:.0%} decided before the cap, "
        f"{seconds:.1f}s)"
    )
    verdict = "MET" if ratio <= 0.35 and seq_zone <= 0.05 else "NOT MET"
    print(f"  ratio {ratio:.3f}x (target <= 0.35x at <= 5% misplacement): {verdict}")

    assert seq_zone <= 0.05  # the stopping rule's own guarantee holds
    assert seq_rollouts < 0.6 * fixed_rollouts
    if population == "polarized":
        assert ratio <= 0.35


def _idx(band: str) -> int:
    names = [n for n, _, _ in band_edges(DEFAULT_BANDS)]
    return names.index(band)
