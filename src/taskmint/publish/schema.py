"""The published schema: `datasets.Features` of the `tasks` and `environments` configs.

The `tasks` features are derived from the fields of `taskmint.records.Task`, so a field added to
`Task` becomes a column without touching this module (its documentation in `COLUMN_DOCS`, the
dataset card and `docs/dataset.md` is required by a test). Rows convert to records and back
through converters compiled once from the same type hints, which keeps the streaming loader
fast (no per-row reflection).
"""

from __future__ import annotations

import dataclasses
import types
import typing
from collections.abc import Callable
from typing import Any

import pyarrow as pa
from datasets import Features, List, Value

from taskmint.errors import DatasetError
from taskmint.records import Calibration, Task
from taskmint.records import Features as StaticFeatures

__all__ = [
    "COLUMN_DOCS",
    "ENVIRONMENT_COLUMN_DOCS",
    "ENVIRONMENT_FEATURES",
    "ENVIRONMENT_SCHEMA",
    "FEATURE_NAMES",
    "NOT_PUBLISHED",
    "TASK_FEATURES",
    "TASK_SCHEMA",
    "row_to_task",
    "task_to_row",
    "upgrade_task_row",
]

# Static difficulty features, in the column order of the `features` struct: the fields of
# `records.Features`, in order (a float64 each, null when not measured).
FEATURE_NAMES: tuple[str, ...] = tuple(f.name for f in dataclasses.fields(StaticFeatures))

# Task fields that are not columns: `extra` is free-form local metadata, `origin` says where a
# loaded record came from (it is set by the loader, never stored).
NOT_PUBLISHED = frozenset({"extra", "origin"})

COLUMN_DOCS: dict[str, str] = {
    "instance_id": "Stable task id (a hash of the seed snapshot and the edit); SWE-bench name.",
    "seed": "Name of the seed application the task was minted from.",
    "snapshot_id": "sha256 of the seed's source tree; joins the `environments` config.",
    "env_id": "Hash of the test environment's inputs (interpreter, dependencies, tools).",
    "language": "Source language of the seed (`python`, `javascript`).",
    "strategy": "Excision strategy that made the task (`stub_body`, `remove_function`, ...).",
    "units": "Removed units as `path::Qualified.name`.",
    "files": "Files the task touches.",
    "problem_statement": "What the policy is asked to implement; SWE-bench name.",
    "hints": "Graded hints, weakest first.",
    "breaking_patch": "Diff from the original tree to the broken tree the policy starts from.",
    "patch": "The gold diff (broken -> original); SWE-bench name.",
    "FAIL_TO_PASS": "Test ids that fail on the broken tree and must pass; SWE-bench name.",
    "PASS_TO_PASS": "Test ids that pass on both trees and must keep passing; SWE-bench name.",
    "test_paths": "Test folders; restored from the task's own copy when verifying.",
    "source_paths": "Folders a policy patch may change; everything else is dropped.",
    "test_command": "The command a person would type to run the seed's tests.",
    "removed_code": "The lines the edit removed (for leak scans; never shown to a policy).",
    "features": "Static difficulty features (struct of floats, null when not measured).",
    "calibration": "Per solver and hint level: solver_kind (`reference` or `model`), "
    "solver_name, hint_level, attempts, solves, rate, Wilson interval, date, tokens, cost.",
    "flaky_tests": "Tests excluded because their outcome varied on the original tree.",
    "validation_runs": "Sandboxed test runs spent validating the task.",
    "validation_wall_time": "Seconds spent validating the task.",
    "created": "UTC time the task was minted (ISO 8601).",
    "band": "Difficulty band of the best model's solve rate (empty before model calibration).",
    "retired": "True when every configured model solves it at least 90% of the time.",
    "original_runs": "Runs of the original suite (declared, reversed, shuffled orders).",
    "broken_runs": "Runs of the broken tree.",
    "dropped_tests": "Tests with mixed results on the broken tree (in neither list).",
    "hidden_tests": "FAIL_TO_PASS / PASS_TO_PASS ids held out of the policy view (their test "
    "functions are cut from it) and graded with the others.",
    "statement_style": "Style of `problem_statement`: `spec` or `issue`.",
    "statement_spec": "The template statement written as a precise specification.",
    "statement_issue": "The template statement written as a user's issue report.",
    "statement_source": "Who wrote `problem_statement`: `template` or `llm:<model>`.",
    "statement_level": "1: the statement gives the removed interface (signatures, docstrings); "
    "2: it describes the feature's behaviour in product terms, without the internals' names.",
    "mutation_score": "Share of the gold code's mutants that some graded test fails on (null: "
    "not measured).",
    "mutants": "Mutants of the gold code graded by the test-strength gate.",
    "mutants_killed": "Of those, the mutants some graded test fails on.",
}

