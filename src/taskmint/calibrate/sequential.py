"""Sequential solve-rate estimation: sample attempts until the band is clear, not a fixed k.

Per (task, model) key, attempts are drawn in rounds. After each round the posterior of the
key's solve rate is computed on a grid, with a prior pooled over every key of the same model
(an empirical-Bayes prior: the nonparametric maximum-likelihood mixing distribution, smoothed
towards uniform), so a model that solves most tasks always or never - as real models do - needs
few attempts to place most tasks. A key stops when the posterior puts `confidence` of its mass
inside one band widened by `margin` on each side (the indifference zone: no finite sample
resolves a rate sitting on a band edge), or at `cap` attempts: precisely, when the band with
the most posterior mass holds `confidence` of it once widened by `margin`. That band is its band.
This is `rule = "threshold"`, the default. With `rule = "optimal"` (and a pooled prior), a key
stops where `stopping_table` says: the Bayes-optimal rule for the prior over states (attempts,
solves), for an expected misplacement of at most `target_error` per key on average, not per key.
The recorded rate and interval are the plain ones (solves / attempts, Wilson), independent of
the prior.

Attempts the endpoint broke (`None` outcomes) are not counted; a key with too many of them in a
row stops with an error instead of a band.
"""

from __future__ import annotations

from collections.abc import Callable, Hashable, Sequence
from dataclasses import dataclass
from typing import Generic, Literal, TypeVar

import numpy as np

from taskmint.calibrate.bands import band_edges
from taskmint.calibrate.models import DEFAULT_BANDS, CalibrationConfig
from taskmint.calibrate.reference import wilson_interval
from taskmint.errors import ManifestError

__all__ = [
    "Estimate",
    "SequentialPolicy",
    "StoppingTable",
    "band_posterior",
    "fit_prior",
    "run_sequential",
    "stopping_table",
]

K = TypeVar("K", bound=Hashable)
_GRID = np.linspace(0.0025, 0.9975, 200)


@dataclass(frozen=True, slots=True, kw_only=True)
class SequentialPolicy:
    """When to stop sampling a key.

    `prior` is "pooled" (empirical Bayes over the keys of the same group, used once a group has
    `pool_min` keys) or "uniform". `smoothing` mixes the pooled prior with a uniform one so no
    rate is ruled out a priori. `rule` picks the stopping rule (module docstring);
    `target_error` is the expected misplacement per key the "optimal" rule aims at; `label`
    says which band that rule records: the likeliest, or the one least likely to be more than
    `margin` off (cheaper, but it calls a never-solved task "frontier").
    """

    cap: int = 16
    min_attempts: int = 2
    confidence: float = 0.95
    margin: float = 0.1
    prior: Literal["pooled", "uniform"] = "pooled"
    smoothing: float = 0.2
    pool_min: int = 30
    max_infra_errors: int = 3
    bands: tuple[tuple[str, float], ...] = DEFAULT_BANDS
    rule: Literal["threshold", "optimal"] = "threshold"
    target_error: float = 0.05
    label: Literal["likeliest", "safest"] = "likeliest"

    def __post_init__(self) -> None:
        if not 1 <= self.min_attempts <= self.cap:
            raise ManifestError("need 1 <= min_attempts <= cap")
        if not 0.5 < self.confidence < 1.0:
            raise ManifestError("confidence must be between 0.5 and 1.0")
        if not 0.0 <= self.smoothing <= 1.0:
            raise ManifestError("smoothing must be in [0, 1]")
        if self.prior not in ("pooled", "uniform"):
            raise ManifestError("prior must be 'pooled' or 'uniform'")
        if self.rule not in ("optimal", "threshold"):
            raise ManifestError("rule must be 'optimal' or 'threshold'")
        if not 0.0 < self.target_error < 0.5:
            raise ManifestError("target_error must be in (0, 0.5), e.g. 0.05")
        if self.label not in ("likeliest", "safest"):
            raise ManifestError("label must be 'likeliest' or 'safest'")

    @classmethod
    def from_config(cls, config: CalibrationConfig, **overrides: object) -> SequentialPolicy:
        """The policy a `CalibrationConfig` describes."""
        base = {
            "cap": config.cap,
            "min_attempts": config.min_attempts,
            "confidence": config.confidence,
            "margin": config.margin,
            "bands": config.bands,
            "rule": config.rule,
            "target_error": config.target_error,
        }
        base.update(overrides)
        return cls(**base)  # type: ignore[arg-type]


