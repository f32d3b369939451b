"""Tests for predicate simplification (constant folding and boolean rules)."""

import pytest

from minisql import nodes as n
from minisql.parser import parse_expression
from minisql.rewrite import is_boolean, is_literal, prune_case, rebuild, simplify_predicate


def simplified(text):
    return n.render(simplify_predicate(parse_expression(text)))


@pytest.mark.parametrize("text, expected", [
    ("1 + 2 * 3", "7"),
    ("a = 1 + 1", "(a = 2)"),
    ("UPPER('ab') = name", "('AB' = name)"),
    ("a > 1 AND 1 = 0", "FALSE"),
    ("FALSE AND a", "FALSE"),
    ("a OR 2 > 1", "TRUE"),
    ("TRUE AND a > 1", "(a > 1)"),
    ("a > 1 AND TRUE", "(a > 1)"),
    ("FALSE OR a IS NULL", "a IS NULL"),
    ("TRUE AND a", "(TRUE AND a)"),
    ("NULL AND a > 1", "(NULL AND (a > 1))"),
    ("NOT (1 = 1)", "FALSE"),
    ("NULL IS NULL", "TRUE"),
    ("3 BETWEEN 1 AND 5", "TRUE"),
    ("a IN (1 + 1, 3)", "a IN (2, 3)"),
    ("'abc' LIKE 'a%'", "TRUE"),
    ("CAST('7' AS INTEGER) = a", "(7 = a)"),
    ("1 / 0 = a", "((1 / 0) = a)"),
    ("a IN (SELECT 1)", "a IN (SELECT ...)"),
    ("COUNT(1 + 1) > 2 - 1", "(COUNT((1 + 1)) > 1)"),
])
def test_simplify_predicate(text, expected):
    assert simplified(text) == expected


def test_simplify_none_is_none():
    assert simplify_predicate(None) is None


@pytest.mark.parametrize("text, expected", [
    ("CASE WHEN FALSE THEN 1 WHEN a > 1 THEN 2 END", "CASE WHEN (a > 1) THEN 2 END"),
    ("CASE WHEN NULL THEN 1 WHEN TRUE THEN 2 ELSE 3 END", "2"),
    ("CASE WHEN 1 > 2 THEN 1 ELSE a END", "a"),
    ("CASE WHEN 1 > 2 THEN 1 END", "NULL"),
    ("CASE a WHEN 1 THEN 2 END", "CASE a WHEN 1 THEN 2 END"),
    ("CASE 1 WHEN 1 THEN 'x' ELSE 'y' END", "'x'"),
])
def test_case_pruning(text, expected):
    assert simplified(text) == expected


def test_prune_case_keeps_simple_case_unchanged():
    case = parse_expression("CASE a WHEN FALSE THEN 1 END")
    assert prune_case(case) is case


def test_is_literal_compares_by_identity():
    assert is_literal(n.Literal(1))
    assert is_literal(n.Literal(True), True)
    assert not is_literal(n.Literal(1), True)
    assert not is_literal(n.ColumnRef("a"))


@pytest.mark.parametrize("text, expected", [
    ("a = 1", True), ("a AND b", True), ("NOT a", True), ("a IS NULL", True), ("a LIKE 'x'", True),
    ("EXISTS (SELECT 1)", True), ("NULL", True), ("FALSE", True), ("a", False), ("a + 1", False),
    ("-a", False), ("1", False), ("UPPER(a)", False),
])
def test_is_boolean(text, expected):
    assert is_boolean(parse_expression(text)) is expected


def test_rebuild_transforms_direct_children_including_case_pairs():
    def bump(expr):
        return n.Literal(expr.value + 1) if isinstance(expr, n.Literal) else expr
    rebuilt = rebuild(parse_expression("CASE WHEN a THEN 1 ELSE 2 END"), bump)
    assert rebuilt == n.Case(None, ((n.ColumnRef("a"), n.Literal(2)),), n.Literal(3))
    leaf = n.ColumnRef("a")
    assert rebuild(leaf, bump) is leaf
