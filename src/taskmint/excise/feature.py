"""Strategy `feature`: a whole feature goes, across files, at FeatureBench scale.

A feature is the code that a cohesive group of tests exercises and the rest of the suite needs
little. It is found from the per-test coverage map:

- Groups of tests: every test file, every test class of a file with several, every test
  folder with several test files, and for every source module the tests that run any of its
  units (when they are at most `MAX_MODULE_SHARE` of the suite): a module's feature is then
  the whole module, with what it alone uses in other files.
- A unit (function or method) belongs to a group's feature when the run phase of some test of
  the group executed its body and at most `MAX_OUTSIDE_SHARE` of the tests that did are outside
  the group, and no more than `max_outside` of them (default: 2% of the rest of the suite, at
  least 1): the rest of the suite needs it little. Units whose body ran where every test may
  depend on it (import time, session fixtures: the map's -1) stay.
- Private helpers come along: a unit whose name starts with `_`, that no test outside the
  group ran, and whose every caller in the seed is already in the feature.
- A class goes whole when every method of it is in the feature or ran in no test, and removing
  it breaks no import (see below); otherwise its methods in the feature go one by one.
- When the feature is larger than the size allows, the least specific units are left out
  first (most outside tests, then smallest).
- A feature whose code more than `MAX_FAILING_SHARE` of the suite runs is skipped: removing
  it would fail most of the suite, which is not a feature.

Each unit is removed (its `def` or `class` statement, as `remove_function` and `remove_class`
do) when nothing imports it by name except test files whose every test is in the group (those
test files then fail to import: their tests are the feature's), nothing uses it at import time
and it is in no `__all__`; otherwise its body is stubbed (`stub_body`), so its name, signature
and docstring stay for the code and tests that import it. The broken tree therefore still
imports, and what the rest of the suite needs stays (validation checks that it passes).

`FeatureSize` bounds the result: by default 100 to 1,500 removed lines, at least 2 units and at
least 2 files. A group whose feature falls outside is a `SkippedFile` saying why. Test
selection cannot be exact for removed definitions: validation runs the full suite.
"""

from __future__ import annotations

import random
from collections.abc import Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Final

from taskmint.config import FeatureSize
from taskmint.excise.candidate import check_valid, make_candidate
from taskmint.excise.context import ExciseContext, unit_key
from taskmint.excise.feature_cluster import body_tests
from taskmint.excise.remove_class import check_class, class_removed_from
from taskmint.excise.remove_function import check_function, removed_from
from taskmint.excise.stub_body import stub_body
from taskmint.index.coverage import CoverageMap
from taskmint.index.locate import locate_defs
from taskmint.index.python import SourceSkipped
from taskmint.records import Candidate, SkippedFile, Unit

__all__ = [
    "MAX_FAILING_SHARE",
    "MAX_MODULE_SHARE",
    "MAX_OUTSIDE_SHARE",
    "STRATEGY",
    "Feature",
    "candidates",
    "features",
    "group_tests",
    "module_groups",
]

STRATEGY: Final = "feature"
# The most of a unit's tests that may lie outside the group for the unit to be the group's.
MAX_OUTSIDE_SHARE = 0.25
# The most of the suite a module's tests may be for them to form a group of their own.
MAX_MODULE_SHARE = 0.3
# The most of the suite that may run the removed code: the rest must be the larger part.
MAX_FAILING_SHARE = 0.5
_ABSTRACT = ("overload", "typing.overload", "abstractmethod", "abc.abstractmethod")


def _path(test_id: str) -> str:
    return test_id.partition("::")[0]


def group_tests(tests: Sequence[str]) -> dict[str, frozenset[int]]:
    """Group name -> indices of its tests: each test file, each test class of a file with
    several groups (classes or module-level tests), each folder with several test files."""
    by_file: dict[str, set[int]] = {}
    by_class: dict[str, dict[str, set[int]]] = {}
    for i, test in enumerate(tests):
        path, _, rest = test.partition("::")
        by_file.setdefault(path, set()).add(i)
        parts = rest.split("::")
        sub = parts[0] if len(parts) > 1 else ""
        by_class.setdefault(path, {}).setdefault(sub, set()).add(i)
    out: dict[str, frozenset[int]] = {p: frozenset(ids) for p, ids in by_file.items()}
    for path, classes in by_class.items():
        if len(classes) > 1:
            for cls, ids in classes.items():
                if cls:
                    out[f"{path}::{cls}"] = frozenset(ids)
    by_dir: dict[str, set[str]] = {}
    for path in by_file:
        by_dir.setdefault(path.rpartition("/")[0] or ".", set()).add(path)
    for folder, paths in by_dir.items():
        if len(paths) > 1 and len(paths) < len(by_file):
            out[f"{folder}/"] = frozenset().union(*(by_file[p] for p in paths))
    return out


