"""Typed, frozen records that flow between the pipeline's stages.

Every record is a frozen, slotted, keyword-only dataclass holding plain data (str, int, float,
bool, tuples and nested records), so it pickles, serializes to JSON with `to_json_dict`, and
is safe to cache. Identifiers are deterministic hashes of their inputs (`stable_id`), so a rerun
produces the same ids.

It is one module, longer than most, because it is the base every layer reads: split by stage,
its records would have to import each other across the stages they connect.
"""

from __future__ import annotations

import dataclasses
import functools
import hashlib
import json
import pickle
import types
import typing
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any, Literal, TypeVar

__all__ = [
    "LANGUAGE_NAMES",
    "STATEMENT_STYLES",
    "STRATEGY_NAMES",
    "Calibration",
    "Candidate",
    "CodeIndex",
    "Environment",
    "Features",
    "Language",
    "Outcome",
    "Reward",
    "RunReport",
    "SeedApp",
    "SeedManifest",
    "SkippedFile",
    "SolverKind",
    "StatementStyle",
    "Strategy",
    "Task",
    "TestResult",
    "Unit",
    "Verdict",
    "VerdictStatus",
    "as_language",
    "as_statement_style",
    "as_strategy",
    "from_json_dict",
    "stable_id",
    "to_json_dict",
]

_FROZEN = {"frozen": True, "slots": True, "kw_only": True}

Outcome = Literal["passed", "failed", "error", "skipped", "xfailed", "xpassed", "missing"]

VerdictStatus = Literal[
    "accepted",
    "no_failing_tests",  # the edit breaks nothing the suite checks
    "unstable",  # a test had mixed results across the broken runs
    "side_effects",  # a test outside FAIL_TO_PASS changed outcome
    "timeout",  # the broken tree's tests did not finish in time
    "sandbox_error",  # the run could not be performed (infrastructure)
    "internal_error",  # taskmint itself failed on this candidate (its type and message say how)
    "original_failed",  # the seed's own suite is not green enough to mint from
    "reference_failed",  # oracle did not get 1.0 or null did not get 0.0
    "leak",  # the removed code is visible from inside the sandbox
    "excise_failed",  # the edit could not be made
    "leaky_description",  # no statement or hint could be written without the removed code
    "weak_tests",  # the graded tests let too many mutants of the gold code pass
    "too_broad",  # a whole feature whose removal fails most of the suite
]


Language = Literal["python", "javascript", "typescript", "go", "rust"]
# The edits `excise` makes: the Python strategies, and `remove_method` of tree-sitter languages.
Strategy = Literal[
    "stub_body",
    "remove_function",
    "remove_class",
    "remove_block",
    "feature_cluster",
    "feature",
    "remove_method",
]
StatementStyle = Literal["spec", "issue"]

LANGUAGE_NAMES: tuple[Language, ...] = typing.get_args(Language)
STRATEGY_NAMES: tuple[Strategy, ...] = typing.get_args(Strategy)
STATEMENT_STYLES: tuple[StatementStyle, ...] = typing.get_args(StatementStyle)


def _member(
    value: object, allowed: tuple[str, ...], what: str, error: type[Exception], where: str
) -> str:
    if not isinstance(value, str) or value not in allowed:
        prefix = f"{where}: " if where else ""
        raise error(f"{prefix}unknown {what} {value!r}; choose one of {', '.join(allowed)}")
    return value


def as_language(value: object, *, error: type[Exception] = ValueError, where: str = "") -> Language:
    """`value` as a `Language`, else `error` naming the languages (`where` it came from first)."""
    return typing.cast(Language, _member(value, LANGUAGE_NAMES, "language", error, where))


def as_strategy(value: object, *, error: type[Exception] = ValueError, where: str = "") -> Strategy:
    """`value` as a `Strategy`, else `error` naming the strategies (`where` it came from first)."""
    return typing.cast(Strategy, _member(value, STRATEGY_NAMES, "strategy", error, where))


def as_statement_style(
    value: object, *, error: type[Exception] = ValueError, where: str = ""
) -> StatementStyle:
    """`value` as a `StatementStyle`, else `error` naming the styles (`where` it came from
    first)."""
    return typing.cast(
        StatementStyle, _member(value, STATEMENT_STYLES, "statement style", error, where)
    )


