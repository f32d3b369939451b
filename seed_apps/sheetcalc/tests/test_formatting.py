import pytest

from sheetcalc.errors import FormatError
from sheetcalc.formatting import NumberFormat, format_value, group_thousands
from sheetcalc.values import BLANK, NA


@pytest.mark.parametrize("pattern, value, expected", [
    ("General", 1234.5, "1234.5"),
    ("", 3.0, "3"),
    ("0", 2.5, "3"),
    ("0", -2.5, "-3"),
    ("0.00", 3.14159, "3.14"),
    ("0.00", 2.675, "2.68"),
    ("#,##0", 1234567.8, "1,234,568"),
    ("#,##0.00", -1234.5, "-1,234.50"),
    ("#,##0", 12, "12"),
    ("#.##", 5.0, "5."),
    ("#.##", 0.5, ".5"),
    ("0.0#", 1.5, "1.5"),
    ("0.0#", 1.567, "1.57"),
    ("000", 7, "007"),
    ("0%", 0.256, "26%"),
    ("0.0%", 0.1234, "12.3%"),
    ("$#,##0.00", 1234.5, "$1,234.50"),
    ("$#,##0.00", -5, "-$5.00"),
    ('0.0 "kg"', 12.34, "12.3 kg"),
    ("0\\x", 4, "4x"),
    ("0.00E+00", 12345, "1.23E+04"),
    ("0.00E+00", 0.00012345, "1.23E-04"),
    ("0.0E-0", 12345, "1.2E4"),
    ("0.00E+00", 9.999, "1.00E+01"),
    ("0.00E+00", 0, "0.00E+00"),
    ("0", -0.2, "0"),
    ('"N/A"', 5, "N/A"),
])
def test_number_formats(pattern, value, expected):
    assert format_value(value, pattern) == expected


@pytest.mark.parametrize("value, expected", [(5, "5.00"), (-5, "(5.00)"), (0, "zero")])
def test_sections_for_positive_negative_zero(value, expected):
    assert format_value(value, '0.00;(0.00);"zero"') == expected


def test_two_sections_use_first_for_zero_and_second_for_negatives():
    assert format_value(0, "0.0;(0.0)") == "0.0"
    assert format_value(-2, "0.0;(0.0)") == "(2.0)"


def test_semicolon_inside_quotes_or_escaped_does_not_split_sections():
    assert len(NumberFormat('0" ; "').sections) == 1
    assert format_value(3, '0" ; "') == "3 ; "
    assert format_value(-3, "0\\;;0") == "3"
    assert format_value(3, "0\\;;0") == "3;"


@pytest.mark.parametrize("pattern, serial, expected", [
    ("yyyy-mm-dd", 45000, "2023-03-15"),
    ("dd/mm/yy", 45000, "15/03/23"),
    ("d mmm yyyy", 45000, "15 Mar 2023"),
    ("dddd, mmmm d", 45000, "Wednesday, March 15"),
    ("ddd", 45001, "Thu"),
    ("m/d/yyyy", 45000, "3/15/2023"),
    ("hh:mm", 45000.75, "18:00"),
    ("h:mm:ss", 0.5 + 65 / 86400, "12:01:05"),
    ("mm:ss", 125 / 86400, "02:05"),
    ("yyyy-mm-dd hh:mm", 45000.5, "2023-03-15 12:00"),
    ('yyyy "Q"', 45000, "2023 Q"),
])
def test_date_formats(pattern, serial, expected):
    assert format_value(serial, pattern) == expected


@pytest.mark.parametrize("pattern, value", [("yyyy", -1), ("yyyy", 3e6)])
def test_date_format_out_of_range(pattern, value):
    with pytest.raises(FormatError):
        format_value(value, pattern)


@pytest.mark.parametrize("pattern", [
    '0"', "0\\", "0;0;0;0", "0.0.0", "0 a", '0 "x" 0', "0E+", "0.0E+#", ".0.",
])
def test_invalid_patterns_raise_format_error(pattern):
    with pytest.raises(FormatError):
        NumberFormat(pattern)


def test_non_numbers_pass_through_formatting():
    fmt = NumberFormat("0.00")
    assert fmt.format("text") == "text"
    assert fmt.format(True) == "TRUE"
    assert fmt.format(False) == "FALSE"
    assert fmt.format(BLANK) == ""
    assert fmt.format(NA) == "#N/A"


@pytest.mark.parametrize("digits, expected", [("1", "1"), ("123", "123"), ("1234", "1,234"), ("1234567", "1,234,567"), ("", "")])
def test_group_thousands(digits, expected):
    assert group_thousands(digits) == expected
