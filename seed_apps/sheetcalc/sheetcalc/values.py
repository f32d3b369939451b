"""The spreadsheet value model and its coercion and comparison rules.

A cell value is one of:

* a number (Python ``float``; ``int`` is accepted and treated the same),
* text (``str``),
* a boolean (``bool``),
* :data:`BLANK`, the value of an empty cell,
* an :class:`ErrorValue` such as :data:`DIV0` (``#DIV/0!``).

Range references evaluate to a :class:`Grid`, a rectangular block of values.
"""

import math
import re
from dataclasses import dataclass

from .errors import ErrorSignal


class Blank:
    """Type of :data:`BLANK`, the value of a cell that holds nothing."""

    def __repr__(self):
        """Return ``"BLANK"``."""
        return "BLANK"

    def __bool__(self):
        """A blank cell is falsy."""
        return False


BLANK = Blank()


@dataclass(frozen=True)
class ErrorValue:
    """A spreadsheet error value identified by its code, e.g. ``"#N/A"``."""

    code: str

    def __str__(self):
        """Return the error code."""
        return self.code


DIV0 = ErrorValue("#DIV/0!")
VALUE = ErrorValue("#VALUE!")
REF = ErrorValue("#REF!")
NAME = ErrorValue("#NAME?")
NA = ErrorValue("#N/A")
NUM = ErrorValue("#NUM!")
CYCLE = ErrorValue("#CYCLE!")

ERRORS_BY_CODE = {error.code: error for error in (DIV0, VALUE, REF, NAME, NA, NUM, CYCLE)}

_NUMBER_TEXT_RE = re.compile(r"[+-]?(?:\d+(?:\.\d*)?|\.\d+)(?:[eE][+-]?\d+)?")


class Grid:
    """An immutable rectangular block of values produced by a range reference.

    Args:
        rows: a sequence of equally long row sequences.

    Raises:
        ValueError: if ``rows`` is empty or ragged.
    """

    def __init__(self, rows):
        """Store ``rows`` as a tuple of tuples after checking the shape."""
        self.rows = tuple(tuple(row) for row in rows)
        if not self.rows or not self.rows[0]:
            raise ValueError("a grid needs at least one cell")
        if any(len(row) != len(self.rows[0]) for row in self.rows):
            raise ValueError("grid rows must all have the same length")

    @property
    def height(self):
        """Number of rows."""
        return len(self.rows)

    @property
    def width(self):
        """Number of columns."""
        return len(self.rows[0])

    def at(self, row, col):
        """Return the value at zero-based ``(row, col)`` inside the block."""
        return self.rows[row][col]

    def values(self):
        """Return all values as a flat list in row-major order."""
        return [value for row in self.rows for value in row]

    def column(self, col):
        """Return the values of zero-based column ``col`` as a list."""
        return [row[col] for row in self.rows]

    def __eq__(self, other):
        """Grids are equal when they hold equal values in the same shape."""
        return isinstance(other, Grid) and self.rows == other.rows

    def __repr__(self):
        """Return ``Grid(...)`` with the nested rows."""
        return f"Grid({[list(row) for row in self.rows]!r})"


def is_number(value):
    """Return ``True`` for ints and floats, but not for booleans."""
    return isinstance(value, (int, float)) and not isinstance(value, bool)


def is_error(value):
    """Return ``True`` when ``value`` is an :class:`ErrorValue`."""
    return isinstance(value, ErrorValue)


def normalize_number(number):
    """Return ``number`` as a float fit for storing in a cell.

    Negative zero becomes ``0.0``.

    Raises:
        ErrorSignal: carrying :data:`NUM` for infinities and NaN.
    """
    number = float(number)
    if math.isnan(number) or math.isinf(number):
        raise ErrorSignal(NUM)
    return 0.0 if number == 0 else number


def parse_number_text(text):
    """Interpret ``text`` as a number the way a user would type it.

    Leading/trailing whitespace is ignored and a trailing ``%`` divides by 100.
    ``"1e3"`` -> 1000.0, ``" 50% "`` -> 0.5.  Returns ``None`` when the text
    is not numeric (``"inf"``, ``"1,000"`` and ``""`` are not numeric).
    """
    stripped = text.strip()
    scale = 1.0
    if stripped.endswith("%"):
        stripped = stripped[:-1].rstrip()
        scale = 0.01
    if not _NUMBER_TEXT_RE.fullmatch(stripped):
        return None
    return float(stripped) * scale


