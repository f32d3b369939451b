"""Editing blocks of a libcst tree while keeping every other byte: `Splice` and `apply_splice`.

`Splice` is a transformer that replaces or removes statements of blocks (and other nodes): a
removed statement's detached comment lines move to the next statement, an emptied block gets
`pass`. `apply_splice` rebuilds only the ancestors of the edited node, not the whole tree.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence

import libcst as cst

from taskmint.index.locate import Located

__all__ = ["NodeEdit", "Splice", "StatementEdit", "apply_splice", "block_statements"]

StatementEdit = Callable[[cst.BaseStatement], Sequence[cst.BaseStatement]]
NodeEdit = Callable[[cst.CSTNode], cst.CSTNode | cst.RemovalSentinel]

_PASS = cst.SimpleStatementLine(body=[cst.Pass()])


class Splice(cst.CSTTransformer):
    """Replace statements of blocks (`statements`: original statement -> edit of its updated
    form, returning the replacement statements, none to remove it) and other nodes (`nodes`:
    original node -> edit of its updated form, or `RemovalSentinel.REMOVE`).

    A removed statement's comment lines that are separated from it by a blank line (a section
    comment, not its own) move to the next statement of the block; an emptied indented block
    becomes `pass`. `applied` counts the edits made.
    """

    def __init__(
        self,
        statements: Mapping[cst.CSTNode, StatementEdit] | None = None,
        nodes: Mapping[cst.CSTNode, NodeEdit] | None = None,
    ) -> None:
        super().__init__()
        self.statements = dict(statements or {})
        self.nodes = dict(nodes or {})
        self.applied = 0

    def on_leave(  # type: ignore[override]
        self, original_node: cst.CSTNode, updated_node: cst.CSTNode
    ) -> cst.CSTNode | cst.RemovalSentinel | cst.FlattenSentinel[cst.CSTNode]:
        result = super().on_leave(original_node, updated_node)
        if original_node in self.nodes and isinstance(result, cst.CSTNode):
            self.applied += 1
            return self.nodes[original_node](result)
        if isinstance(result, cst.IndentedBlock | cst.Module) and isinstance(
            original_node, cst.IndentedBlock | cst.Module
        ):
            return self._splice(original_node, result)
        return result

    def _splice(
        self, original: cst.IndentedBlock | cst.Module, updated: cst.IndentedBlock | cst.Module
    ) -> cst.IndentedBlock | cst.Module:
        if not any(s in self.statements for s in original.body):
            return updated
        out: list[cst.BaseStatement] = []
        carry: list[cst.EmptyLine] = []
        strip_blank = False
        for orig, upd in zip(original.body, updated.body, strict=True):
            if orig in self.statements:
                self.applied += 1
                repl = list(self.statements[orig](upd))
                if not repl:
                    carry += _detached_comments(_leading(upd))
                    strip_blank = strip_blank or not out
                    continue
                upd, rest = repl[0], repl[1:]
                out += [self._with_carry(upd, carry, strip_blank), *rest]
            else:
                out.append(self._with_carry(upd, carry, strip_blank))
            carry, strip_blank = [], False
        if isinstance(updated, cst.IndentedBlock) and not out:
            out = [_PASS]
        return updated.with_changes(body=out)

    @staticmethod
    def _with_carry(
        stmt: cst.BaseStatement, carry: list[cst.EmptyLine], strip_blank: bool
    ) -> cst.BaseStatement:
        if not carry and not strip_blank:
            return stmt
        lines = list(_leading(stmt))
        if strip_blank and not carry:
            while lines and lines[0].comment is None:
                lines.pop(0)
        return stmt.with_changes(leading_lines=[*carry, *lines])


def _leading(stmt: cst.BaseStatement) -> Sequence[cst.EmptyLine]:
    lines: Sequence[cst.EmptyLine] = getattr(stmt, "leading_lines", ())
    return lines


def _detached_comments(lines: Sequence[cst.EmptyLine]) -> list[cst.EmptyLine]:
    """The leading lines to keep when their statement goes: comments before the blank line that
    separates them from the statement's own comment block."""
    i = len(lines)
    while i > 0 and lines[i - 1].comment is not None:
        i -= 1
    kept = list(lines[:i])
    while kept and kept[-1].comment is None:
        kept.pop()
    return kept if any(line.comment is not None for line in kept) else []


def block_statements(block: cst.BaseSuite) -> list[cst.BaseStatement]:
    """The statements of a suite; a one-line suite (`else: x`) becomes one statement line."""
    if isinstance(block, cst.IndentedBlock):
        return list(block.body)
    assert isinstance(block, cst.SimpleStatementSuite)
    return [cst.SimpleStatementLine(body=block.body)]


def apply_splice(
    located: Located, splice: Splice, node: cst.CSTNode, ancestors: Sequence[cst.CSTNode]
) -> bytes:
    """The module's bytes after `splice`, touching only what holds the edits.

    `node` is either a block (Module or IndentedBlock) whose own statements are edited, or a
    statement whose subtree holds every edit (it alone is visited); `ancestors` lead from the
    Module down to it. Only the ancestors are rebuilt, not the whole tree re-visited.
    """
    if isinstance(node, cst.Module | cst.IndentedBlock):
        new: cst.CSTNode = splice._splice(node, node)
    else:
        visited = node.visit(splice)
        assert isinstance(visited, cst.CSTNode)
        new = visited
    child = node
    for parent in reversed(ancestors):
        if isinstance(parent, cst.Module | cst.IndentedBlock):
            body = [new if stmt is child else stmt for stmt in parent.body]
            new = parent.with_changes(body=body)
        elif isinstance(parent, cst.ClassDef | cst.FunctionDef) and parent.body is child:
            new = parent.with_changes(body=new)
        else:  # a less common holder (if, try, with): visit the whole top statement
            top = ancestors[1] if len(ancestors) > 1 else node
            splice.applied = 0
            return apply_splice(located, splice, top, ancestors[:1])
        child = parent
    assert isinstance(new, cst.Module)
    return new.bytes
