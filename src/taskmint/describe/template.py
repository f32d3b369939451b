"""Deterministic template statements (two styles) and graded hints, from a `Facts` record.

Two statement styles: `spec`, a precise specification (where the code belongs, its signature,
what it must do, who calls it, the failing tests and their messages, the rules), and `issue`,
the same facts told as a user would report the missing behaviour. Hints come in four levels,
from vague to nearly complete: which behaviours the failing tests check; which helpers, data
structures and exceptions the code works with; the algorithm in words; an outline of the
structure with the details left out.

`detail` lowers what is said when the leak check objects: 2 says everything, 1 leaves out the
failure messages and gives a keyword-only outline, 0 also leaves out the docstrings (a doctest
in a docstring can hold a removed line). The same facts and detail always give the same text.
"""

from __future__ import annotations

import re
import textwrap

from taskmint.describe.facts import Facts, UnitFacts
from taskmint.describe.outline import outline
from taskmint.languages import profile
from taskmint.records import STATEMENT_STYLES, StatementStyle, as_statement_style

__all__ = ["HINT_LEVELS", "LEVELS", "STYLES", "behaviour_statement", "hints_for", "statement_for"]

STYLES = STATEMENT_STYLES
HINT_LEVELS = 4
LEVELS = (1, 2)
_MAX_TESTS_LISTED = 12
_MAX_BEHAVIOURS = 6
_MAX_NAMES = 12


def _code(s: str) -> str:
    return f"`{s}`"


def _listing(items: list[str] | tuple[str, ...], limit: int = _MAX_NAMES) -> str:
    shown = [_code(i) for i in items[:limit]]
    if len(items) > limit:
        shown.append(f"{len(items) - limit} more")
    if len(shown) <= 1:
        return "".join(shown)
    return ", ".join(shown[:-1]) + " and " + shown[-1]


def _kind_word(facts: Facts) -> str:
    return facts.main.kind


def _module(facts: Facts, file: str) -> str | None:
    """The module `file` is imported as, when its language names modules (Python)."""
    return profile(facts.language).module_name(file)


def _cls(facts: Facts) -> str:
    """What the language calls the unit `remove_class` removes ("class"; Rust: "impl block")."""
    return profile(facts.language).class_noun


def _owner(facts: Facts) -> str:
    """What the language calls what a method belongs to ("class"; Rust: "type")."""
    return profile(facts.language).owner_noun


def _where(unit: UnitFacts, facts: Facts) -> str:
    if unit.kind == "method" and unit.owner:
        return f"a method of the {_owner(facts)} `{unit.owner}` in `{unit.file}`"
    if unit.kind == "class":
        return f"a {_cls(facts)} at the top level of `{unit.file}`"
    module = _module(facts, unit.file)
    if module is not None:
        return f"a function at the top level of `{unit.file}` (module `{module}`)"
    return f"a function at the top level of `{unit.file}`"


def _test_lines(tests: tuple[str, ...]) -> list[str]:
    shown = [f"- `{t}`" for t in tests[:_MAX_TESTS_LISTED]]
    if len(tests) > _MAX_TESTS_LISTED:
        shown.append(f"- ... and {len(tests) - _MAX_TESTS_LISTED} more")
    return shown


def _message_lines(facts: Facts) -> list[str]:
    return [f"- `{test.split('::')[-1]}`: {message}" for test, message in facts.failure_messages]


def _doc(unit: UnitFacts, detail: int) -> str | None:
    if detail < 1 or not unit.docstring:
        return None
    return textwrap.dedent(unit.docstring).strip()


def _signature_block(facts: Facts, units: tuple[UnitFacts, ...]) -> list[str]:
    lines = []
    for u in units:
        if profile(facts.language).shows_decorators:
            lines += [f"@{d}" for d in u.decorators]
        lines.append(u.signature.strip())
    body = "\n".join(lines)
    return [f"```{facts.language}", body, "```"]


def _missing_units(facts: Facts) -> tuple[UnitFacts, ...]:
    """The units a solver must write (for remove_class: the class and its methods)."""
    return facts.units