def to_number(value):
    """Coerce a scalar value to a float.

    Booleans become 1/0, blank becomes 0, numeric text is parsed with
    :func:`parse_number_text`.

    Raises:
        ErrorSignal: carrying the error itself for error values, or
            :data:`VALUE` for non-numeric text.
    """
    if isinstance(value, bool):
        return 1.0 if value else 0.0
    if is_number(value):
        return float(value)
    if value is BLANK:
        return 0.0
    if isinstance(value, ErrorValue):
        raise ErrorSignal(value)
    number = parse_number_text(value)
    if number is None:
        raise ErrorSignal(VALUE)
    return number


def format_general(number):
    """Render a number the way the "General" format shows it.

    Integral values print without a decimal point (``3.0`` -> ``"3"``), other
    values use up to 15 significant digits (``0.1 + 0.2`` -> ``"0.3"``) and
    very large or small magnitudes use an upper-case exponent (``"1E+20"``).
    """
    number = float(number)
    if number == int(number) and abs(number) < 1e15:
        return str(int(number))
    text = "%.15g" % number
    if "e" in text:
        mantissa, exponent = text.split("e")
        sign = exponent[0]
        digits = exponent[1:].lstrip("0") or "0"
        return f"{mantissa}E{sign}{digits.zfill(2)}"
    return text


def to_text(value):
    """Coerce a scalar value to text.

    Numbers use :func:`format_general`, booleans become ``"TRUE"``/``"FALSE"``
    and blank becomes ``""``.

    Raises:
        ErrorSignal: carrying the error for error values.
    """
    if isinstance(value, bool):
        return "TRUE" if value else "FALSE"
    if is_number(value):
        return format_general(value)
    if value is BLANK:
        return ""
    if isinstance(value, ErrorValue):
        raise ErrorSignal(value)
    return value


def to_bool(value):
    """Coerce a scalar value to a boolean.

    Numbers are true when non-zero, blank is false, and the texts ``"TRUE"``
    and ``"FALSE"`` (any case) map to their booleans.

    Raises:
        ErrorSignal: carrying the error for error values, or :data:`VALUE`
            for any other text.
    """
    if isinstance(value, bool):
        return value
    if is_number(value):
        return value != 0
    if value is BLANK:
        return False
    if isinstance(value, ErrorValue):
        raise ErrorSignal(value)
    upper = value.strip().upper()
    if upper in ("TRUE", "FALSE"):
        return upper == "TRUE"
    raise ErrorSignal(VALUE)


def display_text(value):
    """Return the text shown in a cell: like :func:`to_text`, but errors show their code."""
    if isinstance(value, ErrorValue):
        return value.code
    return to_text(value)


def _type_rank(value):
    """Rank used to order values of different types: numbers < text < booleans."""
    if isinstance(value, bool):
        return 2
    if isinstance(value, str):
        return 1
    return 0


def compare(left, right):
    """Compare two non-error scalars; return -1, 0 or 1.

    Numbers sort before text, and text before booleans.  Text compares
    case-insensitively.  A blank operand takes the "empty" value of the other
    operand's type (0, ``""`` or ``FALSE``), so a blank equals 0 and ``""``.
    """
    if left is BLANK:
        left = _empty_like(right)
    if right is BLANK:
        right = _empty_like(left)
    left_rank, right_rank = _type_rank(left), _type_rank(right)
    if left_rank != right_rank:
        return -1 if left_rank < right_rank else 1
    if left_rank == 1:
        left, right = left.casefold(), right.casefold()
    if left < right:
        return -1
    return 1 if left > right else 0


def _empty_like(value):
    """Return the empty value of ``value``'s type (0.0, ``""`` or ``False``)."""
    if isinstance(value, bool):
        return False
    if isinstance(value, str):
        return ""
    return 0.0


def parse_literal(text):
    """Interpret raw user input typed into a cell (not a formula).

    ``""`` -> :data:`BLANK`; ``"true"`` -> ``True``; numeric text -> float
    (see :func:`parse_number_text`); an error code such as ``"#N/A"`` -> that
    error; a leading apostrophe forces text (``"'007"`` -> ``"007"``);
    anything else is kept as text.
    """
    if text == "":
        return BLANK
    if text.startswith("'"):
        return text[1:]
    upper = text.strip().upper()
    if upper in ("TRUE", "FALSE"):
        return upper == "TRUE"
    if upper in ERRORS_BY_CODE:
        return ERRORS_BY_CODE[upper]
    number = parse_number_text(text)
    return text if number is None else number
