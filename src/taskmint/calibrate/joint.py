"""The joint (item-response) prior: what the other models' attempts at a task say about a key.

The solve rates of different models on one task are strongly correlated: the task's difficulty
is shared. `fit_joint` fits an item-response model, p = sigmoid(slope_t * (ability_g -
difficulty_t)), to a (tasks x groups) table of attempts (each task's difficulty and slope
integrated out on a grid, the groups' abilities and the distributions of difficulty and slope by
marginal maximum likelihood). `joint_band_posterior` gives each cell's band posterior under a
prior that mixes what the model predicts from the task's other cells with the group's pooled
prior, so a key's own attempts can overturn the prediction.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np

from taskmint.calibrate.bands import band_edges
from taskmint.calibrate.models import DEFAULT_BANDS
from taskmint.calibrate.posterior import GRID, grid_inside

__all__ = ["JointFit", "JointPosterior", "fit_joint", "joint_band_posterior"]

_THETA = np.linspace(-8.0, 8.0, 161)  # task difficulty grid (logit scale)
_SLOPES = np.geomspace(0.5, 8.0, 7)  # task slope grid, integrated out per task
_STATE_SLOPE = np.tile(_SLOPES, len(_THETA))  # the slope of each (theta, slope) state
_MAX_WEIGHT = 0.99  # a fitted IRT weight never exceeds this: the pooled prior keeps 1%


@dataclass(frozen=True, slots=True)
class JointFit:
    """An item-response model fitted to every attempt so far.

    A task t has a difficulty theta_t and a slope a_t; a group g (a model at one hint level)
    has an ability b_g; the solve rate of (t, g) is sigmoid(a_t * (b_g - theta_t)). theta and a
    live on fixed grids (`_THETA`, `_SLOPES`) with fitted weights (`theta_weights`,
    `slope_weights`), and are integrated out per task; `abilities` are point estimates.
    `irt_weight` is the weight of this model in each key's prior (the rest goes to the group's
    pooled prior), as set or as last fitted.
    """

    abilities: np.ndarray
    theta_weights: np.ndarray
    slope_weights: np.ndarray
    irt_weight: float


@dataclass(frozen=True, slots=True)
class JointPosterior:
    """Per (task, group) cell: the posterior mass of each band (lowest first), strict and
    widened by the margin (tasks x groups x bands); the posterior share of the IRT part of the
    cell's prior (tasks x groups); and the prior weight of the IRT part that was used."""

    names: list[str]
    strict: np.ndarray
    wide: np.ndarray
    irt_share: np.ndarray
    irt_weight: float


