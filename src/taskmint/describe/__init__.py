"""Stage 6, `describe`: an accepted candidate -> a problem statement and graded hints.

`facts` gathers what a statement may say (where the code belongs, signatures, docstrings,
callers, failing tests and their messages); `template` turns facts into two statement styles
(`spec` and `issue`) and four hint levels, deterministically, the last an `outline` of the
removed code's structure; `leak` checks that no removed line reaches a statement or a hint;
`rewrite` optionally rewords the statement through an OpenAI-compatible endpoint; `stage` ties
them together and rejects what cannot be made clean.
"""

from taskmint.describe.facts import Facts, gather_facts
from taskmint.describe.leak import Leak, LeakChecker, find_leaks
from taskmint.describe.outline import outline
from taskmint.describe.rewrite import Rewriter, load_rewriter
from taskmint.describe.stage import Description, describe, describe_facts
from taskmint.describe.template import HINT_LEVELS, STYLES, hints_for, statement_for

__all__ = [
    "HINT_LEVELS",
    "STYLES",
    "Description",
    "Facts",
    "Leak",
    "LeakChecker",
    "Rewriter",
    "describe",
    "describe_facts",
    "find_leaks",
    "gather_facts",
    "hints_for",
    "load_rewriter",
    "outline",
    "statement_for",
]