def _title(facts: Facts, style: StatementStyle) -> str:
    main = facts.main
    qual = main.qualname
    s = facts.strategy
    if style == "issue":
        if s == "stub_body":
            return f"# `{qual}` fails with a not-implemented error instead of working"
        if s in ("remove_function", "remove_method"):
            return f"# `{qual}` is missing from `{main.file}`"
        if s == "remove_class" and not facts.whole_class:
            return f"# Most methods of `{qual}` are gone from `{main.file}`"
        if s == "remove_class":
            return f"# The {_cls(facts)} `{qual}` is gone from `{main.file}`"
        if s == "remove_block":
            return f"# `{qual}` no longer handles every case"
        if s == "feature":
            return f"# The {_feature_name(facts)} feature is gone"
        return f"# A feature is broken: {len(facts.units)} functions raise NotImplementedError"
    if s == "stub_body":
        return f"# Implement `{qual}` in `{main.file}`"
    if s in ("remove_function", "remove_method"):
        return f"# Add the missing {main.kind} `{qual}` to `{main.file}`"
    if s == "remove_class" and not facts.whole_class:
        return f"# Add the missing methods of the {_cls(facts)} `{qual}` in `{main.file}`"
    if s == "remove_class":
        return f"# Add the missing {_cls(facts)} `{qual}` to `{main.file}`"
    if s == "remove_block":
        return f"# Restore the missing behaviour of `{qual}` in `{main.file}`"
    if s == "feature":
        return f"# Implement the {_feature_name(facts)} feature again ({_files(facts)})"
    return f"# Implement a missing feature ({len(facts.units)} functions)"


def _intro(facts: Facts, style: StatementStyle) -> str:
    main = facts.main
    qual, kind = main.qualname, main.kind
    where = _where(main, facts)
    s = facts.strategy
    if style == "issue":
        if s == "stub_body":
            return (
                f"Calling `{qual}` fails: it throws a not-implemented error where it used to do "
                f"its job, so everything that relies on it is broken. It is {where}."
            )
        if s in ("remove_function", "remove_method"):
            return (
                f"The {kind} `{qual}` is gone: it was {where}, and the rest of the project "
                "and its tests still call it, so they fail when they reach it. It needs to be "
                "added back where the callers expect it."
            )
        if s == "remove_class" and not facts.whole_class:
            return (
                f"The {_cls(facts)} `{qual}` in `{main.file}` is still there, but most of its "
                "methods are gone (its constructor, its other dunder methods and its attributes "
                "are left), and other code and the tests call them. They need to be written "
                "again."
            )
        if s == "remove_class":
            return (
                f"The {_cls(facts)} `{qual}` has been removed from `{main.file}`, but other code "
                "and the tests still use it. It needs to be written again there, with the "
                "methods listed below."
            )
        if s == "remove_block":
            return (
                f"`{qual}` ({where}) still runs, but part of what it should do no longer "
                "happens: one block of its body (a branch, a loop or an exception handler) is "
                "gone, and the tests below catch the difference."
            )
        if s == "feature":
            return (
                f"The project's {_feature_name(facts)} feature has been taken out: its code is "
                f"gone from {_listing(_unit_files(facts), 6)} (what the rest of the project needs "
                "is still there, some of it only as a stub), and the tests that exercise it fail. "
                "Everything listed below needs to be written again."
            )
        return (
            "One feature of the project has lost its implementation: "
            f"{_listing([u.qualname for u in facts.units])} now only throw a not-implemented "
            "error. "
            "They work together, and all of them need to be restored."
        )
    if s == "stub_body":
        return (
            f"The {kind} `{qual}` in `{main.file}` has lost its implementation: its body now only "
            "raises a not-implemented error. Restore it so that the project's test suite passes "
            "again."
        )
    if s in ("remove_function", "remove_method"):
        where = (
            f"{_owner(facts)} `{main.owner}` in `{main.file}`"
            if kind == "method"
            else f"`{main.file}`"
        )
        return (
            f"The {kind} `{qual}` has been removed from {where}, but the rest of the project and "
            "its tests still call it. Define it again there so that the test suite passes."
        )
    if s == "remove_class" and not facts.whole_class:
        return (
            f"Most methods of the {_cls(facts)} `{qual}` in `{main.file}` have been removed; "
            "the class itself, its constructor and other dunder methods, and its attributes "
            "remain. The rest of the project and its tests still call the missing methods. "
            "Write them again in the class, as listed below, so that the test suite passes."
        )
    if s == "remove_class":
        return (
            f"The {_cls(facts)} `{qual}` has been removed from `{main.file}`, but the rest of "
            "the project and its tests still use it. Write it again in that file, with the "
            "methods listed below, so that the test suite passes."
        )
    if s == "remove_block":
        return (
            f"Part of the {kind} `{qual}` in `{main.file}` has been removed: one block of its body "
            "(a branch of an `if`, a loop, or an exception handler) is gone, so some of what it "
            "should do no longer happens. Find what is missing and restore it so that the test "
            "suite passes again."
        )
    if s == "feature":
        return (
            f"The {_feature_name(facts)} feature has been removed from the project: "
            f"{_plural(len(facts.units), 'definition')} across {_listing(_unit_files(facts), 6)} "
            "are gone or only raise a not-implemented error. The rest of the project still "
            "imports. Write the feature again, with the interface below, so that the test suite "
            "passes."
        )
    return (
        "One feature of the project has lost its implementation: these functions and methods "
        f"now only raise a not-implemented error: {_listing([u.qualname for u in facts.units])}. "
        "They work together; restore all of them so that the test suite passes again."
    )


