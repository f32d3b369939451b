"""Reference rewriting for copy/paste and for inserting or deleting rows/columns.

Copying shifts *relative* reference components by the copy offset.  Row and
column insertion/deletion moves *all* references to the affected sheet
(absolute ones too), grows or shrinks ranges, and turns references to deleted
cells into ``#REF!``.

Structural edits are described by an interval *mapper*: a function taking the
first and last index ``(low, high)`` that a reference covers along the edited
axis and returning the new ``(low, high)``, or ``None`` if nothing survives.
"""

from dataclasses import replace

from .addressing import MAX_COLS, MAX_ROWS, CellRef, make_range
from .errors import AddressError
from .nodes import CellNode, ErrorLiteral, RangeNode, transform
from .values import REF

ROW = "row"
COLUMN = "column"


def axis_limit(axis):
    """Return the number of rows or columns in the grid for ``axis``."""
    return MAX_ROWS if axis == ROW else MAX_COLS


def insert_mapper(index, count, limit):
    """Return the mapper for inserting ``count`` lines before 0-based ``index``.

    Indexes at or after ``index`` move by ``count``; an interval that would be
    pushed past ``limit`` maps to ``None``.  A range spanning the insertion
    point therefore grows.
    """
    def mapper(low, high):
        """Map ``(low, high)`` through the insertion."""
        new_low = low + count if low >= index else low
        new_high = high + count if high >= index else high
        if new_high >= limit:
            return None
        return new_low, new_high
    return mapper


def delete_mapper(index, count):
    """Return the mapper for deleting ``count`` lines starting at 0-based ``index``.

    Intervals entirely inside the deleted block map to ``None``; intervals
    overlapping it shrink; intervals after it move back by ``count``.
    """
    end = index + count

    def mapper(low, high):
        """Map ``(low, high)`` through the deletion."""
        if index <= low and high < end:
            return None
        if low >= end:
            new_low = low - count
        else:
            new_low = min(low, index)
        if high >= end:
            new_high = high - count
        else:
            new_high = min(high, index - 1)
        return new_low, new_high
    return mapper


def _refers_to(ref, formula_sheet, target_sheet):
    """Return ``True`` when ``ref`` (written on ``formula_sheet``) points at ``target_sheet``."""
    return (ref.sheet or formula_sheet).casefold() == target_sheet.casefold()


def remap_reference(ref, formula_sheet, target_sheet, axis, mapper):
    """Apply a structural edit of ``target_sheet`` to a single reference.

    References to other sheets come back unchanged.  Returns the new
    ``CellRef``/``RangeRef``, or ``None`` when the referenced cells were all
    deleted (or pushed off the grid).
    """
    if not _refers_to(ref, formula_sheet, target_sheet):
        return ref
    field = "row" if axis == ROW else "col"
    if isinstance(ref, CellRef):
        position = getattr(ref, field)
        mapped = mapper(position, position)
        return None if mapped is None else replace(ref, **{field: mapped[0]})
    mapped = mapper(getattr(ref.start, field), getattr(ref.end, field))
    if mapped is None:
        return None
    return replace(ref, start=replace(ref.start, **{field: mapped[0]}),
                   end=replace(ref.end, **{field: mapped[1]}))


def remap_formula(node, formula_sheet, target_sheet, axis, mapper):
    """Apply a structural edit to every reference in formula ``node``.

    References whose cells disappear become ``#REF!`` error literals.
    """
    def visit(item):
        """Remap one reference node; other nodes pass through."""
        if isinstance(item, (CellNode, RangeNode)):
            new_ref = remap_reference(item.ref, formula_sheet, target_sheet, axis, mapper)
            if new_ref is None:
                return ErrorLiteral(REF)
            return type(item)(new_ref)
        return item
    return transform(node, visit)


def shift_formula(node, drow, dcol):
    """Return ``node`` as it reads after being copied ``drow`` rows and ``dcol`` columns away.

    Relative components move, absolute ones stay.  A reference moved off
    the grid becomes a ``#REF!`` error literal; a range whose corners cross
    over is normalised.
    """
    def visit(item):
        """Shift one reference node; other nodes pass through."""
        try:
            if isinstance(item, CellNode):
                return CellNode(item.ref.shifted(drow, dcol))
            if isinstance(item, RangeNode):
                ref = item.ref
                return RangeNode(make_range(ref.start.shifted(drow, dcol), ref.end.shifted(drow, dcol), ref.sheet))
        except AddressError:
            return ErrorLiteral(REF)
        return item
    return transform(node, visit)
