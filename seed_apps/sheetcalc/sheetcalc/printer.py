"""Pretty-printer: turns a formula AST back into canonical formula text.

The output has no spaces and the minimum parentheses needed for it to parse
back to the same tree, e.g. ``Binary('*', Binary('+', 1, 2), 3)`` prints as
``(1+2)*3``.
"""

from .nodes import Binary, Boolean, Call, CellNode, ErrorLiteral, Name, Number, Percent, RangeNode, Text, Unary
from .parser import BINARY_PRECEDENCE, PERCENT_PRECEDENCE, PREFIX_PRECEDENCE

_ATOM_PRECEDENCE = 100


def format_number_literal(value):
    """Render a numeric literal so that it re-parses to exactly ``value``.

    Integral values below 1e15 print without a decimal point; others use the
    shortest round-tripping representation with an upper-case exponent.
    """
    if value == int(value) and abs(value) < 1e15:
        return str(int(value))
    return repr(float(value)).upper()


def precedence_of(node):
    """Return the binding strength of ``node``'s outermost operator (atoms bind tightest)."""
    if isinstance(node, Binary):
        return BINARY_PRECEDENCE[node.op]
    if isinstance(node, Percent):
        return PERCENT_PRECEDENCE
    if isinstance(node, Unary):
        return PREFIX_PRECEDENCE
    return _ATOM_PRECEDENCE


def to_formula(node, with_equals=False):
    """Return canonical formula text for ``node``, prefixed by ``=`` when asked."""
    text = _render(node)
    return "=" + text if with_equals else text


def _render_child(node, minimum):
    """Render ``node``, wrapping it in parentheses if it binds looser than ``minimum``."""
    text = _render(node)
    return f"({text})" if precedence_of(node) < minimum else text


def _render(node):
    """Render one node (recursively) without outer parentheses."""
    if isinstance(node, Number):
        return format_number_literal(node.value)
    if isinstance(node, Text):
        return '"' + node.value.replace('"', '""') + '"'
    if isinstance(node, Boolean):
        return "TRUE" if node.value else "FALSE"
    if isinstance(node, ErrorLiteral):
        return node.error.code
    if isinstance(node, (CellNode, RangeNode)):
        return node.ref.to_a1()
    if isinstance(node, Name):
        return node.name
    if isinstance(node, Unary):
        return node.op + _render_child(node.operand, PREFIX_PRECEDENCE)
    if isinstance(node, Percent):
        return _render_child(node.operand, PERCENT_PRECEDENCE) + "%"
    if isinstance(node, Binary):
        precedence = BINARY_PRECEDENCE[node.op]
        left = _render_child(node.left, precedence)
        right = _render_child(node.right, precedence + 1)
        return left + node.op + right
    if isinstance(node, Call):
        return node.name + "(" + ",".join(_render(arg) for arg in node.args) + ")"
    raise TypeError(f"cannot print {node!r}")