def _where_section(facts: Facts, detail: int) -> list[str]:
    units = _missing_units(facts)
    out = ["## Where it belongs", ""]
    if facts.strategy == "remove_class":
        cls = facts.units[0]
        methods = facts.units[1:]
        if facts.whole_class:
            where = f"goes at the top level of `{cls.file}`"
            module = _module(facts, cls.file)
            if module is not None:
                where += f" (module `{module}`)"
            out.append(
                f"The {_cls(facts)} `{cls.qualname}` {where}, declared as below, with "
                + (f"these {len(methods)} methods:" if methods else "its methods:")
            )
        else:
            out.append(
                f"These {len(methods)} methods go back into the {_cls(facts)} `{cls.qualname}` in "
                f"`{cls.file}`:"
            )
        out += ["", *_signature_block(facts, units), ""]
        for m in methods:
            doc = _doc(m, detail)
            if doc:
                out += [f"- `{m.name}`: " + " ".join(doc.split()), ""]
        return out
    for u in units:
        out.append(f"- `{u.qualname}`: {_where(u, facts)}")
    out += ["", *_signature_block(facts, units), ""]
    if facts.strategy in ("remove_function", "remove_method"):
        out += [
            "Keep exactly this name and these parameters: other code imports or calls it as it is.",
            "",
        ]
    return out


def _what_section(facts: Facts, detail: int) -> list[str]:
    out = ["## What it must do", ""]
    documented = [(u, _doc(u, detail)) for u in facts.units]
    documented = [(u, d) for u, d in documented if d]
    if facts.strategy == "remove_class":
        documented = documented[:1]
    if not documented:
        out += [
            f"The {_kind_word(facts)} has no documentation here; its callers and the failing "
            "tests show what it must return and which errors it must raise.",
            "",
        ]
    elif len(documented) == 1:
        out += [documented[0][1] or "", ""]
    else:
        for u, d in documented:
            out += [f"`{u.qualname}`:", "", d or "", ""]
    if facts.callers:
        out += ["It is used by:", "", *[f"- {c}" for c in facts.callers], ""]
    return out


def _tests_section(facts: Facts, detail: int, style: StatementStyle) -> list[str]:
    heading = "## What fails" if style == "issue" else "## Tests that fail now and must pass"
    out = [heading, ""]
    if style == "issue":
        out += ["These tests fail on the current code:", ""]
    out += [*_test_lines(facts.fail_to_pass), ""]
    if detail >= 2 and facts.failure_messages:
        out += ["They fail with messages like:", "", *_message_lines(facts), ""]
    return out


def _rules(facts: Facts) -> list[str]:
    paths = ", ".join(_code(p) for p in facts.source_paths)
    return [
        "## Rules",
        "",
        f"- Change only files under {paths}.",
        "- Do not edit, add or delete tests or test configuration: the tests are restored from "
        "the original before grading, and tests outside the list above must keep passing.",
        "- Keep the names and signatures above; other code calls them as they are.",
        "",
    ]


