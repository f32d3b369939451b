"""Locating Python definitions the way the indexer names them ("C.m", "f#2").

`locate_defs` parses a file once and returns every `def` and `class` statement as a `DefSite`
(its node, its ancestors from the Module down, its first and last line), keyed by the same
qualified names `index.python` gives units, so the edits of `excise` and the call graph
(`index.callgraph`) find exactly the code a unit names. `is_type_checking` recognizes the
`if TYPE_CHECKING:` test, whose body never runs.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass

import libcst as cst
from libcst.metadata import MetadataWrapper, PositionProvider

from taskmint.index.python import parse_module

__all__ = ["DefSite", "Located", "is_type_checking", "locate_defs"]


@dataclass(frozen=True, slots=True, kw_only=True)
class DefSite:
    """A `def` or `class` statement, its indexer-style qualified name and its ancestors."""

    qualname: str
    node: cst.FunctionDef | cst.ClassDef
    ancestors: tuple[cst.CSTNode, ...]  # outermost first, the Module included
    start_line: int  # first line, decorators included
    end_line: int

    @property
    def owner(self) -> cst.CSTNode:
        """The nearest enclosing `def`/`class`, or the Module."""
        for node in reversed(self.ancestors):
            if isinstance(node, cst.FunctionDef | cst.ClassDef | cst.Module):
                return node
        raise AssertionError("a definition outside any module")

    @property
    def under_type_checking(self) -> bool:
        """Defined in an `if TYPE_CHECKING:` block (never runs)."""
        return any(
            isinstance(a, cst.If) and is_type_checking(a.test) and _in_body(a, self.ancestors)
            for a in self.ancestors
        )

    @property
    def direct_parent_is_owner(self) -> bool:
        """Defined directly in its owner's body (not inside an `if`, `try`, `with`...)."""
        owner = self.owner
        idx = self.ancestors.index(owner)
        rest = self.ancestors[idx + 1 :]
        if isinstance(owner, cst.Module):
            return rest == ()
        return len(rest) == 1 and isinstance(rest[0], cst.IndentedBlock)


def _in_body(node: cst.If, ancestors: tuple[cst.CSTNode, ...]) -> bool:
    idx = ancestors.index(node)
    return idx + 1 < len(ancestors) and ancestors[idx + 1] is node.body


def is_type_checking(test: cst.BaseExpression) -> bool:
    """Whether an `if` test is `TYPE_CHECKING` (or `typing.TYPE_CHECKING`)."""
    if isinstance(test, cst.Name):
        return test.value == "TYPE_CHECKING"
    return isinstance(test, cst.Attribute) and test.attr.value == "TYPE_CHECKING"


class _Locator(cst.CSTVisitor):
    METADATA_DEPENDENCIES = (PositionProvider,)

    def __init__(self) -> None:
        self.stack: list[cst.CSTNode] = []
        self.names: list[str] = []
        self.seen: dict[str, int] = {}
        self.found: list[tuple[str, cst.FunctionDef | cst.ClassDef, tuple[cst.CSTNode, ...]]] = []

    def on_visit(self, node: cst.CSTNode) -> bool:
        if isinstance(node, cst.FunctionDef | cst.ClassDef):
            qual = ".".join([*self.names, node.name.value])
            n = self.seen.get(qual, 0) + 1
            self.seen[qual] = n
            self.found.append((qual if n == 1 else f"{qual}#{n}", node, tuple(self.stack)))
            self.names.append(node.name.value)
        self.stack.append(node)
        return True

    def on_leave(self, original_node: cst.CSTNode) -> None:
        self.stack.pop()
        if isinstance(original_node, cst.FunctionDef | cst.ClassDef):
            self.names.pop()


@dataclass(frozen=True, slots=True, kw_only=True)
class Located:
    """A parsed file: its module (positions resolved) and every definition in it."""

    module: cst.Module
    functions: dict[str, DefSite]
    classes: dict[str, DefSite]
    positions: Mapping[cst.CSTNode, object]

    def lines(self, node: cst.CSTNode) -> tuple[int, int]:
        """First and last line of `node` (leading blank lines and comments not included)."""
        pos = self.positions[node]
        return pos.start.line, pos.end.line  # type: ignore[attr-defined]


def locate_defs(source: bytes) -> Located:
    """Parse `source` and name every def/class as the indexer does ("C.m", "f#2").

    Functions and classes are counted separately, so a class and a function of the same
    qualified name do not shift each other's "#n". Raises `SourceSkipped`.
    """
    module = parse_module(source)
    wrapper = MetadataWrapper(module, unsafe_skip_copy=True)
    locator = _Locator()
    wrapper.visit(locator)
    positions = wrapper.resolve(PositionProvider)
    functions: dict[str, DefSite] = {}
    classes: dict[str, DefSite] = {}
    fn_seen: dict[str, int] = {}
    cls_seen: dict[str, int] = {}
    for qual, node, ancestors in locator.found:
        base = qual.split("#")[0]
        seen = fn_seen if isinstance(node, cst.FunctionDef) else cls_seen
        seen[base] = seen.get(base, 0) + 1
        name = base if seen[base] == 1 else f"{base}#{seen[base]}"
        start = positions[node].start.line
        for deco in node.decorators:
            start = min(start, positions[deco].start.line)
        site = DefSite(
            qualname=name,
            node=node,
            ancestors=ancestors,
            start_line=start,
            end_line=positions[node].end.line,
        )
        (functions if isinstance(node, cst.FunctionDef) else classes)[name] = site
    return Located(module=module, functions=functions, classes=classes, positions=positions)
