"""Tests for AST helpers: traversal, conjunct splitting and rendering."""

import pytest

from minisql import nodes as n
from minisql.parser import parse_expression


def test_children_lists_direct_subexpressions_including_case_pairs():
    expr = parse_expression("CASE a WHEN 1 THEN b ELSE c END")
    assert n.children(expr) == [n.ColumnRef("a"), n.Literal(1), n.ColumnRef("b"), n.ColumnRef("c")]


def test_children_of_leaf_is_empty():
    assert n.children(n.Literal(3)) == []


def test_walk_is_depth_first_preorder():
    expr = parse_expression("(a + 1) * b")
    assert [type(x).__name__ for x in n.walk(expr)] == ["BinaryOp", "BinaryOp", "ColumnRef", "Literal", "ColumnRef"]


def test_walk_does_not_enter_subqueries():
    expr = parse_expression("a IN (SELECT b FROM t)")
    assert [x for x in n.walk(expr) if isinstance(x, n.ColumnRef)] == [n.ColumnRef("a")]


def test_find_aggregates_deduplicates_and_keeps_order():
    expr = parse_expression("SUM(a) + COUNT(*) * SUM(a) + UPPER(b)")
    assert n.find_aggregates(expr) == [n.FunctionCall("sum", (n.ColumnRef("a"),)),
                                       n.FunctionCall("count", (), star=True)]


def test_is_aggregate_only_for_aggregate_names():
    assert n.is_aggregate(parse_expression("max(a)"))
    assert not n.is_aggregate(parse_expression("abs(a)"))
    assert not n.is_aggregate(n.ColumnRef("count"))


def test_split_conjuncts_flattens_nested_ands_only():
    expr = parse_expression("a = 1 AND (b = 2 AND (c = 3 OR d = 4))")
    assert [n.render(c) for c in n.split_conjuncts(expr)] == ["(a = 1)", "(b = 2)", "((c = 3) OR (d = 4))"]
    assert n.split_conjuncts(None) == []


def test_join_conjuncts_builds_left_deep_and():
    parts = [n.ColumnRef("a"), n.ColumnRef("b"), n.ColumnRef("c")]
    assert n.join_conjuncts(parts) == n.BinaryOp("AND", n.BinaryOp("AND", parts[0], parts[1]), parts[2])
    assert n.join_conjuncts([]) is None


def test_nodes_are_hashable_and_compare_structurally():
    assert parse_expression("SUM(x) > 1") == parse_expression("sum(x)>1")
    assert len({parse_expression("a + 1"), parse_expression("a+1")}) == 1


def test_table_binding_prefers_alias():
    assert n.TableRef("users", "u").binding == "u"
    assert n.TableRef("users").binding == "users"


@pytest.mark.parametrize("text, rendered", [
    ("a + 1", "(a + 1)"),
    ("'it''s'", "'it''s'"),
    ("NULL", "NULL"),
    ("TRUE", "TRUE"),
    ("2.5", "2.5"),
    ("t.a", "t.a"),
    ("-a", "-a"),
    ("NOT a", "NOT a"),
    ("count(*)", "COUNT(*)"),
    ("count(DISTINCT a)", "COUNT(DISTINCT a)"),
    ("substr(a, 1, 2)", "SUBSTR(a, 1, 2)"),
    ("a IS NOT NULL", "a IS NOT NULL"),
    ("a NOT BETWEEN 1 AND 2", "a NOT BETWEEN 1 AND 2"),
    ("a IN (1, 2)", "a IN (1, 2)"),
    ("a NOT IN (SELECT b FROM t)", "a NOT IN (SELECT ...)"),
    ("EXISTS (SELECT 1)", "EXISTS (SELECT ...)"),
    ("(SELECT 1)", "(SELECT ...)"),
    ("a LIKE 'x%'", "a LIKE 'x%'"),
    ("CASE a WHEN 1 THEN 'x' ELSE 'y' END", "CASE a WHEN 1 THEN 'x' ELSE 'y' END"),
    ("CASE WHEN a THEN 1 END", "CASE WHEN a THEN 1 END"),
    ("CAST(a AS text)", "CAST(a AS TEXT)"),
])
def test_render_expression(text, rendered):
    assert n.render(parse_expression(text)) == rendered


def test_render_star():
    assert n.render(n.Star()) == "*"
    assert n.render(n.Star("u")) == "u.*"