def statement_for(
    facts: Facts, *, style: StatementStyle = "spec", detail: int = 2, level: int = 1
) -> str:
    """The problem statement in `style` ("spec" or "issue"), in Markdown, at `level` (1: the
    interface of what was removed; 2: the behaviour in product terms, see `behaviour_statement`).
    """
    as_statement_style(style)  # ValueError for a style that is none
    if level not in LEVELS:
        raise ValueError(f"unknown statement level {level!r}; choose one of {LEVELS}")
    if level == 2:
        return behaviour_statement(facts, style=style, detail=detail)
    lines = [_title(facts, style), "", _intro(facts, style), ""]
    if style == "issue":
        lines += _tests_section(facts, detail, style)
        lines += ["## Expected behaviour", ""]
        lines += _what_section(facts, detail)[2:]
        lines += _where_section(facts, detail)
    else:
        lines += _where_section(facts, detail)
        lines += _what_section(facts, detail)
        lines += _tests_section(facts, detail, style)
    lines += _rules(facts)
    return "\n".join(lines)


def _unit_files(facts: Facts) -> list[str]:
    return list(dict.fromkeys(u.file for u in facts.units))


def _files(facts: Facts) -> str:
    return _plural(len(_unit_files(facts)), "file")


def _feature_name(facts: Facts) -> str:
    """A name for the feature, from the test file most of its failing tests are in."""
    counts: dict[str, int] = {}
    for test in facts.fail_to_pass:
        stem = test.partition("::")[0].rsplit("/", 1)[-1].removesuffix(".py")
        stem = re.sub(r"^test_?|_?tests?$|\.test$|\.spec$", "", stem) or stem
        counts[stem] = counts.get(stem, 0) + 1
    if not counts:
        return facts.main.name
    best = max(counts, key=lambda k: (counts[k], k))
    return best.replace("_", " ").replace("-", " ").strip() or best


def _first_sentence(doc: str) -> str:
    text = " ".join(textwrap.dedent(doc).strip().split("\n\n")[0].split())
    match = re.match(r"(.+?[.!?])(\s|$)", text)
    return (match.group(1) if match else text)[:240]


def behaviour_statement(facts: Facts, *, style: StatementStyle = "spec", detail: int = 2) -> str:
    """A level-2 statement: what the missing code does for its users, in product terms, from
    the removed code's docstrings (first sentences, at `detail` 1 and up) and the failing tests
    (their names, docstrings and, at `detail` 2, messages). It gives no signature and names no
    internal unit: only the removed public names that the failing tests themselves use. The
    tests are the specification."""
    as_statement_style(style)
    name = _feature_name(facts)
    files = _unit_files(facts)
    if style == "issue":
        title = f"# The {name} behaviour no longer works"
        intro = (
            f"Everything about {name} has stopped working: the tests that exercise it fail. Its "
            f"code used to live in {_listing(files, 6)}; it needs to be built again."
        )
    else:
        title = f"# Build the {name} behaviour"
        intro = (
            f"The project's {name} behaviour is missing: the code behind it is gone from "
            f"{_listing(files, 6)}, and the tests that exercise it fail. Build it again, in "
            "those files, so that they pass. The tests are the specification: read them first."
        )
    lines = [title, "", intro, ""]
    public = [u for u in facts.units if not u.name.startswith("_")]
    sentences = []
    if detail >= 1:
        for unit in public:
            if unit.docstring and unit.docstring.strip():
                sentence = _first_sentence(unit.docstring)
                if sentence and sentence not in sentences:
                    sentences.append(sentence)
    lines += ["## What it does", ""]
    if sentences:
        lines += [f"- {s}" for s in sentences[: _MAX_BEHAVIOURS * 2]]
    else:
        lines.append("The removed code was not documented; the tests below say what it does.")
    lines.append("")
    if facts.entry_points:
        lines += [
            "## How it is reached",
            "",
            f"The tests use {_listing(list(facts.entry_points))}: these must exist again and "
            "behave as the tests expect. Everything else (helpers, data structures, how the work "
            "is split) is up to you.",
            "",
        ]
    behaviours = list(dict.fromkeys(_behaviour(t) for t in facts.fail_to_pass))
    docs = dict(facts.test_docs)
    lines += ["## What the tests check", ""]
    for test in facts.fail_to_pass[:_MAX_TESTS_LISTED]:
        doc = docs.get(test)
        lines.append(f"- {_behaviour(test)}" + (f": {doc}" if doc else ""))
    if len(behaviours) > _MAX_TESTS_LISTED:
        lines.append(f"- ... and {len(behaviours) - _MAX_TESTS_LISTED} more")
    lines += ["", *_tests_section(facts, detail, style)]
    lines += [
        "## Rules",
        "",
        f"- Change only files under {', '.join(_code(p) for p in facts.source_paths)}.",
        "- Do not edit, add or delete tests or test configuration: the tests are restored from "
        "the original before grading, and tests outside the list above must keep passing.",
        "- What the rest of the project uses still exists; keep it working.",
        "",
    ]
    return "\n".join(lines)


