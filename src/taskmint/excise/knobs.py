"""Difficulty knobs: the static features every candidate records, and ranges to filter on.

Every strategy records the same features (see `static_features`), as `Candidate.features`:

- `lines_removed`: lines the breaking patch removes;
- `units`: functions/methods/classes the edit touches; `files`: files it touches;
- `complexity`: cyclomatic complexity of the removed code (summed over units; for a block,
  the block's own decision points plus one);
- `callers`: centrality, the number of distinct units of the seed that call the removed code
  (from `call_graph`), not counting callers that the edit removes too;
- `has_docstring`: 1.0 when the removed unit(s) have a docstring (kept in the code by
  `stub_body` and `remove_block`; for removed definitions it is `Candidate.docstring`, which
  the problem statement may quote).

The strategy is `Candidate.strategy`. `Knobs` holds optional (min, max) ranges, inclusive, and
`matches` checks a candidate (or its features) against them, so a researcher's "no more than 3
files touched, at least 10 lines" is `Knobs(files=(1, 3), lines_removed=(10, None))`.

The call graph is computed with libcst: within each unit's body (nested definitions excluded,
they are units of their own), a call `f(...)` resolves by name to the seed's top-level
functions named `f` and to `f.__init__` of classes named `f`; a call `x.f(...)` resolves to
every method named `f` (and module functions named `f`, for `module.f(...)`). Resolution is by
name only, so it over-approximates (two classes' `parse` methods share callers); it is a
difficulty signal, not a proof.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from typing import TYPE_CHECKING

import libcst as cst

from taskmint.config import Knobs, KnobsError
from taskmint.index.python import SourceSkipped, complexity_of
from taskmint.records import Candidate, Unit

if TYPE_CHECKING:
    from taskmint.excise.strategy import Located

__all__ = [
    "FEATURES",
    "Knobs",
    "KnobsError",
    "call_graph",
    "complexity_of_statements",
    "features_of",
    "matches",
    "static_features",
]

FEATURES = ("lines_removed", "units", "files", "complexity", "callers", "has_docstring")


# The records live in config.py (they are configuration, and the flows validate them); they
# are re-exported here, next to the features they range over.
def static_features(
    *,
    lines_removed: int,
    units: int,
    files: int,
    complexity: int,
    callers: int,
    has_docstring: bool,
) -> tuple[tuple[str, float], ...]:
    """The features tuple every candidate records, in `FEATURES` order."""
    return (
        ("lines_removed", float(lines_removed)),
        ("units", float(units)),
        ("files", float(files)),
        ("complexity", float(complexity)),
        ("callers", float(callers)),
        ("has_docstring", 1.0 if has_docstring else 0.0),
    )


def features_of(candidate: Candidate) -> dict[str, float | str]:
    """A candidate's features as a mapping, with its `strategy`."""
    out: dict[str, float | str] = dict(candidate.features)
    out["strategy"] = candidate.strategy
    return out


def matches(features: Candidate | Mapping[str, float | str], knobs: Knobs) -> bool:
    """Whether a candidate (or its features mapping) falls within every range of `knobs`.

    A feature the candidate lacks fails any range set on it.
    """
    feats = features_of(features) if isinstance(features, Candidate) else dict(features)
    if knobs.strategies is not None and feats.get("strategy") not in knobs.strategies:
        return False
    wanted_doc = None if knobs.has_docstring is None else float(knobs.has_docstring)
    if wanted_doc is not None and feats.get("has_docstring") != wanted_doc:
        return False
    for name, (low, high) in knobs.ranges().items():
        value = feats.get(name)
        if not isinstance(value, int | float):
            return False
        if (low is not None and value < low) or (high is not None and value > high):
            return False
    return True


def complexity_of_statements(statements: Iterable[cst.BaseStatement]) -> int:
    """Cyclomatic complexity of some statements (their decision points plus one)."""
    body = list(statements) or [cst.SimpleStatementLine(body=[cst.Pass()])]
    wrapper = cst.FunctionDef(
        name=cst.Name("_"), params=cst.Parameters(), body=cst.IndentedBlock(body=body)
    )
    return complexity_of(wrapper)


class _Calls(cst.CSTVisitor):
    def __init__(self) -> None:
        self.names: set[str] = set()
        self.attrs: set[str] = set()

    def visit_FunctionDef(self, node: cst.FunctionDef) -> bool:
        return False

    def visit_ClassDef(self, node: cst.ClassDef) -> bool:
        return False

    def visit_Call(self, node: cst.Call) -> None:
        func = node.func
        if isinstance(func, cst.Name):
            self.names.add(func.value)
        elif isinstance(func, cst.Attribute):
            self.attrs.add(func.attr.value)


def call_graph(
    sources: Mapping[str, bytes],
    units: Iterable[Unit],
    *,
    located: dict[str, Located] | None = None,
) -> dict[str, frozenset[str]]:
    """Unit key ("path::Qual") -> keys of the units whose bodies call it (see module doc).

    `located` caches parsed files across calls (filled in as files are parsed).
    """
    from taskmint.excise.strategy import locate_defs

    cache: dict[str, Located] = {} if located is None else located

    units = list(units)
    by_function: dict[str, set[str]] = {}
    by_method: dict[str, set[str]] = {}
    for u in units:
        key = f"{u.file}::{u.qualname}"
        parts = u.qualname.split("#")[0].split(".")
        if len(parts) == 1 and u.kind == "function":
            by_function.setdefault(parts[0], set()).add(key)
        elif u.kind == "method":
            by_method.setdefault(parts[-1], set()).add(key)
            if parts[-1] == "__init__" and len(parts) == 2:
                by_function.setdefault(parts[0], set()).add(key)  # Class(...) runs __init__
    callers: dict[str, set[str]] = {}
    for file in sorted({u.file for u in units}):
        if file not in sources:
            continue
        try:
            if file not in cache:
                cache[file] = locate_defs(sources[file])
        except SourceSkipped:
            continue
        for qual, site in cache[file].functions.items():
            caller = f"{file}::{qual}"
            visitor = _Calls()
            site.node.body.visit(visitor)
            callees: set[str] = set()
            for name in visitor.names:
                callees |= by_function.get(name, set())
            for name in visitor.attrs:
                callees |= by_method.get(name, set()) | by_function.get(name, set())
            for callee in callees - {caller}:
                callers.setdefault(callee, set()).add(caller)
    return {k: frozenset(v) for k, v in callers.items()}
