"""Tests for expression compilation, operators and scalar functions."""

import pytest

from minisql import nodes as n
from minisql.errors import CatalogError, ExecutionError, SQLTypeError
from minisql.expressions import (ExprCompiler, Scope, arithmetic, compare_op, concat, evaluate_constant,
                                 fn_round, fn_substr, like, like_regex)
from minisql.parser import parse_expression

SCOPE = Scope([("t", "a"), ("t", "b"), ("u", "a"), ("u", "name")])


def ev(text, row=(1, 2, 3, "x"), scope=SCOPE, runner=None):
    """Compile ``text`` against ``scope`` and evaluate it on ``row``."""
    return ExprCompiler(scope, runner).compile(parse_expression(text))(row)


def test_scope_resolves_qualified_and_unique_names():
    assert SCOPE.resolve("b") == 1
    assert SCOPE.resolve("a", "u") == 2
    assert SCOPE.resolve("name") == 3


def test_scope_reports_unknown_and_ambiguous_columns():
    with pytest.raises(CatalogError, match="ambiguous column name: a"):
        SCOPE.resolve("a")
    with pytest.raises(CatalogError, match="no such column: u.b"):
        SCOPE.resolve("b", "u")


def test_scope_bindings_positions_and_concat():
    assert SCOPE.bindings() == ["t", "u"]
    assert SCOPE.positions_for("u") == [2, 3]
    with pytest.raises(CatalogError, match="no such table: v"):
        SCOPE.positions_for("v")
    joined = Scope([("x", "k")]).concat(Scope([("y", "k")]))
    assert joined.columns == [("x", "k"), ("y", "k")] and len(joined) == 2


@pytest.mark.parametrize("op, left, right, expected", [
    ("+", 2, 3, 5), ("-", 2, 3.5, -1.5), ("*", 4, 2.5, 10.0),
    ("/", 7, 2, 3), ("/", -7, 2, -3), ("/", 7, -2, -3), ("/", 7.0, 2, 3.5),
    ("%", 7, 3, 1), ("%", -7, 2, -1), ("%", 7.5, 2, 1.5),
    ("+", None, 1, None), ("*", 3, None, None),
])
def test_arithmetic(op, left, right, expected):
    result = arithmetic(op, left, right)
    assert result == expected and type(result) is type(expected)


@pytest.mark.parametrize("op", ["/", "%"])
def test_division_by_zero(op):
    with pytest.raises(ExecutionError, match="division by zero"):
        arithmetic(op, 1, 0)


def test_arithmetic_rejects_text_and_booleans():
    with pytest.raises(SQLTypeError, match="operator \\+ needs numbers, got TEXT and INTEGER"):
        arithmetic("+", "1", 1)
    with pytest.raises(SQLTypeError):
        arithmetic("*", True, 2)


def test_concat_casts_values_to_text_and_propagates_null():
    assert concat("a", 1) == "a1"
    assert concat(True, 2.5) == "TRUE2.5"
    assert concat(None, "x") is None


@pytest.mark.parametrize("op, left, right, expected", [
    ("=", 1, 1.0, True), ("<>", "a", "b", True), ("<", 1, 2, True), ("<=", 2, 2, True),
    (">", 1, 2, False), (">=", "b", "a", True), ("=", None, None, None),
])
def test_compare_op(op, left, right, expected):
    assert compare_op(op, left, right) is expected


@pytest.mark.parametrize("value, pattern, expected", [
    ("hello", "h%", True), ("hello", "%LL%", False), ("hello", "h_llo", True), ("hello", "h_lo", False),
    ("a.c", "a.c", True), ("abc", "a.c", False), ("", "%", True), ("50%", "50%", True),
    ("line\nbreak", "line%", True), (None, "%", None), ("x", None, None),
])
def test_like(value, pattern, expected):
    assert like(value, pattern) is expected


def test_like_rejects_non_text():
    with pytest.raises(SQLTypeError, match="LIKE needs TEXT operands"):
        like(5, "5")


def test_like_regex_escapes_special_characters():
    assert like_regex("a+b%").pattern == "a\\+b.*"


def test_column_references_read_row_positions():
    assert ev("t.a + u.a * b") == 1 + 3 * 2
    assert ev("name || '!'") == "x!"


def test_logical_operators_use_three_valued_logic():
    assert ev("NULL AND FALSE") is False
    assert ev("NULL AND TRUE") is None
    assert ev("NULL OR TRUE") is True
    assert ev("NULL OR FALSE") is None
    assert ev("NOT NULL") is None
    assert ev("NOT (t.a = 1)") is False


