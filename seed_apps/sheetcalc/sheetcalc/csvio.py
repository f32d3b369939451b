"""CSV import and export.

The parser is a small state machine following RFC 4180: fields may be
wrapped in double quotes, a doubled quote inside a quoted field stands for one
quote, and quoted fields may contain delimiters and line breaks.  ``\\n``,
``\\r\\n`` and ``\\r`` all end a record.
"""

from .addressing import CellRef, a1, parse_reference
from .errors import AddressError, CsvError
from .values import display_text

_FIELD_START, _UNQUOTED, _QUOTED, _QUOTE_IN_QUOTED = range(4)


def parse_csv(text, delimiter=","):
    """Parse CSV ``text`` into a list of rows, each a list of field strings.

    A final line break does not start an extra row; an empty line gives a
    row with one empty field; empty input gives ``[]``.

    Raises:
        CsvError: for a quote inside an unquoted field, text after a closing
            quote, or an unterminated quoted field (the message names the
            1-based line).
    """
    rows, row, field = [], [], []
    state = _FIELD_START
    line = 1
    index = 0
    while index < len(text):
        char = text[index]
        index += 1
        if state == _QUOTED:
            if char == '"':
                state = _QUOTE_IN_QUOTED
            else:
                line += char == "\n"
                field.append(char)
            continue
        if state == _QUOTE_IN_QUOTED and char == '"':
            field.append('"')
            state = _QUOTED
            continue
        if char == delimiter:
            row.append("".join(field))
            field, state = [], _FIELD_START
        elif char in "\r\n":
            if char == "\r" and text.startswith("\n", index):
                index += 1
            row.append("".join(field))
            rows.append(row)
            row, field, state = [], [], _FIELD_START
            line += 1
        elif state == _QUOTE_IN_QUOTED:
            raise CsvError(f"unexpected character after closing quote on line {line}")
        elif char == '"':
            if state != _FIELD_START:
                raise CsvError(f"stray quote in unquoted field on line {line}")
            state = _QUOTED
        else:
            field.append(char)
            state = _UNQUOTED
    if state == _QUOTED:
        raise CsvError(f"unterminated quoted field on line {line}")
    if field or row or state != _FIELD_START:
        row.append("".join(field))
        rows.append(row)
    return rows


def quote_field(field, delimiter=","):
    """Return ``field`` quoted for CSV if needed.

    Fields containing the delimiter, a quote, a line break, or leading or
    trailing spaces are wrapped in quotes with inner quotes doubled.
    """
    needs_quotes = (delimiter in field or '"' in field or "\n" in field or "\r" in field
                    or field != field.strip(" "))
    if not needs_quotes:
        return field
    return '"' + field.replace('"', '""') + '"'


def format_csv(rows, delimiter=",", line_end="\n"):
    """Render rows of strings as CSV text; every record, including the last, ends with ``line_end``."""
    return "".join(delimiter.join(quote_field(field, delimiter) for field in row) + line_end for row in rows)


def import_csv(workbook, text, sheet=None, origin="A1", delimiter=",", formulas=False):
    """Load CSV ``text`` into ``workbook`` with the first field at ``origin``.

    Fields are interpreted like typed input (numbers, booleans, error codes,
    text); empty fields clear their cell.  Fields starting with ``=`` become
    formulas only when ``formulas`` is true, otherwise they are stored as text.
    Returns ``(rows, columns)`` of the imported block.

    Raises:
        CsvError: for malformed CSV.
        AddressError: if ``origin`` is not a single cell.
    """
    start = parse_reference(origin)
    if not isinstance(start, CellRef):
        raise AddressError(f"origin must be a single cell, got {origin!r}")
    rows = parse_csv(text, delimiter)
    contents = {}
    for row_offset, row in enumerate(rows):
        for col_offset, field in enumerate(row):
            address = a1(start.row + row_offset, start.col + col_offset)
            if field.startswith("=") and not formulas:
                field = "'" + field
            contents[address] = field if field else None
    workbook.set_cells(contents, sheet=start.sheet or sheet)
    return len(rows), max((len(row) for row in rows), default=0)


def export_csv(workbook, sheet=None, delimiter=",", formulas=False, formatted=False):
    """Export the used block of a sheet (from A1) as CSV text.

    Each cell is written as its displayed value (errors as their code), as
    its formula text when ``formulas`` is true and the cell has one, or with
    its number format applied when ``formatted`` is true.
    """
    height, width = workbook.used_size(sheet)
    rows = []
    for row in range(height):
        fields = []
        for col in range(width):
            address = a1(row, col)
            formula = workbook.get_formula(address, sheet) if formulas else None
            if formula is not None:
                fields.append(formula)
            elif formatted:
                fields.append(workbook.get_display(address, sheet))
            else:
                fields.append(display_text(workbook.get_value(address, sheet)))
        rows.append(fields)
    return format_csv(rows, delimiter)


def load_csv_file(workbook, path, **options):
    """Read a UTF-8 CSV file and import it with :func:`import_csv`; return its result."""
    with open(path, encoding="utf-8", newline="") as handle:
        return import_csv(workbook, handle.read(), **options)


def save_csv_file(workbook, path, **options):
    """Export with :func:`export_csv` and write the text to ``path`` as UTF-8."""
    with open(path, "w", encoding="utf-8", newline="") as handle:
        handle.write(export_csv(workbook, **options))