@dataclass(frozen=True, slots=True, kw_only=True)
class Estimate(Generic[K]):
    """Where sampling of one key ended."""

    key: K
    attempts: int
    solves: int
    rate: float
    interval_low: float
    interval_high: float
    band: str | None  # None when the key stopped on errors before any attempt counted
    confidence: float  # posterior mass of `band` widened by the margin
    decided: bool  # stopped by the rule before the cap
    infra_errors: int = 0
    error: str | None = None


def fit_prior(
    solves: np.ndarray, attempts: np.ndarray, *, iterations: int = 100, smoothing: float = 0.2
) -> np.ndarray:
    """Grid weights of the solve-rate distribution behind `solves`/`attempts` (EM for the
    nonparametric maximum-likelihood mixing distribution), mixed with `smoothing` of uniform."""
    n = len(_GRID)
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
    log = s * np.log(_GRID)[None, :] + f * np.log1p(-_GRID)[None, :]
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
    grid = _GRID
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


def _inside(low: float, high: float, margin: float) -> np.ndarray:
    """Grid points in [low - margin, high + margin) (the top band includes 1.0)."""
    grid = _GRID
    top = high + margin if high < 1.0 else 2.0
    return np.asarray((grid >= low - margin) & (grid < top))


def _state_posteriors(prior: np.ndarray, policy: SequentialPolicy) -> tuple[np.ndarray, ...]:
    """Per state (n, s): band recorded, its widened mass, and the posterior mean rate."""
    cap = policy.cap
    n_idx, s_idx = np.tril_indices(cap + 1)
    log = s_idx[:, None] * np.log(_GRID)[None, :] + (n_idx - s_idx)[:, None] * np.log1p(-_GRID)
    log -= log.max(axis=1, keepdims=True)
    post = np.exp(log) * prior[None, :]
    post /= post.sum(axis=1, keepdims=True)
    edges = band_edges(policy.bands)
    strict = np.stack([post[:, _inside(lo, hi, 0.0)].sum(1) for _, lo, hi in edges], 1)
    wide = np.stack([post[:, _inside(lo, hi, policy.margin)].sum(1) for _, lo, hi in edges], 1)
    # the likeliest band, or the one least likely to be more than the margin off
    choice = (strict if policy.label == "likeliest" else wide).argmax(axis=1)
    shape = (cap + 1, cap + 1)
    band, conf, mean = np.zeros(shape, dtype=int), np.zeros(shape), np.zeros(shape)
    band[n_idx, s_idx] = choice
    conf[n_idx, s_idx] = wide[np.arange(len(choice)), choice]
    mean[n_idx, s_idx] = post @ _GRID
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


Sampler = Callable[[list[K]], list[bool | None]]


