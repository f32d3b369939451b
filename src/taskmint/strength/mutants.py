"""Mutants of a task's gold code: small edits of the original tree inside the lines the task
removed, each a byte-range replacement in one file that still compiles.

The gold code is where the gold patch puts lines back (`gold_lines`). Inside it, and only inside
function bodies (never a `def` line, a decorator, a default or a class body: what runs at
import stays as it is), the operators are:

- `compare`: a comparison flipped to its negation (`<` -> `>=`, `==` -> `!=`, `in` -> `not in`,
  `is` -> `is not`; JavaScript's `===` -> `!==` too);
- `boolean`: `and` <-> `or` (`&&` <-> `||`), a `not` (`!`) dropped;
- `constant`: a number shifted by one (0 -> 1, 1 -> 0, n -> n + 1), `True` <-> `False`;
- `drop`: a statement that is not a plain assignment (a call, an augmented assignment, a
  `raise`, a `del`, `break`/`continue`) replaced by `pass` (`;`);
- `early_return`: a bare `return` before a body's first statement;
- `swap_args`: a call's first two positional arguments swapped, unless the callee is known to
  be symmetric in them (`max`, `min` without a `key`, `math.gcd`, `math.hypot`, ...;
  JavaScript's `Math.max`, ...): that mutant is equivalent and would count against the tests;
- `branch`: an `if` (`elif`) condition made `False`, an `else` body emptied.

The language's profile says how its code is read: Python with `ast` (its offsets are UTF-8 byte
offsets), the tree-sitter languages with their grammar, the node kinds and texts of the
operators coming from their syntax (`TreeSitterSyntax.mutation`: JavaScript's and
TypeScript's; a language without one has no mutants). A Python mutant must `compile`; a
tree-sitter one must parse without an error node.
A Python mutant whose function compiles to the same code as the original's (trivial compiler
equivalence: an early `return` in a body that only returns None) is equivalent and left out.
`sample_mutants` picks at most n of them, deterministic in a seed string (the task's id),
spread over the operators first and over lines second.
"""

from __future__ import annotations

import ast
import random
import re
import types
from collections.abc import Callable, Iterator

from tree_sitter import Node

from taskmint.index.python import SourceSkipped
from taskmint.index.treesitter_grammars import language_of
from taskmint.index.treesitter_grammars import parse as ts_parse
from taskmint.languages import find_syntax, profile_for_file
from taskmint.languages.mutation import Mutant, Mutants, end_row, row, shown
from taskmint.pyast import parse as py_parse

__all__ = [
    "OPERATORS",
    "Mutant",
    "gold_lines",
    "mutants_of",
    "python_mutants",
    "sample_mutants",
    "treesitter_mutants",
]

OPERATORS = ("compare", "boolean", "constant", "drop", "early_return", "swap_args", "branch")

_PY_FLIP = {
    "<": ">=",
    ">=": "<",
    ">": "<=",
    "<=": ">",
    "==": "!=",
    "!=": "==",
    "in": "not in",
    "not in": "in",
    "is": "is not",
    "is not": "is",
}
# Callees whose result does not depend on the order of their first two positional arguments:
# swapping them makes an equivalent mutant, which no test can kill.
_PY_SYMMETRIC = frozenset(
    {
        "max",
        "min",
        "math.gcd",
        "math.lcm",
        "math.hypot",
        "math.dist",
        "math.isclose",
        "operator.eq",
        "operator.ne",
        "operator.is_",
        "operator.is_not",
    }
)
# `max(a, b, key=f)` returns the first of two items with equal keys: order shows there.
_ORDER_KEYWORDS = frozenset({"key"})
_PY_OP = re.compile(rb"not\s+in\b|is\s+not\b|<=|>=|==|!=|<|>|\bin\b|\bis\b")


_HUNK = re.compile(r"^@@ -\d+(?:,\d+)? \+(\d+)(?:,(\d+))? @@")


