"""Exact test selection for edits that remove definitions (remove_function, remove_class).

Removing a definition changes more than its body: the name is no longer bound, so imports,
attribute look-ups, `hasattr`, `dir()` and registries may see the difference. A test can
observe the removal of a definition named `n` only in one of these ways:

1. it runs the removed code itself (a line of a removed body, on the original);
2. some code it runs looks `n` up by name: that line mentions `n` where a look-up can reach
   the definition (`Mentions`: a plain name, an import, an attribute or a string such as
   `getattr(x, "n")`, `__all__ = ["n"]` or `mock.patch.object(m, "n")`; for a method, only an
   attribute, a string or a plain name in its own class body);
3. some code it runs looks names up without spelling them: `getattr`/`hasattr` with a computed
   name, `dir()`, `vars()`, `__dict__`, `globals()`, `inspect`, `importlib`, `__subclasses__`...;
4. the interpreter or a library looks it up implicitly: dunder methods (operators, protocols),
   decorators (registration at import; on the definition or on its class), metaclasses and
   `__init_subclass__`, or methods of a class whose bases come from outside the seed (a stdlib
   `NodeVisitor` calls `visit_<name>`, a `JSONEncoder` calls `default`).

Case 4 is refused outright (None: the full suite runs), except the dunders that are only ever
looked up to be called at once (`_CALLED_DUNDERS`: constructors, conversions, operators...):
the look-up runs the body, so case 1 covers them. For cases 1 to 3 the coverage map says
which tests ran each line of the seed's sources, and a test file is taken whole when its own
text mentions `n` or a dynamic look-up (test files are not in the map). A line in any of these
sets that ran where every test may depend on it (while the seed's modules were imported, in a
session fixture or a teardown) also means the full suite, except the headers of the removed
definitions themselves, which run at import whether or not anyone uses them (their decorators
and default values were refused or checked to be side-effect free). Helper modules among the
test paths (conftest.py, shared helpers) that mention `n` or a dynamic look-up: full suite.

Mentions and dynamic look-ups (case 3) come from the syntax tree (`taskmint.validate.lookups`),
so what only binds a name (an assignment target, a dataclass field, a parameter, the name a
`def`/`class` binds) or a docstring never counts; a file that does not parse falls back to the
spelling of the words on its raw lines. A method `parse` elsewhere, a field `left` of another
class, or a docstring saying "inspect", then no longer pulls in the full suite just because it
ran at import.
"""

from __future__ import annotations

import ast
import functools
import os
from collections.abc import Iterable
from pathlib import Path

from taskmint.index.coverage import CoverageMap
from taskmint.records import Candidate, SeedApp
from taskmint.validate.lookups import Mentions, dynamic_file, dynamic_line, occurrences, parse_file

__all__ = ["REMOVAL", "select_for_removal"]

REMOVAL = frozenset({"remove_function", "remove_class"})

# Decorators that only wrap: the decorated name is then used by spelling it.
_PLAIN_DECORATORS = {"property", "staticmethod", "classmethod", "cached_property"}
_BUILTIN_BASES = {
    "object",
    "Exception",
    "ValueError",
    "TypeError",
    "KeyError",
    "IndexError",
    "LookupError",
    "RuntimeError",
    "ArithmeticError",
    "ZeroDivisionError",
    "NotImplementedError",
}
_EXCEPTION_METHODS = {"with_traceback", "add_note", "args"}
# Dunders the interpreter only ever looks up to call them at once (construction, conversion,
# operators, item access, `with`, copy and pickle): a test that never ran the body never made
# the look-up, so case 1 covers them. The others stay refused: their mere presence is checked
# without a call (`callable()` for `__call__`; the ABCs' subclass hooks for `__iter__`,
# `__len__`, `__contains__`, `__reversed__`, `__next__`, `__hash__`, `__fspath__`; `iter()` on
# a `__getitem__` sequence; `ExitStack` fetching `__exit__` long before calling it; data versus
# non-data descriptors for `__get__`/`__set__`/`__delete__`; `__eq__` without `__hash__` makes
# instances unhashable), or they run at import, at garbage collection or as a fallback. Left
# out of the argument: `typing.Supports*` protocol checks, which code must spell.
# fmt: off
_CALLED_DUNDERS = frozenset({
    "__init__", "__new__", "__post_init__", "__repr__", "__str__", "__format__", "__bytes__",
    "__bool__", "__int__", "__float__", "__complex__", "__index__", "__round__", "__trunc__",
    "__floor__", "__ceil__", "__lt__", "__le__", "__gt__", "__ge__", "__ne__",
    "__setitem__", "__delitem__", "__enter__", "__aenter__",
    "__copy__", "__deepcopy__", "__getstate__", "__setstate__", "__reduce__", "__reduce_ex__",
    "__getnewargs__", "__getnewargs_ex__", "__neg__", "__pos__", "__abs__", "__invert__",
    "__length_hint__",
}) | {
    f"__{side}{op}__"
    for op in (
        "add", "sub", "mul", "matmul", "truediv", "floordiv", "mod", "divmod", "pow", "lshift",
        "rshift", "and", "xor", "or",
    )
    for side in ("", "r", "i")
}
# fmt: on
_DATACLASS = {"dataclass", "dataclasses.dataclass"}


