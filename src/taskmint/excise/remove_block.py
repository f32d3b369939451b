"""Strategy `remove_block`: one branch or block inside a function disappears.

Blocks are named `<kind>@<line>` by the line of their keyword in the original file, and only
blocks of the function's own body count (nested functions and classes are units of their own).
What each removal does, chosen so that the branch's behaviour is gone without leaving a
`pass`-shaped hole that points at it, and the module stays valid:

- `if@N`, the first arm of an `if` statement: the arm goes entirely (condition and body). With
  an `elif` the next arm becomes the `if`; with only an `else` its body takes the statement's
  place, unconditionally; alone, the whole statement goes.
- `elif@N`: that arm leaves the chain; the following arms stay.
- `else@N` (of an `if` chain): the `else` goes; the last condition now falls through.
- `for@N` / `while@N`: the whole loop (with its `else`) goes. Emptying a loop's body instead
  would hang a `while` loop whose body advances it, and still consume a `for`'s iterator.
- `except@N`: the handler goes when the `try` has others; a lone handler with a `finally`
  leaves `try`/`finally` (an `else` body moves to the end of the `try` body, which is what it
  means once nothing is caught); a lone handler without `finally` unwraps the `try`: its body
  (and `else` body) take the statement's place, so the exception propagates.

An emptied block gets `pass`. Every edit is re-parsed and compiled (`check_valid`). Skipped:
a removal that takes the last `yield` of a generator (the function would stop being one), an
arm whose body is only `pass`/`...`, and (with a coverage map) blocks no test runs.

Spans: the lines the edit removes (the arm's or handler's lines, the `try:`/`else:` lines an
unwrap drops). A test that never ran a line of them cannot observe the edit: reaching an arm
runs its `if`/`elif` line, a taken `else` or handler runs its first body line, a loop runs its
header, and a `try` body without an exception behaves the same unwrapped. The exception is a
removal that changes which names are local to the function (it removed the only binding of a
name, or a `global`/`nonlocal` statement): then code outside the block can behave differently,
and the span is widened to the whole function body (feature `scope_change` = 1). So selection
may use the spans exactly as for `stub_body`.
"""

from __future__ import annotations

import random
from collections.abc import Iterator, Sequence
from dataclasses import dataclass
from types import CodeType
from typing import Final

import libcst as cst

from taskmint.excise.candidate import compile_edit, make_candidate
from taskmint.excise.context import ExciseContext, unit_key
from taskmint.excise.knobs import complexity_of_statements
from taskmint.excise.splice import NodeEdit, Splice, StatementEdit, apply_splice, block_statements
from taskmint.index.locate import Located, locate_defs
from taskmint.index.python import SourceSkipped
from taskmint.records import Candidate, SkippedFile, Unit

__all__ = [
    "KINDS",
    "STRATEGY",
    "Block",
    "block_removed_from",
    "blocks_of",
    "candidates",
    "remove_block",
]

STRATEGY: Final = "remove_block"
KINDS = ("if", "elif", "else", "for", "while", "except")
PER_UNIT = 2  # blocks tried per function by default


@dataclass(frozen=True, slots=True, kw_only=True)
class Block:
    """A removable block of a function: `<kind>@<line>`, and the lines its removal drops."""

    kind: str
    line: int
    spans: tuple[tuple[int, int], ...]  # removed lines, original numbering
    first_body_line: int  # a line any run through the block executes (for coverage)
    complexity: int
    trivial: bool  # its body is only pass / ... (no behaviour)

    @property
    def name(self) -> str:
        """`kind@line`, how `remove_block` addresses it."""
        return f"{self.kind}@{self.line}"


