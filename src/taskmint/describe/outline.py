"""The outline of removed code: its structure with every detail left out (the last hint).

At full detail, the outline the language's profile reads from the syntax tree (Python's:
definitions, branches, loops, handlers, what is returned, raised, set and called, by name
only); otherwise, and for languages whose profile reads none, a line-by-line outline of
definition heads, braces, keywords and declared names. No complete line of the original
survives, which the leak check confirms.
"""

from __future__ import annotations

import re
import textwrap

from taskmint.languages import profile
from taskmint.records import Language

__all__ = ["outline"]

_KEYWORD_HEADS = frozenset(
    (
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
        "catch",
        "do",
        "default",
    )
)


_ASSIGN = re.compile(r"^([A-Za-z_$][\w$.]*)\s*[-+*/%|&]?=(?!=)")
_CALL = re.compile(r"^([A-Za-z_$][\w$.]*)\s*\(")
_DECL = re.compile(r"^(const|let|var)\s+([A-Za-z_$][\w$]*)\s*=")
_HEAD = re.compile(
    r"^(?:@|async\s+def\b|def\b|class\b|(?:export\s+)?(?:default\s+)?(?:async\s+)?function\b|"
    r"(?:static\s+|async\s+|get\s+|set\s+)*[A-Za-z_$#][\w$]*\s*\([^;]*\)\s*\{$)"
)


def _outline_keywords(code: str) -> list[str]:
    """A line-by-line outline: definition heads, braces, keywords and declared names only."""
    out = []
    for line in code.splitlines():
        stripped = line.strip()
        if not stripped or stripped.startswith(("#", "//", '"""', "'''", "/*", "*")):
            continue
        indent = line[: len(line) - len(line.lstrip())]
        if re.fullmatch(r"[})\];,]+", stripped):
            out.append(indent + stripped)
            continue
        head_match = _HEAD.match(stripped)
        first = re.split(r"[\s:(]", stripped.lstrip("}").strip(), maxsplit=1)[0]
        if head_match and first not in _KEYWORD_HEADS and first not in ("if", "for", "while"):
            sig = stripped.split("{")[0].rstrip().rstrip(":")
            sig = re.sub(r"\(.*\)", "(...)", sig)
            out.append(f"{indent}{sig}" + (" {" if stripped.endswith("{") else ":"))
            continue
        brace = " {" if stripped.endswith("{") else ""
        close = "} " if stripped.startswith("}") else ""
        decl = _DECL.match(stripped)
        if decl:
            out.append(f"{indent}{decl.group(1)} {decl.group(2)} = ...{brace}")
        elif first in _KEYWORD_HEADS:
            out.append(f"{indent}{close}{first} ...{brace}")
        elif target := _ASSIGN.match(stripped):
            out.append(f"{indent}{target.group(1)} = ...")
        elif call := _CALL.match(stripped):
            out.append(f"{indent}{call.group(1)}(...) ...")
        else:
            out.append(f"{indent}...{brace}")
    return out


def outline(code: str, language: Language, *, detail: int = 2) -> str:
    """The structure of `code` with every detail left out (no complete line survives)."""
    lines = profile(language).outline(code) if detail >= 2 else None
    if lines is None:
        lines = _outline_keywords(code)
    collapsed: list[str] = []
    for line in lines:
        if not (collapsed and line.strip() == "..." and collapsed[-1] == line):
            collapsed.append(line)
    dedented = textwrap.dedent("\n".join(collapsed))
    return dedented