def module_groups(
    units: Sequence[Unit], touching: Mapping[str, set[int]], suite: int
) -> dict[str, frozenset[int]]:
    """For each source module: the tests that run any of its units, when they are at most
    `MAX_MODULE_SHARE` of the suite (a module most tests need is no feature)."""
    per_file: dict[str, set[int]] = {}
    for unit in units:
        per_file.setdefault(unit.file, set()).update(touching.get(unit_key(unit), ()))
    return {
        f"{file} (module)": frozenset(tests)
        for file, tests in per_file.items()
        if tests and len(tests) <= MAX_MODULE_SHARE * suite
    }


@dataclass(slots=True, kw_only=True)
class Feature:
    """A group's feature before it is cut: its units with their tests outside the group."""

    group: str
    tests: frozenset[int]
    units: list[Unit] = field(default_factory=list)
    outside: dict[str, int] = field(default_factory=dict)  # unit key -> tests outside the group


def _outermost(units: Sequence[Unit]) -> list[Unit]:
    """Functions and methods not nested in another function (a removal takes nested ones)."""
    functions = [u for u in units if u.kind == "function"]
    out = []
    for u in units:
        inside = any(
            o is not u and o.file == u.file and o.start_line < u.start_line <= o.end_line
            for o in functions
        )
        if not inside:
            out.append(u)
    return out


