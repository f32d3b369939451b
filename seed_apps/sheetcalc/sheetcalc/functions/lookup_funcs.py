"""Lookup and reference built-ins (VLOOKUP, HLOOKUP, INDEX, MATCH, ROWS, COLUMNS)."""

from ..criteria import has_wildcards, wildcard_match
from ..errors import ErrorSignal
from ..values import BLANK, NA, REF, VALUE, ErrorValue, Grid, compare
from .base import FunctionSpec, bool_arg, grid_arg, int_arg, scalar


def _lookup_value(arg):
    """Return the scalar lookup value; errors propagate and blank looks up 0."""
    value = scalar(arg)
    if isinstance(value, ErrorValue):
        raise ErrorSignal(value)
    return 0.0 if value is BLANK else value


def exact_position(values, lookup):
    """Return the 0-based index of the first value equal to ``lookup``, or -1.

    Equality follows :func:`~sheetcalc.values.compare` (case-insensitive text,
    no cross-type equality).  A text lookup containing wildcards is matched
    against text values with :func:`~sheetcalc.criteria.wildcard_match`.
    Blank and error cells never match.
    """
    use_wildcards = isinstance(lookup, str) and has_wildcards(lookup)
    for index, value in enumerate(values):
        if value is BLANK or isinstance(value, ErrorValue):
            continue
        if use_wildcards:
            if isinstance(value, str) and wildcard_match(lookup, value):
                return index
        elif compare(value, lookup) == 0:
            return index
    return -1


def approximate_position(values, lookup, descending=False):
    """Binary-search a sorted list for the last acceptable position; return it or -1.

    For ascending data (``descending=False``) the result is the position of
    the largest value that is ``<= lookup``; for descending data, of the
    smallest value that is ``>= lookup``.  Blank and error cells are treated
    as lying beyond every value, so trailing blanks are harmless.  Values are
    ordered with :func:`~sheetcalc.values.compare`.
    """
    def acceptable(value):
        """Return ``True`` when ``value`` may be the answer (prefix predicate)."""
        if value is BLANK or isinstance(value, ErrorValue):
            return False
        order = compare(value, lookup)
        return order >= 0 if descending else order <= 0

    low, high = 0, len(values) - 1
    found = -1
    while low <= high:
        middle = (low + high) // 2
        if acceptable(values[middle]):
            found = middle
            low = middle + 1
        else:
            high = middle - 1
    return found


def _table_lookup(args, keys_of, pick):
    """Shared body of VLOOKUP/HLOOKUP.

    Args:
        args: ``(lookup, table, index, [approximate=TRUE])``.
        keys_of: returns the list of keys (first column or first row) of a grid.
        pick: ``pick(grid, position, index)`` returns the result cell.

    Raises:
        ErrorSignal: :data:`VALUE` for ``index < 1``, :data:`REF` for an index
            beyond the table, :data:`NA` when nothing matches.
    """
    lookup = _lookup_value(args[0])
    table = grid_arg(args[1])
    index = int_arg(args[2])
    approximate = bool_arg(args[3]) if len(args) > 3 else True
    if index < 1:
        raise ErrorSignal(VALUE)
    keys = keys_of(table)
    if approximate:
        position = approximate_position(keys, lookup)
    else:
        position = exact_position(keys, lookup)
    if position < 0:
        raise ErrorSignal(NA)
    return pick(table, position, index - 1)


def fn_vlookup(args):
    """VLOOKUP(lookup, table, column, [approximate=TRUE]): search the first column, return from ``column``."""
    def pick(table, row, col):
        """Return ``table[row][col]``, or #REF! when the column is outside the table."""
        if col >= table.width:
            raise ErrorSignal(REF)
        return table.at(row, col)
    return _table_lookup(args, lambda table: table.column(0), pick)


def fn_hlookup(args):
    """HLOOKUP(lookup, table, row, [approximate=TRUE]): search the first row, return from ``row``."""
    def pick(table, col, row):
        """Return ``table[row][col]``, or #REF! when the row is outside the table."""
        if row >= table.height:
            raise ErrorSignal(REF)
        return table.at(row, col)
    return _table_lookup(args, lambda table: list(table.rows[0]), pick)


def fn_match(args):
    """MATCH(lookup, vector, [type=1]): 1-based position of ``lookup`` in a one-row/column range.

    ``type`` 1 finds the largest value <= lookup in ascending data, 0 the
    first exact (wildcard-aware) match, -1 the smallest value >= lookup in
    descending data.  A two-dimensional range or no match gives #N/A.
    """
    lookup = _lookup_value(args[0])
    grid = grid_arg(args[1])
    match_type = int_arg(args[2]) if len(args) > 2 else 1
    if grid.height != 1 and grid.width != 1:
        raise ErrorSignal(NA)
    values = grid.values()
    if match_type == 0:
        position = exact_position(values, lookup)
    else:
        position = approximate_position(values, lookup, descending=match_type < 0)
    if position < 0:
        raise ErrorSignal(NA)
    return float(position + 1)


def fn_index(args):
    """INDEX(array, row, [column]): the cell at 1-based (row, column).

    With a single index on a one-row array the index selects the column.  A
    row or column of 0 returns the whole column or row as a grid.  Indexes
    outside the array (or negative) give #REF!.
    """
    grid = grid_arg(args[0])
    row = int_arg(args[1])
    col = int_arg(args[2]) if len(args) > 2 else None
    if col is None:
        if grid.height == 1 and grid.width > 1:
            row, col = 1, row
        else:
            col = 1
    if row < 0 or col < 0 or row > grid.height or col > grid.width:
        raise ErrorSignal(REF)
    if row == 0 and col == 0:
        return grid
    if row == 0:
        return Grid([[value] for value in grid.column(col - 1)])
    if col == 0:
        return Grid([grid.rows[row - 1]])
    return grid.at(row - 1, col - 1)


def fn_rows(args):
    """ROWS(range): number of rows."""
    return float(grid_arg(args[0]).height)


def fn_columns(args):
    """COLUMNS(range): number of columns."""
    return float(grid_arg(args[0]).width)


SPECS = (
    FunctionSpec("VLOOKUP", fn_vlookup, 3, 4),
    FunctionSpec("HLOOKUP", fn_hlookup, 3, 4),
    FunctionSpec("MATCH", fn_match, 2, 3),
    FunctionSpec("INDEX", fn_index, 2, 3),
    FunctionSpec("ROWS", fn_rows, 1, 1),
    FunctionSpec("COLUMNS", fn_columns, 1, 1),
)
