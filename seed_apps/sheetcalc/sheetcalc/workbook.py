"""The workbook: sheets of cells, defined names and automatic recalculation.

Every edit (``set_cell``, ``define_name``, ``insert_rows``...) immediately
recalculates the cells it affects, in dependency order, so ``get_value``
always returns current results.  Cells that take part in a circular
reference get the ``#CYCLE!`` error; cells reading them inherit it.

Addresses are A1 strings, optionally sheet-qualified (``"Sheet2!B3"``); an
unqualified address refers to the ``sheet`` argument or, by default, to the
first sheet.  Sheet and defined names are case-insensitive.
"""

import re

from .addressing import CellRef, RangeRef, a1, format_sheet_name, looks_like_cell, parse_reference
from .errors import AddressError, NameDefinitionError, UnknownSheetError, WorkbookError
from .evaluator import Evaluator
from .formatting import NumberFormat
from .functions import default_registry
from .graph import DependencyGraph
from .nodes import names, references
from .parser import parse_formula
from .printer import to_formula
from .rewrite import COLUMN, ROW, axis_limit, delete_mapper, insert_mapper, remap_formula, remap_reference, shift_formula
from .values import BLANK, CYCLE, REF, display_text, is_number, parse_literal

_NAME_RE = re.compile(r"[A-Za-z_][A-Za-z0-9_.]*")
_BAD_SHEET_CHARS = set("[]:*?/\\")


def name_key(name):
    """Return the dependency-graph key of defined name ``name``."""
    return ("", name.upper())


class Cell:
    """Contents of one cell.

    Attributes:
        formula: the parsed formula AST, or ``None`` for a constant cell.
        value: the constant, or the last computed formula result.
        number_format: a :class:`~sheetcalc.formatting.NumberFormat` or ``None``.
    """

    __slots__ = ("formula", "value", "number_format")

    def __init__(self, value=BLANK, formula=None, number_format=None):
        """Create a cell holding ``value`` (and ``formula`` when it is a formula cell)."""
        self.formula = formula
        self.value = value
        self.number_format = number_format

    def is_empty(self):
        """Return ``True`` when the cell has no formula, no value and no format."""
        return self.formula is None and self.value is BLANK and self.number_format is None


class Sheet:
    """A named grid of cells stored sparsely as ``{(row, col): Cell}``."""

    def __init__(self, name):
        """Create an empty sheet called ``name``."""
        self.name = name
        self.cells = {}

    def used_size(self):
        """Return ``(rows, columns)`` of the smallest block from A1 holding every non-empty cell."""
        rows = cols = 0
        for (row, col), cell in self.cells.items():
            if cell.formula is not None or cell.value is not BLANK:
                rows = max(rows, row + 1)
                cols = max(cols, col + 1)
        return rows, cols


