"""The outline of removed code: its structure with every detail left out (the last hint).

For Python at full detail, an outline read from the syntax tree (definitions, branches, loops,
handlers, what is returned, raised, set and called, by name only); otherwise, and for other
languages, a line-by-line outline of definition heads, braces, keywords and declared names. No
complete line of the original survives, which the leak check confirms.
"""

from __future__ import annotations

import ast
import re
import textwrap

from taskmint import pyast
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


def _outline_python(code: str) -> list[str] | None:
    try:
        tree = pyast.parse(textwrap.dedent(code))
    except (SyntaxError, ValueError, RecursionError, MemoryError):
        return None
    out: list[str] = []

    def block(stmts: list[ast.stmt], depth: int) -> None:
        pad = "    " * depth
        for i, st in enumerate(stmts):
            if (
                i == 0
                and isinstance(st, ast.Expr)
                and isinstance(st.value, ast.Constant)
                and isinstance(st.value.value, str)
            ):
                continue  # a docstring
            if isinstance(st, ast.FunctionDef | ast.AsyncFunctionDef):
                out.append(f"{pad}def {st.name}(...):")
                block(st.body, depth + 1)
            elif isinstance(st, ast.ClassDef):
                out.append(f"{pad}class {st.name}:")
                block(st.body, depth + 1)
            elif isinstance(st, ast.If):
                out.append(f"{pad}if ...:")
                block(st.body, depth + 1)
                if st.orelse:
                    out.append(f"{pad}else:")
                    block(st.orelse, depth + 1)
            elif isinstance(st, ast.For | ast.AsyncFor):
                target = ", ".join(n.id for n in ast.walk(st.target) if isinstance(n, ast.Name))
                out.append(f"{pad}for {target or '...'} in ...:  # loop")
                block(st.body, depth + 1)
            elif isinstance(st, ast.While):
                out.append(f"{pad}while ...:")
                block(st.body, depth + 1)
            elif isinstance(st, ast.Try):
                out.append(f"{pad}try:")
                block(st.body, depth + 1)
                for h in st.handlers:
                    caught = ast.unparse(h.type) if h.type is not None else "anything"
                    out.append(f"{pad}except ...:  # catches {caught}")
                    block(h.body, depth + 1)
                if st.finalbody:
                    out.append(f"{pad}finally:")
                    block(st.finalbody, depth + 1)
            elif isinstance(st, ast.With | ast.AsyncWith):
                out.append(f"{pad}with ...:")
                block(st.body, depth + 1)
            elif isinstance(st, ast.Return):
                out.append(f"{pad}return ..." if st.value is not None else f"{pad}return")
            elif isinstance(st, ast.Raise):
                exc = st.exc.func if isinstance(st.exc, ast.Call) else st.exc
                name = ast.unparse(exc) if exc is not None else ""
                out.append(f"{pad}raise {name}(...)  # with a message" if name else f"{pad}raise")
            elif isinstance(st, ast.Assign | ast.AugAssign | ast.AnnAssign):
                targets = st.targets if isinstance(st, ast.Assign) else [st.target]
                names = [n.id for t in targets for n in ast.walk(t) if isinstance(n, ast.Name)]
                label = ", ".join(dict.fromkeys(names)) or "..."
                out.append(f"{pad}{label} = ...  # set")
            elif isinstance(st, ast.Expr) and isinstance(st.value, ast.Call):
                func = st.value.func
                name = func.attr if isinstance(func, ast.Attribute) else getattr(func, "id", "")
                out.append(f"{pad}... {name}(...) ..." if name else f"{pad}...")
            elif isinstance(st, ast.Expr) and isinstance(st.value, ast.Yield | ast.YieldFrom):
                out.append(f"{pad}yield ...")
            else:
                out.append(f"{pad}...")

    block(tree.body, 0)
    return out


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
    lines = _outline_python(code) if language == "python" and detail >= 2 else None
    if lines is None:
        lines = _outline_keywords(code)
    collapsed: list[str] = []
    for line in lines:
        if not (collapsed and line.strip() == "..." and collapsed[-1] == line):
            collapsed.append(line)
    dedented = textwrap.dedent("\n".join(collapsed))
    return dedented