def features(
    ctx: ExciseContext, cmap: CoverageMap, *, max_outside: int | None = None
) -> list[Feature]:
    """Every test group's feature with at least one unit, in group order (see the module doc).

    `max_outside` (tests outside the group that may run a unit) defaults to 2% of the tests
    outside the group, at least 1.
    """
    touching: dict[str, set[int]] = {}
    units: list[Unit] = []
    for unit in _outermost([u for u in ctx.index.units if u.file in ctx.sources]):
        if any(d.split("(")[0] in _ABSTRACT for d in unit.decorators):
            continue
        tests = body_tests(cmap, unit)
        if tests is None:
            continue
        touching[unit_key(unit)] = tests
        units.append(unit)
    suite = len(cmap.tests)
    groups = dict(group_tests(cmap.tests))
    groups.update(module_groups(units, touching, len(cmap.tests)))
    out: list[Feature] = []
    for group, members in sorted(groups.items()):
        feature = Feature(group=group, tests=members)
        limit = max_outside if max_outside is not None else max(1, (suite - len(members)) // 50)
        for unit in units:
            tests = touching[unit_key(unit)]
            if not tests & members:
                continue
            outside = len(tests - members)
            if outside > limit or outside > MAX_OUTSIDE_SHARE * len(tests):
                continue
            feature.units.append(unit)
            feature.outside[unit_key(unit)] = outside
        if not feature.units:
            continue
        _add_helpers(ctx, feature, units, touching)
        out.append(feature)
    return out


def _add_helpers(
    ctx: ExciseContext, feature: Feature, units: Sequence[Unit], touching: Mapping[str, set[int]]
) -> None:
    """Private helpers that only the feature calls and no test outside the group runs."""
    keys = {unit_key(u) for u in feature.units}
    changed = True
    while changed:
        changed = False
        for unit in units:
            key = unit_key(unit)
            if key in keys or not unit.qualname.rpartition(".")[2].startswith("_"):
                continue
            if unit.qualname.rpartition(".")[2].startswith("__"):
                continue  # dunders are called by the language, not by name
            callers = ctx.callers.get(key, frozenset())
            if not callers or not callers <= keys or touching[key] - feature.tests:
                continue
            feature.units.append(unit)
            feature.outside[key] = 0
            keys.add(key)
            changed = True


def _allowed_importers(cmap: CoverageMap, members: frozenset[int]) -> frozenset[str]:
    """Test files whose every test is in the group: they may stop importing."""
    per_file: dict[str, bool] = {}
    for i, test in enumerate(cmap.tests):
        path = _path(test)
        per_file[path] = per_file.get(path, True) and i in members
    return frozenset(p for p, all_in in per_file.items() if all_in)


def _reach(cmap: CoverageMap, units: Sequence[Unit]) -> int:
    """How many tests run a body of `units`: the tests the removal can make fail (a class goes
    whole only when no other test runs its other methods)."""
    reached: set[int] = set()
    for unit in units:
        reached |= body_tests(cmap, unit) or set()
    return len(reached)


def _line_cost(unit: Unit) -> int:
    return unit.end_line - unit.start_line + 1


def _trim(feature: Feature, size: FeatureSize) -> list[Unit]:
    """The units kept under the size's line maximum, the most specific first."""
    ranked = sorted(
        feature.units,
        key=lambda u: (feature.outside[unit_key(u)], -_line_cost(u), u.unit_id),
    )
    high = size.lines[1]
    if high is None:
        return ranked
    kept, total = [], 0
    for unit in ranked:
        cost = _line_cost(unit)
        if total + cost > high:
            continue
        kept.append(unit)
        total += cost
    return kept


@dataclass(frozen=True, slots=True, kw_only=True)
class _Plan:
    """What happens to each unit of a feature."""

    classes: dict[str, list[str]]  # file -> top-level classes removed whole
    removed: dict[str, list[Unit]]  # file -> functions and methods removed
    stubbed: dict[str, list[Unit]]  # file -> functions and methods stubbed


def _plan(
    ctx: ExciseContext, units: Sequence[Unit], allowed: frozenset[str], members: frozenset[int]
) -> _Plan:
    keys = {unit_key(u) for u in units}
    classes: dict[str, list[str]] = {}
    removed: dict[str, list[Unit]] = {}
    stubbed: dict[str, list[Unit]] = {}
    by_class: dict[tuple[str, str], list[Unit]] = {}
    for unit in units:
        if unit.kind == "method" and "." in unit.qualname:
            by_class.setdefault((unit.file, unit.qualname.split(".")[0]), []).append(unit)
    whole: set[str] = set()
    for file, cls in sorted(by_class):
        own = [u for u in ctx.units_of(file) if u.qualname.startswith(f"{cls}.")]
        others = [u for u in own if unit_key(u) not in keys]
        if any(_runs_outside(ctx, u, members) for u in others):
            continue  # a test outside the group runs a method outside the feature: it stays
        try:
            why = check_class(ctx, file, cls, "whole", allowed_importers=allowed)
        except (LookupError, SourceSkipped, KeyError):
            continue
        if why is None:
            classes.setdefault(file, []).append(cls)
            whole.update(unit_key(u) for u in own)
    for unit in units:
        key = unit_key(unit)
        if key in whole:
            continue
        try:
            why = check_function(ctx, unit, allowed_importers=allowed)
        except (LookupError, SourceSkipped, KeyError):
            why = "not found"
        (removed if why is None else stubbed).setdefault(unit.file, []).append(unit)
    return _Plan(classes=classes, removed=removed, stubbed=stubbed)


def _runs_outside(ctx: ExciseContext, unit: Unit, members: frozenset[int]) -> bool:
    """Whether a test outside the group (or code shared by all) runs the unit's body."""
    cmap = ctx.coverage
    if cmap is None:
        return True
    tests = body_tests(cmap, unit)
    return tests is None or bool(tests - members)


def _apply(ctx: ExciseContext, plan: _Plan) -> tuple[dict[str, bytes], list[str], list[tuple]]:
    """New contents of every touched file, the removed/stubbed unit keys and their spans.

    A unit that cannot be removed after an earlier edit of its file is stubbed instead; one
    that cannot be stubbed either is left as it is."""
    edits: dict[str, bytes] = {}
    keys: list[str] = []
    spans: list[tuple[str, int, int]] = []
    files = sorted(set(plan.classes) | set(plan.removed) | set(plan.stubbed))
    for file in files:
        source = ctx.sources[file]
        original = ctx.located(file)
        for cls in plan.classes.get(file, []):
            site = original.classes[cls]
            source = class_removed_from(locate_defs(source), cls, mode="whole")
            keys.append(f"{file}::{cls}")
            keys += [unit_key(u) for u in ctx.units_of(file) if u.qualname.startswith(f"{cls}.")]
            spans.append((file, site.start_line, site.end_line))
        stubs = list(plan.stubbed.get(file, []))
        for unit in sorted(plan.removed.get(file, []), key=lambda u: -u.start_line):
            try:
                source = removed_from(locate_defs(source), unit.qualname)
            except LookupError:
                stubs.append(unit)
                continue
            keys.append(unit_key(unit))
            spans.append((file, unit.start_line, unit.end_line))
        for unit in stubs:
            try:
                source = stub_body(source, unit.qualname)
            except LookupError:
                continue
            keys.append(unit_key(unit))
            spans.append((file, unit.body_start_line, unit.end_line))
        if source != ctx.sources[file]:
            edits[file] = source
    return edits, sorted(set(keys)), sorted(spans)


# The most lines an edit removes beyond its unit's span: blank lines around a removed
# definition (`removed_from`) and a stub's replaced line.
_EDGE_LINES = 3


def _short_of(ctx: ExciseContext, plan: _Plan, size: FeatureSize) -> str | None:
    """Why `plan` cannot reach `size`'s minimum files or lines, when that is certain before
    its edits are made (else None): it touches only the plan's files, and removes at most
    the plan's classes' and units' spans plus `_EDGE_LINES` each. Most test groups' code
    sits in one file, and making their edits was most of the excision's time."""
    files = set(plan.classes) | set(plan.removed) | set(plan.stubbed)
    low_files, low_lines = size.files[0], size.lines[0]
    if low_files is not None and len(files) < low_files:
        return f"{len(files)} file(s): outside the feature size (files {size.files})"
    if low_lines is None:
        return None
    most = 0
    for file, classes in plan.classes.items():
        sites = ctx.located(file).classes
        most += sum(sites[c].end_line - sites[c].start_line + 1 + _EDGE_LINES for c in classes)
    for units in plan.removed.values():
        most += sum(u.end_line - u.start_line + 1 + _EDGE_LINES for u in units)
    for units in plan.stubbed.values():
        most += sum(u.end_line - u.body_start_line + 1 + _EDGE_LINES for u in units)
    if most < low_lines:
        return f"at most {most} lines: outside the feature size (lines {size.lines})"
    return None


def candidates(
    ctx: ExciseContext,
    *,
    rng: random.Random,
    size: FeatureSize | None = None,
    max_outside: int | None = None,
) -> Iterator[Candidate | SkippedFile]:
    """One candidate per test group whose feature fits `size` (default `FeatureSize()`), in a
    seeded order (needs the coverage map)."""
    size = size or FeatureSize()
    cmap = ctx.coverage
    if cmap is None:
        yield SkippedFile(path=ctx.seed.name, reason="feature needs a coverage map")
        return
    found = features(ctx, cmap, max_outside=max_outside)
    rng.shuffle(found)
    seen: set[frozenset[str]] = set()
    for feature in found:
        where = f"{ctx.seed.name}::{feature.group} (feature)"
        try:
            units = _trim(feature, size)
            key = frozenset(unit_key(u) for u in units)
            if not units or key in seen:
                continue
            seen.add(key)
            reach = _reach(cmap, units)
            if reach > MAX_FAILING_SHARE * len(cmap.tests):
                yield SkippedFile(
                    path=where,
                    reason=f"{reach} of {len(cmap.tests)} tests run its code: more than "
                    f"{MAX_FAILING_SHARE:.0%} of the suite would fail, not a feature",
                )
                continue
            plan = _plan(ctx, units, _allowed_importers(cmap, feature.tests), feature.tests)
            short = _short_of(ctx, plan, size)
            if short is not None:  # decided before the edits, which parse each file again
                yield SkippedFile(path=where, reason=short)
                continue
            edits, keys, spans = _apply(ctx, plan)
            for file, new in edits.items():
                invalid = check_valid(new)
                if invalid is not None:
                    raise LookupError(f"{file}: {invalid}")
            if not edits:
                continue
            by_key = {unit_key(u): u for u in ctx.index.units}
            gone = [by_key[k] for k in keys if k in by_key]
            callers = set().union(*(ctx.callers.get(k, frozenset()) for k in keys))
            main = max(gone, key=lambda u: u.body_lines) if gone else units[0]
            candidate = make_candidate(
                ctx,
                strategy=STRATEGY,
                target=feature.group,
                units=keys,
                edits=edits,
                spans=spans,
                complexity=sum(u.complexity for u in gone),
                callers=len(callers - set(keys)),
                has_docstring=any(u.docstring is not None for u in gone),
                signature=main.signature,
                docstring=main.docstring,
            )
            f = candidate.features
            assert f is not None
            if not size.admits(f.lines_removed, f.units, f.files):
                yield SkippedFile(
                    path=where,
                    reason=f"{f.lines_removed} lines, {f.units} units over {f.files} file(s): "
                    f"outside the feature size (lines {size.lines}, units {size.units}, "
                    f"files {size.files})",
                )
                continue
            yield candidate
        except (SourceSkipped, LookupError, UnicodeDecodeError, KeyError) as exc:
            yield SkippedFile(path=where, reason=str(exc))