def _irt_logs(abilities: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Per group and state (theta, slope), states theta-major: log p, log (1 - p) and p."""
    x = _SLOPES[None, None, :] * (abilities[:, None, None] - _THETA[None, :, None])
    x = x.reshape(len(abilities), -1)
    return -np.logaddexp(0.0, -x), -np.logaddexp(0.0, x), 1.0 / (1.0 + np.exp(-x))


def _theta_base() -> np.ndarray:
    """The broad prior the difficulty weights start from and are smoothed towards: N(0, 3)."""
    base = np.exp(-0.5 * (_THETA / 3.0) ** 2)
    return np.asarray(base / base.sum())


def _log_states(fit: JointFit) -> np.ndarray:
    log = np.log(fit.theta_weights)[:, None] + np.log(fit.slope_weights)[None, :]
    return np.asarray(log.ravel())


def _logsumexp(log: np.ndarray, axis: int) -> np.ndarray:
    top = log.max(axis=axis, keepdims=True)
    out = np.squeeze(top, axis) + np.log(np.exp(log - top).sum(axis=axis))
    return np.asarray(out)


def _distinct_rows(*tables: np.ndarray) -> tuple[list[np.ndarray], np.ndarray, np.ndarray]:
    """The distinct rows of the tables side by side (split back into tables, as floats), how
    many times each occurs, and for each original row the index of its distinct row."""
    width = tables[0].shape[1]
    both = np.concatenate([np.asarray(t, dtype=float) for t in tables], axis=1)
    rows, inverse, count = np.unique(both, axis=0, return_inverse=True, return_counts=True)
    parts = [rows[:, k * width : (k + 1) * width] for k in range(len(tables))]
    return parts, count.astype(float), inverse.ravel()


def fit_joint(
    solves: np.ndarray,
    attempts: np.ndarray,
    *,
    start: JointFit | None = None,
    iterations: int = 30,
    smoothing: float = 0.2,
    irt_weight: float = 0.9,
) -> JointFit:
    """Fit the item-response model to a (tasks x groups) table of solves and attempts (0
    attempts: no data) by marginal maximum likelihood: EM over the grid of each task's
    difficulty and slope, with one Newton step per iteration for the abilities.

    The difficulty weights are mixed with `smoothing` of a broad normal, the slope weights
    with 2% of uniform. The scale is pinned by the fixed slope grid, the location by keeping
    the difficulty distribution's mean at 0. `start` warm-starts from an earlier fit (and
    keeps its `irt_weight`); nothing is taken from anywhere but the table."""
    (solves, attempts), count, _ = _distinct_rows(solves, attempts)
    fails = attempts - solves
    share_of = count / count.sum()
    n_groups = solves.shape[1]
    base = _theta_base()
    if start is not None and len(start.abilities) == n_groups:
        b = start.abilities.copy()
        tw, sw = start.theta_weights, start.slope_weights
        irt_weight = start.irt_weight
    else:
        rate = (solves.sum(axis=0) + 0.5) / (attempts.sum(axis=0) + 1.0)
        b = np.log(rate / (1.0 - rate))
        tw, sw = base, np.full(len(_SLOPES), 1.0 / len(_SLOPES))
    has = attempts.sum(axis=0) > 0
    slope = _STATE_SLOPE[:, None]
    for _ in range(iterations):
        log_p, log_q, p = _irt_logs(b)
        log = solves @ log_p + fails @ log_q + (np.log(tw)[:, None] + np.log(sw)[None, :]).ravel()
        log -= log.max(axis=1, keepdims=True)
        post = np.exp(log)
        post /= post.sum(axis=1, keepdims=True)
        marg = post.reshape(len(post), len(_THETA), len(_SLOPES))
        tw = (1.0 - smoothing) * (share_of @ marg.sum(axis=2)) + smoothing * base
        sw = 0.98 * (share_of @ marg.sum(axis=1)) + 0.02 / len(_SLOPES)
        # abilities: a Newton step on the expected complete-data log-likelihood
        post *= count[:, None]
        ps, pn = post.T @ solves, post.T @ attempts  # states x groups
        # (with a N(0, 4^2) prior, so a group that solved everything has a finite ability)
        grad = (slope * (ps - p.T * pn)).sum(axis=0) - b / 16.0
        hess = (slope**2 * p.T * (1.0 - p.T) * pn).sum(axis=0) + 1.0 / 16.0
        b = np.where(has, b + np.clip(grad / hess, -1.0, 1.0), b)
        # the location: difficulties centred at 0 (theta and every ability shift alike)
        shift = float(tw @ _THETA)
        b -= shift
        tw = np.interp(_THETA + shift, _THETA, tw, left=0.0, right=0.0) + 1e-12
        tw /= tw.sum()
    return JointFit(b, tw, sw, irt_weight)


def joint_band_posterior(
    solves: np.ndarray,
    attempts: np.ndarray,
    fit: JointFit,
    pooled: Sequence[np.ndarray],
    bands: Sequence[tuple[str, float]] = DEFAULT_BANDS,
    margin: float = 0.0,
    *,
    fit_weight: bool = False,
) -> JointPosterior:
    """The band posterior of every (task, group) cell of the tables.

    A cell's prior is a mixture: with weight `fit.irt_weight`, what the item-response model
    predicts for it from the OTHER cells of its task; otherwise `pooled[g]`, its group's pooled
    prior on `GRID`. The cell's own attempts enter once, through the likelihood, and also set
    how much each part counts (by how well each predicted them), so attempts that contradict
    the cross-model prediction overturn it. With `fit_weight` the weight is first refitted by
    maximum likelihood over every cell with attempts (EM, from `fit.irt_weight`, at most 0.99).
    """
    # tasks with the same attempts have the same posterior: compute it once per distinct row
    (solves, attempts), count, inverse = _distinct_rows(solves, attempts)
    fails = attempts - solves
    seen = attempts > 0
    log_p, log_q, p = _irt_logs(fit.abilities)
    own = solves[:, :, None] * log_p[None] + fails[:, :, None] * log_q[None]  # t x g x states
    full = own.sum(axis=1) + _log_states(fit)[None, :]  # t x states
    log_full = _logsumexp(full, axis=1)
    post = np.exp(full - log_full[:, None])  # each task's joint posterior over states
    # log-probability of a cell's attempts given the other cells of its task, under each part
    log_irt = log_full[:, None] - _logsumexp(full[:, None, :] - own, axis=2)  # t x g
    log_grid, log_grid_q = np.log(GRID), np.log1p(-GRID)
    log_pool = np.zeros_like(log_irt)
    pool_post = []
    for g in range(solves.shape[1]):
        cell = solves[:, g : g + 1] * log_grid + fails[:, g : g + 1] * log_grid_q
        cell += np.log(pooled[g])[None, :]
        log_pool[:, g] = _logsumexp(cell, axis=1)
        pool_post.append(np.exp(cell - log_pool[:, g : g + 1]))
    ratio = np.exp(np.clip(log_pool - log_irt, -700.0, 700.0))  # pooled over IRT evidence
    weight = fit.irt_weight
    if fit_weight and seen.any():
        cells = np.broadcast_to(count[:, None], seen.shape)[seen]
        for _ in range(200):
            share = weight / (weight + (1.0 - weight) * ratio[seen])
            weight = min(float(cells @ share / cells.sum()), _MAX_WEIGHT)
    share = weight / (weight + (1.0 - weight) * ratio) if weight > 0 else np.zeros_like(ratio)
    edges = band_edges(bands)
    names = [name for name, _, _ in edges]
    out = []
    for widen in (0.0, margin):
        masses = np.zeros((*solves.shape, len(edges)))
        for j, (_, low, high) in enumerate(edges):
            top = high + widen if high < 1.0 else 2.0
            in_state = ((p >= low - widen) & (p < top)).astype(float)  # g x states
            in_grid = grid_inside(low, high, widen)
            irt = post @ in_state.T  # t x g
            pool = np.stack([pp[:, in_grid].sum(axis=1) for pp in pool_post], axis=1)
            masses[:, :, j] = share * irt + (1.0 - share) * pool
        out.append(masses[inverse])
    return JointPosterior(names, out[0], out[1], share[inverse], weight)
