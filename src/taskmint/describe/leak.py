"""The leak check: a statement or hint must not hand over the removed code.

The removed code is split into lines and each line normalized to its tokens (words and single
punctuation marks, so whitespace and line breaks do not matter). Documentation (docstrings,
comments, JSDoc) and definition headers (`def`, `class`, `function`, method heads, decorators)
are the interface the statement is meant to state, so they are not protected. Every other line
of at least `min_tokens` tokens is protected: its token sequence may not appear anywhere in a
text, even spread over several lines or inside Markdown. On top of that, no line of a text may
be, token for token, a complete line of the removed code that does anything (names a variable,
a call or a literal): this is what keeps the last hint's outline an outline. A body line that
the removed code's own definition headers already hold (`encoding = 'utf-8'` under
`def unquote(s, encoding='utf-8')`) is neither: a statement showing the signature repeats it.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from taskmint.describe.facts import KEYWORDS
from taskmint.languages import profile
from taskmint.records import Language

__all__ = ["DEFAULT_MIN_TOKENS", "RULES_VERSION", "Leak", "LeakChecker", "find_leaks", "tokens"]

DEFAULT_MIN_TOKENS = 5
# Part of the key of a stored task (its statement was checked by these rules): a new value
# when what the check lets through changes. 2: signature lines and keyword arguments.
RULES_VERSION = "2"
_TOKEN = re.compile(r"[A-Za-z0-9_$]+|[^\sA-Za-z0-9_$`]")
_HEADER = re.compile(
    r"^\s*(?:@|async\s+def\b|def\b|class\b|(?:export\s+)?(?:default\s+)?(?:async\s+)?function\b|"
    r"(?:export\s+)?(?:default\s+)?class\b)"
)
_JS_METHOD_HEAD = re.compile(
    r"^\s*(?:static\s+|async\s+|get\s+|set\s+|\*)*[A-Za-z_$#][\w$]*\s*\([^;]*\)\s*\{\s*$"
)
_CONTROL = frozenset(("if", "for", "while", "switch", "catch", "with", "return"))
_COMMENT = ("#", "//", "/*", "*", "*/")
# One keyword argument of a call spread over lines, its value a name or a literal.
_KEYWORD_ARGUMENT = re.compile(
    r"[A-Za-z_$][\w$]*\s*[=:]\s*(?:[A-Za-z_$][\w$.]*|-?\d[\w.]*|'[^'\n]*'|\"[^\"\n]*\"),"
)
_EDGE = frozenset((";", ":", "{", ",", "\\"))


def tokens(text: str) -> list[str]:
    """`text` as tokens: identifiers/numbers and single punctuation marks (backticks dropped)."""
    return _TOKEN.findall(text)


def _line_key(line: str) -> list[str]:
    """A line's tokens without the punctuation that only closes or opens a statement."""
    toks = tokens(line)
    while toks and toks[-1] in _EDGE:
        toks.pop()
    while toks and toks[0] in ("}", ")", "]"):
        toks.pop(0)
    return toks


@dataclass(frozen=True, slots=True, kw_only=True)
class Leak:
    """One leak: which text (statement or hint level) holds which removed line."""

    where: str
    line: str
    kind: str  # "line" (a protected line's tokens) or "complete" (a whole removed line)

    def describe(self) -> str:
        """A one-line reason."""
        what = "a line" if self.kind == "line" else "a complete line"
        return f"the {self.where} contains {what} of the removed code: {self.line.strip()!r}"


def _depth(line: str) -> int:
    """Brackets a line opens and does not close (strings are not told apart)."""
    return sum(line.count(c) for c in "([{") - sum(line.count(c) for c in ")]}")


