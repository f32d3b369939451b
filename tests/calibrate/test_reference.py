"""Reference solvers and the interval on a solve rate."""

from __future__ import annotations

import pytest

from taskmint.calibrate import calibrate_reference, wilson_interval
from taskmint.records import Reward


def test_wilson_interval():
    assert wilson_interval(0, 0) == (0.0, 1.0)
    low, high = wilson_interval(8, 10)
    assert 0.49 < low < 0.5 and 0.94 < high < 0.95
    assert wilson_interval(10, 10)[1] == 1.0


def test_reference_solvers_pass_and_fail(published_tasks):
    task = published_tasks[0]
    good = lambda t, patch, fast: Reward(reward=1.0 if patch else 0.0, reason="")  # noqa: E731
    calibration, failure = calibrate_reference(task, good, today="2026-01-01")
    assert failure is None
    assert [(c.solver_kind, c.solver_name, c.hint_level, c.solves) for c in calibration] == [
        ("reference", "null", 0, 0),
        ("reference", "oracle", 0, 1),
    ]
    assert [c.label for c in calibration] == ["reference/null", "reference/oracle"]
    always = lambda t, patch, fast: Reward(reward=1.0, reason="ok")  # noqa: E731
    _, failure = calibrate_reference(task, always)
    assert failure is not None and failure.startswith("null solver got reward 1.0")


@pytest.mark.parametrize("solver", ["null", "oracle"])
def test_published_tasks_carry_reference_calibration(published_tasks, solver):
    for task in published_tasks:
        cal = {(c.solver_kind, c.solver_name): c for c in task.calibration}["reference", solver]
        assert cal.attempts == 1
        assert cal.solves == (1 if solver == "oracle" else 0)
