import pytest

from sheetcalc.values import DIV0, NA, VALUE


def test_if_picks_branch_and_defaults_to_false(calc):
    assert calc('=IF(A1>10, "big", "small")', A1=11) == "big"
    assert calc('=IF(A1>10, "big", "small")', A1=3) == "small"
    assert calc('=IF(A1>10, "big")', A1=3) is False


def test_if_is_lazy_about_the_unused_branch(calc):
    assert calc("=IF(TRUE, 1, 1/0)") == 1.0
    assert calc("=IF(FALSE, 1/0, 2)") == 2.0


def test_if_condition_errors_and_text_conditions(calc):
    assert calc("=IF(1/0, 1, 2)") == DIV0
    assert calc('=IF("maybe", 1, 2)') == VALUE
    assert calc('=IF("true", 1, 2)') == 1.0


def test_iferror_replaces_any_error(calc):
    assert calc('=IFERROR(1/0, "oops")') == "oops"
    assert calc('=IFERROR(A1, "oops")', A1="=NA()") == "oops"
    assert calc('=IFERROR(A1*2, "oops")', A1=4) == 8.0


def test_ifna_replaces_only_na(calc):
    assert calc("=IFNA(NA(), 0)") == 0.0
    assert calc("=IFNA(1/0, 0)") == DIV0
    assert calc("=IFNA(A1, 0)", A1=7) == 7.0


def test_choose_selects_by_index(calc):
    assert calc('=CHOOSE(2, "a", "b", "c")') == "b"
    assert calc('=CHOOSE(2.9, "a", "b", "c")') == "b"
    assert calc('=CHOOSE(4, "a", "b", "c")') == VALUE
    assert calc('=CHOOSE(0, "a")') == VALUE


def test_and_or_xor_over_ranges_skip_text_and_blanks(calc):
    cells = dict(A1=True, A2="text", A3=1, A4=None)
    assert calc("=AND(A1:A4)", **cells) is True
    assert calc("=OR(A1:A4, FALSE)", **cells) is True
    assert calc("=XOR(A1:A4)", **cells) is False
    assert calc("=XOR(TRUE, FALSE, FALSE)") is True
    assert calc("=AND(TRUE, 0)") is False
    assert calc("=OR(0, FALSE)") is False


def test_logical_functions_error_cases(calc):
    assert calc("=AND(A1:A2)", A1="x") == VALUE
    assert calc('=OR("maybe")') == VALUE
    assert calc("=AND(TRUE, #N/A)") == NA


def test_not_negates(calc):
    assert calc("=NOT(0)") is True
    assert calc("=NOT(A1)", A1=True) is False


@pytest.mark.parametrize("formula, expected", [
    ("=ISBLANK(A1)", True), ("=ISBLANK(A2)", False), ("=ISBLANK(A3)", False), ("=ISNUMBER(A3)", True),
    ("=ISNUMBER(A4)", False), ("=ISTEXT(A4)", True), ("=ISTEXT(A3)", False), ("=ISERROR(A5)", True),
    ("=ISERROR(A3)", False), ("=ISNA(A5)", False), ("=ISNA(NA())", True), ("=ISERROR(A1:A2)", True),
    ("=ISBLANK(A1:A2)", False),
])
def test_information_functions(calc, formula, expected):
    cells = dict(A2='=""', A3=3, A4="'3", A5="=1/0")
    assert calc(formula, **cells) is expected


def test_na_returns_na_error(calc):
    assert calc("=NA()") == NA
