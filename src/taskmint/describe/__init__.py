"""Stage 6, `describe`: an accepted candidate -> a problem statement and graded hints.

Template-based and deterministic: the statement is built from the removed unit's signature and
docstring, where it lives, and the names of the tests that now fail. Hints go from vague to
nearly complete. Nothing here copies a line of the removed code into the statement.
"""

from taskmint.describe.template import describe, hints_for, statement_for

__all__ = ["describe", "hints_for", "statement_for"]
