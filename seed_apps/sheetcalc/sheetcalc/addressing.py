"""A1-notation addressing: column letters, cell and range references.

Rows and columns are stored zero-based internally (``A1`` is row 0, column 0)
and printed one-based in A1 notation.  A ``$`` before the column letters or
the row number marks that component as absolute, which matters when a formula
is copied (see :meth:`CellRef.shifted`).  References may be qualified with a
sheet name (``Sheet2!B3`` or ``'My Sheet'!B3``).
"""

import re
from dataclasses import dataclass, replace

from .errors import AddressError

MAX_ROWS = 1_048_576
MAX_COLS = 16_384

_CELL_RE = re.compile(r"(\$?)([A-Za-z]{1,3})(\$?)([0-9]+)")
_SIMPLE_SHEET_RE = re.compile(r"[A-Za-z_][A-Za-z0-9_.]*")


def column_to_index(letters):
    """Convert column letters to a zero-based column index.

    ``"A"`` -> 0, ``"Z"`` -> 25, ``"AA"`` -> 26.  Letters are case-insensitive.

    Raises:
        AddressError: if ``letters`` is empty, contains non-letters, or names a
            column beyond :data:`MAX_COLS`.
    """
    if not letters or not letters.isalpha() or not letters.isascii():
        raise AddressError(f"invalid column letters: {letters!r}")
    index = 0
    for char in letters.upper():
        index = index * 26 + (ord(char) - ord("A") + 1)
    if index > MAX_COLS:
        raise AddressError(f"column {letters!r} is beyond the last column")
    return index - 1


def index_to_column(index):
    """Convert a zero-based column index to column letters (26 -> ``"AA"``).

    Raises:
        AddressError: if ``index`` is negative or not below :data:`MAX_COLS`.
    """
    if index < 0 or index >= MAX_COLS:
        raise AddressError(f"column index {index} is outside the grid")
    letters = []
    number = index + 1
    while number > 0:
        number, remainder = divmod(number - 1, 26)
        letters.append(chr(ord("A") + remainder))
    return "".join(reversed(letters))


def check_coordinates(row, col):
    """Raise :class:`AddressError` unless ``(row, col)`` lies inside the grid."""
    if not 0 <= row < MAX_ROWS or not 0 <= col < MAX_COLS:
        raise AddressError(f"coordinates ({row}, {col}) are outside the grid")


def format_sheet_name(name):
    """Return ``name`` as it must appear before ``!`` in a reference.

    Simple identifiers are returned unchanged; any other name (spaces,
    punctuation, a leading digit, or text that looks like a cell reference) is
    wrapped in single quotes with embedded quotes doubled: ``It's`` ->
    ``'It''s'``.
    """
    if _SIMPLE_SHEET_RE.fullmatch(name) and not _CELL_RE.fullmatch(name):
        return name
    return "'" + name.replace("'", "''") + "'"


def split_sheet(text):
    """Split an optional sheet qualifier off a reference string.

    Returns ``(sheet, rest)`` where ``sheet`` is ``None`` when the text has no
    ``!`` qualifier.  Quoted sheet names have their quotes removed and doubled
    quotes collapsed.

    Raises:
        AddressError: for an unterminated quoted name, a quoted name not
            followed by ``!``, or an empty sheet name.
    """
    if text.startswith("'"):
        index = 1
        chars = []
        while True:
            if index >= len(text):
                raise AddressError(f"unterminated sheet name in {text!r}")
            char = text[index]
            if char == "'":
                if text.startswith("''", index):
                    chars.append("'")
                    index += 2
                    continue
                break
            chars.append(char)
            index += 1
        if not text.startswith("!", index + 1) or not chars:
            raise AddressError(f"malformed sheet qualifier in {text!r}")
        return "".join(chars), text[index + 2:]
    if "!" in text:
        sheet, rest = text.split("!", 1)
        if not sheet:
            raise AddressError(f"empty sheet name in {text!r}")
        return sheet, rest
    return None, text


@dataclass(frozen=True)
class CellRef:
    """A reference to one cell.

    Attributes:
        row: zero-based row index.
        col: zero-based column index.
        row_abs: ``True`` when the row is absolute (``A$1``).
        col_abs: ``True`` when the column is absolute (``$A1``).
        sheet: sheet name, or ``None`` for "the sheet holding the formula".
    """

    row: int
    col: int
    row_abs: bool = False
    col_abs: bool = False
    sheet: str = None

    def to_a1(self, include_sheet=True):
        """Render the reference, e.g. ``$B3`` or ``'My Sheet'!C$4``."""
        text = ("$" if self.col_abs else "") + index_to_column(self.col)
        text += ("$" if self.row_abs else "") + str(self.row + 1)
        if include_sheet and self.sheet is not None:
            return format_sheet_name(self.sheet) + "!" + text
        return text

    def shifted(self, drow, dcol):
        """Return the reference as it reads after copying by ``(drow, dcol)``.

        Only relative components move; absolute ones stay put.

        Raises:
            AddressError: if a moved component falls outside the grid.
        """
        row = self.row if self.row_abs else self.row + drow
        col = self.col if self.col_abs else self.col + dcol
        check_coordinates(row, col)
        return replace(self, row=row, col=col)

    def with_sheet(self, sheet):
        """Return a copy qualified with ``sheet`` (``None`` removes it)."""
        return replace(self, sheet=sheet)