def gold_lines(patch: str) -> dict[str, set[int]]:
    """File -> the lines of the ORIGINAL tree that the gold patch (broken -> original) adds:
    the gold code, in the original's line numbers."""
    out: dict[str, set[int]] = {}
    path: str | None = None
    line = 0
    for raw in patch.splitlines():
        if raw.startswith("diff --git "):
            path = None
            continue
        if raw.startswith("+++ "):
            target = raw[4:].split("\t")[0].strip()
            path = None if target == "/dev/null" else target.removeprefix("b/")
            continue
        if raw.startswith("--- "):
            continue
        m = _HUNK.match(raw)
        if m:
            line = int(m.group(1))
            continue
        if path is None or not raw:
            if path is not None:
                line += 1
            continue
        tag = raw[0]
        if tag == "+":
            out.setdefault(path, set()).add(line)
            line += 1
        elif tag == " ":
            line += 1
    return out


def _line_starts(data: bytes) -> list[int]:
    starts = [0]
    for i, byte in enumerate(data):
        if byte == 10:
            starts.append(i + 1)
    return starts


# -- Python ------------------------------------------------------------------------------------


class _Py:
    """The Python mutants of one file, restricted to `lines`."""

    def __init__(self, path: str, data: bytes, lines: set[int]) -> None:
        self.path = path
        self.data = data
        self.lines = lines
        self.starts = _line_starts(data)
        self.out: list[Mutant] = []

    def off(self, line: int, col: int) -> int:
        return self.starts[line - 1] + col

    def span(self, node: ast.AST) -> tuple[int, int]:
        return (
            self.off(node.lineno, node.col_offset),  # type: ignore[attr-defined]
            self.off(node.end_lineno, node.end_col_offset),  # type: ignore[attr-defined]
        )

    def inside(self, first: int, last: int) -> bool:
        return all(n in self.lines for n in range(first, last + 1))

    def add(
        self,
        start: int,
        end: int,
        replacement: bytes,
        operator: str,
        stmt: ast.stmt,
        unit: str,
        *,
        first: int | None = None,
        last: int | None = None,
    ) -> None:
        line = self.data.count(b"\n", 0, start) + 1
        end_line = self.data.count(b"\n", 0, max(start, end - 1)) + 1 if end > start else line
        if not self.inside(line, end_line):
            return
        before = self.data[start:end]
        if before == replacement:
            return
        self.out.append(
            Mutant(
                file=self.path,
                line=line,
                start=start,
                end=end,
                replacement=replacement,
                operator=operator,
                before=shown(before) or "",
                after=shown(replacement),
                first=first if first is not None else min(stmt.lineno, line),
                last=last if last is not None else max(end_line, line),
                unit=unit,
            )
        )

    def run(self, tree: ast.Module) -> list[Mutant]:
        for func, qual in _functions(tree):
            body = list(func.body)
            if body and _is_docstring(body[0]):
                body = body[1:]
            if not body:
                continue
            first = body[0]
            start = self.off(first.lineno, first.col_offset)
            indent = self.data[self.starts[first.lineno - 1] : start]
            if indent.strip() == b"":
                self.add(
                    start,
                    start,
                    b"return\n" + indent,
                    "early_return",
                    first,
                    qual,
                    first=first.lineno,
                    last=first.lineno,
                )
            for stmt in body:
                self.statement(stmt, qual)
        return self.out

    def statement(self, stmt: ast.stmt, unit: str) -> None:
        """Every mutant of `stmt` and the statements and expressions inside it."""
        if isinstance(stmt, ast.FunctionDef | ast.AsyncFunctionDef | ast.ClassDef):
            return  # a nested definition's body is visited as a function of its own
        if isinstance(
            stmt,
            ast.Expr | ast.AugAssign | ast.Raise | ast.Delete | ast.Break | ast.Continue,
        ) and not _is_docstring(stmt):
            start, end = self.span(stmt)
            pad = b"\n" * (stmt.end_lineno - stmt.lineno)  # type: ignore[operator]
            self.add(start, end, b"pass" + pad, "drop", stmt, unit, last=stmt.end_lineno)
        if isinstance(stmt, ast.If):
            self.branch(stmt, unit)
        for child in ast.iter_child_nodes(stmt):
            if isinstance(child, ast.stmt):
                self.statement(child, unit)
            elif isinstance(child, ast.expr):
                self.expression(child, stmt, unit)
        for handler in getattr(stmt, "handlers", ()):
            for child in handler.body:
                self.statement(child, unit)
        for case in getattr(stmt, "cases", ()):
            for child in case.body:
                self.statement(child, unit)

    def branch(self, stmt: ast.If, unit: str) -> None:
        start, end = self.span(stmt.test)
        self.add(start, end, b"False", "branch", stmt, unit)
        orelse = stmt.orelse
        if not orelse:
            return
        head = self.off(orelse[0].lineno, orelse[0].col_offset)
        if isinstance(orelse[0], ast.If) and self.data[head : head + 4] == b"elif":
            return  # an elif chain: its own test is mutated instead
        last = orelse[-1]
        s = head
        e = self.off(last.end_lineno, last.end_col_offset)  # type: ignore[arg-type]
        pad = b"\n" * (last.end_lineno - orelse[0].lineno)  # type: ignore[operator]
        self.add(
            s,
            e,
            b"pass" + pad,
            "branch",
            stmt,
            unit,
            first=orelse[0].lineno,
            last=last.end_lineno,
        )

    def expression(self, expr: ast.expr, stmt: ast.stmt, unit: str) -> None:
        for node, in_index in _walk(expr):
            if isinstance(node, ast.Compare):
                self.compare(node, stmt, unit)
            elif isinstance(node, ast.BoolOp):
                self.boolop(node, stmt, unit)
            elif isinstance(node, ast.UnaryOp) and isinstance(node.op, ast.Not):
                start, end = self.span(node)
                rest = self.data[start + 3 : end]
                self.add(start, end, b"(" + rest + b")", "boolean", stmt, unit)
            elif isinstance(node, ast.Constant) and not in_index:
                self.constant(node, stmt, unit)
            elif isinstance(node, ast.Call):
                self.swap(node, stmt, unit)

    def compare(self, node: ast.Compare, stmt: ast.stmt, unit: str) -> None:
        left: ast.expr = node.left
        for right in node.comparators:
            gap_start = self.span(left)[1]
            gap_end = self.span(right)[0]
            gap = self.data[gap_start:gap_end]
            found = list(_PY_OP.finditer(gap))
            if len(found) == 1:
                m = found[0]
                op = b" ".join(m.group(0).split()).decode()
                flipped = _PY_FLIP.get(op)
                if flipped:
                    self.add(
                        gap_start + m.start(),
                        gap_start + m.end(),
                        flipped.encode(),
                        "compare",
                        stmt,
                        unit,
                    )
            left = right

    def boolop(self, node: ast.BoolOp, stmt: ast.stmt, unit: str) -> None:
        word, other = (b"and", b"or") if isinstance(node.op, ast.And) else (b"or", b"and")
        gap_start = self.span(node.values[0])[1]
        gap_end = self.span(node.values[1])[0]
        gap = self.data[gap_start:gap_end]
        m = re.search(rb"\b" + word + rb"\b", gap)
        if m:
            self.add(gap_start + m.start(), gap_start + m.end(), other, "boolean", stmt, unit)

    def constant(self, node: ast.Constant, stmt: ast.stmt, unit: str) -> None:
        value = node.value
        start, end = self.span(node)
        if isinstance(value, bool):
            self.add(start, end, b"False" if value else b"True", "constant", stmt, unit)
        elif isinstance(value, int):
            shifted = 1 if value == 0 else 0 if value == 1 else value + 1
            self.add(start, end, str(shifted).encode(), "constant", stmt, unit)

    def swap(self, node: ast.Call, stmt: ast.stmt, unit: str) -> None:
        args = node.args
        if len(args) < 2 or any(isinstance(a, ast.Starred) for a in args[:2]):
            return
        if _symmetric(node):
            return
        a0, a1 = self.span(args[0]), self.span(args[1])
        t0, t1 = self.data[a0[0] : a0[1]], self.data[a1[0] : a1[1]]
        if t0 == t1:
            return
        middle = self.data[a0[1] : a1[0]]
        replacement = t1 + middle + t0
        self.add(a0[0], a1[1], replacement, "swap_args", stmt, unit)


