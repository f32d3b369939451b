"""The solve rate on a grid: the pooled prior, band posteriors and the optimal stopping table.

A key's solve rate lives on `GRID` (200 points in (0, 1)). `fit_prior` pools the keys of one
group into a prior (the nonparametric maximum-likelihood mixing distribution, smoothed towards
uniform); `band_posterior` gives each key's posterior mass per band; `stopping_table` solves the
Bayes-optimal stopping rule for a prior (`rule = "optimal"`, see `sequential`).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np

from taskmint.calibrate.bands import band_edges
from taskmint.calibrate.models import DEFAULT_BANDS
from taskmint.calibrate.policy import SequentialPolicy

__all__ = [
    "GRID",
    "StoppingTable",
    "band_posterior",
    "fit_prior",
    "grid_inside",
    "stopping_table",
]

GRID = np.linspace(0.0025, 0.9975, 200)


def fit_prior(
    solves: np.ndarray, attempts: np.ndarray, *, iterations: int = 100, smoothing: float = 0.2
) -> np.ndarray:
    """Grid weights of the solve-rate distribution behind `solves`/`attempts` (EM for the
    nonparametric maximum-likelihood mixing distribution), mixed with `smoothing` of uniform."""
    n = len(GRID)
    weights = np.full(n, 1.0 / n)
    mask = attempts > 0
    if mask.any():
        lik = _likelihood(solves[mask], attempts[mask])
        for _ in range(iterations):
            post = lik * weights
            post /= post.sum(axis=1, keepdims=True)
            weights = post.mean(axis=0)
    return (1.0 - smoothing) * weights + smoothing / n


def _likelihood(solves: np.ndarray, attempts: np.ndarray) -> np.ndarray:
    s = solves[:, None].astype(float)
    f = (attempts - solves)[:, None].astype(float)
    log = s * np.log(GRID)[None, :] + f * np.log1p(-GRID)[None, :]
    log -= log.max(axis=1, keepdims=True)
    return np.exp(log)


def band_posterior(
    solves: np.ndarray,
    attempts: np.ndarray,
    prior: np.ndarray,
    bands: Sequence[tuple[str, float]] = DEFAULT_BANDS,
    margin: float = 0.0,
) -> tuple[list[str], np.ndarray]:
    """Band names (lowest first) and, per key, the posterior mass of each band widened by
    `margin` on both sides (rows do not sum to 1 when `margin` > 0)."""
    post = _likelihood(solves, attempts) * prior[None, :]
    post /= post.sum(axis=1, keepdims=True)
    names, cols = [], []
    grid = GRID
    for name, low, high in band_edges(bands):
        top = high + margin if high < 1.0 else 1.0 + 1e-9
        inside = (grid >= low - margin) & (grid < top)
        names.append(name)
        cols.append(post[:, inside].sum(axis=1))
    return names, np.stack(cols, axis=1)


@dataclass(frozen=True, slots=True)
class StoppingTable:
    """The optimal rule for one prior, as a table over (attempts n, solves s), s <= n <= cap.

    `stop[n, s]`: stop there; `band[n, s]`: index of the band recorded there (lowest band
    first); `confidence[n, s]`: posterior mass of that band widened by the margin (1 minus the
    chance the key is misplaced); `expected_error` / `expected_attempts`: what the rule costs
    and achieves per key if the prior is the truth; `cost`: the price of one attempt, in
    misplacements, that the rule was solved for.
    """

    stop: np.ndarray
    band: np.ndarray
    confidence: np.ndarray
    expected_error: float
    expected_attempts: float
    cost: float


def grid_inside(low: float, high: float, margin: float) -> np.ndarray:
    """Grid points in [low - margin, high + margin) (the top band includes 1.0)."""
    grid = GRID
    top = high + margin if high < 1.0 else 2.0
    return np.asarray((grid >= low - margin) & (grid < top))


def _state_posteriors(prior: np.ndarray, policy: SequentialPolicy) -> tuple[np.ndarray, ...]:
    """Per state (n, s): band recorded, its widened mass, and the posterior mean rate."""
    cap = policy.cap
    n_idx, s_idx = np.tril_indices(cap + 1)
    log = s_idx[:, None] * np.log(GRID)[None, :] + (n_idx - s_idx)[:, None] * np.log1p(-GRID)
    log -= log.max(axis=1, keepdims=True)
    post = np.exp(log) * prior[None, :]
    post /= post.sum(axis=1, keepdims=True)
    edges = band_edges(policy.bands)
    strict = np.stack([post[:, grid_inside(lo, hi, 0.0)].sum(1) for _, lo, hi in edges], 1)
    wide = np.stack([post[:, grid_inside(lo, hi, policy.margin)].sum(1) for _, lo, hi in edges], 1)
    # the likeliest band, or the one least likely to be more than the margin off
    choice = (strict if policy.label == "likeliest" else wide).argmax(axis=1)
    shape = (cap + 1, cap + 1)
    band, conf, mean = np.zeros(shape, dtype=int), np.zeros(shape), np.zeros(shape)
    band[n_idx, s_idx] = choice
    conf[n_idx, s_idx] = wide[np.arange(len(choice)), choice]
    mean[n_idx, s_idx] = post @ GRID
    return band, conf, mean


def _solve(err: np.ndarray, mean: np.ndarray, cost: float, policy: SequentialPolicy) -> np.ndarray:
    """Backward induction: stop where the chance of misplacement is no more than the expected
    misplacement plus `cost` per further attempt of the best continuation."""
    cap = policy.cap
    value = err[cap].copy()
    stop = np.zeros((cap + 1, cap + 1), dtype=bool)
    stop[cap] = True
    for n in range(cap - 1, -1, -1):
        s = np.arange(n + 1)
        go_on = cost + mean[n, s] * value[s + 1] + (1.0 - mean[n, s]) * value[s]
        here = err[n, s]
        stop[n, s] = (here <= go_on) & (n >= policy.min_attempts)
        value = np.where(stop[n, s], here, go_on)
    return stop


def _forward(err: np.ndarray, mean: np.ndarray, stop: np.ndarray) -> tuple[float, float]:
    """Expected misplacement and attempts per key of the rule `stop` under the prior."""
    cap = stop.shape[0] - 1
    reach = np.zeros(cap + 1)
    reach[0] = 1.0
    error = attempts = 0.0
    for n in range(cap + 1):
        s = np.arange(n + 1)
        here = reach[: n + 1] * stop[n, s]
        error += float(here @ err[n, s])
        attempts += float(here.sum()) * n
        if n == cap:
            break
        flow = reach[: n + 1] * ~stop[n, s]
        nxt = np.zeros(cap + 1)
        nxt[: n + 1] += flow * (1.0 - mean[n, s])
        nxt[1 : n + 2] += flow * mean[n, s]
        reach = nxt
    return error, attempts


def stopping_table(prior: np.ndarray, policy: SequentialPolicy) -> StoppingTable:
    """The Bayes-optimal stopping rule for keys whose solve rates follow `prior`.

    Minimizes expected attempts subject to expected misplacement (true rate more than
    `policy.margin` outside the recorded band) of at most `policy.target_error` per key:
    the Lagrangian form (misplacement + cost x attempts) is solved exactly by backward
    induction over (n, s), and the cost is bisected until the expected misplacement meets the
    target. When even sampling every key to the cap misses the target, every key samples to
    the cap unless it is already as sure as it would be there.
    """
    band, conf, mean = _state_posteriors(prior, policy)
    err = 1.0 - conf
    low, high = 1e-7, 1.0
    for _ in range(40):
        mid = float(np.sqrt(low * high))
        error, _ = _forward(err, mean, _solve(err, mean, mid, policy))
        if error > policy.target_error:
            high = mid
        else:
            low = mid
    stop = _solve(err, mean, low, policy)
    error, attempts = _forward(err, mean, stop)
    return StoppingTable(stop, band, conf, error, attempts, low)
