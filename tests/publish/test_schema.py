"""The published schema: derived from the Task fields, documented column by column."""

from __future__ import annotations

import dataclasses
import pickle
from pathlib import Path

import pytest

from taskmint.errors import DatasetError
from taskmint.publish.schema import (
    COLUMN_DOCS,
    ENVIRONMENT_COLUMN_DOCS,
    ENVIRONMENT_FEATURES,
    FEATURE_NAMES,
    NOT_PUBLISHED,
    TASK_FEATURES,
    _record_features,
    row_to_task,
    task_to_row,
)
from taskmint.records import Calibration, Features, Task

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


def test_the_feature_columns_are_the_features_fields_in_order() -> None:
    assert FEATURE_NAMES == (
        "lines_removed",
        "units",
        "files",
        "complexity",
        "callers",
        "has_docstring",
        "whole_class",
        "scope_change",
        "fail_to_pass",
    )
    assert tuple(f.name for f in dataclasses.fields(Features)) == FEATURE_NAMES
    assert list(TASK_FEATURES["features"]) == list(FEATURE_NAMES)


BASE = Features(lines_removed=6, units=1, files=1, complexity=3, callers=2, has_docstring=True)


@pytest.mark.parametrize(
    ("features", "published"),
    [
        (  # stub_body, remove_function, a tree-sitter edit: the six every strategy measures
            dataclasses.replace(BASE, fail_to_pass=4),
            [6.0, 1.0, 1.0, 3.0, 2.0, 1.0, None, None, 4.0],
        ),
        (  # remove_class in methods mode, no docstring
            dataclasses.replace(BASE, has_docstring=False, whole_class=False, fail_to_pass=1),
            [6.0, 1.0, 1.0, 3.0, 2.0, 0.0, 0.0, None, 1.0],
        ),
        (  # remove_block that changed the function's locals
            dataclasses.replace(BASE, scope_change=True, fail_to_pass=2),
            [6.0, 1.0, 1.0, 3.0, 2.0, 1.0, None, 1.0, 2.0],
        ),
        (None, [None] * 9),  # a hand-made task: nothing measured
    ],
)
def test_features_publish_as_floats_and_load_back_exactly(
    published_tasks: list[Task], features: Features | None, published: list[float | None]
) -> None:
    task = dataclasses.replace(published_tasks[0], features=features)
    row = task_to_row(task)
    assert row["features"] == dict(zip(FEATURE_NAMES, published, strict=True))
    assert all(type(v) is float for v in row["features"].values() if v is not None)
    loaded = row_to_task(row)
    assert loaded == task and loaded.features == features
    if features is not None:
        assert loaded.features is not None
        assert type(loaded.features.lines_removed) is int
        assert type(loaded.features.has_docstring) is bool


def test_a_row_this_taskmint_did_not_write_is_refused(published_tasks: list[Task]) -> None:
    row = task_to_row(published_tasks[0])
    for features, why in (
        ({**row["features"], "callers": None}, "callers are null while others are set"),
        ({**row["features"], "lines_removed": 2.5}, "lines_removed is 2.5, not a whole number"),
        ({**row["features"], "has_docstring": 2.0}, "has_docstring is 2.0, not 0 or 1"),
    ):
        with pytest.raises(DatasetError, match=why):
            row_to_task({**row, "features": features})
    for column, value in (
        ("strategy", "rewrite_everything"),
        ("language", "cobol"),
        ("statement_style", "poem"),
    ):
        with pytest.raises(DatasetError, match=f"column '{column}' holds '{value}'"):
            row_to_task({**row, column: value})


def test_a_task_pickled_with_feature_pairs_loads_as_features(
    published_tasks: list[Task],
) -> None:
    """A result stored by a taskmint whose `Task.features` were (name, value) pairs is reused,
    its features upgraded; pairs no `Features` could hold make it a miss (UnpicklingError)."""
    task = published_tasks[0]
    assert task.features is not None
    old = dataclasses.replace(task)
    object.__setattr__(old, "features", task.features.as_pairs())
    assert pickle.loads(pickle.dumps(old)) == task
    object.__setattr__(old, "features", (("lines_removed", 3.0),))
    with pytest.raises(pickle.UnpicklingError, match="null while others are set"):
        pickle.loads(pickle.dumps(old))
    object.__setattr__(old, "features", ())
    assert pickle.loads(pickle.dumps(old)).features is None