def _symmetric(call: ast.Call) -> bool:
    """Whether swapping the call's first two arguments cannot change what it returns."""
    func = call.func
    parts: list[str] = []
    while isinstance(func, ast.Attribute):
        parts.append(func.attr)
        func = func.value
    if not isinstance(func, ast.Name):
        return False
    name = ".".join([func.id, *reversed(parts)])
    if name not in _PY_SYMMETRIC:
        return False
    return not any(k.arg in _ORDER_KEYWORDS for k in call.keywords)


def _walk(expr: ast.expr) -> Iterator[tuple[ast.AST, bool]]:
    """`ast.walk` of an expression, leaving out f-strings (whose inner positions are not to be
    trusted on every Python), with whether each node is inside a subscript's index or slice."""
    stack: list[tuple[ast.AST, bool]] = [(expr, False)]
    while stack:
        node, in_index = stack.pop()
        if isinstance(node, ast.JoinedStr):
            continue
        yield node, in_index
        children = list(ast.iter_child_nodes(node))
        for child in reversed(children):
            index = in_index or (isinstance(node, ast.Subscript) and child is node.slice)
            stack.append((child, index))


def _is_docstring(stmt: ast.stmt) -> bool:
    return (
        isinstance(stmt, ast.Expr)
        and isinstance(stmt.value, ast.Constant)
        and isinstance(stmt.value.value, str)
    )