@dataclass(frozen=True)
class RangeRef:
    """A rectangular block of cells given by two corners.

    ``start`` is always the top-left and ``end`` the bottom-right corner
    (see :func:`make_range`).  The corners themselves carry no sheet; the
    range's ``sheet`` attribute qualifies the whole block.
    """

    start: CellRef
    end: CellRef
    sheet: str = None

    @property
    def top(self):
        """Zero-based index of the first row."""
        return self.start.row

    @property
    def left(self):
        """Zero-based index of the first column."""
        return self.start.col

    @property
    def bottom(self):
        """Zero-based index of the last row (inclusive)."""
        return self.end.row

    @property
    def right(self):
        """Zero-based index of the last column (inclusive)."""
        return self.end.col

    @property
    def height(self):
        """Number of rows covered."""
        return self.bottom - self.top + 1

    @property
    def width(self):
        """Number of columns covered."""
        return self.right - self.left + 1

    def cells(self):
        """Yield every ``(row, col)`` of the block in row-major order."""
        for row in range(self.top, self.bottom + 1):
            for col in range(self.left, self.right + 1):
                yield row, col

    def contains(self, row, col):
        """Return ``True`` when ``(row, col)`` lies inside the block."""
        return self.top <= row <= self.bottom and self.left <= col <= self.right

    def to_a1(self, include_sheet=True):
        """Render the range, e.g. ``Sheet2!$A$1:B4``."""
        text = self.start.to_a1(False) + ":" + self.end.to_a1(False)
        if include_sheet and self.sheet is not None:
            return format_sheet_name(self.sheet) + "!" + text
        return text

    def with_sheet(self, sheet):
        """Return a copy qualified with ``sheet`` (``None`` removes it)."""
        return replace(self, sheet=sheet)


def make_range(first, second, sheet=None):
    """Build a normalised :class:`RangeRef` from two corner references.

    The corners may be given in any order (``B3:A1`` becomes ``A1:B3``); each
    coordinate keeps the absolute flag it was written with.  Corner sheets are
    dropped in favour of ``sheet``.
    """
    if first.row <= second.row:
        top, top_abs, bottom, bottom_abs = first.row, first.row_abs, second.row, second.row_abs
    else:
        top, top_abs, bottom, bottom_abs = second.row, second.row_abs, first.row, first.row_abs
    if first.col <= second.col:
        left, left_abs, right, right_abs = first.col, first.col_abs, second.col, second.col_abs
    else:
        left, left_abs, right, right_abs = second.col, second.col_abs, first.col, first.col_abs
    start = CellRef(top, left, top_abs, left_abs)
    end = CellRef(bottom, right, bottom_abs, right_abs)
    return RangeRef(start, end, sheet)


def parse_cell(text):
    """Parse an unqualified cell reference such as ``$B$12`` into a :class:`CellRef`.

    Raises:
        AddressError: if ``text`` is not a valid reference inside the grid.
    """
    match = _CELL_RE.fullmatch(text)
    if match is None:
        raise AddressError(f"not a cell reference: {text!r}")
    col_abs, letters, row_abs, digits = match.groups()
    col = column_to_index(letters)
    row = int(digits) - 1
    check_coordinates(row, col)
    return CellRef(row, col, row_abs == "$", col_abs == "$")


def parse_reference(text):
    """Parse a cell or range reference, optionally sheet-qualified.

    Returns a :class:`CellRef` for ``"Sheet2!B3"`` and a normalised
    :class:`RangeRef` for ``"B3:C9"``.

    Raises:
        AddressError: for anything that is not a valid reference.
    """
    sheet, rest = split_sheet(text.strip())
    if ":" in rest:
        first_text, second_text = rest.split(":", 1)
        return make_range(parse_cell(first_text), parse_cell(second_text), sheet)
    return parse_cell(rest).with_sheet(sheet)


def looks_like_cell(text):
    """Return ``True`` when ``text`` is syntactically a valid cell reference."""
    try:
        parse_cell(text)
    except AddressError:
        return False
    return True


def a1(row, col):
    """Return the plain relative A1 text for zero-based ``(row, col)``."""
    return index_to_column(col) + str(row + 1)
