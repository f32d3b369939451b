"""Abstract syntax tree for formulas, plus generic traversal helpers.

All node classes are frozen dataclasses, so trees compare by value and can be
shared safely.  :func:`transform` rebuilds a tree bottom-up, which is how the
reference-rewriting code (copy/paste, row insertion...) works.
"""

from dataclasses import dataclass, replace

from .addressing import CellRef, RangeRef


@dataclass(frozen=True)
class Number:
    """A numeric literal."""

    value: float


@dataclass(frozen=True)
class Text:
    """A string literal (already unescaped)."""

    value: str


@dataclass(frozen=True)
class Boolean:
    """A ``TRUE``/``FALSE`` literal."""

    value: bool


@dataclass(frozen=True)
class ErrorLiteral:
    """An error literal such as ``#N/A``; ``error`` is an ``ErrorValue``."""

    error: object


@dataclass(frozen=True)
class CellNode:
    """A reference to a single cell; ``ref`` is a :class:`CellRef`."""

    ref: CellRef


@dataclass(frozen=True)
class RangeNode:
    """A reference to a block of cells; ``ref`` is a :class:`RangeRef`."""

    ref: RangeRef


@dataclass(frozen=True)
class Name:
    """A defined name such as ``Prices``, resolved at evaluation time."""

    name: str


@dataclass(frozen=True)
class Unary:
    """Prefix ``+`` or ``-`` applied to ``operand``."""

    op: str
    operand: object


@dataclass(frozen=True)
class Percent:
    """Postfix ``%``: divides ``operand`` by 100."""

    operand: object


@dataclass(frozen=True)
class Binary:
    """An infix operation ``left op right``."""

    op: str
    left: object
    right: object


@dataclass(frozen=True)
class Call:
    """A function call; ``name`` is upper-case and ``args`` is a tuple of nodes."""

    name: str
    args: tuple



def children(node):
    """Return the direct child nodes of ``node`` as a tuple (left to right)."""
    if isinstance(node, Call):
        return tuple(node.args)
    if isinstance(node, Binary):
        return (node.left, node.right)
    if isinstance(node, (Unary, Percent)):
        return (node.operand,)
    return ()


def walk(node):
    """Yield ``node`` and all of its descendants in pre-order."""
    stack = [node]
    while stack:
        current = stack.pop()
        yield current
        stack.extend(reversed(children(current)))


def transform(node, visit):
    """Rebuild ``node`` bottom-up, replacing each node with ``visit(node)``.

    Children are transformed first; ``visit`` then receives a node whose
    children are already the transformed ones and returns the node to use in
    its place (returning the argument unchanged keeps it).
    """
    if isinstance(node, Call):
        node = replace(node, args=tuple(transform(arg, visit) for arg in node.args))
    elif isinstance(node, Binary):
        node = replace(node, left=transform(node.left, visit), right=transform(node.right, visit))
    elif isinstance(node, (Unary, Percent)):
        node = replace(node, operand=transform(node.operand, visit))
    return visit(node)


def references(node):
    """Return every ``CellRef``/``RangeRef`` mentioned in ``node``, in source order."""
    return [item.ref for item in walk(node) if isinstance(item, (CellNode, RangeNode))]


def names(node):
    """Return the set of defined names (upper-cased) used in ``node``."""
    return {item.name.upper() for item in walk(node) if isinstance(item, Name)}