class _Walker:
    """Find the blocks of one function, and the edit that removes each."""

    def __init__(self, located: Located) -> None:
        self.located = located
        self.found: list[
            tuple[Block, dict[cst.CSTNode, StatementEdit], dict[cst.CSTNode, NodeEdit]]
        ]
        self.found = []

    def lines(self, node: cst.CSTNode) -> tuple[int, int]:
        return self.located.lines(node)

    def walk(self, statements: Sequence[cst.BaseStatement]) -> None:
        for stmt in statements:
            if isinstance(stmt, cst.FunctionDef | cst.ClassDef):
                continue
            if isinstance(stmt, cst.If):
                self._if(stmt)
            elif isinstance(stmt, cst.For | cst.While):
                self._loop(stmt)
            elif isinstance(stmt, cst.Try):
                self._try(stmt)
            elif isinstance(stmt, cst.With):
                self.walk(block_statements(stmt.body))
            elif isinstance(stmt, cst.Match):
                for case in stmt.cases:
                    self.walk(block_statements(case.body))

    def _add(
        self,
        kind: str,
        node: cst.CSTNode,
        spans: list[tuple[int, int]],
        body: cst.BaseSuite,
        removed: Sequence[cst.BaseStatement],
        statements: dict[cst.CSTNode, StatementEdit] | None = None,
        nodes: dict[cst.CSTNode, NodeEdit] | None = None,
    ) -> None:
        body_stmts = block_statements(body)
        first_body = self.lines(body_stmts[0])[0] if isinstance(body, cst.IndentedBlock) else 0
        block = Block(
            kind=kind,
            line=self.lines(node)[0],
            spans=tuple(spans),
            first_body_line=first_body or self.lines(node)[0],
            complexity=complexity_of_statements(removed),
            trivial=all(_trivial(s) for s in body_stmts),
        )
        self.found.append((block, statements or {}, nodes or {}))

    def _if(self, node: cst.If) -> None:
        first, _ = self.lines(node)
        arm_end = self.lines(node.body)[1]
        orelse = node.orelse
        spans = [(first, arm_end)]
        if isinstance(orelse, cst.Else):
            spans.append((self.lines(orelse)[0],) * 2)
        self._add(
            "if",
            node,
            spans,
            node.body,
            [node.with_changes(orelse=None)],
            statements={node: _drop_first_arm},
        )
        self.walk(block_statements(node.body))
        while orelse is not None:
            if isinstance(orelse, cst.If):
                start, _ = self.lines(orelse)
                end = self.lines(orelse.body)[1]
                self._add(
                    "elif",
                    orelse,
                    [(start, end)],
                    orelse.body,
                    [cst.If(test=orelse.test, body=orelse.body)],
                    nodes={orelse: _drop_elif},
                )
                self.walk(block_statements(orelse.body))
                orelse = orelse.orelse
            else:
                start, end = self.lines(orelse)
                self._add(
                    "else",
                    orelse,
                    [(start, end)],
                    orelse.body,
                    block_statements(orelse.body),
                    nodes={orelse: lambda _: cst.RemovalSentinel.REMOVE},
                )
                self.walk(block_statements(orelse.body))
                orelse = None

    def _loop(self, node: cst.For | cst.While) -> None:
        kind = "for" if isinstance(node, cst.For) else "while"
        self._add(
            kind, node, [self.lines(node)], node.body, [node], statements={node: lambda _: []}
        )
        self.walk(block_statements(node.body))
        if node.orelse is not None:
            self.walk(block_statements(node.orelse.body))

    def _try(self, node: cst.Try) -> None:
        for handler in node.handlers:
            start, end = self.lines(handler)
            removed = [cst.If(test=cst.Name("_"), body=handler.body)]  # one decision point
            if len(node.handlers) > 1:
                self._add(
                    "except",
                    handler,
                    [(start, end)],
                    handler.body,
                    removed,
                    nodes={handler: lambda _: cst.RemovalSentinel.REMOVE},
                )
                continue
            spans = [(start, end)]
            if node.finalbody is None:
                spans.append((self.lines(node)[0],) * 2)  # the `try:` line
            if node.orelse is not None:
                spans.append((self.lines(node.orelse)[0],) * 2)  # the `else:` line
            self._add(
                "except",
                handler,
                sorted(spans),
                handler.body,
                removed,
                statements={node: _drop_lone_handler},
            )
        self.walk(block_statements(node.body))
        for handler in node.handlers:
            self.walk(block_statements(handler.body))
        if node.orelse is not None:
            self.walk(block_statements(node.orelse.body))
        if node.finalbody is not None:
            self.walk(block_statements(node.finalbody.body))