def stable_id(*parts: object, length: int = 16) -> str:
    """A short deterministic id: the sha256 of the parts' canonical JSON, in hex."""
    blob = json.dumps(parts, sort_keys=True, separators=(",", ":"), default=str)
    return hashlib.sha256(blob.encode("utf-8")).hexdigest()[:length]


@dataclass(**_FROZEN)
class SeedManifest:
    """A seed application's `taskmint.toml`: what it is and how its tests run."""

    name: str
    language: Language  # one with a profile (`taskmint.languages`), checked when parsed
    source_paths: tuple[str, ...]
    test_paths: tuple[str, ...]
    runner: str  # the test runner of the language's profile (`LanguageProfile.runner`)
    description: str = ""
    dependencies: tuple[str, ...] = ()
    pythonpath: tuple[str, ...] = (".",)
    timeout: float = 120.0
    # A test that runs longer than this (setup, call and teardown together) fails as hung, so
    # the original runs exclude it by name instead of timing out whole (0: no per-test limit).
    test_timeout: float = 30.0
    # The seed's own pytest plugins, (entry-point name, module): what an installed copy of the
    # project would register through its `pytest11` entry points. The seed is never installed,
    # so they are loaded from the workspace by name.
    plugins: tuple[tuple[str, str], ...] = ()
    # The pytest the suite runs under, as a version specifier ("<9", ">=8,<9.1"): what the
    # project declares when it rules out taskmint's own pytest, or an older one for a suite
    # the newest breaks (see `pipeline.fallback_manifest`). "": taskmint's own version.
    pytest: str = ""
    # The seed's own distribution as "name==version" ("" when the tree does not say): the
    # environment holds its metadata alone (a `.dist-info` with no code), so a test that asks
    # `importlib.metadata.version(name)` is answered as an installed copy would answer it.
    distribution: str = ""


@dataclass(**_FROZEN)
class SeedApp:
    """A content-addressed snapshot of a seed's source tree plus its manifest.

    `root` is the stored snapshot folder (never the user's own folder), and `snapshot_id` is the
    sha256 of every file's path, mode and content, so the same tree always gets the same id.
    """

    name: str
    snapshot_id: str
    root: str
    manifest: SeedManifest
    files: tuple[str, ...]
    origin: str


@dataclass(**_FROZEN)
class Environment:
    """Everything needed to run a seed's tests, built once and cached by `env_id`."""

    env_id: str
    kind: str  # what the language's profile builds: "venv" (Python), "node" (JavaScript)
    prefix: str  # the venv folder ("" for node)
    interpreter: str  # absolute path of python or node
    interpreter_prefix: str  # the folder the interpreter lives under (bound read-only)
    python_version: str
    dependencies: tuple[str, ...] = ()


@dataclass(**_FROZEN)
class Unit:
    """A function or method found by the indexer."""

    unit_id: str
    file: str
    qualname: str
    kind: Literal["function", "method"]
    start_line: int  # first line of the definition (decorators included)
    end_line: int
    body_start_line: int
    signature: str
    docstring: str | None
    complexity: int
    body_lines: int
    is_async: bool = False
    decorators: tuple[str, ...] = ()
    language: Language = "python"


@dataclass(**_FROZEN)
class SkippedFile:
    """A source file the indexer could not use, and why."""

    path: str
    reason: str


@dataclass(**_FROZEN)
class CodeIndex:
    """Every unit of a seed snapshot, plus the files that were skipped with a reason."""

    snapshot_id: str
    units: tuple[Unit, ...]
    skipped: tuple[SkippedFile, ...] = ()


