"""Semantics of formula operators on scalar values.

Every function here takes already-evaluated scalar operands and either
returns a value or raises :class:`~sheetcalc.errors.ErrorSignal`.  When both
operands are errors the left one wins.
"""

from .errors import ErrorSignal
from .values import DIV0, NUM, ErrorValue, compare, normalize_number, to_number, to_text

ARITHMETIC_OPERATORS = ("+", "-", "*", "/", "^")
COMPARISON_OPERATORS = ("=", "<>", "<", ">", "<=", ">=")


def power(base, exponent):
    """Return ``base ** exponent`` with spreadsheet error rules.

    Raises:
        ErrorSignal: :data:`DIV0` for zero raised to a negative power,
            :data:`NUM` for ``0^0``, a negative base with a fractional
            exponent, or an overflowing result.
    """
    if base == 0 and exponent < 0:
        raise ErrorSignal(DIV0)
    if base == 0 and exponent == 0:
        raise ErrorSignal(NUM)
    if base < 0 and exponent != int(exponent):
        raise ErrorSignal(NUM)
    try:
        result = base ** exponent
    except OverflowError as exc:
        raise ErrorSignal(NUM) from exc
    return normalize_number(result)


def arithmetic(op, left, right):
    """Apply one of ``+ - * / ^`` after coercing both operands to numbers.

    Raises:
        ErrorSignal: for error operands, non-numeric text (:data:`VALUE`),
            division by zero (:data:`DIV0`) or an out-of-range result.
    """
    a = to_number(left)
    b = to_number(right)
    if op == "+":
        return normalize_number(a + b)
    if op == "-":
        return normalize_number(a - b)
    if op == "*":
        return normalize_number(a * b)
    if op == "/":
        if b == 0:
            raise ErrorSignal(DIV0)
        return normalize_number(a / b)
    return power(a, b)


def comparison(op, left, right):
    """Apply one of ``= <> < > <= >=`` using :func:`~sheetcalc.values.compare` ordering.

    Raises:
        ErrorSignal: when either operand is an error value.
    """
    for operand in (left, right):
        if isinstance(operand, ErrorValue):
            raise ErrorSignal(operand)
    order = compare(left, right)
    return {
        "=": order == 0,
        "<>": order != 0,
        "<": order < 0,
        ">": order > 0,
        "<=": order <= 0,
        ">=": order >= 0,
    }[op]


def apply_binary(op, left, right):
    """Dispatch a binary operator (arithmetic, comparison or ``&``) on scalars."""
    if op in ARITHMETIC_OPERATORS:
        return arithmetic(op, left, right)
    if op in COMPARISON_OPERATORS:
        return comparison(op, left, right)
    if op == "&":
        return to_text(left) + to_text(right)
    raise ValueError(f"unknown operator {op!r}")


def apply_unary(op, value):
    """Apply prefix ``-`` (numeric negation) or ``+`` (identity, value unchanged)."""
    if op == "-":
        return normalize_number(-to_number(value))
    if isinstance(value, ErrorValue):
        raise ErrorSignal(value)
    return value


def apply_percent(value):
    """Apply postfix ``%``: the numeric value divided by 100."""
    return normalize_number(to_number(value) / 100)
