import pytest

from sheetcalc.addressing import (
    MAX_COLS, CellRef, RangeRef, a1, column_to_index, format_sheet_name, index_to_column, looks_like_cell,
    make_range, parse_cell, parse_reference, split_sheet, check_coordinates,
)
from sheetcalc.errors import AddressError


@pytest.mark.parametrize("letters, index", [("A", 0), ("Z", 25), ("AA", 26), ("AZ", 51), ("BA", 52), ("zz", 701), ("XFD", 16383)])
def test_column_letters_convert_to_zero_based_index(letters, index):
    assert column_to_index(letters) == index


@pytest.mark.parametrize("index, letters", [(0, "A"), (25, "Z"), (26, "AA"), (701, "ZZ"), (702, "AAA"), (16383, "XFD")])
def test_index_converts_to_column_letters(index, letters):
    assert index_to_column(index) == letters


@pytest.mark.parametrize("bad", ["", "A1", "XFE", "É"])
def test_column_to_index_rejects_invalid_letters(bad):
    with pytest.raises(AddressError):
        column_to_index(bad)


@pytest.mark.parametrize("bad", [-1, MAX_COLS])
def test_index_to_column_rejects_out_of_grid(bad):
    with pytest.raises(AddressError):
        index_to_column(bad)


def test_check_coordinates_rejects_negative_row():
    with pytest.raises(AddressError):
        check_coordinates(-1, 0)
    check_coordinates(0, 0)


def test_parse_cell_reads_absolute_markers():
    assert parse_cell("$B$12") == CellRef(11, 1, row_abs=True, col_abs=True)
    assert parse_cell("c$3") == CellRef(2, 2, row_abs=True, col_abs=False)
    assert parse_cell("$D4") == CellRef(3, 3, row_abs=False, col_abs=True)


@pytest.mark.parametrize("bad", ["A0", "1A", "A", "$$A1", "A1B"])
def test_parse_cell_rejects_malformed_text(bad):
    with pytest.raises(AddressError):
        parse_cell(bad)


def test_cell_ref_to_a1_renders_markers_and_quoted_sheet():
    assert CellRef(2, 27, True, False).to_a1() == "AB$3"
    assert CellRef(0, 0, sheet="My Sheet").to_a1() == "'My Sheet'!A1"
    assert CellRef(0, 0, sheet="Data").to_a1(include_sheet=False) == "A1"


def test_cell_ref_shift_moves_only_relative_parts():
    ref = parse_cell("$A2")
    assert ref.shifted(3, 5) == CellRef(4, 0, False, True)
    assert parse_cell("B$2").shifted(3, 1).to_a1() == "C$2"


def test_cell_ref_shift_off_grid_raises():
    with pytest.raises(AddressError):
        parse_cell("A1").shifted(-1, 0)


@pytest.mark.parametrize("name, expected", [
    ("Sheet1", "Sheet1"), ("My Sheet", "'My Sheet'"), ("It's", "'It''s'"), ("2024", "'2024'"), ("AB12", "'AB12'"),
])
def test_format_sheet_name_quotes_when_needed(name, expected):
    assert format_sheet_name(name) == expected


def test_split_sheet_handles_plain_and_quoted_names():
    assert split_sheet("Data!B3") == ("Data", "B3")
    assert split_sheet("'It''s here'!C4:D5") == ("It's here", "C4:D5")
    assert split_sheet("B3") == (None, "B3")


@pytest.mark.parametrize("bad", ["'Open!A1", "'Name'A1", "''!A1", "!A1"])
def test_split_sheet_rejects_malformed_qualifiers(bad):
    with pytest.raises(AddressError):
        split_sheet(bad)


def test_make_range_normalises_reversed_corners_keeping_flags():
    rng = make_range(parse_cell("$C$5"), parse_cell("A2"), "S")
    assert rng.to_a1() == "S!A2:$C$5"
    assert (rng.top, rng.left, rng.bottom, rng.right) == (1, 0, 4, 2)


def test_range_geometry_and_cells_in_row_major_order():
    rng = parse_reference("B2:C3")
    assert (rng.height, rng.width) == (2, 2)
    assert list(rng.cells()) == [(1, 1), (1, 2), (2, 1), (2, 2)]
    assert rng.contains(2, 2) and not rng.contains(0, 1) and not rng.contains(1, 3)


def test_parse_reference_returns_sheet_qualified_range():
    rng = parse_reference("Sheet2!B3:C9")
    assert isinstance(rng, RangeRef)
    assert rng.sheet == "Sheet2"
    assert rng.to_a1() == "Sheet2!B3:C9"
    assert rng.with_sheet(None).to_a1() == "B3:C9"


def test_parse_reference_returns_cell_with_sheet():
    assert parse_reference(" Data!$A$1 ") == CellRef(0, 0, True, True, "Data")


def test_looks_like_cell_and_a1_helper():
    assert looks_like_cell("XFD1048576") is True
    assert looks_like_cell("XFD1048577") is False
    assert looks_like_cell("Total") is False
    assert a1(9, 27) == "AB10"