@dataclass(**_FROZEN)
class Features:
    """The static difficulty features of a candidate, and of the task minted from it.

    One published column each (the `features` struct of the `tasks` config, in field order);
    None: not measured for this edit (a null in the dataset).
    """

    lines_removed: int  # lines the breaking patch removes
    units: int  # functions, methods and classes the edit touches
    files: int  # files the edit touches
    complexity: int  # cyclomatic complexity of the removed code (summed over units)
    callers: int  # units of the seed that call the removed code (the call graph's centrality)
    has_docstring: bool  # the removed unit(s) have a docstring
    whole_class: bool | None = None  # remove_class (Python): the class went (False: its methods)
    scope_change: bool | None = None  # remove_block: the removal changed the function's locals
    fail_to_pass: int | None = None  # a task's FAIL_TO_PASS count (None on a candidate)

    def as_pairs(self) -> tuple[tuple[str, float], ...]:
        """(name, value) of every measured feature as floats, in column order: the form a
        model fitted on features by name reads (`calibrate.predictor`)."""
        return tuple(
            (f.name, float(value))
            for f in dataclasses.fields(self)
            if (value := getattr(self, f.name)) is not None
        )

    @classmethod
    def from_floats(cls, values: Mapping[str, float | None]) -> Features | None:
        """The record of its published values by name (floats, None for a null), exactly as
        published; None when no feature was measured. Names that are no field are ignored.

        Raises `ValueError` for values no `Features` publishes: a fraction for a count, a
        flag other than 0 or 1, or some required features null while others are set.
        """
        kwargs: dict[str, int | bool] = {}
        for name, kind in _feature_kinds().items():
            value = values.get(name)
            if value is None:
                continue
            if kind is bool and value in (0.0, 1.0):
                kwargs[name] = value == 1.0
            elif kind is int and float(value).is_integer():
                kwargs[name] = int(value)
            else:
                wanted = "0 or 1" if kind is bool else "a whole number"
                raise ValueError(f"feature {name} is {value!r}, not {wanted}")
        if not kwargs:
            return None
        missing = [
            f.name
            for f in dataclasses.fields(cls)
            if f.default is dataclasses.MISSING and f.name not in kwargs
        ]
        if missing:
            raise ValueError(f"features {', '.join(missing)} are null while others are set")
        return cls(**kwargs)  # type: ignore[arg-type]


@functools.cache
def _feature_kinds() -> dict[str, type]:
    """Each field of `Features` -> `int` or `bool` (a published float converts back to it)."""
    hints = typing.get_type_hints(Features)
    return {
        f.name: bool if bool in (hints[f.name], *typing.get_args(hints[f.name])) else int
        for f in dataclasses.fields(Features)
    }


@dataclass(**_FROZEN)
class Candidate:
    """An edit that removes a feature, with the diffs that break and restore it."""

    candidate_id: str
    snapshot_id: str
    seed: str
    language: Language
    strategy: Strategy
    units: tuple[str, ...]  # qualified names, "path::Qual.name"
    files: tuple[str, ...]
    breaking_patch: str  # original -> broken, `git diff` form
    gold_patch: str  # broken -> original
    removed_code: str  # the lines the edit removed, for leak checks
    signature: str = ""
    docstring: str | None = None
    features: Features | None = None  # static difficulty features (None: not measured)
    # (file, first line, last line) of the original code the edit removed, for test selection
    spans: tuple[tuple[str, int, int], ...] = ()


@dataclass(**_FROZEN)
class TestResult:
    """One test's aggregated outcome in one run."""

    __test__ = False  # not a pytest test class

    test_id: str
    outcome: Outcome
    duration: float = 0.0
    message: str | None = None


@dataclass(**_FROZEN)
class RunReport:
    """Per-test outcomes of one run, read from the structured report (never from stdout)."""

    results: tuple[TestResult, ...]
    collection_errors: tuple[str, ...] = ()
    complete: bool = False  # the runner reported the end of its session
    exit_code: int | None = None
    timed_out: bool = False
    wall_time: float = 0.0
    output_tail: str = ""
    nonce_ok: bool = True
    # tests the project's own configuration deselected at collection (`-m`, `-k`, conftest)
    deselected: int = 0
    # the test that had started and not finished when the run ended ("" for none), and how
    # long it had been running when the report was read: the one a run ended from outside
    # was stuck in
    running: str = ""
    running_for: float = 0.0
    # "<plugin name>: <error>" of each pytest plugin of the environment that failed to load
    plugin_errors: tuple[str, ...] = ()
    # why the runner found the run tampered with ("" if it did not): a test process's records
    # that its reporter did not sign, canaries that came out wrong (the node harness)
    tampered: str = ""

    def outcome_map(self) -> dict[str, Outcome]:
        """Test id -> outcome."""
        return {r.test_id: r.outcome for r in self.results}


