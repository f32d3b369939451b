"""Calibration rows: the solver as typed fields, its label, and rows an older taskmint made."""

from __future__ import annotations

import pickle

import pytest

from taskmint.publish.schema import row_to_task, task_to_row, upgrade_task_row
from taskmint.records import Calibration


def _row(kind: str, name: str, hint_level: int = 0) -> Calibration:
    return Calibration(
        solver_kind=kind,  # type: ignore[arg-type]
        solver_name=name,
        hint_level=hint_level,
        attempts=4,
        solves=1,
        rate=0.25,
        interval_low=0.05,
        interval_high=0.7,
        date="2026-01-01",
        tokens=10,
        cost=0.5,
    )


@pytest.mark.parametrize(
    ("kind", "name", "hint_level", "label"),
    [
        ("reference", "null", 0, "reference/null"),
        ("reference", "oracle", 0, "reference/oracle"),
        ("model", "gpt-x", 0, "gpt-x"),
        ("model", "gpt-x", 2, "gpt-x@hint2"),
        ("model", "org/model-7b", 1, "org/model-7b@hint1"),
    ],
)
def test_a_label_names_the_row_and_parses_back(kind, name, hint_level, label):
    row = _row(kind, name, hint_level)
    assert row.label == label
    assert Calibration.parse_label(label) == (kind, name, hint_level)


def test_a_label_that_only_looks_like_a_hint_is_a_model_name():
    assert Calibration.parse_label("m@hints") == ("model", "m@hints", 0)
    assert Calibration.parse_label("@hint2") == ("model", "@hint2", 0)


def test_rows_pickle_and_older_pickles_are_upgraded(monkeypatch):
    row = _row("model", "gpt-x", 2)
    assert pickle.loads(pickle.dumps(row)) == row
    # a stored result of a run before the solver had fields: its one string, then the rest
    legacy = ["gpt-x@hint2", 4, 1, 0.25, 0.05, 0.7, "2026-01-01", 10, 0.5]
    monkeypatch.setattr(Calibration, "__getstate__", lambda self: legacy)
    old = pickle.dumps(row)
    monkeypatch.setattr(Calibration, "__getstate__", lambda self: legacy[:5])
    garbled = pickle.dumps(row)
    monkeypatch.undo()
    assert pickle.loads(old) == row
    with pytest.raises(pickle.UnpicklingError, match="another taskmint"):
        pickle.loads(garbled)


def test_rows_of_an_older_version_load_with_the_solver_split(published_tasks):
    task = published_tasks[0]
    row = task_to_row(task)
    assert {"solver_kind", "solver_name", "hint_level"} <= set(row["calibration"][0])
    legacy = dict(row)
    legacy["calibration"] = [
        {
            "model": Calibration.format_label(c["solver_kind"], c["solver_name"], c["hint_level"]),
            **{k: v for k, v in c.items() if k not in ("solver_kind", "solver_name", "hint_level")},
        }
        for c in row["calibration"]
    ]
    assert row_to_task(legacy) == task
    assert upgrade_task_row(legacy) == row
    assert upgrade_task_row(row) is row  # a current row is left alone
