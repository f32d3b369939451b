"""Sequential solve-rate estimation: sample attempts until the band is clear, not a fixed k.

Per (task, model) key, attempts are drawn in rounds. After each round the posterior of the key's
solve rate is computed on a grid, with a prior pooled over every key of the same model (an
empirical-Bayes prior: the nonparametric maximum-likelihood mixing distribution, smoothed
towards uniform), so a model that solves most tasks always or never - as real models do - needs
few attempts to place most tasks. A key stops when the posterior puts `confidence` of its mass
inside one band widened by `margin` on each side (the indifference zone: no finite sample
resolves a rate sitting on a band edge), or at `cap` attempts: precisely, when the band with the
most posterior mass holds `confidence` of it once widened by `margin`. That band is its band.
This is `rule = "threshold"`, the default. With `rule = "optimal"` (and a pooled prior), a key
stops where `posterior.stopping_table` says: the Bayes-optimal rule for the prior over states
(attempts, solves), for an expected misplacement of at most `target_error` per key on average,
not per key. The recorded rate and interval are the plain ones (solves / attempts, Wilson),
independent of the prior.

The solve rates of different models on one task are strongly correlated: the task's difficulty
is shared. With `run_sequential(..., task=...)` (and `prior = "auto"` or `"joint"`), each key's
prior also draws on the other keys of its task: an item-response model, p = sigmoid(slope_t *
(ability_g - difficulty_t)), is fitted to every attempt so far each round (`joint.fit_joint`:
each task's difficulty and slope integrated out on a grid, the groups' abilities and the
distributions of difficulty and slope by marginal maximum likelihood), and a key's prior is what
it predicts from the other keys of the task, mixed with the pooled prior
(`joint.joint_band_posterior`) so the key's own attempts can overturn the prediction. The
stopping rule is unchanged.

Attempts the endpoint broke (`None` outcomes) are not counted; a key with too many of them in a
row stops with an error instead of a band. When to stop is a `policy.SequentialPolicy`.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Callable, Hashable, Sequence
from dataclasses import dataclass
from typing import Generic, TypeVar

import numpy as np

from taskmint.calibrate.bands import band_edges
from taskmint.calibrate.joint import JointFit, fit_joint, joint_band_posterior
from taskmint.calibrate.policy import SequentialPolicy
from taskmint.calibrate.posterior import GRID, band_posterior, fit_prior, stopping_table
from taskmint.calibrate.reference import wilson_interval
from taskmint.errors import ManifestError

__all__ = ["Estimate", "Sampler", "run_sequential"]

K = TypeVar("K", bound=Hashable)


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
    return np.full(len(GRID), 1.0 / len(GRID))


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