@dataclass(**_FROZEN)
class Verdict:
    """The result of validating one candidate: accepted, or a status and a reason."""

    candidate_id: str
    status: VerdictStatus
    reason: str
    fail_to_pass: tuple[str, ...] = ()
    pass_to_pass: tuple[str, ...] = ()
    flaky_tests: tuple[str, ...] = ()
    original_runs: int = 0
    broken_runs: int = 0
    tests_run: int = 0  # tests per broken run (fewer than the suite when selection was exact)
    wall_time: float = 0.0
    # stable on the original, mixed on the broken tree: dropped from both lists
    dropped_tests: tuple[str, ...] = ()
    test_time: float = 0.0  # summed durations of every test phase of the broken runs
    # (test id, assertion message) of FAIL_TO_PASS tests on the broken tree, for `describe`
    failure_messages: tuple[tuple[str, str], ...] = ()

    @property
    def accepted(self) -> bool:
        """Whether the candidate became a task."""
        return self.status == "accepted"


SolverKind = Literal["reference", "model"]


@dataclass(**_FROZEN)
class Calibration:
    """How often one solver solved a task: a reference solver (`null`, `oracle`), or a
    configured model given the task's first `hint_level` hints.

    `label` names the row as people write it (`reference/null`, `gpt-x`, `gpt-x@hint2`): for
    display and for solver names given on the command line, never stored.
    """

    solver_kind: SolverKind
    solver_name: str  # the reference solver's name, or the model's configured name
    hint_level: int  # hints the solver was given (0 for a reference solver)
    attempts: int
    solves: int
    rate: float
    interval_low: float
    interval_high: float
    date: str
    tokens: int = 0
    cost: float = 0.0

    @property
    def label(self) -> str:
        """`reference/<name>`, `<model>` or `<model>@hint<K>` (see `format_label`)."""
        return Calibration.format_label(self.solver_kind, self.solver_name, self.hint_level)

    @staticmethod
    def format_label(kind: SolverKind, name: str, hint_level: int = 0) -> str:
        """The label of a (solver kind, name, hint level) row."""
        if kind == "reference":
            return f"reference/{name}"
        return name if hint_level == 0 else f"{name}@hint{hint_level}"

    @staticmethod
    def parse_label(label: str) -> tuple[SolverKind, str, int]:
        """(solver kind, name, hint level) of a label: a solver named on the command line, or
        the one `model` string of rows written before the solver had fields of its own."""
        if label.startswith("reference/"):
            return "reference", label.removeprefix("reference/"), 0
        name, sep, level = label.rpartition("@hint")
        if sep and name and level.isdigit():
            return "model", name, int(level)
        return "model", label, 0

    def __setstate__(self, state: list[Any]) -> None:
        # A pickle is the field values in order (dataclass slots). One made before the solver
        # had fields of its own (a stored result of an older run) starts with its label
        # instead: it is upgraded, so the stored result is reused rather than misread.
        names = [f.name for f in dataclasses.fields(self)]
        if len(state) == len(names) - 2 and isinstance(state[0], str):
            state = [*Calibration.parse_label(state[0]), *state[1:]]
        if len(state) != len(names):
            raise pickle.UnpicklingError(
                f"a Calibration pickled by another taskmint ({len(state)} fields, not {len(names)})"
            )
        for name, value in zip(names, state, strict=True):
            object.__setattr__(self, name, value)


@dataclass(**_FROZEN)
class Reward:
    """What `verify(task, patch)` returns."""

    reward: float
    reason: str
    outcomes: tuple[TestResult, ...] = ()
    passed: int = 0
    expected: int = 0
    tampered: bool = False
    rejected_paths: tuple[str, ...] = ()
    wall_time: float = 0.0
    findings: tuple[str, ...] = ()  # the static scan's "path:line: what" (see verify.scan)
    # Non-empty when the sandbox failed (the grading says nothing about the patch): the reward
    # is 0 and must not be trained on; grade again.
    error: str = ""
    # The signal the test run died of (0: it exited, or timed out): a kill from outside looks
    # the same as the code killing itself, so the reward service grades such a run again.
    signal: int = 0


