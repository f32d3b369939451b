import pytest

from sheetcalc import Grid
from sheetcalc.functions import FunctionRegistry, FunctionSpec, default_registry
from sheetcalc.functions.base import scalar_or_error, grid_arg, flatten
from sheetcalc.functions.lookup_funcs import approximate_position, exact_position
from sheetcalc.errors import ErrorSignal
from sheetcalc.values import BLANK, DIV0, NA, NUM, REF, VALUE

TABLE = dict(
    A1=10, B1="ten", C1="X",
    A2=20, B2="twenty", C2="Y",
    A3=30, B3="thirty", C3="Z",
)


def test_vlookup_exact_and_approximate(calc):
    assert calc("=VLOOKUP(20, A1:C3, 2, FALSE)", **TABLE) == "twenty"
    assert calc("=VLOOKUP(25, A1:C3, 3)", **TABLE) == "Y"
    assert calc("=VLOOKUP(99, A1:C3, 2, TRUE)", **TABLE) == "thirty"


def test_vlookup_error_cases(calc):
    assert calc("=VLOOKUP(5, A1:C3, 2)", **TABLE) == NA
    assert calc("=VLOOKUP(25, A1:C3, 2, FALSE)", **TABLE) == NA
    assert calc("=VLOOKUP(20, A1:C3, 4, FALSE)", **TABLE) == REF
    assert calc("=VLOOKUP(20, A1:C3, 0, FALSE)", **TABLE) == VALUE
    assert calc("=VLOOKUP(1/0, A1:C3, 1)", **TABLE) == DIV0


def test_vlookup_text_key_is_case_insensitive_and_wildcard_aware(calc):
    cells = dict(A1="Apple", B1=1, A2="Banana", B2=2)
    assert calc('=VLOOKUP("banana", A1:B2, 2, FALSE)', **cells) == 2.0
    assert calc('=VLOOKUP("b*", A1:B2, 2, FALSE)', **cells) == 2.0


def test_hlookup_searches_first_row(calc):
    cells = dict(A1="q1", B1="q2", C1="q3", A2=100, B2=200, C2=300)
    assert calc('=HLOOKUP("q2", A1:C2, 2, FALSE)', **cells) == 200.0
    assert calc('=HLOOKUP("q2", A1:C2, 3, FALSE)', **cells) == REF
    assert calc('=HLOOKUP("zz", A1:C2, 2)', **cells) == 300.0


def test_match_types(calc):
    asc = dict(A1=1, A2=3, A3=5, A4=7)
    assert calc("=MATCH(5, A1:A4, 0)", **asc) == 3.0
    assert calc("=MATCH(6, A1:A4)", **asc) == 3.0
    assert calc("=MATCH(0, A1:A4, 1)", **asc) == NA
    desc = dict(A1=7, A2=5, A3=3, A4=1)
    assert calc("=MATCH(4, A1:A4, -1)", **desc) == 2.0
    assert calc("=MATCH(9, A1:A4, -1)", **desc) == NA


def test_match_requires_one_dimensional_range(calc):
    assert calc("=MATCH(1, A1:B2, 0)", A1=1) == NA


def test_match_horizontal_vector_with_wildcards(calc):
    assert calc('=MATCH("c*", A1:C1, 0)', A1="apple", B1="cherry", C1="citrus") == 2.0


def test_exact_position_skips_blanks_errors_and_other_types():
    assert exact_position([BLANK, NA, "1", 1.0], 1.0) == 3
    assert exact_position(["a", "B"], "b") == 1
    assert exact_position([1.0, 2.0], 3.0) == -1
    assert exact_position([5.0, "x?z", "xyz"], "x?z") == 1


@pytest.mark.parametrize("values, lookup, descending, expected", [
    ([1.0, 3.0, 5.0, 7.0], 4.0, False, 1), ([1.0, 3.0, 5.0, 7.0], 7.0, False, 3), ([1.0, 3.0], 0.0, False, -1),
    ([1.0, 2.0, 3.0, BLANK, BLANK], 10.0, False, 2), ([9.0, 6.0, 3.0], 5.0, True, 1), ([9.0, 6.0, 3.0], 10.0, True, -1),
    (["a", "c", "e"], "D", False, 1), ([1.0, 2.0, "a"], "z", False, 2), ([], 1.0, False, -1),
])
def test_approximate_position_binary_search(values, lookup, descending, expected):
    assert approximate_position(values, lookup, descending) == expected


@pytest.mark.parametrize("formula, expected", [
    ("=INDEX(A1:C3, 2, 3)", "Y"), ("=INDEX(A1:A3, 3)", 30.0), ("=INDEX(A1:C1, 2)", "ten"), ("=INDEX(A1:C3, 4, 1)", REF),
    ("=INDEX(A1:C3, 1, -1)", REF), ("=SUM(INDEX(A1:C3, 0, 1))", 60.0), ("=CONCAT(INDEX(A1:C3, 3, 0))", "30thirtyZ"),
    ("=ROWS(INDEX(A1:C3, 0, 0))", 3.0), ("=INDEX(7, 1, 1)", 7.0),
])
def test_index(calc, formula, expected):
    assert calc(formula, **TABLE) == expected


def test_rows_and_columns(calc):
    assert calc("=ROWS(A1:C5)") == 5.0
    assert calc("=COLUMNS(A1:C5)") == 3.0
    assert calc("=COLUMNS(A1)") == 1.0


@pytest.mark.parametrize("formula, expected", [
    ("=DATE(2024, 2, 29)", 45351.0), ("=DATE(2023, 13, 1)", 45292.0), ("=DATE(2024, 3, 0)", 45351.0),
    ("=DATE(100, 1, 1)", 36526.0), ("=DATE(-1, 1, 1)", NUM), ("=DATE(10000, 1, 1)", NUM),
    ("=YEAR(45000)", 2023.0), ("=MONTH(45000)", 3.0), ("=DAY(45000.75)", 15.0), ("=WEEKDAY(45000)", 4.0),
    ("=WEEKDAY(1)", 1.0), ("=YEAR(-1)", NUM), ("=WEEKDAY(-5)", NUM),
])
def test_date_functions(calc, formula, expected):
    assert calc(formula) == expected


def test_default_registry_contains_builtins_and_is_case_insensitive():
    registry = default_registry()
    assert "vlookup" in registry
    assert registry.get("Sum").name == "SUM"
    assert registry.get("NOPE") is None
    assert len(registry.names()) >= 60
    assert registry.names() == sorted(registry.names())


def test_registry_rejects_duplicate_names():
    spec = FunctionSpec("TWICE", lambda args: 2, 0, 0)
    registry = FunctionRegistry([spec])
    with pytest.raises(ValueError):
        registry.register(FunctionSpec("twice", lambda args: 3, 0, 0))


def test_function_spec_accepts_argument_counts():
    assert FunctionSpec("F", None, 1, 3).accepts(3)
    assert not FunctionSpec("F", None, 1, 3).accepts(0)
    assert FunctionSpec("F", None, 1).accepts(50)


def test_argument_helpers():
    assert scalar_or_error(Grid([[1, 2]])) == VALUE
    assert scalar_or_error(Grid([[5]])) == 5
    assert grid_arg(3) == Grid([[3]])
    with pytest.raises(ErrorSignal):
        grid_arg(NA)
    assert list(flatten([Grid([[1, 2]]), 3])) == [(1, True), (2, True), (3, False)]
