"""Template problem statements and hints."""

from __future__ import annotations

import re

from taskmint.records import Candidate, Verdict

__all__ = ["describe", "hints_for", "statement_for"]

_MAX_TESTS_LISTED = 12
_IDENT = re.compile(r"\b[A-Za-z_][A-Za-z0-9_]*\b")
# fmt: off
_KEYWORDS = frozenset((
    "and", "as", "assert", "async", "await", "break", "class", "continue", "def", "del", "elif",
    "else", "except", "False", "finally", "for", "from", "global", "if", "import", "in", "is",
    "lambda", "None", "nonlocal", "not", "or", "pass", "raise", "return", "True", "try", "while",
    "with", "yield", "self", "cls", "len", "range", "list", "dict", "set", "tuple", "str", "int",
    "float", "bool", "isinstance", "sorted", "enumerate", "zip", "min", "max", "sum", "any",
    "all", "abs", "print", "super", "type", "object", "const", "let", "var", "function", "new",
    "this", "throw", "undefined", "null", "typeof",
))
# fmt: on


def _where(candidate: Candidate) -> tuple[str, str]:
    file, _, qual = candidate.units[0].partition("::")
    return file, qual.split("#")[0]


def _test_names(tests: tuple[str, ...]) -> list[str]:
    shown = [f"- `{t}`" for t in tests[:_MAX_TESTS_LISTED]]
    if len(tests) > _MAX_TESTS_LISTED:
        shown.append(f"- ... and {len(tests) - _MAX_TESTS_LISTED} more")
    return shown


def statement_for(candidate: Candidate, verdict: Verdict, source_paths: tuple[str, ...]) -> str:
    """A precise specification of the missing behaviour, in Markdown."""
    file, qual = _where(candidate)
    kind = "method" if "." in qual else "function"
    lang = candidate.language
    strategy = candidate.strategy
    if strategy == "remove_class":
        kind = "class"
        title = f"# Add the missing class `{qual}` to `{file}`"
        intro = (
            f"The class `{qual}` has been removed from `{file}`, but the rest of the project and "
            "its tests still use it. Write it again in that file, with the methods listed below, "
            "so that the test suite passes."
        )
        heading = "## Declaration and methods"
    elif strategy in ("remove_function", "remove_method"):
        title = f"# Add the missing {kind} `{qual}` to `{file}`"
        where = f"class `{qual.rsplit('.', 1)[0]}` in `{file}`" if kind == "method" else f"`{file}`"
        intro = (
            f"The {kind} `{qual}` has been removed from {where}, but the rest of the project and "
            "its tests still call it. Define it again there so that the test suite passes."
        )
        heading = "## Signature"
    elif strategy == "remove_block":
        title = f"# Restore the missing behaviour of `{qual}` in `{file}`"
        intro = (
            f"Part of the {kind} `{qual}` in `{file}` has been removed: one block of its body "
            "(a branch of an `if`, a loop, or an exception handler) is gone, so some of what it "
            "should do no longer happens. Find what is missing and restore it so that the test "
            "suite passes again."
        )
        heading = "## Signature"
    elif strategy == "feature_cluster":
        listed = ", ".join(f"`{u}`" for u in candidate.units)
        title = f"# Implement a missing feature ({len(candidate.units)} functions)"
        intro = (
            "One feature of the project has lost its implementation: these functions and "
            f"methods now only raise a not-implemented error: {listed}. They work together; "
            "restore all of them so that the test suite passes again."
        )
        heading = "## Signature of the first one"
    else:
        title = f"# Implement `{qual}` in `{file}`"
        intro = (
            f"The {kind} `{qual}` in `{file}` has lost its implementation: its body now only "
            "raises a not-implemented error. Restore it so that the project's test suite passes "
            "again."
        )
        heading = "## Signature"
    lines = [
        title,
        "",
        intro,
        "",
        heading,
        "",
        f"```{lang}",
        candidate.signature or qual,
        "```",
        "",
    ]
    if candidate.docstring:
        lines += ["## What it must do", "", candidate.docstring.strip(), ""]
    else:
        lines += [
            "## What it must do",
            "",
            f"The {kind} has no documentation; its callers and the failing tests show what it "
            "must return and which errors it must raise.",
            "",
        ]
    lines += [
        "## Tests that fail now and must pass",
        "",
        *_test_names(verdict.fail_to_pass),
        "",
        "## Rules",
        "",
        f"- Change only files under {', '.join(f'`{p}`' for p in source_paths)}.",
        "- Do not edit, add or delete tests or test configuration: the tests are restored from "
        "the original before grading, and tests outside the list above must keep passing.",
        "- Keep the names and signatures above; other code calls them as they are.",
        "",
    ]
    return "\n".join(lines)


def _called_names(candidate: Candidate) -> list[str]:
    names = sorted(
        {
            n
            for n in _IDENT.findall(candidate.removed_code)
            if n not in _KEYWORDS and not n.isupper() and len(n) > 2
        }
    )
    return names[:15]


def _outline(candidate: Candidate) -> str:
    """Control-flow skeleton of the removed body: keywords and structure, no complete lines."""
    out = []
    for line in candidate.removed_code.splitlines():
        stripped = line.strip()
        if not stripped or stripped.startswith(("#", "//", '"""', "'''")):
            continue
        indent = line[: len(line) - len(line.lstrip())]
        head = stripped.split()[0].rstrip(":")
        if head in (
            "for",
            "while",
            "if",
            "elif",
            "else",
            "try",
            "except",
            "with",
            "return",
            "raise",
            "yield",
            "finally",
            "switch",
            "case",
            "throw",
        ):
            out.append(f"{indent}{head} ...")
        else:
            out.append(f"{indent}...")
    collapsed: list[str] = []
    for line in out:
        if not (collapsed and line.strip() == "..." and collapsed[-1] == line):
            collapsed.append(line)
    return "\n".join(collapsed)


def hints_for(candidate: Candidate, verdict: Verdict) -> tuple[str, ...]:
    """Three hints, from vague to nearly complete."""
    file, qual = _where(candidate)
    tests = verdict.fail_to_pass
    h1 = (
        f"Start from the failing tests ({len(tests)} of them, e.g. `{tests[0]}`): they show the "
        f"inputs `{qual}` receives and the results and errors expected from it."
    )
    names = _called_names(candidate)
    h2 = (
        f"The implementation of `{qual}` in `{file}` can be written with what the project already "
        f"has; the original uses these names: {', '.join(f'`{n}`' for n in names)}."
        if names
        else f"`{qual}` needs no helper beyond the language's built-ins."
    )
    h3 = (
        "An outline of the original body (structure only, details left out):\n\n```\n"
        + _outline(candidate)
        + "\n```"
    )
    return (h1, h2, h3)


def describe(
    candidate: Candidate, verdict: Verdict, source_paths: tuple[str, ...]
) -> tuple[str, tuple[str, ...]]:
    """The `describe` verb: (problem statement, hints) for an accepted candidate."""
    return statement_for(candidate, verdict, source_paths), hints_for(candidate, verdict)