ENVIRONMENT_COLUMN_DOCS: dict[str, str] = {
    "snapshot_id": "sha256 of the seed's source tree (the key tasks reference).",
    "env_id": "Hash of the test environment's inputs.",
    "seed": "Name of the seed application.",
    "language": "Source language of the seed.",
    "manifest": "The seed's `taskmint.toml` as JSON (source and test paths, runner, deps).",
    "python_version": "Interpreter version the environment was built with.",
    "dependencies": "pip requirement strings of the seed.",
    "files": "Every file of the snapshot, sorted.",
    "archive": "The original tree as a deterministic tar.gz.",
}

_SCALARS: dict[Any, str] = {str: "string", int: "int64", float: "float64", bool: "bool"}


def _feature(name: str, hint: Any) -> Any:
    """The `datasets` feature type of one record field."""
    if name == "features":
        return {n: Value("float64") for n in FEATURE_NAMES}
    origin = typing.get_origin(hint)
    args = typing.get_args(hint)
    if hint in _SCALARS:
        return Value(_SCALARS[hint])
    if origin is typing.Literal and all(isinstance(a, str) for a in args):
        return Value("string")
    if origin in (typing.Union, types.UnionType):
        non_none = [a for a in args if a is not type(None)]
        if len(non_none) == 1:
            return _feature(name, non_none[0])
    if origin is tuple and len(args) == 2 and args[1] is Ellipsis:
        item = args[0]
        if dataclasses.is_dataclass(item):
            return List(_record_features(item))  # type: ignore[arg-type]
        if typing.get_origin(item) is tuple and len(typing.get_args(item)) == 2:
            key, value = typing.get_args(item)
            return List({"name": _feature(name, key), "value": _feature(name, value)})
        return List(_feature(name, item))
    raise TypeError(
        f"Task field {name!r} has type {hint!r}, which taskmint.publish.schema cannot map to a "
        "column; use str/int/float/bool, an optional of one, or a tuple of those or of records"
    )


def _record_features(cls: type) -> dict[str, Any]:
    hints = typing.get_type_hints(cls)
    return {
        f.name: _feature(f.name, hints[f.name])
        for f in dataclasses.fields(cls)
        if f.name not in NOT_PUBLISHED
    }


TASK_FEATURES = Features(_record_features(Task))
ENVIRONMENT_FEATURES = Features(
    {
        "snapshot_id": Value("string"),
        "env_id": Value("string"),
        "seed": Value("string"),
        "language": Value("string"),
        "manifest": Value("string"),
        "python_version": Value("string"),
        "dependencies": List(Value("string")),
        "files": List(Value("string")),
        "archive": Value("binary"),
    }
)
TASK_SCHEMA: pa.Schema = TASK_FEATURES.arrow_schema
ENVIRONMENT_SCHEMA: pa.Schema = ENVIRONMENT_FEATURES.arrow_schema


# --- rows <-> records, compiled once per field ---------------------------------------------

_Conv = Callable[[Any], Any]


def _identity(value: Any) -> Any:
    return value


def _to_record(name: str, hint: Any) -> _Conv:
    """Converter from a parquet value to the record field's Python value."""
    if name == "features":
        return _features_of_row
    origin = typing.get_origin(hint)
    args = typing.get_args(hint)
    if origin is typing.Literal:
        return _literal_checker(name, args)
    if origin in (typing.Union, types.UnionType):
        non_none = [a for a in args if a is not type(None)]
        inner = _to_record(name, non_none[0]) if len(non_none) == 1 else _identity
        return lambda v: None if v is None else inner(v)
    if origin is tuple and len(args) == 2 and args[1] is Ellipsis:
        item = args[0]
        if dataclasses.is_dataclass(item):
            make = _row_maker(item)  # type: ignore[arg-type]
            return lambda v: tuple(make(x) for x in v or ())
        if typing.get_origin(item) is tuple:
            return lambda v: tuple((x["name"], x["value"]) for x in v or ())
        return lambda v: tuple(v) if v else ()
    return _identity


def _features_of_row(value: dict[str, float | None] | None) -> StaticFeatures | None:
    """The `features` struct as the record it was written from (None: nothing measured)."""
    try:
        return StaticFeatures.from_floats(value or {})
    except ValueError as exc:
        raise DatasetError(f"column 'features' cannot be read back: {exc}") from None


