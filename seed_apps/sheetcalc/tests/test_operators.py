import pytest

from sheetcalc.errors import ErrorSignal
from sheetcalc.operators import apply_binary, apply_percent, apply_unary, arithmetic, comparison, power
from sheetcalc.values import BLANK, DIV0, NA, NUM, REF, VALUE


def raised(func, *args):
    with pytest.raises(ErrorSignal) as info:
        func(*args)
    return info.value.error


@pytest.mark.parametrize("op, left, right, expected", [
    ("+", 1, 2, 3.0), ("-", 1, "3", -2.0), ("*", True, 4, 4.0), ("/", 7, 2, 3.5), ("^", 2, 10, 1024.0),
    ("+", BLANK, BLANK, 0.0), ("-", 0.3, 0.3, 0.0),
])
def test_arithmetic_coerces_operands(op, left, right, expected):
    assert arithmetic(op, left, right) == expected


def test_arithmetic_division_by_zero_and_bad_text():
    assert raised(arithmetic, "/", 1, 0) == DIV0
    assert raised(arithmetic, "/", 1, BLANK) == DIV0
    assert raised(arithmetic, "+", "x", 1) == VALUE


def test_arithmetic_left_error_wins_over_right_error():
    assert raised(arithmetic, "+", REF, NA) == REF


@pytest.mark.parametrize("base, exponent, error", [(0, -1, DIV0), (0, 0, NUM), (-8, 1 / 3, NUM), (10.0, 400, NUM)])
def test_power_error_cases(base, exponent, error):
    assert raised(power, base, exponent) == error


def test_power_negative_base_integer_exponent():
    assert power(-2.0, 3.0) == -8.0
    assert power(4.0, 0.5) == 2.0


@pytest.mark.parametrize("op, left, right, expected", [
    ("=", "abc", "ABC", True), ("<>", 1, "1", True), ("<", 2, "a", True), (">", True, "z", True),
    ("<=", 3, 3, True), (">=", 2, 3, False), ("=", BLANK, 0, True), ("<", "", "a", True),
])
def test_comparison_uses_spreadsheet_ordering(op, left, right, expected):
    assert comparison(op, left, right) is expected


def test_comparison_propagates_errors_from_either_side():
    assert raised(comparison, "=", 1, NA) == NA
    assert raised(comparison, "=", DIV0, NA) == DIV0


def test_apply_binary_dispatches_concat_and_rejects_unknown_ops():
    assert apply_binary("&", 1.5, True) == "1.5TRUE"
    assert apply_binary("*", 2, 3) == 6.0
    assert apply_binary(">", 2, 3) is False
    with pytest.raises(ValueError):
        apply_binary("$", 1, 2)


def test_apply_unary_negates_and_plus_is_identity():
    assert apply_unary("-", "4") == -4.0
    assert apply_unary("-", 0) == 0.0
    assert apply_unary("+", "text") == "text"
    assert raised(apply_unary, "+", NA) == NA


def test_apply_percent_divides_by_hundred():
    assert apply_percent(50) == 0.5
    assert raised(apply_percent, "x") == VALUE