def _find(tree: ast.Module, qualname: str) -> tuple[ast.AST, ast.ClassDef | None] | None:
    """The definition at `qualname` and its enclosing class (None at module level)."""
    body: list[ast.stmt] = tree.body
    owner: ast.ClassDef | None = None
    node: ast.AST | None = None
    parts = qualname.split(".")
    for i, part in enumerate(parts):
        node = next(
            (
                n
                for n in body
                if isinstance(n, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef))
                and n.name == part
            ),
            None,
        )
        if node is None:
            return None
        if i < len(parts) - 1:
            if not isinstance(node, ast.ClassDef):
                return None
            owner = node
            body = node.body
    assert node is not None
    return node, owner


def _decorators_plain(node: ast.FunctionDef | ast.AsyncFunctionDef | ast.ClassDef) -> bool:
    for dec in node.decorator_list:
        if isinstance(dec, ast.Name) and dec.id in _PLAIN_DECORATORS:
            continue
        if isinstance(dec, ast.Attribute) and (
            dec.attr in ("setter", "getter", "deleter") or dec.attr in _PLAIN_DECORATORS
        ):
            continue
        return False
    return True


def _called_dunder(name: str, owner: ast.ClassDef | None) -> bool:
    """A method dunder whose absence only a call of it can notice (`_CALLED_DUNDERS`);
    `__eq__` too when its class defines `__hash__` (then hashing does not change)."""
    if owner is None:
        return False  # a module-level `__getattr__` and the like
    if name == "__eq__":
        return any(
            isinstance(n, (ast.FunctionDef, ast.AsyncFunctionDef)) and n.name == "__hash__"
            for n in owner.body
        )
    return name in _CALLED_DUNDERS


def _owner_decorators_plain(owner: ast.ClassDef, dunder: bool) -> bool:
    """Whether the class a method is removed from has no decorator that may look at its
    methods at import. `dataclass` looks only at dunders (which it adds when absent) and
    fields, so it is plain for other methods."""
    for dec in owner.decorator_list:
        target = dec.func if isinstance(dec, ast.Call) else dec
        spelled = ast.unparse(target)
        if spelled in _DATACLASS and not dunder:
            continue
        return False
    return True


def _simple(expr: ast.expr | None) -> bool:
    """An expression that runs no code of anybody's when evaluated."""
    if expr is None:
        return True
    return all(
        isinstance(
            n,
            (
                ast.Constant,
                ast.Name,
                ast.Tuple,
                ast.List,
                ast.Set,
                ast.Dict,
                ast.Load,
                ast.UnaryOp,
                ast.USub,
                ast.UAdd,
                ast.Attribute,
            ),
        )
        for n in ast.walk(expr)
    )


def _plain_statement(stmt: ast.stmt) -> bool:
    """A class-level assignment of a simple value, a docstring or `pass` (it runs at import)."""
    if isinstance(stmt, ast.Pass):
        return True
    if isinstance(stmt, (ast.Assign, ast.AnnAssign)):
        return _simple(stmt.value)
    return isinstance(stmt, ast.Expr) and isinstance(stmt.value, ast.Constant)


