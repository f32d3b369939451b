"""Difficulty knobs: the static features every candidate records, and ranges to filter on.

Every strategy records the same features, as `Candidate.features` (a `records.Features`):

- `lines_removed`: lines the breaking patch removes;
- `units`: functions/methods/classes the edit touches; `files`: files it touches;
- `complexity`: cyclomatic complexity of the removed code (summed over units; for a block,
  the block's own decision points plus one, see `complexity_of_statements`);
- `callers`: centrality, the number of distinct units of the seed that call the removed code
  (from `index.callgraph.call_graph`), not counting callers that the edit removes too;
- `has_docstring`: True when the removed unit(s) have a docstring (kept in the code by
  `stub_body` and `remove_block`; for removed definitions it is `Candidate.docstring`, which
  the problem statement may quote).

`remove_class` also records `whole_class` and `remove_block` `scope_change`. The strategy is
`Candidate.strategy`. `Knobs` holds optional (min, max) ranges, inclusive, and `matches` checks
a candidate against them, so a researcher's "no more than 3 files touched, at least 10 lines"
is `Knobs(files=(1, 3), lines_removed=(10, None))`.
"""

from __future__ import annotations

from collections.abc import Iterable

import libcst as cst

from taskmint.config import Knobs, KnobsError
from taskmint.index.python import complexity_of
from taskmint.records import Candidate

# `Knobs` and `KnobsError` live in config.py (they are configuration, and the flows validate
# them); they are re-exported here, next to the features they range over.
__all__ = ["Knobs", "KnobsError", "complexity_of_statements", "matches"]


def matches(candidate: Candidate, knobs: Knobs) -> bool:
    """Whether a candidate falls within every range of `knobs` (and is of one of its
    strategies). A candidate without features fails any range or docstring knob."""
    if knobs.strategies is not None and candidate.strategy not in knobs.strategies:
        return False
    features = candidate.features
    if knobs.has_docstring is not None and (
        features is None or features.has_docstring != knobs.has_docstring
    ):
        return False
    for name, (low, high) in knobs.ranges().items():
        if features is None:
            return False
        value = getattr(features, name)  # each range knob is named after its feature
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
