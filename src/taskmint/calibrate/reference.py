"""The reference solvers and the solve-rate interval."""

from __future__ import annotations

import datetime as dt
import math
from collections.abc import Callable

from taskmint.records import Calibration, Reward, Task

__all__ = ["REFERENCE_SOLVERS", "calibrate_reference", "wilson_interval"]

# name -> (patch to submit, reward it must get)
REFERENCE_SOLVERS: dict[str, tuple[Callable[[Task], str], float]] = {
    "null": (lambda task: "", 0.0),
    "oracle": (lambda task: task.patch, 1.0),
}
# A solver that must get 0 is decided by its first failing test.
Verifier = Callable[[Task, str, bool], Reward]


def wilson_interval(solves: int, attempts: int, z: float = 1.96) -> tuple[float, float]:
    """The Wilson score interval for a solve rate."""
    if attempts == 0:
        return 0.0, 1.0
    p = solves / attempts
    denom = 1 + z * z / attempts
    centre = (p + z * z / (2 * attempts)) / denom
    half = z * math.sqrt(p * (1 - p) / attempts + z * z / (4 * attempts * attempts)) / denom
    return round(max(0.0, centre - half), 4), round(min(1.0, centre + half), 4)


def calibrate_reference(
    task: Task,
    verify: Verifier,
    *,
    solvers: tuple[str, ...] = ("null", "oracle"),
    today: str | None = None,
) -> tuple[tuple[Calibration, ...], str | None]:
    """Run the reference solvers; returns their calibrations and a failure reason (or None).

    `verify(task, patch, fail_fast)` grades one patch.
    """
    date = today or dt.date.today().isoformat()
    out: list[Calibration] = []
    failure = None
    for name in solvers:
        make_patch, must_get = REFERENCE_SOLVERS[name]
        reward = verify(task, make_patch(task), must_get == 0.0)
        solved = int(reward.reward >= 1.0)
        low, high = wilson_interval(solved, 1)
        out.append(
            Calibration(
                solver_kind="reference",
                solver_name=name,
                hint_level=0,
                attempts=1,
                solves=solved,
                rate=float(solved),
                interval_low=low,
                interval_high=high,
                date=date,
            )
        )
        if reward.reward != must_get and failure is None:
            failure = (
                f"{name} solver got reward {reward.reward}, expected {must_get}: {reward.reason}"
            )
    return tuple(out), failure