def _trivial(stmt: cst.BaseStatement) -> bool:
    if not isinstance(stmt, cst.SimpleStatementLine):
        return False
    return all(
        isinstance(s, cst.Pass)
        or (isinstance(s, cst.Expr) and isinstance(s.value, cst.Ellipsis | cst.SimpleString))
        for s in stmt.body
    )


def _lead(
    stmts: list[cst.BaseStatement], leading: Sequence[cst.EmptyLine]
) -> list[cst.BaseStatement]:
    if stmts:
        own = getattr(stmts[0], "leading_lines", ())
        stmts[0] = stmts[0].with_changes(leading_lines=[*leading, *own])
    return stmts


def _drop_first_arm(updated: cst.BaseStatement) -> Sequence[cst.BaseStatement]:
    assert isinstance(updated, cst.If)
    orelse = updated.orelse
    if orelse is None:
        return []
    if isinstance(orelse, cst.If):
        return [orelse.with_changes(leading_lines=updated.leading_lines)]
    return _lead(block_statements(orelse.body), updated.leading_lines)


def _drop_elif(updated: cst.CSTNode) -> cst.CSTNode | cst.RemovalSentinel:
    assert isinstance(updated, cst.If)
    return updated.orelse if updated.orelse is not None else cst.RemovalSentinel.REMOVE


def _drop_lone_handler(updated: cst.BaseStatement) -> Sequence[cst.BaseStatement]:
    assert isinstance(updated, cst.Try)
    body = block_statements(updated.body)
    if updated.orelse is not None:
        body += block_statements(updated.orelse.body)
    if updated.finalbody is not None:
        new_body = cst.IndentedBlock(body=body)
        if isinstance(updated.body, cst.IndentedBlock):
            new_body = updated.body.with_changes(body=body)
        return [updated.with_changes(body=new_body, handlers=(), orelse=None)]
    return _lead(body, updated.leading_lines)


def _function(located: Located, qualname: str) -> cst.FunctionDef:
    site = located.functions.get(qualname)
    if site is None:
        raise LookupError(f"no function {qualname!r} in this file")
    assert isinstance(site.node, cst.FunctionDef)
    return site.node


def _walk(located: Located, qualname: str) -> _Walker:
    walker = _Walker(located)
    walker.walk(block_statements(_function(located, qualname).body))
    return walker


def blocks_of(source: bytes, qualname: str) -> list[Block]:
    """The removable blocks of function `qualname`, in source order (`LookupError` if none)."""
    return [b for b, _, _ in _walk(locate_defs(source), qualname).found]


def remove_block(source: bytes, qualname: str, block: str) -> bytes:
    """`source` without block `block` ("if@12", "except@40") of function `qualname`.

    Raises `LookupError` for an unknown function or block. The result is not checked for
    validity here: see `check_valid`.
    """
    return block_removed_from(locate_defs(source), qualname, block)


def block_removed_from(located: Located, qualname: str, block: str) -> bytes:
    """`remove_block` on an already located file."""
    site = located.functions.get(qualname)
    if site is None:
        raise LookupError(f"no function {qualname!r} in this file")
    for found, statements, nodes in _walk(located, qualname).found:
        if found.name == block:
            splice = Splice(statements=statements, nodes=nodes)
            new = apply_splice(located, splice, site.node, site.ancestors)
            if splice.applied != 1:
                raise LookupError(f"could not remove {block} from {qualname!r}")
            return new
    raise LookupError(f"no block {block!r} in function {qualname!r}")


_CO_OPTIMIZED = 0x1
_CO_GENERATOR = 0x20 | 0x200  # generator, async generator