class Workbook:
    """A collection of sheets with formulas, names and automatic recalculation.

    Args:
        sheet_names: names of the sheets to create, in order (default one
            sheet called ``Sheet1``).
        registry: the function registry to use (default: all built-ins).
    """

    def __init__(self, sheet_names=("Sheet1",), registry=None):
        """Create the workbook with the given sheets."""
        self._sheets = {}
        self._names = {}
        self._graph = DependencyGraph()
        self._evaluator = Evaluator(self, registry or default_registry())
        for name in sheet_names:
            self.add_sheet(name)

    # ----------------------------------------------------------------- sheets
    def add_sheet(self, name):
        """Append a sheet called ``name`` and recalculate formulas that may now resolve.

        Raises:
            WorkbookError: if the name is empty, longer than 31 characters,
                contains one of ``[]:*?/\\`` or duplicates an existing sheet.
        """
        if not name or len(name) > 31 or any(char in _BAD_SHEET_CHARS for char in name):
            raise WorkbookError(f"invalid sheet name {name!r}")
        if name.casefold() in self._sheets:
            raise WorkbookError(f"duplicate sheet name {name!r}")
        self._sheets[name.casefold()] = Sheet(name)
        self.recalculate()

    def remove_sheet(self, name):
        """Delete a sheet; formulas elsewhere that read it become ``#REF!``.

        Raises:
            UnknownSheetError: if there is no such sheet.
            WorkbookError: when removing the last sheet.
        """
        sheet = self._sheet(name)
        if len(self._sheets) == 1:
            raise WorkbookError("a workbook needs at least one sheet")
        del self._sheets[sheet.name.casefold()]
        removed = [(sheet.name.casefold(), row, col) for row, col in sheet.cells]
        for key in removed:
            self._graph.remove(key)
        self._recalculate(removed)

    def sheet_names(self):
        """Return the sheet names in creation order."""
        return [sheet.name for sheet in self._sheets.values()]

    def _sheet(self, name):
        """Return the :class:`Sheet` called ``name`` (``None`` means the first sheet).

        Raises:
            UnknownSheetError: if there is no such sheet.
        """
        if name is None:
            return next(iter(self._sheets.values()))
        try:
            return self._sheets[name.casefold()]
        except KeyError:
            raise UnknownSheetError(f"no sheet named {name!r}") from None

    # ------------------------------------------------- evaluator data source
    def resolve_sheet(self, name):
        """Return the canonical spelling of sheet ``name``, or ``None`` if it does not exist."""
        sheet = self._sheets.get(name.casefold())
        return None if sheet is None else sheet.name

    def cell_value(self, sheet, row, col):
        """Return the current value at zero-based ``(row, col)`` of ``sheet`` (``BLANK`` if empty)."""
        cell = self._sheets[sheet.casefold()].cells.get((row, col))
        return BLANK if cell is None else cell.value

    def lookup_name(self, name):
        """Return the reference defined name ``name`` stands for, ``#REF!`` if its cells were deleted, or ``None``."""
        return self._names.get(name.upper())

    # ------------------------------------------------------------- addresses
    def _locate(self, address, sheet=None):
        """Resolve an A1 cell address to ``(Sheet, row, col)``.

        Raises:
            AddressError: if ``address`` is not a single-cell reference.
            UnknownSheetError: if its sheet does not exist.
        """
        ref = parse_reference(address)
        if not isinstance(ref, CellRef):
            raise AddressError(f"expected a single cell, got {address!r}")
        return self._sheet(ref.sheet or sheet), ref.row, ref.col

    def _key_text(self, key):
        """Render a cell key as ``Sheet!A1`` (a removed sheet shows its case-folded name)."""
        sheet = self._sheets.get(key[0])
        sheet_name = sheet.name if sheet is not None else key[0]
        return format_sheet_name(sheet_name) + "!" + a1(key[1], key[2])

    # -------------------------------------------------------------- contents
    def set_cell(self, address, content, sheet=None):
        """Set a cell's content and recalculate everything that depends on it.

        ``content`` may be a formula string starting with ``=``, other text
        (interpreted with :func:`~sheetcalc.values.parse_literal`), a number,
        a bool, or ``None`` to clear the cell.  The number format is kept.

        Raises:
            FormulaSyntaxError: if the formula does not parse (the cell is
                left unchanged).
            WorkbookError: for content of an unsupported type.
        """
        target, row, col = self._locate(address, sheet)
        self._store(target, row, col, content)
        self._recalculate([(target.name.casefold(), row, col)])

    def set_cells(self, contents, sheet=None):
        """Set many cells from a ``{address: content}`` mapping, recalculating once."""
        changed = []
        for address, content in contents.items():
            target, row, col = self._locate(address, sheet)
            self._store(target, row, col, content)
            changed.append((target.name.casefold(), row, col))
        self._recalculate(changed)

    def clear_cell(self, address, sheet=None):
        """Remove a cell's content and number format."""
        target, row, col = self._locate(address, sheet)
        key = (target.name.casefold(), row, col)
        self._graph.remove(key)
        target.cells.pop((row, col), None)
        self._recalculate([key])

    def _store(self, sheet, row, col, content):
        """Write ``content`` into a cell and update its dependency edges (no recalculation)."""
        formula = None
        if isinstance(content, str) and content.startswith("=") and len(content) > 1:
            formula = parse_formula(content)
            value = BLANK
        elif isinstance(content, str):
            value = parse_literal(content)
        elif content is None:
            value = BLANK
        elif isinstance(content, bool) or is_number(content):
            value = content if isinstance(content, bool) else float(content)
        else:
            raise WorkbookError(f"unsupported cell content {content!r}")
        cell = sheet.cells.get((row, col))
        if cell is None:
            cell = sheet.cells[(row, col)] = Cell()
        cell.formula, cell.value = formula, value
        self._update_edges(sheet.name, row, col, formula)

    def _update_edges(self, sheet_name, row, col, formula):
        """Record which cells and names the formula at ``(row, col)`` reads."""
        key = (sheet_name.casefold(), row, col)
        if formula is None:
            self._graph.remove(key)
            return
        self._graph.set_precedents(key, self._formula_precedents(formula, sheet_name))

    @staticmethod
    def _reference_keys(ref, sheet_name):
        """Return the graph keys of every cell ``ref`` covers (unqualified refs use ``sheet_name``)."""
        target = (ref.sheet or sheet_name).casefold()
        if isinstance(ref, CellRef):
            return {(target, ref.row, ref.col)}
        return {(target, row, col) for row, col in ref.cells()}

    def _formula_precedents(self, formula, sheet_name):
        """Return the graph keys a formula written on ``sheet_name`` reads."""
        keys = {name_key(name) for name in names(formula)}
        for ref in references(formula):
            keys |= self._reference_keys(ref, sheet_name)
        return keys

    def get_value(self, address, sheet=None):
        """Return the current value of a cell (``BLANK`` when empty)."""
        target, row, col = self._locate(address, sheet)
        return self.cell_value(target.name, row, col)

    def get_formula(self, address, sheet=None):
        """Return the canonical formula text (with ``=``) of a cell, or ``None`` for constants."""
        target, row, col = self._locate(address, sheet)
        cell = target.cells.get((row, col))
        if cell is None or cell.formula is None:
            return None
        return to_formula(cell.formula, with_equals=True)

    def get_input(self, address, sheet=None):
        """Return what a user would edit: the formula text, or the constant as text."""
        formula = self.get_formula(address, sheet)
        return formula if formula is not None else display_text(self.get_value(address, sheet))

    def set_format(self, address, pattern, sheet=None):
        """Attach a number-format pattern to a cell (``None`` removes it).

        Raises:
            FormatError: if the pattern is invalid.
        """
        target, row, col = self._locate(address, sheet)
        number_format = None if pattern is None else NumberFormat(pattern)
        cell = target.cells.get((row, col))
        if cell is None:
            cell = target.cells[(row, col)] = Cell()
        cell.number_format = number_format

    def get_display(self, address, sheet=None):
        """Return the cell value as displayed, using its number format if it has one."""
        target, row, col = self._locate(address, sheet)
        cell = target.cells.get((row, col))
        if cell is None:
            return ""
        if cell.number_format is None:
            return display_text(cell.value)
        return cell.number_format.format(cell.value)

    def evaluate(self, formula, sheet=None):
        """Evaluate formula text as if typed on ``sheet``, without storing it; return a scalar."""
        target = self._sheet(sheet)
        return self._evaluator.evaluate_formula(parse_formula(formula), target.name)

    def used_size(self, sheet=None):
        """Return ``(rows, columns)`` of the used block of a sheet, starting at A1."""
        return self._sheet(sheet).used_size()

    # ------------------------------------------------------------ names
    def define_name(self, name, reference, sheet=None):
        """Define (or redefine) ``name`` as a cell or range reference.

        An unqualified ``reference`` is taken to be on ``sheet`` (default:
        the first sheet).  Formulas using the name are recalculated.

        Raises:
            NameDefinitionError: if the name is not an identifier, looks like
                a cell reference, or is ``TRUE``/``FALSE``.
            AddressError: if ``reference`` is not a valid reference.
        """
        if not _NAME_RE.fullmatch(name) or looks_like_cell(name) or name.upper() in ("TRUE", "FALSE"):
            raise NameDefinitionError(f"invalid name {name!r}")
        ref = parse_reference(reference)
        ref = ref.with_sheet(ref.sheet or self._sheet(sheet).name)
        self._names[name.upper()] = ref
        key = name_key(name)
        self._graph.set_precedents(key, self._reference_keys(ref, ref.sheet))
        self._recalculate([key])

    def remove_name(self, name):
        """Forget a defined name; formulas using it show ``#NAME?``.

        Raises:
            NameDefinitionError: if the name is not defined.
        """
        if name.upper() not in self._names:
            raise NameDefinitionError(f"name {name!r} is not defined")
        del self._names[name.upper()]
        key = name_key(name)
        self._graph.remove(key)
        self._recalculate([key])

    def defined_names(self):
        """Return ``{NAME: reference text}`` for every defined name (``#REF!`` when dangling)."""
        return {
            name: ref.code if ref == REF else ref.to_a1()
            for name, ref in sorted(self._names.items())
        }

    # --------------------------------------------------------- recalculation
    def recalculate(self):
        """Recalculate every formula in the workbook."""
        keys = [
            (sheet.name.casefold(), row, col)
            for sheet in self._sheets.values()
            for (row, col), cell in sheet.cells.items()
            if cell.formula is not None
        ]
        self._recalculate(keys)

    def _recalculate(self, changed):
        """Recompute the formula cells among ``changed`` and all their dependents."""
        order, cyclic = self._graph.recalculation_plan(changed)
        for key in order:
            if len(key) != 3 or key[0] not in self._sheets:
                continue
            sheet = self._sheets[key[0]]
            cell = sheet.cells.get((key[1], key[2]))
            if cell is None or cell.formula is None:
                continue
            if key in cyclic:
                cell.value = CYCLE
            else:
                cell.value = self._evaluator.evaluate_formula(cell.formula, sheet.name)

    def _expand_through_names(self, keys, step):
        """Replace defined-name keys by the cell keys reached through them via ``step``."""
        result, stack, seen = set(), list(keys), set()
        while stack:
            key = stack.pop()
            if key in seen:
                continue
            seen.add(key)
            if len(key) == 2:
                stack.extend(step(key))
            else:
                result.add(key)
        return result

    def precedents(self, address, sheet=None):
        """Return the cells a formula cell reads directly, as sorted ``Sheet!A1`` strings.

        Cells reached through defined names are included, the names are not.
        """
        target, row, col = self._locate(address, sheet)
        keys = self._graph.precedents((target.name.casefold(), row, col))
        return sorted(self._key_text(key) for key in self._expand_through_names(keys, self._graph.precedents))

    def dependents(self, address, sheet=None, transitive=False):
        """Return the formula cells that read a cell, as sorted ``Sheet!A1`` strings.

        With ``transitive=True``, indirect dependents are included too.
        """
        target, row, col = self._locate(address, sheet)
        key = (target.name.casefold(), row, col)
        if transitive:
            keys = self._graph.transitive_dependents([key])
            return sorted(self._key_text(k) for k in keys if len(k) == 3)
        keys = self._expand_through_names(self._graph.dependents(key), self._graph.dependents)
        return sorted(self._key_text(k) for k in keys)

    # ------------------------------------------------------ structural edits
    def insert_rows(self, before_row, count=1, sheet=None):
        """Insert ``count`` empty rows before 1-based row ``before_row``; references follow their cells."""
        self._restructure(sheet, ROW, before_row - 1, count, insert=True)

    def delete_rows(self, first_row, count=1, sheet=None):
        """Delete ``count`` rows starting at 1-based ``first_row``; references to them become ``#REF!``."""
        self._restructure(sheet, ROW, first_row - 1, count, insert=False)

    def insert_columns(self, before_column, count=1, sheet=None):
        """Insert ``count`` empty columns before column ``before_column`` (letters, e.g. ``"C"``)."""
        self._restructure(sheet, COLUMN, self._column_index(before_column), count, insert=True)

    def delete_columns(self, first_column, count=1, sheet=None):
        """Delete ``count`` columns starting at column ``first_column`` (letters)."""
        self._restructure(sheet, COLUMN, self._column_index(first_column), count, insert=False)

    @staticmethod
    def _column_index(letters):
        """Return the zero-based index of column ``letters``."""
        return parse_reference(letters + "1").col

    def _restructure(self, sheet, axis, index, count, insert):
        """Insert or delete lines, rewriting formulas, moving cells and names, then recalculating.

        Raises:
            WorkbookError: for a count below 1 or an index outside the grid.
        """
        limit = axis_limit(axis)
        if count < 1 or not 0 <= index < limit:
            raise WorkbookError("invalid row/column position or count")
        target = self._sheet(sheet)
        mapper = insert_mapper(index, count, limit) if insert else delete_mapper(index, count)
        for other in self._sheets.values():
            for cell in other.cells.values():
                if cell.formula is not None:
                    cell.formula = remap_formula(cell.formula, other.name, target.name, axis, mapper)
        moved = {}
        for (row, col), cell in target.cells.items():
            position = row if axis == ROW else col
            mapped = mapper(position, position)
            if mapped is not None:
                moved[(mapped[0], col) if axis == ROW else (row, mapped[0])] = cell
        target.cells = moved
        for name, ref in self._names.items():
            if ref != REF:
                new_ref = remap_reference(ref, ref.sheet, target.name, axis, mapper)
                self._names[name] = REF if new_ref is None else new_ref
        self._rebuild_graph()
        self.recalculate()

    def _rebuild_graph(self):
        """Recompute every dependency edge from the current formulas and names."""
        self._graph.clear()
        for name, ref in self._names.items():
            if ref != REF:
                self._graph.set_precedents(name_key(name), self._reference_keys(ref, ref.sheet))
        for sheet in self._sheets.values():
            for (row, col), cell in sheet.cells.items():
                self._update_edges(sheet.name, row, col, cell.formula)

    # ------------------------------------------------------------ copy/paste
    def copy_range(self, source, destination, sheet=None, dest_sheet=None):
        """Copy cells (contents and formats) so that the block's top-left lands on ``destination``.

        Formulas have their relative references shifted by the offset; a
        reference pushed off the grid becomes ``#REF!``.  Empty source cells
        clear their targets.  Overlapping source and destination are handled
        by reading the whole source first.

        Raises:
            AddressError: if part of the pasted block would fall off the grid.
        """
        ref = parse_reference(source)
        if isinstance(ref, CellRef):
            ref = RangeRef(ref.with_sheet(None), ref.with_sheet(None), ref.sheet)
        source_sheet = self._sheet(ref.sheet or sheet)
        target, dest_row, dest_col = self._locate(destination, dest_sheet or sheet)
        drow, dcol = dest_row - ref.top, dest_col - ref.left
        CellRef(ref.bottom, ref.right).shifted(drow, dcol)  # raises if the block's far corner falls off the grid
        snapshot = [(row, col, source_sheet.cells.get((row, col))) for row, col in ref.cells()]
        changed = []
        for row, col, cell in snapshot:
            new_row, new_col = row + drow, col + dcol
            if cell is None or cell.is_empty():
                target.cells.pop((new_row, new_col), None)
                formula = None
            else:
                formula = None if cell.formula is None else shift_formula(cell.formula, drow, dcol)
                target.cells[(new_row, new_col)] = Cell(cell.value, formula, cell.number_format)
            self._update_edges(target.name, new_row, new_col, formula)
            changed.append((target.name.casefold(), new_row, new_col))
        self._recalculate(changed)
