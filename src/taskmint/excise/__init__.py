"""Stage 4, `excise`: a `CodeIndex` -> `Candidate`s, each an edit that removes a feature.

Strategies live one per module (stub_body, remove_function, remove_class, remove_block,
feature_cluster, feature), registered in `select`. They read one `context.ExciseContext` per
seed and share `candidate` (assembly), `splice` (block edits) and `imports` (import-time
analysis); `treesitter_edits` and `treesitter_candidates` serve the other languages. Each edit
changes only the bytes of the removed span: libcst trees and tree-sitter byte ranges keep every
other byte. Candidates are chosen deterministically (sorted by id, then a seeded shuffle), so
reruns give the same ids.
"""

from taskmint.excise.knobs import Knobs, matches
from taskmint.excise.select import DEFAULT_STRATEGIES, STRATEGIES, ExciseResult, excise
from taskmint.excise.stub_body import stub_body

__all__ = [
    "DEFAULT_STRATEGIES",
    "STRATEGIES",
    "ExciseResult",
    "Knobs",
    "excise",
    "matches",
    "stub_body",
]