def _behaviour(test_id: str) -> str:
    name = test_id.split("::")[-1].split("[")[0]
    name = re.sub(r"^test_?", "", name)
    words = re.sub(r"([a-z0-9])([A-Z])", r"\1 \2", name).replace("_", " ").strip()
    return words.lower() or name


def _hint_tests(facts: Facts) -> str:
    tests = facts.fail_to_pass
    files = sorted({t.split("::")[0] for t in tests})
    behaviours = list(dict.fromkeys(_behaviour(t) for t in tests))
    shown = "; ".join(f"_{b}_" for b in behaviours[:_MAX_BEHAVIOURS])
    more = f" (and {len(behaviours) - _MAX_BEHAVIOURS} more)" if len(behaviours) > 6 else ""
    return (
        f"{len(tests)} test(s) in {_listing(files, 4)} check this behaviour: {shown}{more}. "
        f"Read `{tests[0]}` first: it shows the inputs `{facts.main.qualname}` receives and the "
        "result or error expected from it."
    )


def _hint_helpers(facts: Facts) -> str:
    shape = facts.shape
    own = {u.name for u in facts.units}
    calls = [c for c in shape.calls if c not in own]
    parts = [f"The code belongs in `{facts.main.file}`."]
    if facts.strategy == "remove_block" and facts.spans:
        file, first, last = facts.spans[0]
        parts = [
            f"The missing block sat at lines {first}-{last} of the original `{file}`, inside "
            f"`{facts.main.qualname}`; the code around that spot still refers to what it did."
        ]
    if calls:
        parts.append(
            f"The original calls {_listing(calls)}; reuse what the project already has rather "
            "than writing it again."
        )
    names = [n for n in shape.names if n not in own and len(n) > 2]
    if names:
        parts.append(f"It works with {_listing(names)}.")
    if shape.raises:
        parts.append(f"It raises {_listing(list(shape.raises))} for inputs it cannot handle.")
    if len(parts) == 1:
        parts.append("It needs no helper beyond the language's built-ins.")
    return " ".join(parts)


def _plural(n: int, word: str) -> str:
    return f"{n} {word}" + ("" if n == 1 else "s")


def _hint_algorithm(facts: Facts) -> str:
    s = facts.shape
    steps: list[str] = []
    if s.raises:
        steps.append(f"checks its input and raises {_listing(list(s.raises))} when it is invalid")
    if s.loops:
        steps.append(f"walks over the data with {_plural(s.loops, 'loop')}")
    if s.comprehensions:
        steps.append(f"builds collections with {_plural(s.comprehensions, 'comprehension')}")
    if s.branches:
        steps.append(f"decides between cases with {_plural(s.branches, 'condition')}")
    if s.handlers:
        steps.append(f"catches errors in {_plural(s.handlers, 'handler')}")
    if s.recursion:
        steps.append("calls itself on smaller parts")
    if s.yields:
        steps.append("yields its results one at a time")
    elif s.returns:
        steps.append("returns the result")
    if not steps:
        steps.append("updates state in place (it returns nothing)")
    what = {
        "remove_block": "The missing block",
        "feature_cluster": "Together, the missing bodies",
        "feature": "Together, the missing code",
        "remove_class": "The class's methods",
    }.get(facts.strategy, "The original")
    return (
        f"{what} ({_plural(facts.removed_lines, 'line')}) "
        + ", then ".join(steps)
        + ". The failing tests' messages tell which case to handle first."
    )


def hints_for(facts: Facts, removed_code: str, *, detail: int = 2) -> tuple[str, ...]:
    """`HINT_LEVELS` hints, from vague to nearly complete."""
    skeleton = outline(removed_code, facts.language, detail=detail)
    return (
        _hint_tests(facts),
        _hint_helpers(facts),
        _hint_algorithm(facts),
        "An outline of the original (structure only, details left out):\n\n"
        f"```{facts.language}\n{skeleton}\n```",
    )