@dataclass(**_FROZEN)
class Task:
    """One published task: a row of the `tasks` config, SWE-bench column names where they exist."""

    instance_id: str
    seed: str
    snapshot_id: str
    env_id: str
    language: Language
    strategy: Strategy
    units: tuple[str, ...]
    files: tuple[str, ...]
    problem_statement: str
    hints: tuple[str, ...]
    breaking_patch: str
    patch: str  # the gold diff, as SWE-bench names it
    FAIL_TO_PASS: tuple[str, ...]
    PASS_TO_PASS: tuple[str, ...]
    test_paths: tuple[str, ...]
    source_paths: tuple[str, ...]
    test_command: str
    removed_code: str
    features: Features | None = None  # the candidate's, with fail_to_pass (None: not measured)
    calibration: tuple[Calibration, ...] = ()
    flaky_tests: tuple[str, ...] = ()
    validation_runs: int = 0
    validation_wall_time: float = 0.0
    created: str = ""
    band: str = ""  # the band of the best model's solve rate ("" before model calibration)
    retired: bool = False  # every configured model solves it at least 90% of the time
    extra: tuple[tuple[str, str], ...] = field(default=())
    original_runs: int = 0  # runs of the original suite (declared, reversed, shuffled orders)
    broken_runs: int = 0  # runs of the broken tree
    dropped_tests: tuple[str, ...] = ()  # mixed results on the broken tree (in neither list)
    statement_style: StatementStyle = "spec"  # the style of problem_statement
    statement_spec: str = ""  # the template statement as a precise specification
    statement_issue: str = ""  # the template statement as a user's issue report
    statement_source: str = "template"  # who wrote problem_statement: "template" or "llm:<model>"
    # FAIL_TO_PASS / PASS_TO_PASS ids held out of the policy's view (graded with the others)
    hidden_tests: tuple[str, ...] = ()
    # 1: the statement gives the interface of what was removed (signatures, docstrings);
    # 2: it describes the feature's behaviour in product terms, without the internals' names
    statement_level: int = 1
    # The test-strength gate: mutants of the gold code graded with the task's tests, and the
    # share of them some graded test fails on (None: not measured)
    mutation_score: float | None = None
    mutants: int = 0
    mutants_killed: int = 0
    # Where a loaded task came from (a dataset version URL); set by the loader, never published.
    origin: str = field(default="", compare=False)

    def __setstate__(self, state: list[Any]) -> None:
        # A pickle is the field values in order (dataclass slots). One made before `features`
        # was a record (a stored result of an older run) holds (name, value) pairs there: they
        # are upgraded, so the stored result is reused rather than misread.
        names = [f.name for f in dataclasses.fields(self)]
        if len(state) != len(names):
            raise pickle.UnpicklingError(
                f"a Task pickled by another taskmint ({len(state)} fields, not {len(names)})"
            )
        values = dict(zip(names, state, strict=True))
        if isinstance(values["features"], tuple):
            try:
                values["features"] = Features.from_floats(dict(values["features"]))
            except ValueError as exc:
                raise pickle.UnpicklingError(f"a Task pickled by another taskmint: {exc}") from None
        for name, value in values.items():
            object.__setattr__(self, name, value)


T = TypeVar("T")


def to_json_dict(record: Any) -> dict[str, Any]:
    """A record as plain JSON-able data (tuples become lists)."""
    if not dataclasses.is_dataclass(record) or isinstance(record, type):
        raise TypeError(f"not a record: {record!r}")
    return typing.cast(dict[str, Any], _plain(record))


def _plain(value: Any) -> Any:
    if dataclasses.is_dataclass(value) and not isinstance(value, type):
        return {f.name: _plain(getattr(value, f.name)) for f in dataclasses.fields(value)}
    if isinstance(value, tuple | list):
        return [_plain(v) for v in value]
    if isinstance(value, dict):
        return {k: _plain(v) for k, v in value.items()}
    return value


def from_json_dict(cls: type[T], data: dict[str, Any]) -> T:
    """Rebuild a record of type `cls` from `to_json_dict` output (unknown keys are ignored)."""
    hints = typing.get_type_hints(cls)
    kwargs = {}
    for f in dataclasses.fields(cls):  # type: ignore[arg-type]
        if f.name in data:
            kwargs[f.name] = _typed(hints[f.name], data[f.name])
    return cls(**kwargs)


def _typed(hint: Any, value: Any) -> Any:
    origin = typing.get_origin(hint)
    args = typing.get_args(hint)
    if value is None:
        return None
    if origin in (typing.Union, types.UnionType):
        non_none = [a for a in args if a is not type(None)]
        return _typed(non_none[0], value) if len(non_none) == 1 else value
    if origin is tuple:
        if len(args) == 2 and args[1] is Ellipsis:
            return tuple(_typed(args[0], v) for v in value)
        return tuple(_typed(a, v) for a, v in zip(args, value, strict=True))
    if dataclasses.is_dataclass(hint) and isinstance(value, dict):
        return from_json_dict(hint, value)  # type: ignore[arg-type]
    return value
