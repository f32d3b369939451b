"""When sequential sampling stops: the `SequentialPolicy` (see `sequential` for the rules)."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Literal

from taskmint.calibrate.models import DEFAULT_BANDS, CalibrationConfig
from taskmint.errors import ManifestError

__all__ = ["SequentialPolicy"]


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
