import pytest

from sheetcalc.values import DIV0, NA, VALUE


def test_concat_joins_ranges_and_formats_numbers(calc):
    assert calc('=CONCAT(A1:B1, "-", 2.50, TRUE)', A1="x", B1=1) == "x1-2.5TRUE"


def test_concat_propagates_errors(calc):
    assert calc("=CONCAT(A1:A2)", A1="a", A2="=NA()") == NA


def test_concatenate_requires_scalars(calc):
    assert calc('=CONCATENATE("a", A1, 3)', A1="b") == "ab3"
    assert calc('=CONCATENATE(A1:A2)', A1="a") == VALUE


def test_textjoin_with_and_without_ignoring_empties(calc):
    cells = dict(A1="a", A2=None, A3="c")
    assert calc('=TEXTJOIN("-", TRUE, A1:A3, "")', **cells) == "a-c"
    assert calc('=TEXTJOIN("-", FALSE, A1:A3)', **cells) == "a--c"


@pytest.mark.parametrize("formula, expected", [
    ('=LEFT("spreadsheet")', "s"), ('=LEFT("spreadsheet", 6)', "spread"), ('=LEFT("ab", 5)', "ab"),
    ('=RIGHT("spreadsheet", 5)', "sheet"), ('=RIGHT("abc")', "c"), ('=RIGHT("abc", 0)', ""), ('=RIGHT("ab", 9)', "ab"),
    ('=MID("spreadsheet", 7, 3)', "she"), ('=MID("abc", 5, 2)', ""), ('=LEN("héllo")', 5.0), ("=LEN(12.50)", 4.0),
    ('=UPPER("MiXed")', "MIXED"), ('=LOWER("MiXed")', "mixed"), ('=TRIM("  a   b  c ")', "a b c"),
    ('=REPT("ab", 3)', "ababab"), ('=EXACT("Abc", "abc")', False), ('=EXACT(1, "1")', True),
])
def test_basic_text_functions(calc, formula, expected):
    assert calc(formula) == expected


@pytest.mark.parametrize("formula", ['=LEFT("abc", -1)', '=MID("abc", 0, 1)', '=MID("abc", 1, -1)', '=REPT("a", -2)'])
def test_text_functions_reject_negative_counts_and_bad_starts(calc, formula):
    assert calc(formula) == VALUE


@pytest.mark.parametrize("formula, expected", [
    ('=SUBSTITUTE("a-b-c", "-", "+")', "a+b+c"),
    ('=SUBSTITUTE("a-b-c", "-", "+", 2)', "a-b+c"),
    ('=SUBSTITUTE("a-b-c", "-", "+", 3)', "a-b-c"),
    ('=SUBSTITUTE("abc", "", "x")', "abc"),
    ('=SUBSTITUTE("aaa", "aa", "b", 2)', "ab"),
])
def test_substitute(calc, formula, expected):
    assert calc(formula) == expected


def test_substitute_instance_below_one_is_error(calc):
    assert calc('=SUBSTITUTE("abc", "a", "b", 0)') == VALUE


@pytest.mark.parametrize("formula, expected", [
    ('=FIND("b", "abcb")', 2.0), ('=FIND("b", "abcb", 3)', 4.0), ('=FIND("B", "abcb")', VALUE),
    ('=FIND("", "abc")', 1.0), ('=FIND("a", "abc", 5)', VALUE), ('=FIND("a", "abc", 0)', VALUE),
    ('=SEARCH("B", "abcb")', 2.0), ('=SEARCH("b", "abcb", 3)', 4.0), ('=SEARCH("c?d", "abcXd")', 3.0),
    ('=SEARCH("*d", "abcd")', 1.0), ('=SEARCH("x*z", "abc")', VALUE), ('=SEARCH("q", "abc")', VALUE),
    ('=SEARCH("b?", "ab")', VALUE),
])
def test_find_and_search(calc, formula, expected):
    assert calc(formula) == expected


@pytest.mark.parametrize("formula, expected", [
    ('=VALUE("12.5")', 12.5), ('=VALUE(" 30% ")', 0.3), ("=VALUE(4)", 4.0), ("=VALUE(A1)", 0.0),
    ('=VALUE("abc")', VALUE), ("=VALUE(TRUE)", VALUE), ("=VALUE(1/0)", DIV0),
])
def test_value_function(calc, formula, expected):
    assert calc(formula) == expected


def test_text_function_formats_and_reports_bad_patterns(calc):
    assert calc('=TEXT(1234.5, "#,##0.00")') == "1,234.50"
    assert calc('=TEXT(0.256, "0%")') == "26%"
    assert calc('=TEXT("abc", "0.00")') == "abc"
    assert calc('=TEXT(1, "0;0;0;0")') == VALUE
    assert calc('=TEXT(NA(), "0")') == NA
