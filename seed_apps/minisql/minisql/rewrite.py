"""Predicate rewriting applied by the planner before pushdown and index selection.

:func:`simplify_predicate` folds constant sub-expressions (``1 + 1`` becomes
``2``, so ``id = 1 + 1`` can use an index), removes neutral boolean operands
(``TRUE AND x`` becomes ``x`` when ``x`` is itself a truth value), collapses
absorbing ones (``x OR TRUE`` becomes ``TRUE``) and prunes CASE branches whose
condition is a constant.
"""

from dataclasses import fields, replace

from . import nodes as n
from .errors import MiniSQLError
from .expressions import evaluate_constant

_NEVER_FOLDED = (n.Literal, n.ColumnRef, n.Star, n.InSubquery, n.Exists, n.ScalarSubquery)
_BOOLEAN_NODES = (n.IsNull, n.Between, n.InList, n.InSubquery, n.Exists, n.Like)
_BOOLEAN_OPERATORS = frozenset({"AND", "OR", "=", "<>", "<", "<=", ">", ">="})


def is_literal(expr, *values):
    """Return True if ``expr`` is a Literal; with ``values``, its value must be one of them.

    Values are compared by identity so that ``1`` does not match ``True``.
    """
    if not isinstance(expr, n.Literal):
        return False
    return not values or any(expr.value is value for value in values)


def is_boolean(expr):
    """Return True if ``expr`` always yields TRUE, FALSE or NULL (a predicate)."""
    if isinstance(expr, _BOOLEAN_NODES):
        return True
    if isinstance(expr, n.BinaryOp):
        return expr.op in _BOOLEAN_OPERATORS
    if isinstance(expr, n.UnaryOp):
        return expr.op == "NOT"
    return is_literal(expr, True, False, None)


def rebuild(expr, transform):
    """Return a copy of ``expr`` with ``transform`` applied to every direct sub-expression.

    Sub-expressions inside tuple fields (function arguments, IN lists, CASE
    ``(condition, result)`` pairs) are transformed too; subquery bodies are not.
    """
    changes = {}
    for f in fields(expr):
        value = getattr(expr, f.name)
        if isinstance(value, n.Expr):
            changes[f.name] = transform(value)
        elif isinstance(value, tuple):
            changes[f.name] = tuple(
                tuple(transform(part) for part in item) if isinstance(item, tuple)
                else transform(item) if isinstance(item, n.Expr) else item
                for item in value)
    return replace(expr, **changes) if changes else expr


def prune_case(case):
    """Simplify a searched CASE whose branch conditions are constants.

    Branches with a FALSE or NULL literal condition are dropped; if the first
    remaining branch has a TRUE literal condition, its result is returned; if
    no branch remains, the ELSE expression (or NULL) is returned.  Simple CASE
    expressions (with an operand) are returned unchanged.
    """
    if case.operand is not None:
        return case
    whens = tuple((cond, result) for cond, result in case.whens if not is_literal(cond, False, None))
    if not whens:
        return case.default if case.default is not None else n.Literal(None)
    if is_literal(whens[0][0], True):
        return whens[0][1]
    return replace(case, whens=whens)


def simplify_predicate(expr):
    """Simplify ``expr`` bottom-up without changing its truth value.

    Rules, applied after simplifying the children:

    * ``FALSE AND x`` / ``x AND FALSE`` -> ``FALSE``; ``TRUE OR x`` / ``x OR TRUE`` -> ``TRUE``;
    * ``TRUE AND x`` / ``FALSE OR x`` (either order) -> ``x`` when ``x`` is a predicate;
    * searched CASE branches are pruned with :func:`prune_case`;
    * any other node whose operands are all literals is evaluated to a
      literal.  If evaluation fails (e.g. division by zero) the node is kept
      so the error surfaces only when rows are actually processed.

    ``None``, literals, column references, subqueries and aggregate calls
    (including their arguments) are returned unchanged.
    """
    if expr is None or isinstance(expr, _NEVER_FOLDED) or n.is_aggregate(expr):
        return expr
    expr = rebuild(expr, simplify_predicate)
    if isinstance(expr, n.BinaryOp) and expr.op in ("AND", "OR"):
        absorbing = expr.op == "OR"
        if is_literal(expr.left, absorbing) or is_literal(expr.right, absorbing):
            return n.Literal(absorbing)
        for constant, other in ((expr.left, expr.right), (expr.right, expr.left)):
            if is_literal(constant, not absorbing) and is_boolean(other):
                return other
    if isinstance(expr, n.Case):
        expr = prune_case(expr)
        if not isinstance(expr, n.Case):
            return expr
    if all(isinstance(child, n.Literal) for child in n.children(expr)):
        try:
            return n.Literal(evaluate_constant(expr))
        except MiniSQLError:
            return expr
    return expr
