"""Expression compilation and evaluation.

Expressions are compiled once against a :class:`Scope` (the layout of the rows
they will see) into plain Python closures ``fn(row) -> value``.  Column names are
resolved at compile time, so an unknown or ambiguous column is reported before
any row is processed.

Subqueries are evaluated through a ``subquery_runner`` callback supplied by the
database: ``runner(select) -> (column_names, rows)``.  Only uncorrelated
subqueries are supported; each is run at most once per compiled expression.
"""

import math
import re
from functools import lru_cache
from operator import itemgetter

from . import nodes as n
from .errors import CatalogError, ExecutionError, SQLTypeError
from .sqltypes import (SqlType, cast_value, compare, is_number, logical_and, logical_not,
                       logical_or, resolve_type, to_condition, type_name)


class Scope:
    """Describes the columns of the rows an expression is evaluated against.

    Attributes:
        columns: list of ``(binding, name)`` pairs, one per row position, where
            ``binding`` is the table name/alias qualifying the column (or None).
        slots: mapping from whole expressions (e.g. ``SUM(x)`` or a GROUP BY
            expression) to the row position already holding their value.
    """

    def __init__(self, columns, slots=None):
        """Create a scope from ``(binding, name)`` pairs and optional expression slots."""
        self.columns = list(columns)
        self.slots = dict(slots or {})

    def __len__(self):
        """Number of row positions described by the scope."""
        return len(self.columns)

    def resolve(self, name, table=None):
        """Return the row position of column ``name`` (qualified by ``table`` if given).

        Raises:
            CatalogError: if no column matches, or an unqualified name matches
                columns of several bindings.
        """
        matches = [i for i, (binding, column) in enumerate(self.columns)
                   if column == name and (table is None or binding == table)]
        label = f"{table}.{name}" if table else name
        if not matches:
            raise CatalogError(f"no such column: {label}")
        if len(matches) > 1:
            raise CatalogError(f"ambiguous column name: {label}")
        return matches[0]

    def bindings(self):
        """Return the distinct bindings in order of first appearance."""
        seen = []
        for binding, _ in self.columns:
            if binding not in seen:
                seen.append(binding)
        return seen

    def positions_for(self, binding):
        """Return the positions of all columns qualified by ``binding`` (for ``alias.*``).

        Raises:
            CatalogError: if ``binding`` qualifies no column.
        """
        positions = [i for i, (b, _) in enumerate(self.columns) if b == binding]
        if not positions:
            raise CatalogError(f"no such table: {binding}")
        return positions

    def concat(self, other):
        """Return a scope for rows formed by this scope's row followed by ``other``'s."""
        return Scope(self.columns + other.columns)


# ------------------------------------------------------------------ operators


def arithmetic(op, left, right):
    """Apply ``+ - * / %`` to two SQL values.

    NULL operands give NULL.  Integer ``/`` truncates toward zero and integer
    ``%`` takes the sign of the dividend (``-7 / 2 = -3``, ``-7 % 2 = -1``);
    with a REAL operand both follow floating point rules (``%`` via fmod).

    Raises:
        SQLTypeError: if an operand is not a number.
        ExecutionError: on division or modulo by zero.
    """
    if left is None or right is None:
        return None
    if not (is_number(left) and is_number(right)):
        raise SQLTypeError(f"operator {op} needs numbers, got {type_name(left)} and {type_name(right)}")
    if op == "+":
        return left + right
    if op == "-":
        return left - right
    if op == "*":
        return left * right
    if right == 0:
        raise ExecutionError("division by zero")
    both_int = isinstance(left, int) and isinstance(right, int)
    if op == "/":
        if both_int:
            quotient = abs(left) // abs(right)
            return quotient if (left < 0) == (right < 0) else -quotient
        return left / right
    result = math.fmod(left, right)
    return int(result) if both_int else result


def concat(left, right):
    """SQL ``||``: NULL if either side is NULL, otherwise both sides cast to TEXT and joined."""
    if left is None or right is None:
        return None
    return cast_value(left, SqlType.TEXT) + cast_value(right, SqlType.TEXT)


_COMPARATORS = {
    "=": lambda c: c == 0, "<>": lambda c: c != 0, "<": lambda c: c < 0,
    "<=": lambda c: c <= 0, ">": lambda c: c > 0, ">=": lambda c: c >= 0,
}


