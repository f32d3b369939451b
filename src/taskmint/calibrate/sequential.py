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

The solve rates of different models on one task are strongly correlated: the task's difficulty
is shared. With `run_sequential(..., task=...)` (and `prior = "auto"` or `"joint"`), each key's
prior also draws on the other keys of its task: an item-response model, p = sigmoid(slope_t *
(ability_g - difficulty_t)), is fitted to every attempt so far each round (`fit_joint`: each
task's difficulty and slope integrated out on a grid, the groups' abilities and the
distributions of difficulty and slope by marginal maximum likelihood), and a key's prior is what
it predicts from the other keys of the task, mixed with the pooled prior (`joint_band_posterior`)
so the key's own attempts can overturn the prediction. The stopping rule is unchanged.

Attempts the endpoint broke (`None` outcomes) are not counted; a key with too many of them in a
row stops with an error instead of a band.
"""

from __future__ import annotations

import dataclasses
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
    `pool_min` keys), "uniform", "joint" (an item-response model shared by the groups of each
    task, mixed with the pooled prior: see `joint_band_posterior`; it needs
    `run_sequential(..., task=...)` and the threshold rule, and is used once there are
    `pool_min` tasks) or "auto", the default: "joint" when `run_sequential` is told the task
    of each key and the rule is "threshold", else "pooled". `joint_weight` is the prior weight of
    the item-response part, or "fit" (the default) to fit it to the attempts, at most 0.99.
    `smoothing` mixes the pooled prior with a uniform one so no rate is ruled out a priori.
    `rule` picks the stopping rule (module docstring); `target_error` is the expected
    misplacement per key the "optimal" rule aims at; `label` says which band that rule records:
    the likeliest, or the one least likely to be more than `margin` off (cheaper, but it calls a
    never-solved task "frontier").
    """

    cap: int = 16
    min_attempts: int = 2
    confidence: float = 0.95
    margin: float = 0.1
    prior: Literal["auto", "pooled", "uniform", "joint"] = "auto"
    joint_weight: float | Literal["fit"] = "fit"
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
        if self.prior not in ("auto", "pooled", "uniform", "joint"):
            raise ManifestError("prior must be 'auto', 'pooled', 'uniform' or 'joint'")
        if self.joint_weight != "fit" and (
            isinstance(self.joint_weight, (str, bool)) or not 0.0 <= float(self.joint_weight) < 1.0
        ):
            raise ManifestError(
                "joint_weight must be 'fit' or a number in [0, 1): the pooled prior keeps the rest"
            )
        if self.prior == "joint" and self.rule != "threshold":
            raise ManifestError("prior 'joint' works with rule 'threshold' only")
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
            "prior": config.prior,
            "joint_weight": config.joint_weight,
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


@dataclass(slots=True)
class _Tally:
    """Per-key state of a sequential run, indexed like its keys: counts so far, and what the
    stopping rule has said (band, confidence, stopped, stopped because decided)."""

    solves: np.ndarray
    attempts: np.ndarray
    done: np.ndarray
    band: list[str | None]
    conf: np.ndarray
    decided: np.ndarray

    @classmethod
    def empty(cls, n: int) -> _Tally:
        return cls(
            solves=np.zeros(n, dtype=int),
            attempts=np.zeros(n, dtype=int),
            done=np.zeros(n, dtype=bool),
            band=[None] * n,
            conf=np.zeros(n),
            decided=np.zeros(n, dtype=bool),
        )


def run_sequential(
    keys: Sequence[K],
    sample: Sampler[K],
    policy: SequentialPolicy,
    *,
    group: Callable[[K], Hashable] = lambda key: 0,
    task: Callable[[K], Hashable] | None = None,
    on_round: Callable[[int, int], None] | None = None,
) -> dict[K, Estimate[K]]:
    """Sample every key until its band is clear or it reaches `policy.cap` attempts.

    `sample(keys)` makes one attempt per key (concurrently, if it likes) and returns, in order,
    True (solved), False (not solved) or None (the attempt failed for reasons outside the
    model: not counted). Priors are pooled over keys with the same `group` (the model).
    `task(key)` says which keys share a task: with it (and prior "auto" or "joint"), each key's
    prior also draws on the other keys of its task (`joint_band_posterior`), once there are
    `policy.pool_min` tasks. `on_round(round, active)` is told the size of each round.
    """
    keys = list(dict.fromkeys(keys))
    n = len(keys)
    tally = _Tally.empty(n)
    solves, attempts, done = tally.solves, tally.attempts, tally.done
    errors = np.zeros(n, dtype=int)  # infra errors in a row
    total_errors = np.zeros(n, dtype=int)
    groups = [group(k) for k in keys]
    error: list[str | None] = [None] * n
    joint = None
    if policy.prior == "joint" and task is None:
        raise ManifestError("prior 'joint' needs run_sequential(..., task=...)")
    if policy.prior == "auto" and (task is None or policy.rule != "threshold"):
        policy = dataclasses.replace(policy, prior="pooled")
    if task is not None and policy.prior in ("auto", "joint"):
        tasks = [task(k) for k in keys]
        if len(set(tasks)) >= policy.pool_min:
            joint = _Joint(tasks, groups, policy)
        else:  # too few tasks to fit the item-response model
            policy = dataclasses.replace(policy, prior="pooled")
    fit: JointFit | None = None
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
        if joint is not None:
            fit = joint.decide(tally, set(active), fit)
            continue
        for g in dict.fromkeys(groups):
            idx = np.array([i for i in range(n) if groups[i] == g])
            _decide_group(idx, tally, policy, set(active))
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
            band=tally.band[i] if attempts[i] else None,
            confidence=round(float(tally.conf[i]), 4),
            decided=bool(tally.decided[i]),
            infra_errors=int(total_errors[i]),
            error=error[i],
        )
    return out