def test_and_or_short_circuit_skips_right_side():
    assert ev("FALSE AND 1 / 0 = 1") is False
    assert ev("TRUE OR 1 / 0 = 1") is True


def test_numbers_used_as_conditions():
    assert ev("1 AND 2") is True
    assert ev("0 OR 0") is False


def test_unary_minus():
    assert ev("-b") == -2
    assert ev("-(NULL)") is None
    with pytest.raises(SQLTypeError, match="cannot negate TEXT"):
        ev("-name")


def test_is_null_never_returns_null():
    assert ev("NULL IS NULL") is True
    assert ev("b IS NULL") is False
    assert ev("b IS NOT NULL") is True


@pytest.mark.parametrize("text, expected", [
    ("b BETWEEN 1 AND 2", True), ("b BETWEEN 3 AND 4", False), ("b NOT BETWEEN 3 AND 4", True),
    ("NULL BETWEEN 1 AND 2", None), ("b BETWEEN NULL AND 1", False), ("b BETWEEN NULL AND 5", None),
])
def test_between(text, expected):
    assert ev(text) is expected


@pytest.mark.parametrize("text, expected", [
    ("b IN (1, 2)", True), ("b IN (5, 6)", False), ("b IN (5, NULL)", None), ("b IN (2, NULL)", True),
    ("b NOT IN (5, 6)", True), ("b NOT IN (5, NULL)", None), ("NULL IN (1)", None), ("b NOT IN (2)", False),
])
def test_in_list(text, expected):
    assert ev(text) is expected


def test_like_expression_and_not_like():
    assert ev("name LIKE 'x'") is True
    assert ev("name NOT LIKE 'x%'") is False
    assert ev("NULL NOT LIKE 'x%'") is None


def test_searched_case_picks_first_true_branch():
    assert ev("CASE WHEN b > 5 THEN 'big' WHEN b > 1 THEN 'mid' ELSE 'small' END") == "mid"
    assert ev("CASE WHEN NULL THEN 1 END") is None


def test_simple_case_compares_operand_with_equality():
    assert ev("CASE b WHEN 1 THEN 'one' WHEN 2 THEN 'two' END") == "two"
    assert ev("CASE NULL WHEN NULL THEN 'match' ELSE 'no' END") == "no"


def test_cast_expression():
    assert ev("CAST('12' AS INTEGER) + 1") == 13
    with pytest.raises(SQLTypeError, match="unknown type"):
        ev("CAST(1 AS blob)")


@pytest.mark.parametrize("text, expected", [
    ("UPPER('abc')", "ABC"), ("LOWER('AbC')", "abc"), ("LENGTH('hello')", 5), ("TRIM('  x ')", "x"),
    ("UPPER(NULL)", None), ("SUBSTR('hello', 2)", "ello"), ("SUBSTR('hello', 2, 3)", "ell"),
    ("REPLACE('a-b-c', '-', '+')", "a+b+c"), ("REPLACE(NULL, 'a', 'b')", None),
    ("COALESCE(NULL, NULL, 3, 4)", 3), ("COALESCE(NULL)", None), ("IFNULL(NULL, 'd')", "d"),
    ("NULLIF(1, 1)", None), ("NULLIF(1, 2)", 1), ("NULLIF(NULL, 1)", None),
    ("ABS(-4)", 4), ("ABS(NULL)", None), ("ROUND(2.5)", 3.0), ("ROUND(7)", 7),
    ("TYPEOF(1.5)", "real"), ("TYPEOF(NULL)", "null"),
])
def test_scalar_functions(text, expected):
    assert ev(text) == expected


@pytest.mark.parametrize("args, expected", [
    (("hello", 1), "hello"), (("hello", 0, 2), "h"), (("hello", -1, 4), "he"), (("hello", 4, 10), "lo"),
    (("hello", 2, 0), ""), (("hello", 9), ""), ((None, 1), None), (("x", None), None), (("x", 1, None), None),
])
def test_substr(args, expected):
    assert fn_substr(*args) == expected


def test_substr_rejects_bad_arguments():
    with pytest.raises(SQLTypeError, match="SUBSTR positions must be integers"):
        fn_substr("abc", 1.5)
    with pytest.raises(ExecutionError, match="must not be negative"):
        fn_substr("abc", 1, -1)
    with pytest.raises(SQLTypeError, match="SUBSTR expects TEXT"):
        fn_substr(12, 1)


