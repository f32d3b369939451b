import pytest

from sheetcalc.addressing import MAX_ROWS, parse_reference
from sheetcalc.parser import parse_formula
from sheetcalc.printer import to_formula
from sheetcalc.rewrite import (
    COLUMN, ROW, axis_limit, delete_mapper, insert_mapper, remap_formula, remap_reference, shift_formula,
)


def shifted(text, drow, dcol):
    return to_formula(shift_formula(parse_formula(text), drow, dcol))


@pytest.mark.parametrize("text, drow, dcol, expected", [
    ("A1+B2", 1, 1, "B2+C3"),
    ("$A$1+A$1+$A1", 2, 3, "$A$1+D$1+$A3"),
    ("SUM(A1:B2)", 3, 0, "SUM(A4:B5)"),
    ("SUM($A$1:A2)", 2, 0, "SUM($A$1:A4)"),
    ("Data!C3*2", -1, -1, "Data!B2*2"),
    ("A2-1", -1, 0, "A1-1"),
    ("A1+1", -1, 0, "#REF!+1"),
    ("SUM(A1:B2)", 0, -1, "SUM(#REF!)"),
    ("SUM(A$5:A6)", -3, 0, "SUM(A3:A$5)"),
])
def test_shift_formula_moves_relative_references(text, drow, dcol, expected):
    assert shifted(text, drow, dcol) == expected


def test_axis_limit():
    assert axis_limit(ROW) == MAX_ROWS
    assert axis_limit(COLUMN) == 16384


@pytest.mark.parametrize("low, high, expected", [
    (0, 1, (0, 1)), (2, 2, (4, 4)), (1, 3, (1, 5)), (5, 9, (7, 11)),
])
def test_insert_mapper_moves_and_grows(low, high, expected):
    assert insert_mapper(2, 2, 100)(low, high) == expected


def test_insert_mapper_drops_intervals_pushed_off_the_grid():
    assert insert_mapper(0, 5, 10)(3, 6) is None


@pytest.mark.parametrize("low, high, expected", [
    (0, 1, (0, 1)), (2, 4, None), (3, 3, None), (5, 8, (2, 5)), (1, 3, (1, 1)), (3, 7, (2, 4)), (0, 9, (0, 6)),
])
def test_delete_mapper_shrinks_and_removes(low, high, expected):
    assert delete_mapper(2, 3)(low, high) == expected


def test_remap_reference_ignores_other_sheets():
    ref = parse_reference("Data!A5")
    assert remap_reference(ref, "Sheet1", "Sheet1", ROW, insert_mapper(0, 1, MAX_ROWS)) is ref


def test_remap_reference_matches_sheet_case_insensitively():
    ref = parse_reference("data!A5")
    assert remap_reference(ref, "Sheet1", "Data", ROW, insert_mapper(0, 1, MAX_ROWS)).to_a1() == "data!A6"


def test_remap_reference_on_columns_for_ranges():
    ref = parse_reference("$B1:D4")
    assert remap_reference(ref, "S", "S", COLUMN, delete_mapper(2, 1)).to_a1() == "$B1:C4"
    assert remap_reference(ref, "S", "S", COLUMN, delete_mapper(1, 3)) is None


@pytest.mark.parametrize("text, expected", [
    ("A1+A3", "A1+A5"),
    ("SUM(A1:A4)", "SUM(A1:A6)"),
    ("$A$3*2", "$A$5*2"),
    ("Other!A3+A2", "Other!A3+A2"),
])
def test_remap_formula_for_row_insertion(text, expected):
    tree = remap_formula(parse_formula(text), "S", "S", ROW, insert_mapper(2, 2, MAX_ROWS))
    assert to_formula(tree) == expected


@pytest.mark.parametrize("text, expected", [
    ("A1+A3", "A1+#REF!"),
    ("SUM(A2:A3)", "SUM(#REF!)"),
    ("SUM(A1:A5)", "SUM(A1:A3)"),
    ("A5*2", "A3*2"),
])
def test_remap_formula_for_row_deletion(text, expected):
    tree = remap_formula(parse_formula(text), "S", "S", ROW, delete_mapper(1, 2))
    assert to_formula(tree) == expected