def _functions(
    tree: ast.AST, prefix: str = ""
) -> Iterator[tuple[ast.FunctionDef | ast.AsyncFunctionDef, str]]:
    """Every function of the module with its qualified name (nested ones too)."""
    for node in ast.iter_child_nodes(tree):
        if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef):
            qual = f"{prefix}{node.name}"
            yield node, qual
            yield from _functions(node, f"{qual}.<locals>.")
        elif isinstance(node, ast.ClassDef):
            yield from _functions(node, f"{prefix}{node.name}.")
        elif isinstance(node, ast.stmt):
            yield from _functions(node, prefix)


def _code_by_qualname(code: types.CodeType) -> dict[str, types.CodeType]:
    out: dict[str, types.CodeType] = {}
    stack = [code]
    while stack:
        c = stack.pop()
        out.setdefault(str(getattr(c, "co_qualname", c.co_name)), c)
        stack.extend(k for k in c.co_consts if isinstance(k, types.CodeType))
    return out


def _same_code(a: types.CodeType, b: types.CodeType) -> bool:
    """Whether two code objects do the same thing: the same instructions, names and constants
    (nested code compared the same way), whatever their line numbers. Trivial compiler
    equivalence: a `return` put before a body that only returns None, a `0` moved to `1` in
    code the compiler removes, ... make the same code as the original."""
    if (
        a.co_code != b.co_code
        or a.co_names != b.co_names
        or _scope(a) != _scope(b)
        or len(a.co_consts) != len(b.co_consts)
    ):
        return False
    for x, y in zip(a.co_consts, b.co_consts, strict=True):
        if isinstance(x, types.CodeType) and isinstance(y, types.CodeType):
            if not _same_code(x, y):
                return False
        elif type(x) is not type(y) or x != y:
            return False
    return True


def _scope(code: types.CodeType) -> tuple[object, ...]:
    return (code.co_varnames, code.co_cellvars, code.co_freevars)


def python_mutants(path: str, data: bytes, lines: set[int]) -> list[Mutant]:
    """Every Python mutant of `data` inside `lines` that compiles, in file order.

    A mutant that changes which names are local to its function (a dropped statement was the
    only assignment of a name) gets the function's whole body as its span: every line of the
    function may then behave differently."""
    try:
        tree = py_parse(data, path)
        original = compile(data, path, "exec", dont_inherit=True)
    except (SyntaxError, ValueError):
        return []
    found = _Py(path, data, lines).run(tree)
    bodies = {qual: (f.body[0].lineno, f.end_lineno or f.lineno) for f, qual in _functions(tree)}
    old_codes = _code_by_qualname(original)
    out: list[Mutant] = []
    seen: set[str] = set()
    for m in sorted(found, key=lambda m: (m.start, m.end, m.operator, m.replacement)):
        if m.key in seen:
            continue
        seen.add(m.key)
        try:
            code = compile(m.apply(data), path, "exec", dont_inherit=True)
        except (SyntaxError, ValueError):
            continue
        new = _code_by_qualname(code).get(m.unit)
        old = old_codes.get(m.unit)
        if new is not None and old is not None and _same_code(new, old):
            continue  # the compiler makes the same code of both: an equivalent mutant
        if new is None or old is None or _scope(new) != _scope(old):
            first, last = bodies.get(m.unit, (m.first, m.last))
            m = _widened(m, min(first, m.first), max(last, m.last))
        out.append(m)
    return out


