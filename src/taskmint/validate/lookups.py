"""Which lines of a Python file look a name up, by spelling it or dynamically.

The reading behind exact test selection for removed definitions (`taskmint.validate.removal`,
cases 2 and 3 of its docstring): per line of a file, the names it looks up as a plain name or as
an attribute or string (`occurrences`), and whether it looks names up without spelling them
(`getattr` with a computed name, `dir()`, `inspect`...). Read from the syntax tree, so what only
binds a name or a docstring never counts; a file that does not parse falls back to the words on
its raw lines (`DYNAMIC`, `Mentions.spelled`).
"""

from __future__ import annotations

import ast
import functools
import os
import re
from collections.abc import Iterable
from dataclasses import dataclass
from pathlib import Path

from taskmint import pyast

__all__ = [
    "DYNAMIC",
    "Mentions",
    "Occurrences",
    "dynamic_file",
    "dynamic_line",
    "occurrences",
    "parse_file",
    "read_lines",
]

# Names and attributes through which code looks names up without spelling them (case 3); a
# class statement with a `metaclass` too. Read from the syntax tree (`occurrences`): a name
# loaded or an attribute taken among these (an import of `inspect` alone is not, nor a keyword
# argument `locals=`), or a name the file binds by importing from one of `_DYNAMIC_MODULES`
# (`from pickle import loads`). `DYNAMIC` spells them for files that do not parse.
_DYNAMIC_MODULES = frozenset({"inspect", "importlib", "pkgutil", "pickle", "copyreg"})
_DYNAMIC_WORDS = _DYNAMIC_MODULES | {
    "getattr", "hasattr", "delattr", "dir", "vars", "globals", "locals", "eval", "exec",
    "__import__", "import_module", "attrgetter", "methodcaller", "getmembers", "singledispatch",
    "__subclasses__", "__dict__", "__getattr__", "__getattribute__", "__class_getitem__",
    "__init_subclass__", "__set_name__",
}  # fmt: skip
# As a plain name, one of these dunders is a binding of the file's own (`__getitem__ =
# __getattr__` in a class body aliases the method): loading it looks nothing up. What the
# method does when called is on the lines of its body, which are read on their own; as an
# attribute (`super().__getattr__(name)`, `obj.__dict__`) each still counts. `__import__`, a
# builtin called by its plain name, stays.
_ALIASED_DUNDERS = frozenset(
    w for w in _DYNAMIC_WORDS if w.startswith("__") and w.endswith("__") and w != "__import__"
)
DYNAMIC = re.compile(r"\b(" + "|".join(sorted(_DYNAMIC_WORDS | {"metaclass"})) + r")\b")


@functools.lru_cache(maxsize=512)
def read_lines(path: str) -> tuple[str, ...]:
    try:
        return tuple(Path(path).read_text(encoding="utf-8", errors="replace").splitlines())
    except OSError:
        return ()


@dataclass(frozen=True, slots=True)
class Occurrences:
    """Per line of a file, the names it may look up: `variable` as a plain name (a load, a
    `del`, an import, `global`), `attribute` as an attribute (`x.n`, a `case C(n=...)` pattern)
    or by a string (`getattr(x, "n")`, `__all__ = ["n"]`). A name a line only binds (an
    assignment target, a parameter, the name a `def` or `class` binds, a keyword argument) or
    mentions in a docstring is no look-up: nothing there can resolve to a removed definition."""

    variable: dict[int, frozenset[str]]
    attribute: dict[int, frozenset[str]]
    dynamic: frozenset[int]  # lines that look names up dynamically (case 3)
    by_name: dict[str, frozenset[int]]  # name -> the lines looking it up either way

    def lines_naming(self, names: Iterable[str]) -> set[int]:
        """The lines that look up one of `names` or look names up dynamically: every line
        `Mentions.line` or `dynamic_line` can say yes to, found per name, not per line."""
        out = set(self.dynamic)
        for name in names:
            out |= self.by_name.get(name, frozenset())
        return out


_WORD = re.compile(r"[A-Za-z_]\w*")


# Look-ups by name whose names are all string literals: `hasattr(obj, "name")`,
# `getattr(obj, "name", None)`, `attrgetter("a.b")`, `methodcaller("name", x)`. They look up
# exactly the words of those strings, which count as attribute mentions (case 2), so the call is
# no dynamic look-up. Index: the positional arguments that are names (None: all of them).
_SPELLED_CALLS: dict[str, slice] = {
    "getattr": slice(1, 2),
    "hasattr": slice(1, 2),
    "delattr": slice(1, 2),
    "attrgetter": slice(0, None),
    "methodcaller": slice(0, 1),
}


def _spelled_call(call: ast.Call) -> bool:
    """Whether `call` is one of `_SPELLED_CALLS` with every name given as a string literal."""
    func = call.func
    name = func.id if isinstance(func, ast.Name) else getattr(func, "attr", None)
    where = _SPELLED_CALLS.get(name or "")
    if where is None or call.keywords or any(isinstance(a, ast.Starred) for a in call.args):
        return False
    names = call.args[where]
    return bool(names) and all(
        isinstance(a, ast.Constant) and isinstance(a.value, str) for a in names
    )


