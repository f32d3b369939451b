"""Strategy `feature_cluster`: several units that one group of tests exercises together are
stubbed at once, so the task is a feature spread over functions (and, when possible, files).

Found from the per-test coverage map: tests are grouped by test file and class
("tests/test_x.py::TestY", or the file for module-level tests). For each group, a unit is in
play when the run phase of a test of the group executed a line of its body. Units whose body
also ran where every test may depend on it (import time, session fixtures: the map's -1) are
left out, and so are the hubs: units that more than `max_outside` tests outside the group run
(stubbing those breaks half the suite). The rest are ranked by how few other tests touch them
(specific to the group first), then by size, and the first `MAX_UNITS` form the cluster,
swapping the last pick for the best unit of another file when all picks share one file. A
cluster needs at least `MIN_UNITS` units; the same set of units is offered once.

The edit stubs every unit's body with `excise.stub_body.stub_body` (several units per file
allowed), so the spans are the units' bodies and test selection works exactly as for
`stub_body`, over the union of the spans.
"""

from __future__ import annotations

import random
from collections.abc import Iterator, Mapping, Sequence
from typing import Final

from taskmint.excise.candidate import make_candidate
from taskmint.excise.context import ExciseContext, unit_key
from taskmint.excise.stub_body import stub_body
from taskmint.index.coverage import CoverageMap
from taskmint.index.python import SourceSkipped
from taskmint.records import Candidate, SkippedFile, Unit

__all__ = [
    "MAX_UNITS",
    "MIN_UNITS",
    "STRATEGY",
    "body_tests",
    "candidates",
    "clusters",
    "stub_units",
]

STRATEGY: Final = "feature_cluster"
MIN_UNITS = 2
MAX_UNITS = 8
_ABSTRACT = ("overload", "typing.overload", "abstractmethod", "abc.abstractmethod")


def stub_units(sources: Mapping[str, bytes], units: Sequence[Unit]) -> dict[str, bytes]:
    """New contents of every file of `units`, each unit's body stubbed (`LookupError` if one
    is missing). `sources` maps path -> original bytes."""
    out: dict[str, bytes] = {}
    for unit in sorted(units, key=lambda u: (u.file, u.start_line)):
        current = out.get(unit.file, sources[unit.file])
        out[unit.file] = stub_body(current, unit.qualname)
    return out


def _group(test_id: str) -> str:
    path, _, rest = test_id.partition("::")
    parts = rest.split("::")
    return f"{path}::{parts[0]}" if len(parts) > 1 else path


def body_tests(cmap: CoverageMap, unit: Unit) -> set[int] | None:
    """Tests whose run phase executed the unit's body; None when a body line is shared."""
    per_line = cmap.lines.get(unit.file, {})
    found: set[int] = set()
    for line in range(unit.body_start_line, unit.end_line + 1):
        idx = per_line.get(line, ())
        if -1 in idx:
            return None
        found.update(idx)
    return found


def clusters(
    units: Sequence[Unit],
    cmap: CoverageMap,
    *,
    min_body_lines: int = 2,
    max_outside: int | None = None,
) -> list[tuple[str, list[Unit]]]:
    """(test group, units) for every group with a cluster, in group order (see module doc).

    `max_outside` defaults to a quarter of the suite (at least 3 tests).
    """
    if max_outside is None:
        max_outside = max(3, len(cmap.tests) // 4)
    touching: dict[str, set[int]] = {}
    eligible: list[Unit] = []
    for unit in units:
        if unit.body_lines < min_body_lines:
            continue
        if any(d.split("(")[0] in _ABSTRACT for d in unit.decorators):
            continue
        tests = body_tests(cmap, unit)
        if tests:
            touching[unit_key(unit)] = tests
            eligible.append(unit)
    # a stub of an outer function removes its nested ones: keep only outermost units
    eligible = [
        u
        for u in eligible
        if not any(
            o is not u and o.file == u.file and o.start_line < u.start_line <= o.end_line
            for o in eligible
        )
    ]
    groups: dict[str, set[int]] = {}
    for i, test in enumerate(cmap.tests):
        groups.setdefault(_group(test), set()).add(i)
    out: list[tuple[str, list[Unit]]] = []
    seen: set[frozenset[str]] = set()
    for group in sorted(groups):
        members = groups[group]
        scored = []
        for unit in eligible:
            tests = touching[unit_key(unit)]
            if not tests & members:
                continue
            outside = len(tests - members)
            if outside > max_outside:
                continue
            scored.append((outside, -unit.body_lines, unit.unit_id, unit))
        scored.sort(key=lambda t: t[:3])
        picked = [t[3] for t in scored[:MAX_UNITS]]
        if len(picked) < MIN_UNITS:
            continue
        if len({u.file for u in picked}) == 1:
            other = next((t[3] for t in scored if t[3].file != picked[0].file), None)
            if other is not None:
                picked[-1] = other
        key = frozenset(unit_key(u) for u in picked)
        if key in seen:
            continue
        seen.add(key)
        out.append((group, picked))
    return out


def candidates(
    ctx: ExciseContext, *, rng: random.Random, max_outside: int | None = None
) -> Iterator[Candidate | SkippedFile]:
    """One candidate per test group with a cluster, in a seeded order (needs coverage)."""
    if ctx.coverage is None:
        yield SkippedFile(path=ctx.seed.name, reason="feature_cluster needs a coverage map")
        return
    found = clusters(
        ctx.index.units, ctx.coverage, min_body_lines=ctx.min_body_lines, max_outside=max_outside
    )
    rng.shuffle(found)
    for group, units in found:
        try:
            edits = stub_units(ctx.sources, units)
            keys = {unit_key(u) for u in units}
            callers = set().union(*(ctx.callers.get(k, frozenset()) for k in keys))
            main = max(units, key=lambda u: u.body_lines)
            yield make_candidate(
                ctx,
                strategy=STRATEGY,
                target=group,
                units=sorted(keys),
                edits=edits,
                spans=sorted((u.file, u.body_start_line, u.end_line) for u in units),
                complexity=sum(u.complexity for u in units),
                callers=len(callers - keys),
                has_docstring=all(u.docstring is not None for u in units),
                signature=main.signature,
                docstring=main.docstring,
            )
        except (SourceSkipped, LookupError, UnicodeDecodeError, KeyError) as exc:
            yield SkippedFile(path=f"{ctx.seed.name}::{group}", reason=str(exc))