def _heuristic_interface_lines(lines: list[str], *, docs: bool = True) -> set[int]:
    """Docstrings (unless not `docs`) and definition headers found line by line (code that
    does not parse as a whole: several files' removed lines, stubbed bodies next to whole
    classes). A header whose brackets stay open goes on to the line that closes them (a
    signature over several lines)."""
    out: set[int] = set()
    doc_lines: set[int] = set()
    in_doc: str | None = None
    open_header = 0
    for i, line in enumerate(lines):
        s = line.strip()
        if open_header > 0:
            out.add(i)
            open_header += _depth(s)
            continue
        if in_doc is not None:
            doc_lines.add(i)
            if in_doc in s:
                in_doc = None
            continue
        if s.startswith(('"""', "'''")):
            doc_lines.add(i)
            quote = s[:3]
            if s.count(quote) == 1:
                in_doc = quote
            continue
        if _HEADER.match(line):
            out.add(i)
            open_header = max(0, _depth(s))
            continue
        if _JS_METHOD_HEAD.match(line):
            head = s.split("(")[0].split()[-1] if s.split("(")[0].split() else ""
            if head not in _CONTROL:
                out.add(i)
    return out | doc_lines if docs else out


def _opens_call(toks: list[str]) -> bool:
    """A line that only names something: what it calls or indexes, its arguments on the next
    lines (`report.problems.append(`), or one argument of a call spread over lines
    (`self._io.output,`). It says no more than the outline's "calls report.problems.append",
    so it is not protected on its own (lines that compute something are)."""
    if toks and toks[-1] in ("(", "["):
        toks = toks[:-1]
    return bool(toks) and all(t == "." or re.fullmatch(r"[A-Za-z_$][\w$]*", t) for t in toks)


class LeakChecker:
    """Holds the protected lines of one removed code and checks texts against them."""

    def __init__(
        self,
        removed_code: str,
        *,
        language: Language = "python",
        min_tokens: int = DEFAULT_MIN_TOKENS,
    ) -> None:
        lines = removed_code.splitlines()
        interface = profile(language).interface_lines(removed_code)
        if interface is None:
            interface = _heuristic_interface_lines(lines)
        protected: dict[str, str] = {}
        complete: dict[str, str] = {}
        # What the definition headers say (signatures, defaults) is the statement's to state:
        # a body line repeating it (`encoding = 'utf-8'` under `def unquote(s,
        # encoding='utf-8')`, `named=True,` in a call beside a signature's own `named=True,`)
        # gives nothing away when a text repeats the interface.
        said = [lines[i] for i in sorted(_heuristic_interface_lines(lines, docs=False))]
        said_stream = " " + " ".join(tokens("\n".join(said))) + " "
        said_lines = {" ".join(_line_key(line.strip())) for line in said}
        for i, line in enumerate(lines):
            stripped = line.strip()
            if not stripped or i in interface or stripped.startswith(_COMMENT):
                continue
            toks = _line_key(stripped)
            key = " ".join(toks)
            if len(toks) >= min_tokens and not _opens_call(toks) and f" {key} " not in said_stream:
                protected.setdefault(key, stripped)
            if key in said_lines:
                continue
            # a line that is one name (an argument of a call spread over lines, `file,`) or
            # one keyword argument of a plain value (`named=True,`) says nothing of the
            # implementation; a signature in the statement may hold the same
            if _KEYWORD_ARGUMENT.fullmatch(stripped):
                continue
            if len(toks) > 1 and any(
                t not in KEYWORDS and not re.fullmatch(r"[^\w$]", t) for t in toks
            ):
                complete.setdefault(key, stripped)
        self.protected = protected
        self.complete = complete

    def check(self, text: str, *, where: str) -> list[Leak]:
        """The leaks in `text` (empty when it is clean)."""
        stream = " " + " ".join(tokens(text)) + " "
        found = [
            Leak(where=where, line=original, kind="line")
            for key, original in self.protected.items()
            if f" {key} " in stream
        ]
        seen = {leak.line for leak in found}
        for text_line in text.splitlines():
            key = " ".join(_line_key(text_line))
            original = self.complete.get(key)
            if original is not None and original not in seen:
                seen.add(original)
                found.append(Leak(where=where, line=original, kind="complete"))
        return found


def find_leaks(
    removed_code: str,
    statement: str,
    hints: tuple[str, ...],
    *,
    language: Language = "python",
    extra: tuple[tuple[str, str], ...] = (),
) -> list[Leak]:
    """Every leak of `removed_code` into the statement, each hint, and `extra` (name, text)."""
    checker = LeakChecker(removed_code, language=language)
    leaks = checker.check(statement, where="statement")
    for level, hint in enumerate(hints, 1):
        leaks += checker.check(hint, where=f"hint {level}")
    for name, text in extra:
        leaks += checker.check(text, where=name)
    return leaks