def compare_op(op, left, right):
    """Evaluate comparison ``op`` (``= <> < <= > >=``) with NULL giving None."""
    result = compare(left, right)
    if result is None:
        return None
    return _COMPARATORS[op](result)


@lru_cache(maxsize=256)
def like_regex(pattern):
    """Translate a LIKE pattern into a compiled, anchored regular expression.

    ``%`` matches any run of characters (including none), ``_`` exactly one
    character; every other character matches itself literally.
    """
    parts = []
    for ch in pattern:
        if ch == "%":
            parts.append(".*")
        elif ch == "_":
            parts.append(".")
        else:
            parts.append(re.escape(ch))
    return re.compile("".join(parts), re.DOTALL)


def like(value, pattern):
    """Return whether ``value`` matches LIKE ``pattern`` (case-sensitive); NULL gives None.

    Raises:
        SQLTypeError: if either side is not TEXT.
    """
    if value is None or pattern is None:
        return None
    if not isinstance(value, str) or not isinstance(pattern, str):
        raise SQLTypeError("LIKE needs TEXT operands")
    return like_regex(pattern).fullmatch(value) is not None


# ------------------------------------------------------------------ scalar functions


def _text(name, value):
    """Check that argument ``value`` of function ``name`` is TEXT (or NULL)."""
    if value is not None and not isinstance(value, str):
        raise SQLTypeError(f"{name.upper()} expects TEXT, got {type_name(value)}")
    return value


def _number(name, value):
    """Check that argument ``value`` of function ``name`` is a number (or NULL)."""
    if value is not None and not is_number(value):
        raise SQLTypeError(f"{name.upper()} expects a number, got {type_name(value)}")
    return value


def fn_substr(text, start, *length):
    """SUBSTR(text, start[, length]) with 1-based ``start``.

    Positions before 1 count toward ``length`` but yield no characters
    (``SUBSTR('hello', 0, 2) = 'h'``).  Any NULL argument gives NULL.

    Raises:
        SQLTypeError: for non-text ``text`` or non-integer ``start``/``length``.
        ExecutionError: for a negative ``length``.
    """
    if text is None or start is None or None in length:
        return None
    _text("substr", text)
    for value in (start, *length):
        if not isinstance(value, int) or isinstance(value, bool):
            raise SQLTypeError("SUBSTR positions must be integers")
    begin = start - 1
    if not length:
        return text[max(begin, 0):]
    if length[0] < 0:
        raise ExecutionError("SUBSTR length must not be negative")
    return text[max(begin, 0):max(begin + length[0], 0)]


def fn_round(value, digits=0):
    """ROUND(x[, digits]) rounding halves away from zero.

    Integers with ``digits >= 0`` are returned unchanged; otherwise the result
    is a float (``ROUND(2.5) = 3.0``, ``ROUND(-2.5) = -3.0``, ``ROUND(1234, -2) = 1200.0``).
    """
    if value is None or digits is None:
        return None
    _number("round", value)
    if not isinstance(digits, int) or isinstance(digits, bool):
        raise SQLTypeError("ROUND digits must be an integer")
    if isinstance(value, int) and digits >= 0:
        return value
    factor = 10.0 ** digits
    scaled = math.floor(abs(value) * factor + 0.5)
    return math.copysign(scaled / factor, value)


def fn_nullif(left, right):
    """NULLIF(a, b): NULL when ``a = b`` is true, otherwise ``a``."""
    return None if compare(left, right) == 0 else left


def fn_coalesce(*args):
    """COALESCE(a, b, ...): the first non-NULL argument, or NULL."""
    for arg in args:
        if arg is not None:
            return arg
    return None


def _text_fn(transform, name):
    """Wrap a str -> value transformation as a NULL-propagating, type-checked SQL function."""
    def apply(value):
        return None if value is None else transform(_text(name, value))
    return apply


def fn_replace(text, old, new):
    """REPLACE(text, old, new): every occurrence of ``old`` replaced by ``new``; NULL-propagating."""
    if text is None or old is None or new is None:
        return None
    return _text("replace", text).replace(_text("replace", old), _text("replace", new))


def fn_abs(value):
    """ABS(x) for numbers; NULL gives NULL."""
    return None if value is None else abs(_number("abs", value))