@pytest.mark.parametrize("args, expected", [
    ((2.5,), 3.0), ((-2.5,), -3.0), ((2.45, 1), 2.5), ((1234, -2), 1200.0), ((-1250, -2), -1300.0),
    ((12, 2), 12), ((0.125, 2), 0.13), ((None,), None), ((1.5, None), None),
])
def test_round_half_away_from_zero(args, expected):
    result = fn_round(*args)
    assert result == expected and type(result) is type(expected)


def test_round_rejects_non_integer_digits_and_text():
    with pytest.raises(SQLTypeError, match="ROUND digits must be an integer"):
        fn_round(1.5, 1.0)
    with pytest.raises(SQLTypeError, match="ROUND expects a number"):
        fn_round("1.5")


def test_text_functions_reject_numbers():
    with pytest.raises(SQLTypeError, match="UPPER expects TEXT, got INTEGER"):
        ev("UPPER(5)")
    with pytest.raises(SQLTypeError, match="ABS expects a number"):
        ev("ABS('x')")


@pytest.mark.parametrize("text, message", [
    ("FOO(1)", "unknown function FOO"),
    ("UPPER('a', 'b')", "wrong arguments for function UPPER"),
    ("ABS(DISTINCT 1)", "wrong arguments for function ABS"),
    ("SUM(b)", "aggregate function SUM is not allowed here"),
])
def test_function_call_errors_at_compile_time(text, message):
    with pytest.raises(ExecutionError, match=message):
        ExprCompiler(SCOPE).compile(parse_expression(text))


def test_star_cannot_be_evaluated():
    with pytest.raises(ExecutionError, match=r"cannot evaluate \* here"):
        ExprCompiler(SCOPE).compile(n.Star())


def test_slots_supply_precomputed_values():
    total = parse_expression("SUM(b)")
    scope = Scope([("t", "g"), (None, "SUM(b)")], {total: 1})
    fn = ExprCompiler(scope).compile(parse_expression("SUM(b) * 2 + g"))
    assert fn((10, 5)) == 20


def test_compile_condition_maps_numbers_to_booleans():
    fn = ExprCompiler(SCOPE).compile_condition(parse_expression("b - 2"))
    assert fn((1, 2, 3, "x")) is False
    assert fn((1, 5, 3, "x")) is True


class FakeRunner:
    """Subquery runner returning canned results and counting calls."""

    def __init__(self, columns, rows):
        self.columns, self.rows, self.calls = columns, rows, 0

    def __call__(self, query):
        self.calls += 1
        return self.columns, self.rows


def test_in_subquery_runs_subquery_once_and_uses_first_column():
    runner = FakeRunner(["v"], [(1,), (2,)])
    fn = ExprCompiler(SCOPE, runner).compile(parse_expression("b IN (SELECT v FROM s)"))
    assert [fn((0, v, 0, "")) for v in (1, 2, 3)] == [True, True, False]
    assert runner.calls == 1


def test_not_in_subquery_with_null_is_unknown():
    runner = FakeRunner(["v"], [(1,), (None,)])
    assert ev("b NOT IN (SELECT v FROM s)", runner=runner) is None


def test_in_subquery_requires_one_column():
    runner = FakeRunner(["a", "b"], [(1, 2)])
    with pytest.raises(ExecutionError, match="IN subquery must return exactly one column"):
        ev("b IN (SELECT a, b FROM s)", runner=runner)


def test_exists_depends_on_row_presence():
    assert ev("EXISTS (SELECT 1)", runner=FakeRunner(["a", "b"], [(1, 2)])) is True
    assert ev("EXISTS (SELECT 1)", runner=FakeRunner(["a"], [])) is False


def test_scalar_subquery_values():
    assert ev("(SELECT 1) + 1", runner=FakeRunner(["v"], [(41,)])) == 42
    assert ev("(SELECT 1)", runner=FakeRunner(["v"], [])) is None
    with pytest.raises(ExecutionError, match="more than one row"):
        ev("(SELECT 1)", runner=FakeRunner(["v"], [(1,), (2,)]))


def test_subquery_without_runner_is_rejected():
    with pytest.raises(ExecutionError, match="subqueries are not supported in this context"):
        ev("(SELECT 1)")


def test_evaluate_constant():
    assert evaluate_constant(parse_expression("2 * 3 + LENGTH('ab')")) == 8
    with pytest.raises(CatalogError, match="no such column: a"):
        evaluate_constant(parse_expression("a + 1"))