def _decide_group(
    idx: np.ndarray, tally: _Tally, policy: SequentialPolicy, active: set[int]
) -> None:
    """Band and stop the keys of one group that were sampled this round (earlier stops keep
    the band they stopped with)."""
    solves, attempts, done = tally.solves, tally.attempts, tally.done
    pooled = policy.prior == "pooled" and len(idx) >= policy.pool_min
    prior = _group_prior(solves[idx], attempts[idx], policy, pooled=pooled)
    if policy.rule == "optimal" and pooled:
        table = stopping_table(prior, policy)
        names = [name for name, _, _ in band_edges(policy.bands)]
        for i in idx:
            n, s = int(attempts[i]), int(solves[i])
            if n == 0 or int(i) not in active or done[i]:
                continue
            tally.band[i] = names[int(table.band[n, s])]
            tally.conf[i] = float(table.confidence[n, s])
            if n >= policy.cap:
                done[i] = True
            elif table.stop[n, s]:
                done[i] = tally.decided[i] = True
        return
    names, wide = band_posterior(solves[idx], attempts[idx], prior, policy.bands, policy.margin)
    _, strict = band_posterior(solves[idx], attempts[idx], prior, policy.bands, 0.0)
    for j, i in enumerate(idx):
        if attempts[i] == 0 or int(i) not in active:
            continue
        _threshold_step(int(i), strict[j], wide[j], names, tally, policy)


def _group_prior(
    solves: np.ndarray, attempts: np.ndarray, policy: SequentialPolicy, *, pooled: bool
) -> np.ndarray:
    """A group's prior on the grid: pooled over its keys (`fit_prior`), or uniform."""
    if pooled:
        return fit_prior(solves, attempts, smoothing=policy.smoothing)
    return np.full(len(_GRID), 1.0 / len(_GRID))


def _threshold_step(
    i: int,
    strict: np.ndarray,
    wide: np.ndarray,
    names: list[str],
    tally: _Tally,
    policy: SequentialPolicy,
) -> None:
    """The threshold rule for key `i` given its band posteriors (strict and widened by the
    margin): record the likeliest band; stop once it is sure of it up to the margin (after
    `min_attempts`) or at the cap. A key stopped earlier keeps its stop."""
    b = int(strict.argmax())
    tally.band[i], tally.conf[i] = names[b], float(wide[b])
    if tally.done[i]:
        return
    if tally.attempts[i] >= policy.min_attempts and wide[b] >= policy.confidence:
        tally.done[i] = tally.decided[i] = True
    elif tally.attempts[i] >= policy.cap:
        tally.done[i] = True


# --- the joint (item-response) prior ------------------------------------------------------------

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
    prior on `_GRID`. The cell's own attempts enter once, through the likelihood, and also set
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
    log_grid, log_grid_q = np.log(_GRID), np.log1p(-_GRID)
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
            in_grid = _inside(low, high, widen)
            irt = post @ in_state.T  # t x g
            pool = np.stack([pp[:, in_grid].sum(axis=1) for pp in pool_post], axis=1)
            masses[:, :, j] = share * irt + (1.0 - share) * pool
        out.append(masses[inverse])
    return JointPosterior(names, out[0], out[1], share[inverse], weight)


class _Joint:
    """The keys laid out as a (tasks x groups) table, and the threshold rule on the joint
    posterior of each cell."""

    def __init__(self, tasks: list[Hashable], groups: list[Hashable], policy: SequentialPolicy):
        task_ids = {t: j for j, t in enumerate(dict.fromkeys(tasks))}
        group_ids = {g: j for j, g in enumerate(dict.fromkeys(groups))}
        self.row = np.array([task_ids[t] for t in tasks], dtype=int)
        self.col = np.array([group_ids[g] for g in groups], dtype=int)
        self.shape = (len(task_ids), len(group_ids))
        if len(set(zip(self.row.tolist(), self.col.tolist(), strict=True))) != len(tasks):
            raise ManifestError("prior 'joint': two keys have the same task and group")
        self.policy = policy

    def decide(self, tally: _Tally, active: set[int], fit: JointFit | None) -> JointFit:
        """Refit the model to every attempt so far, then band and stop the keys sampled this
        round (earlier stops keep the band they stopped with). Returns the fit."""
        policy = self.policy
        solves, attempts = tally.solves, tally.attempts
        s_tab, n_tab = np.zeros(self.shape), np.zeros(self.shape)
        s_tab[self.row, self.col] = solves
        n_tab[self.row, self.col] = attempts
        fixed = policy.joint_weight != "fit"
        start_weight = float(policy.joint_weight) if fixed else 0.5
        fit = fit_joint(
            s_tab,
            n_tab,
            start=fit,
            iterations=50 if fit is None else 10,
            smoothing=policy.smoothing,
            irt_weight=start_weight,
        )
        pooled = [
            _group_prior(
                solves[mine], attempts[mine], policy, pooled=bool(mine.sum() >= policy.pool_min)
            )
            for mine in (self.col == g for g in range(self.shape[1]))
        ]
        post = joint_band_posterior(
            s_tab, n_tab, fit, pooled, policy.bands, policy.margin, fit_weight=not fixed
        )
        strict, wide = post.strict[self.row, self.col], post.wide[self.row, self.col]
        for i in active:
            if attempts[i] == 0:
                continue
            _threshold_step(i, strict[i], wide[i], post.names, tally, policy)
        return dataclasses.replace(fit, irt_weight=post.irt_weight)