# name -> (minimum arity, maximum arity, implementation)
SCALAR_FUNCTIONS = {
    "upper": (1, 1, _text_fn(str.upper, "upper")),
    "lower": (1, 1, _text_fn(str.lower, "lower")),
    "length": (1, 1, _text_fn(len, "length")),
    "trim": (1, 1, _text_fn(str.strip, "trim")),
    "substr": (2, 3, fn_substr),
    "replace": (3, 3, fn_replace),
    "coalesce": (1, 99, fn_coalesce),
    "ifnull": (2, 2, fn_coalesce),
    "nullif": (2, 2, fn_nullif),
    "abs": (1, 1, fn_abs),
    "round": (1, 2, fn_round),
    "typeof": (1, 1, lambda value: type_name(value).lower()),
}


# ------------------------------------------------------------------ compiler


class ExprCompiler:
    """Compiles expression trees into closures over a fixed :class:`Scope`."""

    def __init__(self, scope, subquery_runner=None):
        """Bind the compiler to ``scope``; ``subquery_runner`` executes subqueries."""
        self.scope = scope
        self.subquery_runner = subquery_runner
        self._dispatch = {
            n.Literal: self._literal, n.ColumnRef: self._column, n.UnaryOp: self._unary,
            n.BinaryOp: self._binary, n.FunctionCall: self._function, n.IsNull: self._is_null,
            n.Between: self._between, n.InList: self._in_list, n.InSubquery: self._in_subquery,
            n.Exists: self._exists, n.ScalarSubquery: self._scalar_subquery, n.Like: self._like,
            n.Case: self._case, n.Cast: self._cast,
        }

    def compile(self, expr):
        """Return a function ``fn(row) -> value`` computing ``expr``.

        An expression found in ``scope.slots`` reads its precomputed slot.

        Raises:
            CatalogError: for unknown or ambiguous columns.
            ExecutionError: for aggregates outside an aggregation context, ``*``
                used as a value, unknown functions or wrong argument counts.
        """
        if expr in self.scope.slots:
            return itemgetter(self.scope.slots[expr])
        handler = self._dispatch.get(type(expr))
        if handler is None:
            raise ExecutionError(f"cannot evaluate {n.render(expr)} here")
        return handler(expr)

    def compile_condition(self, expr):
        """Compile ``expr`` as a condition: the closure returns True, False or None."""
        fn = self.compile(expr)
        return lambda row: to_condition(fn(row))

    def _literal(self, expr):
        """Constant: always returns the literal value."""
        value = expr.value
        return lambda row: value

    def _column(self, expr):
        """Column reference: read the resolved row position."""
        return itemgetter(self.scope.resolve(expr.name, expr.table))

    def _unary(self, expr):
        """``NOT`` with three-valued logic, or numeric negation."""
        operand = self.compile(expr.operand)
        if expr.op == "NOT":
            return lambda row: logical_not(to_condition(operand(row)))

        def negate(row):
            value = operand(row)
            if value is None:
                return None
            if not is_number(value):
                raise SQLTypeError(f"cannot negate {type_name(value)}")
            return -value
        return negate

    def _binary(self, expr):
        """AND/OR (short-circuit, three-valued), comparisons, ``||`` and arithmetic."""
        left = self.compile(expr.left)
        right = self.compile(expr.right)
        op = expr.op
        if op == "AND":
            def conj(row):
                first = to_condition(left(row))
                if first is False:
                    return False
                return logical_and(first, to_condition(right(row)))
            return conj
        if op == "OR":
            def disj(row):
                first = to_condition(left(row))
                if first is True:
                    return True
                return logical_or(first, to_condition(right(row)))
            return disj
        if op in _COMPARATORS:
            return lambda row: compare_op(op, left(row), right(row))
        if op == "||":
            return lambda row: concat(left(row), right(row))
        return lambda row: arithmetic(op, left(row), right(row))

    def _function(self, expr):
        """Scalar function call; aggregates are rejected unless provided via slots."""
        if n.is_aggregate(expr):
            raise ExecutionError(f"aggregate function {expr.name.upper()} is not allowed here")
        spec = SCALAR_FUNCTIONS.get(expr.name)
        if spec is None:
            raise ExecutionError(f"unknown function {expr.name.upper()}")
        low, high, impl = spec
        if expr.star or expr.distinct or not low <= len(expr.args) <= high:
            raise ExecutionError(f"wrong arguments for function {expr.name.upper()}")
        args = [self.compile(arg) for arg in expr.args]
        return lambda row: impl(*[arg(row) for arg in args])

    def _is_null(self, expr):
        """``IS [NOT] NULL`` never returns NULL."""
        operand = self.compile(expr.operand)
        negated = expr.negated
        return lambda row: (operand(row) is None) != negated

    def _between(self, expr):
        """``low <= x AND x <= high`` with three-valued logic, optionally negated."""
        operand, low, high = (self.compile(e) for e in (expr.operand, expr.low, expr.high))
        negated = expr.negated

        def between(row):
            value = operand(row)
            result = logical_and(compare_op(">=", value, low(row)), compare_op("<=", value, high(row)))
            return logical_not(result) if negated else result
        return between

    @staticmethod
    def _membership(value, candidates, negated):
        """SQL IN semantics: TRUE on a match, else NULL if ``value`` or any candidate is NULL."""
        if value is None:
            return None
        saw_null = False
        for candidate in candidates:
            result = compare_op("=", value, candidate)
            if result:
                return not negated
            if result is None:
                saw_null = True
        if saw_null:
            return None
        return negated

    def _in_list(self, expr):
        """``x [NOT] IN (a, b, ...)``."""
        operand = self.compile(expr.operand)
        items = [self.compile(item) for item in expr.items]
        negated = expr.negated
        return lambda row: self._membership(operand(row), [item(row) for item in items], negated)

    def _run_subquery_once(self, query, what):
        """Return a function producing the subquery's rows, running it on first use only.

        Raises:
            ExecutionError: if no subquery runner is available or the subquery
                does not return exactly one column (when ``what`` is not "EXISTS").
        """
        if self.subquery_runner is None:
            raise ExecutionError("subqueries are not supported in this context")
        cache = []

        def rows():
            if not cache:
                columns, result = self.subquery_runner(query)
                if what != "EXISTS" and len(columns) != 1:
                    raise ExecutionError(f"{what} subquery must return exactly one column")
                cache.append(result)
            return cache[0]
        return rows

    def _in_subquery(self, expr):
        """``x [NOT] IN (SELECT col ...)``."""
        operand = self.compile(expr.operand)
        rows = self._run_subquery_once(expr.query, "IN")
        negated = expr.negated
        return lambda row: self._membership(operand(row), [r[0] for r in rows()], negated)

    def _exists(self, expr):
        """``EXISTS (SELECT ...)``: TRUE when the subquery yields at least one row."""
        rows = self._run_subquery_once(expr.query, "EXISTS")
        return lambda row: bool(rows())

    def _scalar_subquery(self, expr):
        """``(SELECT ...)`` as a value: NULL for no rows, error for more than one."""
        rows = self._run_subquery_once(expr.query, "scalar")

        def value(row):
            result = rows()
            if len(result) > 1:
                raise ExecutionError("scalar subquery returned more than one row")
            return result[0][0] if result else None
        return value

    def _like(self, expr):
        """``x [NOT] LIKE pattern``."""
        operand = self.compile(expr.operand)
        pattern = self.compile(expr.pattern)
        negated = expr.negated

        def matches(row):
            result = like(operand(row), pattern(row))
            return logical_not(result) if negated else result
        return matches

    def _case(self, expr):
        """Simple CASE compares the operand with each WHEN value using ``=``;
        searched CASE tests each WHEN condition; the first TRUE branch wins, else ELSE/NULL."""
        operand = self.compile(expr.operand) if expr.operand is not None else None
        branches = [(self.compile(cond), self.compile(result)) for cond, result in expr.whens]
        default = self.compile(expr.default) if expr.default is not None else (lambda row: None)

        def evaluate(row):
            subject = operand(row) if operand is not None else None
            for cond, result in branches:
                if operand is not None:
                    hit = compare_op("=", subject, cond(row))
                else:
                    hit = to_condition(cond(row))
                if hit:
                    return result(row)
            return default(row)
        return evaluate

    def _cast(self, expr):
        """``CAST(x AS type)`` using :func:`minisql.sqltypes.cast_value`."""
        operand = self.compile(expr.operand)
        target = resolve_type(expr.type_name)
        return lambda row: cast_value(operand(row), target)


def evaluate_constant(expr, subquery_runner=None):
    """Evaluate an expression that references no columns and return its value.

    Raises:
        CatalogError: if the expression references a column.
    """
    return ExprCompiler(Scope([]), subquery_runner).compile(expr)(())
