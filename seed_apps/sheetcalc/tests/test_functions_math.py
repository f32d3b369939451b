import pytest

from sheetcalc.values import DIV0, NA, NUM, VALUE

NUMBERS = dict(A1=1, A2=2, A3="'3", A4=True, A5=None, A6=4)


def test_sum_counts_only_numbers_from_references(calc):
    assert calc("=SUM(A1:A6)", **NUMBERS) == 7.0


def test_sum_coerces_typed_in_arguments(calc):
    assert calc('=SUM("3", TRUE, 2)') == 6.0


def test_sum_rejects_non_numeric_typed_text(calc):
    assert calc('=SUM(1, "x")') == VALUE


def test_sum_propagates_errors_inside_ranges(calc):
    assert calc("=SUM(A1:A2)", A1=1, A2="=1/0") == DIV0


def test_sum_single_cell_reference_ignores_text(calc):
    assert calc("=SUM(A1, 5)", A1="'12") == 5.0


def test_product_and_empty_product(calc):
    assert calc("=PRODUCT(A1:A6)", **NUMBERS) == 8.0
    assert calc("=PRODUCT(A1)", A1="x") == 0.0


def test_min_max_with_and_without_numbers(calc):
    assert calc("=MIN(A1:A6, 0.5)", **NUMBERS) == 0.5
    assert calc("=MAX(A1:A6)", **NUMBERS) == 4.0
    assert calc("=MIN(A1)", A1="x") == 0.0
    assert calc("=MAX(A1)", A1="x") == 0.0


def test_average_and_average_of_nothing(calc):
    assert calc("=AVERAGE(A1:A6)", **NUMBERS) == pytest.approx(7 / 3)
    assert calc("=AVERAGE(A1)", A1="x") == DIV0


def test_median_odd_even_and_empty(calc):
    assert calc("=MEDIAN(5, 1, 3)") == 3.0
    assert calc("=MEDIAN(4, 1, 3, 2)") == 2.5
    assert calc("=MEDIAN(A1)", A1="x") == NUM


def test_count_rules_for_references_and_literals(calc):
    assert calc("=COUNT(A1:A6)", **NUMBERS) == 3.0
    assert calc('=COUNT(1, "2", TRUE, "x", #N/A)') == 3.0
    assert calc("=COUNT(A1:A2)", A1="=1/0", A2=5) == 1.0


def test_counta_counts_non_blank_including_errors(calc):
    assert calc("=COUNTA(A1:A6)", **NUMBERS) == 5.0
    assert calc('=COUNTA(A1:A3, "")', A1="=NA()", A3="'") == 3.0


def test_countblank_counts_empty_cells_and_empty_text(calc):
    assert calc("=COUNTBLANK(A1:A4)", A1=1, A2='=""') == 3.0


def test_countif_with_operators_and_wildcards(calc):
    cells = dict(A1=5, A2=15, A3="apple", A4="Avocado", A5=25, A6="banana")
    assert calc('=COUNTIF(A1:A6, ">10")', **cells) == 2.0
    assert calc('=COUNTIF(A1:A6, "a*")', **cells) == 2.0
    assert calc("=COUNTIF(A1:A6, 5)", **cells) == 1.0
    assert calc("=COUNTIF(A1:A6, B1)", B1="banana", **cells) == 1.0


def test_countif_propagates_error_criterion(calc):
    assert calc("=COUNTIF(A1:A2, 1/0)", A1=1) == DIV0


def test_sumif_with_separate_sum_range(calc):
    cells = dict(A1="north", A2="south", A3="North", B1=10, B2=20, B3=30)
    assert calc('=SUMIF(A1:A3, "north", B1:B3)', **cells) == 40.0
    assert calc('=SUMIF(B1:B3, ">=20")', **cells) == 50.0


def test_sumif_propagates_errors_only_from_matching_cells(calc):
    cells = dict(A1="x", A2="y", B1=1, B2="=1/0")
    assert calc('=SUMIF(A1:A2, "x", B1:B2)', **cells) == 1.0
    assert calc('=SUMIF(A1:A2, "y", B1:B2)', **cells) == DIV0


def test_sumif_mismatched_shape_is_value_error(calc):
    assert calc('=SUMIF(A1:A3, "x", B1:B2)') == VALUE


def test_averageif_and_no_match(calc):
    cells = dict(A1="x", A2="y", A3="x", B1=2, B2=100, B3=4)
    assert calc('=AVERAGEIF(A1:A3, "x", B1:B3)', **cells) == 3.0
    assert calc('=AVERAGEIF(A1:A3, "z", B1:B3)', **cells) == DIV0


def test_sumproduct_multiplies_pairwise(calc):
    cells = dict(A1=1, A2=2, A3="x", B1=10, B2=20, B3=30)
    assert calc("=SUMPRODUCT(A1:A3, B1:B3)", **cells) == 50.0
    assert calc("=SUMPRODUCT(A1:A3, B1:B2)", **cells) == VALUE
    assert calc("=SUMPRODUCT(A1:A2, B1:B2)", A1="#N/A", B1=1, B2=2) == NA


@pytest.mark.parametrize("formula, expected", [
    ("=ROUND(2.675, 2)", 2.68), ("=ROUND(-2.5, 0)", -3.0), ("=ROUND(1234.5, -2)", 1200.0), ("=ROUND(0.125, 2)", 0.13),
    ("=ROUNDUP(1.21, 1)", 1.3), ("=ROUNDUP(-1.21, 1)", -1.3), ("=ROUNDDOWN(1.29, 1)", 1.2), ("=ROUNDDOWN(-1.29, 1)", -1.2),
    ("=INT(-1.5)", -2.0), ("=INT(1.9)", 1.0), ("=ABS(-3)", 3.0), ("=MOD(10, 3)", 1.0), ("=MOD(-10, 3)", 2.0),
    ("=MOD(10, -3)", -2.0), ("=POWER(2, 0.5)", 2 ** 0.5), ("=SQRT(16)", 4.0), ("=SIGN(-0.1)", -1.0), ("=SIGN(0)", 0.0),
    ("=SIGN(7)", 1.0),
])
def test_numeric_functions(calc, formula, expected):
    assert calc(formula) == expected


@pytest.mark.parametrize("formula, error", [
    ("=MOD(1, 0)", DIV0), ("=SQRT(-1)", NUM), ("=POWER(0, -1)", DIV0), ("=ROUND(\"x\", 1)", VALUE), ("=ABS(#N/A)", NA),
])
def test_numeric_function_errors(calc, formula, error):
    assert calc(formula) == error
