"""The published schema: derived from the Task fields, documented column by column."""

from __future__ import annotations

import dataclasses
from pathlib import Path

import pytest

from taskmint.publish.schema import (
    COLUMN_DOCS,
    ENVIRONMENT_COLUMN_DOCS,
    ENVIRONMENT_FEATURES,
    NOT_PUBLISHED,
    TASK_FEATURES,
    _record_features,
    row_to_task,
    task_to_row,
)
from taskmint.records import Calibration, Task

DOCS = Path(__file__).parents[2] / "docs" / "dataset.md"


def test_columns_are_the_task_fields() -> None:
    fields = [f.name for f in dataclasses.fields(Task) if f.name not in NOT_PUBLISHED]
    assert list(TASK_FEATURES) == fields


def test_a_new_task_field_gets_a_column() -> None:
    grown = dataclasses.make_dataclass(
        "Grown",
        [
            ("instance_id", str),
            ("difficulty", float),
            ("tags", tuple[str, ...]),
            ("notes", str | None),
            ("pairs", tuple[tuple[str, int], ...]),
            ("solvers", tuple[Calibration, ...]),
        ],
    )
    feats = _record_features(grown)
    assert list(feats) == ["instance_id", "difficulty", "tags", "notes", "pairs", "solvers"]
    assert str(feats["difficulty"]) == "Value('float64')"
    assert str(feats["tags"]) == "List(Value('string'))"
    assert set(feats["solvers"].feature) == {f.name for f in dataclasses.fields(Calibration)}
    odd = dataclasses.make_dataclass("Odd", [("when", dict)])
    with pytest.raises(TypeError, match="cannot map to a column"):
        _record_features(odd)


def test_card_documents_every_column(tiny_dataset: Path) -> None:
    card = (tiny_dataset / "README.md").read_text()
    docs = DOCS.read_text()
    for features, column_docs in (
        (TASK_FEATURES, COLUMN_DOCS),
        (ENVIRONMENT_FEATURES, ENVIRONMENT_COLUMN_DOCS),
    ):
        undocumented = [c for c in features if not column_docs.get(c, "").strip()]
        assert not undocumented, f"add {undocumented} to COLUMN_DOCS in publish/schema.py"
        assert set(column_docs) == set(features), "COLUMN_DOCS names a column that is gone"
        for column, text in column_docs.items():
            assert f"| `{column}` |" in card and text in card, f"{column} is not in the card"
            assert f"| `{column}` |" in docs, f"document {column} in docs/dataset.md"


def test_rows_round_trip(published_tasks: list[Task]) -> None:
    for task in published_tasks:
        assert row_to_task(task_to_row(task)) == task
    row = task_to_row(published_tasks[0])
    assert set(row) == set(TASK_FEATURES)
    # a version written before a column existed still loads: the field takes its default
    del row["dropped_tests"]
    assert row_to_task(row).dropped_tests == ()
