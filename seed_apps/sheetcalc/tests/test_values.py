import pytest

from sheetcalc.errors import ErrorSignal
from sheetcalc.values import (
    BLANK, DIV0, NA, NUM, VALUE, ErrorValue, Grid, compare, display_text, format_general, is_error, is_number,
    normalize_number, parse_literal, parse_number_text, to_bool, to_number, to_text,
)


def test_blank_is_falsy_singleton_with_readable_repr():
    assert not BLANK
    assert repr(BLANK) == "BLANK"


def test_error_value_str_is_its_code():
    assert str(DIV0) == "#DIV/0!"
    assert ErrorValue("#N/A") == NA


def test_grid_shape_access_and_equality():
    grid = Grid([[1, 2, 3], [4, 5, 6]])
    assert (grid.height, grid.width) == (2, 3)
    assert grid.at(1, 0) == 4
    assert grid.values() == [1, 2, 3, 4, 5, 6]
    assert grid.column(2) == [3, 6]
    assert grid == Grid([(1, 2, 3), (4, 5, 6)])
    assert grid != [[1, 2, 3], [4, 5, 6]]
    assert repr(Grid([[1]])) == "Grid([[1]])"


@pytest.mark.parametrize("rows", [[], [[]], [[1, 2], [3]]])
def test_grid_rejects_empty_or_ragged_rows(rows):
    with pytest.raises(ValueError):
        Grid(rows)


def test_is_number_excludes_booleans_and_is_error_detects_errors():
    assert is_number(3) and is_number(2.5)
    assert not is_number(True)
    assert is_error(NA) and not is_error("#N/A")


def test_normalize_number_removes_negative_zero_and_rejects_infinity():
    assert str(normalize_number(-0.0)) == "0.0"
    assert normalize_number(3) == 3.0
    with pytest.raises(ErrorSignal) as info:
        normalize_number(float("inf"))
    assert info.value.error == NUM


@pytest.mark.parametrize("text, expected", [
    ("42", 42.0), (" 1.5 ", 1.5), ("-3", -3.0), ("1e3", 1000.0), (".5", 0.5), ("50%", 0.5), ("12 %", 0.12),
    ("abc", None), ("", None), ("inf", None), ("1,000", None), ("1.2.3", None),
])
def test_parse_number_text(text, expected):
    assert parse_number_text(text) == expected


@pytest.mark.parametrize("value, expected", [(True, 1.0), (False, 0.0), (7, 7.0), (BLANK, 0.0), ("2.5", 2.5)])
def test_to_number_coercions(value, expected):
    assert to_number(value) == expected


def test_to_number_raises_value_for_text_and_passes_errors():
    with pytest.raises(ErrorSignal) as info:
        to_number("apple")
    assert info.value.error == VALUE
    with pytest.raises(ErrorSignal) as info:
        to_number(DIV0)
    assert info.value.error == DIV0


@pytest.mark.parametrize("number, expected", [
    (3.0, "3"), (-12.0, "-12"), (0.1 + 0.2, "0.3"), (1e20, "1E+20"), (1.5e-7, "1.5E-07"), (2.5, "2.5"),
    (123456789012345678.0, "1.23456789012346E+17"),
])
def test_format_general(number, expected):
    assert format_general(number) == expected


def test_to_text_coercions_and_error_propagation():
    assert to_text(True) == "TRUE"
    assert to_text(4.0) == "4"
    assert to_text(BLANK) == ""
    assert to_text("x") == "x"
    with pytest.raises(ErrorSignal):
        to_text(NA)


def test_to_bool_coercions():
    assert to_bool(2) is True
    assert to_bool(0.0) is False
    assert to_bool(BLANK) is False
    assert to_bool(" true ") is True
    assert to_bool("False") is False
    assert to_bool(True) is True


@pytest.mark.parametrize("bad, error", [("yes", VALUE), (NA, NA)])
def test_to_bool_rejects_other_text_and_errors(bad, error):
    with pytest.raises(ErrorSignal) as info:
        to_bool(bad)
    assert info.value.error == error


def test_display_text_shows_error_codes():
    assert display_text(DIV0) == "#DIV/0!"
    assert display_text(1.25) == "1.25"


@pytest.mark.parametrize("left, right, expected", [
    (1, 2, -1), (2, 2.0, 0), ("apple", "Banana", -1), ("ABC", "abc", 0), (5, "a", -1), ("z", True, -1),
    (False, True, -1), (True, 1, 1), (BLANK, 0, 0), (BLANK, "", 0), (BLANK, False, 0), ("a", BLANK, 1),
    (BLANK, BLANK, 0), (-1, BLANK, -1),
])
def test_compare_orders_numbers_text_booleans(left, right, expected):
    assert compare(left, right) == expected


@pytest.mark.parametrize("text, expected", [
    ("", BLANK), ("TRUE", True), ("false", False), ("12.5", 12.5), ("10%", 0.1), ("#N/A", NA),
    ("'007", "007"), ("hello", "hello"), ("#div/0!", DIV0),
])
def test_parse_literal_interprets_user_input(text, expected):
    assert parse_literal(text) == expected
