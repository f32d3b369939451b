"""The `describe` verb: generate, leak-check, regenerate with less detail, else reject.

The templates run at three levels of detail (see `template`); the first whose statements (both
styles) and hints pass the leak check is kept. An optional `Rewriter` then rewords the statement
in the chosen style; a rewrite that fails, drops a fact or leaks is discarded and the template
kept. When no level passes, the `Description` says why and the candidate is rejected as
`leaky_description`.
"""

from __future__ import annotations

from dataclasses import dataclass

from taskmint.describe.facts import Facts, gather_facts
from taskmint.describe.leak import LeakChecker
from taskmint.describe.rewrite import Rewriter
from taskmint.describe.template import STYLES, hints_for, statement_for
from taskmint.records import Candidate, SeedApp, StatementStyle, Verdict, as_statement_style

__all__ = ["DETAIL_LEVELS", "Description", "describe", "describe_facts"]

DETAIL_LEVELS = (2, 1, 0)


@dataclass(frozen=True, slots=True, kw_only=True)
class Description:
    """What `describe` made of one candidate: statements, hints, and whether they are clean."""

    statement: str  # the problem statement in `style` (what a task row's problem_statement holds)
    hints: tuple[str, ...]
    style: StatementStyle = "spec"
    statement_spec: str = ""
    statement_issue: str = ""
    source: str = "template"  # "template" or "llm:<model name>"
    detail: int = 2  # the template detail level that passed the leak check
    level: int = 1  # 1: the removed interface; 2: the behaviour in product terms
    ok: bool = True
    reason: str = ""  # why it was rejected (the first leaks), when not ok


def _leaks(checker: LeakChecker, texts: dict[str, str]) -> list[str]:
    found: list[str] = []
    for where, text in texts.items():
        found += [leak.describe() for leak in checker.check(text, where=where)]
    return found


def describe_facts(
    facts: Facts,
    removed_code: str,
    *,
    style: StatementStyle = "spec",
    rewriter: Rewriter | None = None,
    level: int = 1,
) -> Description:
    """Statements and hints for `facts` at statement `level` (see `template.statement_for`),
    leak-checked against `removed_code`."""
    as_statement_style(style)  # ValueError for a style that is none
    checker = LeakChecker(removed_code, language=facts.language)
    first_leaks: list[str] = []
    for detail in DETAIL_LEVELS:
        statements = {s: statement_for(facts, style=s, detail=detail, level=level) for s in STYLES}
        hints = hints_for(facts, removed_code, detail=detail)
        texts = {f"{s} statement": t for s, t in statements.items()}
        texts.update({f"hint {i}": h for i, h in enumerate(hints, 1)})
        leaks = _leaks(checker, texts)
        if leaks:
            first_leaks = first_leaks or leaks
            continue
        chosen, source = statements[style], "template"
        if rewriter is not None:
            named = facts.main.qualname if level == 1 else ""
            required = tuple(r for r in (named, *facts.fail_to_pass[:1]) if r)
            rewritten = rewriter.rewrite(chosen, style=style, required=required)
            if rewritten is not None and not _leaks(checker, {"rewritten statement": rewritten}):
                chosen, source = rewritten, rewriter.source
        return Description(
            statement=chosen,
            hints=hints,
            style=style,
            statement_spec=statements["spec"],
            statement_issue=statements["issue"],
            source=source,
            detail=detail,
            level=level,
        )
    return Description(
        statement="",
        hints=(),
        style=style,
        ok=False,
        reason="; ".join(first_leaks[:3]) + (" (and more)" if len(first_leaks) > 3 else ""),
    )


def describe(
    candidate: Candidate,
    verdict: Verdict,
    source_paths: tuple[str, ...],
    *,
    seed: SeedApp | None = None,
    style: StatementStyle = "spec",
    rewriter: Rewriter | None = None,
    level: int = 1,
) -> Description:
    """The `describe` verb: a `Description` of an accepted candidate (never raises for leaks).

    `seed` (the original snapshot) adds the callers and the docstrings of every removed unit;
    `level` 1 states the removed interface, 2 the behaviour in product terms.
    """
    facts = gather_facts(candidate, verdict, source_paths=source_paths, seed=seed)
    return describe_facts(
        facts, candidate.removed_code, style=style, rewriter=rewriter, level=level
    )