@functools.lru_cache(maxsize=512)
def occurrences(path: str) -> Occurrences | None:
    """The look-ups of every line of `path` (None when it does not parse). An occurrence counts
    on every line its node spans and on the first line of its statement, since coverage may
    record a multi-line statement on either."""
    tree = parse_file(path)
    if tree is None:
        return None
    variable: dict[int, set[str]] = {}
    attribute: dict[int, set[str]] = {}
    dynamic: dict[int, set[str]] = {}
    words = set(_DYNAMIC_WORDS)  # and the names this file binds from a dynamic module
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            words.update(
                a.asname or a.name.split(".")[0]
                for a in node.names
                if a.name.split(".")[0] in _DYNAMIC_MODULES
            )
        elif (
            isinstance(node, ast.ImportFrom)
            and node.module
            and not node.level
            and node.module.split(".")[0] in _DYNAMIC_MODULES
        ):
            words.update(a.asname or a.name for a in node.names)

    def add(into: dict[int, set[str]], names: Iterable[str], node: ast.AST, stmt: int) -> None:
        first = getattr(node, "lineno", stmt)
        last = getattr(node, "end_lineno", None) or first
        for line in {stmt, *range(first, last + 1)}:
            into.setdefault(line, set()).update(names)

    spelled: set[int] = set()  # ids of the callee nodes of `_spelled_call`s

    def visit(node: ast.AST, stmt: int) -> None:
        if isinstance(node, ast.Call) and _spelled_call(node):
            spelled.add(id(node.func))
        if isinstance(node, ast.stmt):
            stmt = node.lineno
            if (
                isinstance(node, ast.Expr)
                and isinstance(node.value, ast.Constant)
                and isinstance(node.value.value, str)
            ):
                return  # a bare string statement (a docstring) looks nothing up
        if isinstance(node, ast.Name) and not isinstance(node.ctx, ast.Store):
            add(variable, (node.id,), node, stmt)
            if node.id in words and node.id not in _ALIASED_DUNDERS and id(node) not in spelled:
                add(dynamic, (node.id,), node, stmt)
        elif isinstance(node, ast.Attribute):
            add(attribute, (node.attr,), node, stmt)
            if node.attr in words and id(node) not in spelled:
                add(dynamic, (node.attr,), node, stmt)
        elif isinstance(node, ast.ClassDef):
            for kw in node.keywords:
                if kw.arg == "metaclass":
                    add(dynamic, ("metaclass",), kw.value, stmt)
        elif isinstance(node, ast.Constant) and isinstance(node.value, str):
            add(attribute, _WORD.findall(node.value), node, stmt)
        elif isinstance(node, (ast.Global, ast.Nonlocal)):
            add(variable, node.names, node, stmt)
        elif isinstance(node, (ast.Import, ast.ImportFrom)):
            parts = [p for a in node.names for p in a.name.split(".")]
            if isinstance(node, ast.ImportFrom) and node.module:
                parts += node.module.split(".")
            add(variable, parts, node, stmt)
        elif isinstance(node, ast.MatchClass):
            add(attribute, node.kwd_attrs, node, stmt)
        for child in ast.iter_child_nodes(node):
            visit(child, stmt)

    try:
        visit(tree, 1)
    except RecursionError:
        return None
    by_name: dict[str, set[int]] = {}
    for table in (variable, attribute):
        for line, found in table.items():
            for name in found:
                by_name.setdefault(name, set()).add(line)
    return Occurrences(
        {k: frozenset(v) for k, v in variable.items()},
        {k: frozenset(v) for k, v in attribute.items()},
        frozenset(dynamic),
        {k: frozenset(v) for k, v in by_name.items()},
    )


@functools.lru_cache(maxsize=256)
def parse_file(path: str) -> ast.Module | None:
    try:
        return pyast.parse(Path(path).read_bytes())
    except (OSError, SyntaxError, ValueError, RecursionError, MemoryError):
        return None


class Mentions:
    """Which lines can look up one of the removed definitions by its name (case 2).

    A module-level function or class is looked up as a plain name (in its module, or after an
    import), as an attribute of its module or by a string. A method is looked up only as an
    attribute (`obj.n`, `cls.n`, `super().n`) or by a string: a plain name `n` resolves to a
    local, global or builtin, never to a class attribute, except in the class body itself (a
    line such as `alias = n`), so a plain `n` counts for a method only inside its class. Files
    that do not parse fall back to the spelling (any occurrence of the word on a raw line)."""

    def __init__(
        self, root: Path, module_level: set[str], owners: dict[str, list[tuple[str, int, int]]]
    ) -> None:
        self.root = str(root)
        self.names = frozenset(module_level | set(owners))
        self.owners = owners
        self.module_level = frozenset(module_level)
        self.spelled = re.compile(
            r"(?<![\w])(" + "|".join(map(re.escape, sorted(self.names))) + r")(?![\w])"
        )

    def line(self, file: str, line: int) -> bool:
        occ = occurrences(os.path.join(self.root, file))
        if occ is None:
            text = read_lines(os.path.join(self.root, file))
            return bool(0 < line <= len(text) and self.spelled.search(text[line - 1]))
        if occ.attribute.get(line, frozenset()) & self.names:
            return True
        variable = occ.variable.get(line, frozenset()) & self.names
        if variable & self.module_level:
            return True
        return any(
            f == file and lo <= line <= hi for n in variable for f, lo, hi in self.owners.get(n, ())
        )

    def file(self, file: str) -> bool:
        occ = occurrences(os.path.join(self.root, file))
        if occ is None:
            return bool(self.spelled.search("\n".join(read_lines(os.path.join(self.root, file)))))
        return any(self.line(file, n) for n in {*occ.attribute, *occ.variable})


def dynamic_line(root: Path, file: str, line: int) -> bool:
    """Whether `line` of `file` looks names up dynamically (case 3)."""
    path = os.path.join(root, file)
    occ = occurrences(path)
    if occ is None:
        text = read_lines(path)
        return bool(0 < line <= len(text) and DYNAMIC.search(text[line - 1]))
    return line in occ.dynamic


def dynamic_file(root: Path, file: str) -> bool:
    path = os.path.join(root, file)
    occ = occurrences(path)
    if occ is None:
        return bool(DYNAMIC.search("\n".join(read_lines(path))))
    return bool(occ.dynamic)
