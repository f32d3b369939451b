"""The Bayes-optimal stopping rule (`rule = "optimal"`): its table, its promise, its config."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

from taskmint.calibrate.bands import band_edges
from taskmint.calibrate.models import load_calibration_config
from taskmint.calibrate.policy import SequentialPolicy
from taskmint.calibrate.posterior import GRID, stopping_table
from taskmint.calibrate.sequential import run_sequential
from taskmint.errors import ManifestError


def _prior(rates: np.ndarray) -> np.ndarray:
    cell = np.clip(np.searchsorted(GRID, rates), 0, len(GRID) - 1)
    return np.bincount(cell, minlength=len(GRID)) / len(rates)


def _simulate(table, rates: np.ndarray, policy: SequentialPolicy, seed: int) -> tuple[float, float]:
    """Run the table on keys with the given true rates; realized misplacement and attempts."""
    rng = np.random.default_rng(seed)
    edges = band_edges(policy.bands)
    wrong = total = 0
    for p in rates:
        n = s = 0
        while not table.stop[n, s]:
            s += int(rng.random() < p)
            n += 1
        total += n
        _, lo, hi = edges[int(table.band[n, s])]
        wrong += p < lo - policy.margin or (hi < 1.0 and p >= hi + policy.margin)
    return wrong / len(rates), total / len(rates)


def test_the_table_keeps_its_promise_when_the_prior_is_true() -> None:
    rng = np.random.default_rng(5)
    rates = 1.0 / (1.0 + np.exp(-2.0 * rng.normal(0.0, 1.8, 3000)))
    policy = SequentialPolicy(rule="optimal", target_error=0.05)
    table = stopping_table(_prior(rates), policy)
    assert table.expected_error <= 0.05 + 1e-9
    assert table.expected_attempts < 16  # stopping early pays somewhere
    error, attempts = _simulate(table, rates, policy, seed=6)
    # Monte Carlo agrees with the exact forward pass (3,000 keys: sd of the error ~0.004)
    assert abs(error - table.expected_error) < 0.015
    assert abs(attempts - table.expected_attempts) < 0.5
    assert table.stop[16].all() and not table.stop[:2].any()  # cap and min_attempts hold


def test_a_stricter_target_costs_more_attempts() -> None:
    rates = np.random.default_rng(7).uniform(0.0, 1.0, 2000)
    targets = (0.03, 0.06, 0.09, 0.12)
    spent = [
        stopping_table(_prior(rates), SequentialPolicy(rule="optimal", target_error=t))
        for t in targets
    ]
    attempts = [t.expected_attempts for t in spent]
    assert attempts == sorted(attempts, reverse=True) and attempts[1] > attempts[3]
    # 3% is out of reach within the cap for uniform rates: the table samples as far as it pays
    assert spent[0].expected_error > 0.03 and spent[0].expected_attempts > 13
    for table, target in zip(spent[1:], targets[1:], strict=True):
        assert table.expected_error <= target + 1e-9


def test_a_polarized_prior_stops_clear_keys_after_the_minimum() -> None:
    rates = np.concatenate([np.zeros(500), np.ones(400), np.full(100, 0.5)])
    table = stopping_table(_prior(rates), SequentialPolicy(rule="optimal"))
    assert table.stop[2, 0] and table.stop[3, 3]  # 0/2 and 3/3 settle it
    assert not table.stop[2, 2]  # a 0.5 key solves twice in four: not yet sure
    names = [n for n, _, _ in band_edges(SequentialPolicy().bands)]
    assert names[table.band[2, 0]] == "unsolved" and names[table.band[3, 3]] == "easy"
    assert table.expected_attempts < 4


def test_run_sequential_with_the_optimal_rule_on_a_pooled_population() -> None:
    rng = np.random.default_rng(3)
    truth = {i: float(p) for i, p in enumerate(rng.choice([0.0, 0.02, 0.97, 1.0], 200))}
    draws = np.random.default_rng(4)

    def sample(keys: list[int]) -> list[bool | None]:
        return [bool(draws.random() < truth[k]) for k in keys]

    est = run_sequential(list(truth), sample, SequentialPolicy(rule="optimal"))
    wrong = sum((e.band == "easy") != (truth[k] > 0.5) for k, e in est.items())
    assert wrong <= 10  # 5% expected misplacement
    assert sum(e.attempts for e in est.values()) < 200 * 4
    assert all(e.attempts >= 2 for e in est.values())
    assert sum(e.decided for e in est.values()) >= 190  # few keys run to the cap
    assert all(0.0 < e.confidence <= 1.0 and e.interval_low <= e.rate for e in est.values())


def test_the_optimal_rule_needs_a_population_and_falls_back_otherwise() -> None:
    truth = {"never": 0.0, "always": 1.0, "edge": 0.5}
    draws = np.random.default_rng(0)

    def sample(keys: list[str]) -> list[bool | None]:
        return [bool(draws.random() < truth[k]) for k in keys]

    # three keys are too few to pool a prior: the per-key threshold decides
    est = run_sequential(list(truth), sample, SequentialPolicy(rule="optimal", margin=0.05))
    assert est["edge"].attempts == 16 and not est["edge"].decided
    assert est["always"].decided and est["always"].band == "easy"


def test_rule_and_target_are_configurable_and_validated(tmp_path: Path) -> None:
    path = tmp_path / "models.toml"
    path.write_text('[calibration]\nrule = "optimal"\ntarget_error = 0.03\n')
    config = load_calibration_config(path)
    policy = SequentialPolicy.from_config(config)
    assert policy.rule == "optimal" and policy.target_error == 0.03
    path.write_text('[calibration]\nrule = "fastest"\n')
    with pytest.raises(ManifestError, match="rule"):
        load_calibration_config(path)
    path.write_text("[calibration]\ntarget_error = 0.7\n")
    with pytest.raises(ManifestError, match="target_error"):
        load_calibration_config(path)
    with pytest.raises(ManifestError):
        SequentialPolicy(label="widest")  # type: ignore[arg-type]
