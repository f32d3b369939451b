"""What describe reads from Python code with `ast`: the Python profile's readings.

`interface_lines` (docstrings and definition headers, which the leak check lets a statement
repeat), `outline` (the structure of removed code for the last hint), `shape` (loops,
branches, raises, calls and names for the hints), `test_docs` (the failing tests' own
docstrings) and `class_docstring`. Each gives None (or nothing) for code that does not parse;
describe then reads the code line by line as it does for every language.
"""

from __future__ import annotations

import ast
import textwrap
from collections.abc import Sequence
from pathlib import Path

from taskmint import pyast
from taskmint.languages.base import Shape

__all__ = ["class_docstring", "interface_lines", "outline", "shape", "test_docs"]

_MAX_TEST_DOCS = 12


def outline(code: str) -> list[str] | None:
    """The structure of `code` read from its syntax tree, details left out (None: it does
    not parse)."""
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


def interface_lines(code: str) -> set[int] | None:
    """0-based lines of `code` that are docstrings or definition headers (None: no parse)."""
    dedented = textwrap.dedent(code)
    try:
        tree = pyast.parse(dedented)
    except (SyntaxError, ValueError, RecursionError, MemoryError):
        return None
    out: set[int] = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef | ast.ClassDef):
            first = min([node.lineno, *(d.lineno for d in node.decorator_list)])
            body_first = node.body[0].lineno if node.body else node.lineno
            out.update(range(first - 1, max(first, body_first - 1)))
            doc = node.body[0] if node.body else None
            if (
                isinstance(doc, ast.Expr)
                and isinstance(doc.value, ast.Constant)
                and isinstance(doc.value.value, str)
            ):
                out.update(range(doc.lineno - 1, (doc.end_lineno or doc.lineno)))
    top = tree.body[0] if tree.body else None
    if (
        isinstance(top, ast.Expr)
        and isinstance(top.value, ast.Constant)
        and isinstance(top.value.value, str)
    ):
        out.update(range(top.lineno - 1, (top.end_lineno or top.lineno)))
    return out


def shape(code: str) -> Shape | None:
    """Loops, branches, raises, calls and the other names of `code` (None: it does not
    parse). `names` keeps keywords-like names; describe drops the ones it never shows."""
    try:
        tree = pyast.parse(textwrap.dedent(code))
    except (SyntaxError, ValueError, RecursionError, MemoryError):
        return None
    loops = branches = handlers = comps = 0
    returns = yields = False
    raises: list[str] = []
    calls: list[str] = []
    names: set[str] = set()
    defined: set[str] = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.For | ast.While | ast.AsyncFor):
            loops += 1
        elif isinstance(node, ast.If | ast.IfExp | ast.Match):
            branches += 1
        elif isinstance(node, ast.ExceptHandler):
            handlers += 1
        elif isinstance(node, ast.Return) and node.value is not None:
            returns = True
        elif isinstance(node, ast.Yield | ast.YieldFrom):
            yields = True
        elif isinstance(node, ast.ListComp | ast.SetComp | ast.DictComp | ast.GeneratorExp):
            comps += 1
        elif isinstance(node, ast.Raise) and node.exc is not None:
            exc = node.exc.func if isinstance(node.exc, ast.Call) else node.exc
            label = ast.unparse(exc)
            if label not in raises:
                raises.append(label)
        elif isinstance(node, ast.Call):
            func = node.func
            label = func.attr if isinstance(func, ast.Attribute) else getattr(func, "id", "")
            if label and label not in calls:
                calls.append(label)
        elif isinstance(node, ast.Name):
            names.add(node.id)
        elif isinstance(node, ast.Attribute):
            names.add(node.attr)
        elif isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef | ast.ClassDef):
            defined.add(node.name)
    return Shape(
        loops=loops,
        branches=branches,
        handlers=handlers,
        returns=returns,
        yields=yields,
        raises=tuple(raises),
        calls=tuple(c for c in calls if c not in raises),
        names=tuple(sorted(names - set(calls) - set(raises))),
        recursion=bool(defined & set(calls)),
        comprehensions=comps,
    )


def class_docstring(root: Path, file: str, qual: str) -> str | None:
    """The docstring of top-level class `qual` in `file` under `root`."""
    if not file.endswith(".py"):
        return None
    try:
        tree = pyast.parse((Path(root) / file).read_text(encoding="utf-8"))
    except (OSError, UnicodeDecodeError, SyntaxError, ValueError, RecursionError):
        return None
    for node in tree.body:
        if isinstance(node, ast.ClassDef) and node.name == qual:
            return ast.get_docstring(node)
    return None


def test_docs(root: Path, tests: Sequence[str]) -> tuple[tuple[str, str], ...]:
    """(test id, the first line of its docstring) for the tests that have one (at most
    twelve, in `tests`' order, no docstring twice)."""
    wanted: dict[str, set[str]] = {}
    for test in tests:
        path, _, rest = test.partition("::")
        wanted.setdefault(path, set()).add(rest.split("::")[-1].split("[")[0])
    docs: dict[tuple[str, str], str] = {}
    for path, names in wanted.items():
        try:
            tree = pyast.parse((Path(root) / path).read_text(encoding="utf-8"))
        except (OSError, UnicodeDecodeError, SyntaxError, ValueError, RecursionError):
            continue
        for node in ast.walk(tree):
            if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef) and node.name in names:
                doc = ast.get_docstring(node)
                if doc and doc.strip():
                    docs[(path, node.name)] = doc.strip().splitlines()[0].strip()
    out: list[tuple[str, str]] = []
    for test in tests:
        path, _, rest = test.partition("::")
        doc = docs.get((path, rest.split("::")[-1].split("[")[0]))
        if doc and all(doc != d for _, d in out):
            out.append((test, doc))
    return tuple(out[:_MAX_TEST_DOCS])