def run_sequential(
    keys: Sequence[K],
    sample: Sampler[K],
    policy: SequentialPolicy,
    *,
    group: Callable[[K], Hashable] = lambda key: 0,
    on_round: Callable[[int, int], None] | None = None,
) -> dict[K, Estimate[K]]:
    """Sample every key until its band is clear or it reaches `policy.cap` attempts.

    `sample(keys)` makes one attempt per key (concurrently, if it likes) and returns, in order,
    True (solved), False (not solved) or None (the attempt failed for reasons outside the
    model: not counted). Priors are pooled over keys with the same `group` (the model).
    `on_round(round, active)` is told the size of each round.
    """
    keys = list(dict.fromkeys(keys))
    n = len(keys)
    solves = np.zeros(n, dtype=int)
    attempts = np.zeros(n, dtype=int)
    errors = np.zeros(n, dtype=int)  # infra errors in a row
    total_errors = np.zeros(n, dtype=int)
    done = np.zeros(n, dtype=bool)
    groups = [group(k) for k in keys]
    band: list[str | None] = [None] * n
    conf = np.zeros(n)
    decided = np.zeros(n, dtype=bool)
    error: list[str | None] = [None] * n
    rnd = 0
    while not done.all():
        rnd += 1
        active = [i for i in range(n) if not done[i]]
        if on_round is not None:
            on_round(rnd, len(active))
        outcomes = sample([keys[i] for i in active])
        if len(outcomes) != len(active):
            raise ValueError(f"sample returned {len(outcomes)} outcomes for {len(active)} keys")
        for i, outcome in zip(active, outcomes, strict=True):
            if outcome is None:
                errors[i] += 1
                total_errors[i] += 1
                if errors[i] >= policy.max_infra_errors:
                    done[i] = True
                    error[i] = f"{errors[i]} attempts in a row failed outside the model"
            else:
                errors[i] = 0
                attempts[i] += 1
                solves[i] += int(outcome)
        for g in dict.fromkeys(groups):
            idx = np.array([i for i in range(n) if groups[i] == g])
            _decide_group(idx, solves, attempts, done, band, conf, decided, policy, set(active))
    out: dict[K, Estimate[K]] = {}
    for i, key in enumerate(keys):
        low, high = wilson_interval(int(solves[i]), int(attempts[i]))
        out[key] = Estimate(
            key=key,
            attempts=int(attempts[i]),
            solves=int(solves[i]),
            rate=round(float(solves[i] / attempts[i]), 4) if attempts[i] else 0.0,
            interval_low=low,
            interval_high=high,
            band=band[i] if attempts[i] else None,
            confidence=round(float(conf[i]), 4),
            decided=bool(decided[i]),
            infra_errors=int(total_errors[i]),
            error=error[i],
        )
    return out


def _decide_group(
    idx: np.ndarray,
    solves: np.ndarray,
    attempts: np.ndarray,
    done: np.ndarray,
    band: list[str | None],
    conf: np.ndarray,
    decided: np.ndarray,
    policy: SequentialPolicy,
    active: set[int],
) -> None:
    """Band and stop the keys of one group that were sampled this round (earlier stops keep
    the band they stopped with)."""
    pooled = policy.prior == "pooled" and len(idx) >= policy.pool_min
    if pooled:
        prior = fit_prior(solves[idx], attempts[idx], smoothing=policy.smoothing)
    else:
        prior = np.full(len(_GRID), 1.0 / len(_GRID))
    if policy.rule == "optimal" and pooled:
        table = stopping_table(prior, policy)
        names = [name for name, _, _ in band_edges(policy.bands)]
        for i in idx:
            n, s = int(attempts[i]), int(solves[i])
            if n == 0 or int(i) not in active or done[i]:
                continue
            band[i], conf[i] = names[int(table.band[n, s])], float(table.confidence[n, s])
            if n >= policy.cap:
                done[i] = True
            elif table.stop[n, s]:
                done[i] = decided[i] = True
        return
    names, wide = band_posterior(solves[idx], attempts[idx], prior, policy.bands, policy.margin)
    _, strict = band_posterior(solves[idx], attempts[idx], prior, policy.bands, 0.0)
    for j, i in enumerate(idx):
        if attempts[i] == 0 or int(i) not in active:
            continue
        # the likeliest band, and whether the posterior is sure of it up to the margin
        b = int(strict[j].argmax())
        sure = bool(wide[j, b] >= policy.confidence)
        band[i], conf[i] = names[b], float(wide[j, b])
        if done[i]:
            continue
        if attempts[i] >= policy.min_attempts and sure:
            done[i] = decided[i] = True
        elif attempts[i] >= policy.cap:
            done[i] = True
