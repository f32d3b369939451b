"""Stage 4, `excise`: a `CodeIndex` -> `Candidate`s, each an edit that removes a feature.

Strategies live one per module. Each edit changes only the bytes of the removed span: the file
is rewritten by libcst, whose trees round-trip every other byte exactly. Candidates are chosen
deterministically (sorted by id, then a seeded shuffle), so reruns give the same ids.
"""

from taskmint.excise.select import ExciseResult, excise
from taskmint.excise.stub_body import stub_body

__all__ = ["ExciseResult", "excise", "stub_body"]