def _widened(m: Mutant, first: int, last: int) -> Mutant:
    return Mutant(
        file=m.file,
        line=m.line,
        start=m.start,
        end=m.end,
        replacement=m.replacement,
        operator=m.operator,
        before=m.before,
        after=m.after,
        first=first,
        last=last,
        unit=m.unit,
    )


# -- tree-sitter languages ---------------------------------------------------------------------


def _ts_symmetric(call: Node, data: bytes, symmetric: frozenset[str]) -> bool:
    """Whether the call's callee (its text without whitespace) is one of `symmetric`."""
    callee = call.child_by_field_name("function")
    if callee is None or not symmetric:
        return False
    text = b"".join(data[callee.start_byte : callee.end_byte].split())
    return text.decode("utf-8", "replace") in symmetric


def treesitter_mutants(path: str, data: bytes, lines: set[int], language: str) -> list[Mutant]:
    """Every mutant of `data` (a file of tree-sitter language `language`) inside `lines`
    whose tree parses without an error node, in file order. Only code inside function bodies
    is mutated; the node kinds and texts are the syntax's (`TreeSitterSyntax.mutation`), and
    a language without them has none."""
    lang = find_syntax(language)
    spec = lang.mutation if lang is not None else None
    if spec is None:
        return []
    try:
        tree, _ = ts_parse(language, data, path)
    except (SourceSkipped, ValueError):
        return []
    found = Mutants(path, data, lines, spec.blocks)
    add = found.add

    def visit(node: Node, in_body: bool) -> None:
        kind = node.type
        if kind in spec.functions:
            body = node.child_by_field_name("body")
            if body is not None and body.type == spec.body:
                stmts = [c for c in body.named_children if c.type != spec.comment]
                if stmts:
                    s = stmts[0]
                    add(
                        s.start_byte,
                        s.start_byte,
                        spec.early_return,
                        "early_return",
                        s,
                        first=row(s),
                        last=row(s),
                    )
            for child in node.children:
                visit(child, in_body or (body is not None and child.id == body.id))
            return
        if in_body:
            mutate(node)
        for child in node.children:
            visit(child, in_body)

    def mutate(node: Node) -> None:
        kind = node.type
        if kind in spec.statements:
            expr = node.named_children[0] if node.named_children else None
            if not (expr is not None and expr.type == spec.assignment):
                add(node.start_byte, node.end_byte, spec.drop, "drop", node)
        elif kind == spec.binary:
            op = node.child_by_field_name("operator")
            if op is not None:
                text = data[op.start_byte : op.end_byte].decode()
                if text in spec.flip:
                    add(op.start_byte, op.end_byte, spec.flip[text].encode(), "compare", node)
                elif text in spec.and_or:
                    first, second = spec.and_or
                    other = (second if text == first else first).encode()
                    add(op.start_byte, op.end_byte, other, "boolean", node)
        elif kind == spec.unary:
            op = node.child_by_field_name("operator")
            arg = node.child_by_field_name("argument")
            if (
                op is not None
                and arg is not None
                and data[op.start_byte : op.end_byte] == spec.negation
            ):
                add(
                    node.start_byte,
                    node.end_byte,
                    b"(" + data[op.end_byte : node.end_byte] + b")",
                    "boolean",
                    node,
                )
        elif kind == spec.number and not (
            node.parent is not None and node.parent.type == spec.not_inside
        ):
            text = data[node.start_byte : node.end_byte].decode()
            if re.fullmatch(r"\d+", text):
                value = int(text)
                shifted = 1 if value == 0 else 0 if value == 1 else value + 1
                add(node.start_byte, node.end_byte, str(shifted).encode(), "constant", node)
        elif kind in spec.booleans:
            add(node.start_byte, node.end_byte, spec.booleans[kind], "constant", node)
        elif kind == spec.call:
            args = node.child_by_field_name("arguments")
            if args is not None and args.type == spec.arguments:
                named = [c for c in args.named_children if c.type != spec.comment]
                if (
                    len(named) >= 2
                    and spec.spread not in (named[0].type, named[1].type)
                    and not _ts_symmetric(node, data, spec.symmetric)
                ):
                    a, b = named[0], named[1]
                    ta, tb = data[a.start_byte : a.end_byte], data[b.start_byte : b.end_byte]
                    if ta != tb:
                        mid = data[a.end_byte : b.start_byte]
                        add(a.start_byte, b.end_byte, tb + mid + ta, "swap_args", node)
        elif kind == spec.branch:
            cond = node.child_by_field_name("condition")
            if cond is not None:
                add(
                    cond.start_byte,
                    cond.end_byte,
                    spec.never,
                    "branch",
                    node,
                    first=row(node),
                    last=end_row(cond),
                )
            alt = node.child_by_field_name("alternative")
            if alt is not None:
                inner = [c for c in alt.named_children if c.type != spec.comment]
                if inner and inner[0].type != spec.branch:
                    body = inner[0]
                    add(
                        body.start_byte,
                        body.end_byte,
                        spec.empty_block,
                        "branch",
                        body,
                        first=row(body),
                        last=end_row(body),
                    )

    visit(tree.root_node, False)
    return found.parsing(lambda text: ts_parse(language, text, path), SourceSkipped)