def _code_of(module_code: CodeType, qualname: str) -> CodeType:
    """The code object of function `qualname`, named as the indexer names it ("C.m", "f#2")."""
    seen: dict[str, int] = {}

    def walk(code: CodeType) -> CodeType | None:
        for const in code.co_consts:
            if not isinstance(const, CodeType):
                continue
            name = const.co_qualname.replace(".<locals>", "")
            if const.co_flags & _CO_OPTIMIZED and "<" not in name:
                n = seen[name] = seen.get(name, 0) + 1
                if (name if n == 1 else f"{name}#{n}") == qualname:
                    return const
            found = walk(const)
            if found is not None:
                return found
        return None

    found = walk(module_code)
    if found is None:
        raise LookupError(f"no function {qualname!r} in the compiled file")
    return found


def _scope(code: CodeType) -> tuple[frozenset[str], frozenset[str], bool]:
    """A function's local names, free names, and whether it is a generator."""
    return (
        frozenset(code.co_varnames) | frozenset(code.co_cellvars),
        frozenset(code.co_freevars),
        bool(code.co_flags & _CO_GENERATOR),
    )


def _exercised(ctx: ExciseContext, file: str, line: int) -> bool:
    cmap = ctx.coverage
    assert cmap is not None
    tests = cmap.lines.get(file, {}).get(line, ())
    return any(t >= 0 for t in tests) or bool(cmap.collect_lines.get(file, {}).get(line))


def candidates(
    ctx: ExciseContext, *, rng: random.Random, per_unit: int = PER_UNIT
) -> Iterator[Candidate | SkippedFile]:
    """Up to `per_unit` block removals per function, in a seeded order.

    With a coverage map, only blocks some test runs are offered.
    """
    pool = sorted(ctx.index.units, key=lambda u: u.unit_id)
    rng.shuffle(pool)
    for unit in pool:
        try:
            yield from _unit_candidates(ctx, unit, rng, per_unit)
        except (SourceSkipped, LookupError, UnicodeDecodeError) as exc:
            yield SkippedFile(path=unit_key(unit), reason=str(exc))


def _unit_candidates(
    ctx: ExciseContext, unit: Unit, rng: random.Random, per_unit: int
) -> Iterator[Candidate | SkippedFile]:
    key = unit_key(unit)
    if unit.file not in ctx.sources:
        yield SkippedFile(path=key, reason="source file was skipped")
        return
    located = ctx.located(unit.file)
    walked = _walk(located, unit.qualname).found
    usable = []
    for block, _, _ in walked:
        where = f"{key}@{block.name}"
        if block.trivial:
            yield SkippedFile(path=where, reason="the block's body is only pass/...")
        elif ctx.coverage is not None and not _exercised(ctx, unit.file, block.first_body_line):
            yield SkippedFile(path=where, reason="no test runs this block")
        else:
            usable.append(block)
    if not usable:
        return
    original = compile_edit(ctx.sources[unit.file])
    if isinstance(original, str):
        yield SkippedFile(path=key, reason=f"the original {original[len('the edited ') :]}")
        return
    before = _scope(_code_of(original, unit.qualname))
    for block in rng.sample(usable, min(per_unit, len(usable))):
        where = f"{key}@{block.name}"
        new = block_removed_from(located, unit.qualname, block.name)
        compiled = compile_edit(new)
        if isinstance(compiled, str):
            yield SkippedFile(path=where, reason=compiled)
            continue
        after = _scope(_code_of(compiled, unit.qualname))
        if before[2] and not after[2]:
            yield SkippedFile(path=where, reason="removes the last yield of a generator")
            continue
        scope_change = before[:2] != after[:2]
        spans = [(unit.file, a, b) for a, b in block.spans]
        if scope_change:
            spans = [(unit.file, unit.body_start_line, unit.end_line)]
        yield make_candidate(
            ctx,
            strategy=STRATEGY,
            target=block.name,
            units=(key,),
            edits={unit.file: new},
            spans=spans,
            complexity=block.complexity,
            callers=len(ctx.callers.get(key, ())),
            has_docstring=unit.docstring is not None,
            signature=unit.signature,
            docstring=unit.docstring,
            scope_change=scope_change,
        )
