"""SQL data types, value coercion, comparison and three-valued logic.

Values are plain Python objects: ``int`` (INTEGER), ``float`` (REAL), ``str``
(TEXT), ``bool`` (BOOLEAN) and ``None`` for SQL NULL.  Booleans are never
treated as numbers.  Logical operators use SQL three-valued logic where
``None`` plays the role of UNKNOWN.
"""

from enum import Enum

from .errors import ConstraintError, SQLTypeError


class SqlType(Enum):
    """The four storage types understood by minisql."""

    INTEGER = "INTEGER"
    REAL = "REAL"
    TEXT = "TEXT"
    BOOLEAN = "BOOLEAN"


TYPE_ALIASES = {
    "integer": SqlType.INTEGER, "int": SqlType.INTEGER, "bigint": SqlType.INTEGER,
    "smallint": SqlType.INTEGER, "real": SqlType.REAL, "float": SqlType.REAL,
    "double": SqlType.REAL, "numeric": SqlType.REAL, "decimal": SqlType.REAL,
    "text": SqlType.TEXT, "varchar": SqlType.TEXT, "char": SqlType.TEXT,
    "string": SqlType.TEXT, "boolean": SqlType.BOOLEAN, "bool": SqlType.BOOLEAN,
}

_TRUE_WORDS = frozenset({"true", "t", "yes", "y", "1"})
_FALSE_WORDS = frozenset({"false", "f", "no", "n", "0"})


def resolve_type(name):
    """Map a type name (any case, e.g. ``VARCHAR`` or ``int``) to a :class:`SqlType`.

    Raises:
        SQLTypeError: for an unknown type name.
    """
    try:
        return TYPE_ALIASES[name.lower()]
    except KeyError:
        raise SQLTypeError(f"unknown type {name!r}") from None


def is_number(value):
    """Return True for ``int`` and ``float`` values, excluding ``bool``."""
    return isinstance(value, (int, float)) and not isinstance(value, bool)


def type_name(value):
    """Return the SQL type name of a Python value: NULL, BOOLEAN, INTEGER, REAL or TEXT.

    Raises:
        SQLTypeError: for Python objects that are not SQL values.
    """
    if value is None:
        return "NULL"
    if isinstance(value, bool):
        return "BOOLEAN"
    if isinstance(value, int):
        return "INTEGER"
    if isinstance(value, float):
        return "REAL"
    if isinstance(value, str):
        return "TEXT"
    raise SQLTypeError(f"unsupported value {value!r}")


def coerce_to_column(value, sqltype, length=None):
    """Convert ``value`` for storage in a column of ``sqltype`` (implicit conversion).

    Rules: NULL stays NULL; INTEGER accepts ints and integral floats (``2.0`` ->
    ``2``); REAL accepts any number and returns a float; TEXT accepts only
    strings; BOOLEAN accepts bools and the integers 0 and 1.

    Args:
        value: the value to store.
        sqltype: the column's :class:`SqlType`.
        length: optional maximum length for TEXT columns.

    Raises:
        SQLTypeError: if the value cannot be stored in the column type.
        ConstraintError: if a string is longer than ``length``.
    """
    if value is None:
        return None
    if sqltype is SqlType.INTEGER:
        if is_number(value) and float(value).is_integer():
            return int(value)
    elif sqltype is SqlType.REAL:
        if is_number(value):
            return float(value)
    elif sqltype is SqlType.TEXT:
        if isinstance(value, str):
            if length is not None and len(value) > length:
                raise ConstraintError(f"value {value!r} longer than {length} characters")
            return value
    elif isinstance(value, bool):
        return value
    elif value in (0, 1) and is_number(value):
        return bool(value)
    raise SQLTypeError(f"cannot store {type_name(value)} value {value!r} in {sqltype.value} column")


def cast_value(value, sqltype):
    """Explicitly convert ``value`` to ``sqltype`` as ``CAST(value AS type)`` does.

    Conversions: numbers and numeric strings to INTEGER (floats truncate toward
    zero, ``'3.9'`` -> 3); numbers, booleans and numeric strings to REAL; any
    value to TEXT (booleans become ``'TRUE'``/``'FALSE'``); numbers to BOOLEAN
    (non-zero is true) and the words true/t/yes/y/1 and false/f/no/n/0 (any
    case) to BOOLEAN.  NULL casts to NULL.

    Raises:
        SQLTypeError: when a string cannot be parsed as the target type.
    """
    if value is None:
        return None
    if sqltype is SqlType.TEXT:
        if isinstance(value, bool):
            return "TRUE" if value else "FALSE"
        return str(value)
    if sqltype is SqlType.BOOLEAN:
        if isinstance(value, str):
            word = value.strip().lower()
            if word in _TRUE_WORDS:
                return True
            if word in _FALSE_WORDS:
                return False
            raise SQLTypeError(f"cannot cast {value!r} to BOOLEAN")
        return bool(value)
    if isinstance(value, str):
        try:
            number = float(value.strip())
        except ValueError:
            raise SQLTypeError(f"cannot cast {value!r} to {sqltype.value}") from None
    else:
        number = value
    if sqltype is SqlType.INTEGER:
        return int(number)
    return float(number)


def compare(left, right):
    """Compare two SQL values.

    Returns -1, 0 or 1, or ``None`` if either side is NULL.  Numbers compare
    with numbers, strings with strings (code point order) and booleans with
    booleans (FALSE < TRUE).

    Raises:
        SQLTypeError: when the two values have incomparable types.
    """
    if left is None or right is None:
        return None
    if is_number(left) and is_number(right):
        pass
    elif type(left) is not type(right) or not isinstance(left, (str, bool)):
        raise SQLTypeError(f"cannot compare {type_name(left)} with {type_name(right)}")
    if left < right:
        return -1
    return 1 if left > right else 0


def sort_compare(left, right, nulls_first):
    """Total order used by ORDER BY: like :func:`compare` but NULLs are ordered too.

    Two NULLs are equal; a NULL sorts before any value when ``nulls_first`` is
    true and after it otherwise.
    """
    if left is None or right is None:
        if left is None and right is None:
            return 0
        return -1 if (left is None) == nulls_first else 1
    return compare(left, right)


def logical_and(left, right):
    """Three-valued AND: FALSE dominates, then UNKNOWN (None), else TRUE."""
    if left is False or right is False:
        return False
    if left is None or right is None:
        return None
    return True


def logical_or(left, right):
    """Three-valued OR: TRUE dominates, then UNKNOWN (None), else FALSE."""
    if left is True or right is True:
        return True
    if left is None or right is None:
        return None
    return False


def logical_not(value):
    """Three-valued NOT: NOT UNKNOWN is UNKNOWN."""
    if value is None:
        return None
    return not value


def to_condition(value):
    """Interpret a value as a truth value for WHERE/ON/HAVING/CASE.

    Returns True, False or None (UNKNOWN).  Numbers are true when non-zero.

    Raises:
        SQLTypeError: for strings, which have no truth value.
    """
    if value is None or isinstance(value, bool):
        return value
    if is_number(value):
        return value != 0
    raise SQLTypeError(f"{type_name(value)} value {value!r} used as a condition")