def _literal_checker(name: str, allowed: tuple[Any, ...]) -> _Conv:
    """Converter for a `Literal` field: the value itself, or a `DatasetError` naming the
    values this taskmint knows (a dataset written by a newer one may hold others)."""
    known = frozenset(allowed)

    def check(value: Any) -> Any:
        if value not in known:
            raise DatasetError(
                f"column {name!r} holds {value!r}, not one of {', '.join(map(str, allowed))}: "
                "written by another taskmint version? Load it with that version"
            )
        return value

    return check


def _upgrade_calibration(entry: dict[str, Any]) -> dict[str, Any]:
    """A calibration entry of a version written before the solver had fields of its own: its
    one `model` string (`reference/null`, `gpt-x`, `gpt-x@hint2`) becomes `solver_kind`,
    `solver_name` and `hint_level`. A current entry comes back as it is."""
    if entry.get("solver_kind") is not None or entry.get("model") is None:
        return entry
    kind, name, hint_level = Calibration.parse_label(entry["model"])
    rest = {k: v for k, v in entry.items() if k != "model"}
    return {"solver_kind": kind, "solver_name": name, "hint_level": hint_level, **rest}


# Per record type: how an entry written by an older taskmint is brought to the current layout.
_UPGRADES: dict[type, Callable[[dict[str, Any]], dict[str, Any]]] = {
    Calibration: _upgrade_calibration,
}


def upgrade_task_row(row: dict[str, Any]) -> dict[str, Any]:
    """A `tasks` row read from a version an older taskmint wrote, in the current layout (rows
    republished as they are, by `retract`, keep every value)."""
    entries = row.get("calibration") or []
    upgraded = [_upgrade_calibration(e) for e in entries]
    if all(new is old for new, old in zip(upgraded, entries, strict=True)):
        return row
    return {**row, "calibration": upgraded}


def _row_maker(cls: type) -> Callable[..., Any]:
    hints = typing.get_type_hints(cls)
    convs = [
        (f.name, _to_record(f.name, hints[f.name]))
        for f in dataclasses.fields(cls)
        if f.name not in NOT_PUBLISHED
    ]
    upgrade = _UPGRADES.get(cls)

    def make(row: dict[str, Any], **fixed: Any) -> Any:
        # Columns missing from an older version keep the field's default; unknown columns
        # (from a newer taskmint) are ignored.
        if upgrade is not None:
            row = upgrade(row)
        kwargs = {n: conv(row[n]) for n, conv in convs if n in row and row[n] is not None}
        return cls(**kwargs, **fixed)

    return make


def _from_record(name: str, hint: Any) -> _Conv:
    if name == "features":
        return _features_row
    origin = typing.get_origin(hint)
    args = typing.get_args(hint)
    if origin is tuple and len(args) == 2 and args[1] is Ellipsis:
        item = args[0]
        if dataclasses.is_dataclass(item):
            to_row = _record_dumper(item)  # type: ignore[arg-type]
            return lambda v: [to_row(x) for x in v]
        if typing.get_origin(item) is tuple:
            return lambda v: [{"name": a, "value": b} for a, b in v]
        return list
    return _identity


def _features_row(features: StaticFeatures | None) -> dict[str, float | None]:
    """The `features` struct: every column, a float or null."""
    values = dict(features.as_pairs()) if features is not None else {}
    return {n: values.get(n) for n in FEATURE_NAMES}


def _record_dumper(cls: type) -> Callable[[Any], dict[str, Any]]:
    hints = typing.get_type_hints(cls)
    convs = [
        (f.name, _from_record(f.name, hints[f.name]))
        for f in dataclasses.fields(cls)
        if f.name not in NOT_PUBLISHED
    ]
    return lambda rec: {n: conv(getattr(rec, n)) for n, conv in convs}


_make_task = _row_maker(Task)
_dump_task = _record_dumper(Task)


def task_to_row(task: Task) -> dict[str, Any]:
    """A task as a row of the `tasks` config."""
    return _dump_task(task)


def row_to_task(row: dict[str, Any], *, origin: str = "") -> Task:
    """A row of the `tasks` config as a `Task` (`origin`: where it was loaded from)."""
    if origin and "origin" in Task.__dataclass_fields__:
        return typing.cast(Task, _make_task(row, origin=origin))
    return typing.cast(Task, _make_task(row))
