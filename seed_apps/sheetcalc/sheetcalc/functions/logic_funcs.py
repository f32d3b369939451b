"""Logical and information built-ins (IF, IFERROR, AND, ISNUMBER...).

``IF``, ``IFERROR``, ``IFNA`` and ``CHOOSE`` are lazy: they receive thunks
and evaluate only the branch they return, so ``IF(TRUE, 1, 1/0)`` is 1.
"""

from ..errors import ErrorSignal
from ..values import BLANK, NA, VALUE, ErrorValue, Grid, is_number, to_bool
from .base import FunctionSpec, bool_arg, flatten, int_arg, scalar_or_error


def _unwrap(value):
    """Return a 1x1 grid's single value; leave other values alone."""
    if isinstance(value, Grid) and value.height == 1 and value.width == 1:
        return value.at(0, 0)
    return value


def fn_if(thunks):
    """IF(condition, if_true, [if_false]): pick a branch; a missing false branch gives FALSE."""
    if bool_arg(thunks[0]()):
        return thunks[1]()
    return thunks[2]() if len(thunks) > 2 else False


def fn_iferror(thunks):
    """IFERROR(value, fallback): ``value`` unless it is any error, else ``fallback``."""
    value = _unwrap(thunks[0]())
    return thunks[1]() if isinstance(value, ErrorValue) else value


def fn_ifna(thunks):
    """IFNA(value, fallback): ``value`` unless it is #N/A, else ``fallback``."""
    value = _unwrap(thunks[0]())
    return thunks[1]() if value == NA else value


def fn_choose(thunks):
    """CHOOSE(index, value1, ...): the index-th value; #VALUE! when out of range."""
    index = int_arg(thunks[0]())
    if not 1 <= index < len(thunks):
        raise ErrorSignal(VALUE)
    return thunks[index]()


def logical_values(args):
    """Return the booleans AND/OR/XOR should combine.

    From references, booleans and numbers count while text and blanks are
    skipped; typed-in arguments go through :func:`~sheetcalc.values.to_bool`.

    Raises:
        ErrorSignal: for error values, text that is not TRUE/FALSE typed in
            directly, or when no logical value was found at all (:data:`VALUE`).
    """
    result = []
    for value, from_reference in flatten(args):
        if isinstance(value, ErrorValue):
            raise ErrorSignal(value)
        if from_reference and (value is BLANK or isinstance(value, str)):
            continue
        result.append(to_bool(value))
    if not result:
        raise ErrorSignal(VALUE)
    return result


def fn_and(args):
    """AND(value, ...): TRUE when every logical value is true."""
    return all(logical_values(args))


def fn_or(args):
    """OR(value, ...): TRUE when any logical value is true."""
    return any(logical_values(args))


def fn_xor(args):
    """XOR(value, ...): TRUE when an odd number of logical values are true."""
    return sum(logical_values(args)) % 2 == 1


def fn_not(args):
    """NOT(value): logical negation."""
    return not bool_arg(args[0])


def fn_isblank(args):
    """ISBLANK(value): TRUE only for an empty cell (empty text is not blank)."""
    return scalar_or_error(args[0]) is BLANK


def fn_isnumber(args):
    """ISNUMBER(value): TRUE for numbers (not for numeric text or booleans)."""
    return is_number(scalar_or_error(args[0]))


def fn_istext(args):
    """ISTEXT(value): TRUE for text values."""
    return isinstance(scalar_or_error(args[0]), str)


def fn_iserror(args):
    """ISERROR(value): TRUE for any error value."""
    return isinstance(scalar_or_error(args[0]), ErrorValue)


def fn_isna(args):
    """ISNA(value): TRUE only for #N/A."""
    return scalar_or_error(args[0]) == NA


def fn_na(args):
    """NA(): the #N/A error value."""
    return NA


SPECS = (
    FunctionSpec("IF", fn_if, 2, 3, lazy=True),
    FunctionSpec("IFERROR", fn_iferror, 2, 2, lazy=True),
    FunctionSpec("IFNA", fn_ifna, 2, 2, lazy=True),
    FunctionSpec("CHOOSE", fn_choose, 2, None, lazy=True),
    FunctionSpec("AND", fn_and, 1),
    FunctionSpec("OR", fn_or, 1),
    FunctionSpec("XOR", fn_xor, 1),
    FunctionSpec("NOT", fn_not, 1, 1),
    FunctionSpec("ISBLANK", fn_isblank, 1, 1),
    FunctionSpec("ISNUMBER", fn_isnumber, 1, 1),
    FunctionSpec("ISTEXT", fn_istext, 1, 1),
    FunctionSpec("ISERROR", fn_iserror, 1, 1),
    FunctionSpec("ISNA", fn_isna, 1, 1),
    FunctionSpec("NA", fn_na, 0, 0),
)