def _header_lines(node: ast.AST) -> set[int] | None:
    """Lines of a removed definition that run at import; None if running them may do more
    than bind names (a decorator, a default value or a class-level statement with calls)."""
    if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
        if not _decorators_plain(node):
            return None
        args = node.args
        if not all(_simple(d) for d in [*args.defaults, *args.kw_defaults]):
            return None
        first = min([node.lineno, *(d.lineno for d in node.decorator_list)])
        return set(range(first, node.body[0].lineno))
    if isinstance(node, ast.ClassDef):
        if not _decorators_plain(node) or node.keywords:
            return None
        lines = set(range(node.lineno, node.body[0].lineno))
        for stmt in node.body:
            if isinstance(stmt, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
                inner = _header_lines(stmt)
                if inner is None:
                    return None
                lines |= inner
            elif _plain_statement(stmt):
                lines |= set(range(stmt.lineno, (stmt.end_lineno or stmt.lineno) + 1))
            else:
                return None
        return lines
    return None


def _seed_classes(seed: SeedApp) -> dict[str, list[ast.ClassDef]]:
    """Every class of the seed's sources, by name (read-only: shared by every candidate)."""
    return _classes_in(str(seed.root), tuple(seed.files), tuple(seed.manifest.source_paths))


@functools.lru_cache(maxsize=8)
def _classes_in(
    root: str, files: tuple[str, ...], source_paths: tuple[str, ...]
) -> dict[str, list[ast.ClassDef]]:
    classes: dict[str, list[ast.ClassDef]] = {}
    for rel in files:
        if rel.endswith(".py") and any(
            rel == s or rel.startswith(s.rstrip("/") + "/") for s in source_paths
        ):
            tree = parse_file(os.path.join(root, rel))
            for node in ast.walk(tree) if tree is not None else ():
                if isinstance(node, ast.ClassDef):
                    classes.setdefault(node.name, []).append(node)
    return classes


def _bases_known(cls: ast.ClassDef, classes: dict[str, list[ast.ClassDef]], seen: set[str]) -> bool:
    """Whether every base of `cls`, transitively, is `object`, a plain builtin exception, or a
    class of the seed: then no code from outside calls its methods by an unspelled name."""
    if cls.keywords:
        return False
    for base in cls.bases:
        if not isinstance(base, ast.Name):
            return False
        if base.id in _BUILTIN_BASES:
            continue
        defs = classes.get(base.id)
        if not defs:
            return False
        if base.id in seen:
            continue
        seen.add(base.id)
        if not all(_bases_known(d, classes, seen) for d in defs):
            return False
    return True


def _is_test_file(rel: str) -> bool:
    name = rel.rsplit("/", 1)[-1]
    return name.startswith("test_") or name.endswith("_test.py")


def select_for_removal(
    candidate: Candidate,
    cmap: CoverageMap,
    seed: SeedApp,
    universe: tuple[str, ...] | None = None,
) -> tuple[str, ...] | None:
    """The tests that can observe the removal of `candidate`'s definitions (see the module
    doc for why the others cannot), or None when the full suite must run."""
    if candidate.strategy not in REMOVAL or not candidate.units:
        return None
    root = Path(seed.root)
    names: set[str] = set()
    owners: dict[str, list[tuple[str, int, int]]] = {}  # method name -> its classes' spans
    module_level: set[str] = set()
    spans: dict[str, list[tuple[int, int, set[int]]]] = {}
    classes = _seed_classes(seed)
    for unit in candidate.units:
        file, _, qualname = unit.partition("::")
        tree = parse_file(str(root / file))
        found = _find(tree, qualname) if tree is not None else None
        if found is None:
            return None
        node, owner = found
        assert isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef))
        name = node.name
        dunder = name.startswith("__") and name.endswith("__")
        if name in _EXCEPTION_METHODS or (dunder and not _called_dunder(name, owner)):
            return None
        if owner is not None and not _bases_known(owner, classes, set()):
            return None
        if owner is not None and not _owner_decorators_plain(owner, dunder):
            return None
        if isinstance(node, ast.ClassDef) and not _bases_known(node, classes, set()):
            return None
        header = _header_lines(node)
        if header is None:
            return None
        names.add(name)
        if owner is not None:
            owners.setdefault(name, []).append((file, owner.lineno, owner.end_lineno or 0))
        else:
            module_level.add(name)
        first = min([node.lineno, *(d.lineno for d in node.decorator_list)])
        spans.setdefault(file, []).append((first, node.end_lineno or node.lineno, header))
    mentions = Mentions(root, module_level, owners)

    lines_by_file: dict[str, set[int]] = {}
    for file, per_line in cmap.lines.items():
        # Only the lines that can answer yes are looked at: those inside a removed definition
        # and, when the file parses, those naming a removed name or looking names up
        # dynamically (found per name); every covered line of a file that does not parse.
        occ = occurrences(os.path.join(root, file))
        if occ is None:
            maybe: Iterable[int] = per_line
        else:
            maybe = occ.lines_naming(mentions.names)
            for first, last, _header in spans.get(file, ()):
                maybe.update(range(first, last + 1))
        for line in sorted(maybe):
            if line not in per_line:
                continue
            in_removed = False
            for first, last, header in spans.get(file, ()):
                if first <= line <= last:
                    in_removed = True
                    if line not in header:
                        lines_by_file.setdefault(file, set()).add(line)
            if in_removed:
                continue
            if mentions.line(file, line) or dynamic_line(root, file, line):
                lines_by_file.setdefault(file, set()).add(line)
    picked: set[str] = set()
    for file, lines in lines_by_file.items():
        tests = cmap.tests_on_lines(file, lines, universe)
        if tests is None:
            return None
        picked.update(tests)
    # Test paths are not in the map: a test file is taken whole if it spells the name or a
    # dynamic look-up; any other module there (conftest.py, helpers) doing so: full suite.
    pool = cmap.tests if universe is None else universe
    test_files = {t.split("::", 1)[0] for t in pool}
    for rel in _test_path_files(seed):
        if not (mentions.file(rel) or dynamic_file(root, rel)):
            continue
        if rel in test_files:
            picked.update(t for t in pool if t.split("::", 1)[0] == rel)
        elif not _is_test_file(rel):  # a helper or conftest.py: any test may use it
            return None
    return tuple(sorted(picked))


def _test_path_files(seed: SeedApp) -> Iterable[str]:
    for rel in seed.files:
        if rel.endswith(".py") and any(
            rel == t or rel.startswith(t.rstrip("/") + "/") for t in seed.manifest.test_paths
        ):
            yield rel