# -- choosing ----------------------------------------------------------------------------------


def _libcst(path: str, data: bytes, lines: set[int]) -> list[Mutant]:
    return python_mutants(path, data, lines)


def _tree_sitter(path: str, data: bytes, lines: set[int]) -> list[Mutant]:
    language = language_of(path)
    return [] if language is None else treesitter_mutants(path, data, lines, language)


def _profile(path: str, data: bytes, lines: set[int]) -> list[Mutant]:
    language = profile_for_file(path)
    if language is None:
        return []
    return language.mutants(path, data, lines)


# a profile's `engine` -> how a file of its language is mutated
_MUTATORS: dict[str, Callable[[str, bytes, set[int]], list[Mutant]]] = {
    "libcst": _libcst,
    "tree-sitter": _tree_sitter,
    "profile": _profile,
}


def mutants_of(path: str, data: bytes, lines: set[int]) -> list[Mutant]:
    """The mutants of one file of the original tree inside `lines`, by its language: its
    profile's engine (Python's `ast`, or tree-sitter with the language's mutation syntax), a
    tree-sitter syntax of a language with no profile (TypeScript); none for another file."""
    language = profile_for_file(path)
    engine = "tree-sitter" if language is None else language.engine
    if language is not None and language.own_edits:
        engine = "profile"
    return _MUTATORS[engine](path, data, lines)


def sample_mutants(mutants: list[Mutant], n: int, seed: str) -> list[Mutant]:
    """At most `n` of `mutants`, the same ones for the same seed: the operators take turns (in
    an order drawn from the seed), each giving a mutant on a line no chosen mutant is on while
    it has one. The choice is returned in file order."""
    if n <= 0 or not mutants:
        return []
    rng = random.Random(seed)
    by_op: dict[str, list[Mutant]] = {}
    for m in sorted(mutants, key=lambda m: (m.file, m.start, m.end, m.operator, m.replacement)):
        by_op.setdefault(m.operator, []).append(m)
    for pool in by_op.values():
        rng.shuffle(pool)
    order = sorted(by_op)
    rng.shuffle(order)
    chosen: list[Mutant] = []
    used_lines: set[tuple[str, int]] = set()
    while len(chosen) < n and any(by_op.values()):
        for op in order:
            pool = by_op[op]
            if not pool or len(chosen) >= n:
                continue
            pick = next((m for m in pool if (m.file, m.line) not in used_lines), pool[0])
            pool.remove(pick)
            chosen.append(pick)
            used_lines.add((pick.file, pick.line))
    return sorted(chosen, key=lambda m: (m.file, m.start, m.end))
