"""Tests for plan construction: pushdown, index selection, join ordering and EXPLAIN text."""

import pytest

from minisql import nodes as n
from minisql.errors import CatalogError, ExecutionError
from minisql.parser import parse
from minisql.planner import (Filter, IndexScan, Planner, SeqScan, SubqueryScan, choose_join_order,
                             constant_value, estimate_rows, explain)


@pytest.fixture
def indexed(shop):
    """The shop database with a hash index on orders.user_id and a btree index on users.age."""
    shop.execute("CREATE INDEX orders_user ON orders (user_id) USING HASH")
    shop.execute("CREATE INDEX users_age ON users (age)")
    return shop


def plan_text(database, sql):
    return database.explain(sql).splitlines()


def test_primary_key_equality_uses_index_lookup(indexed):
    assert plan_text(indexed, "SELECT name FROM users WHERE id = 3") == [
        "Project name",
        "  IndexScan users USING users_pkey (id = 3)"]


def test_reversed_equality_uses_index_and_keeps_other_conjuncts_in_filter(indexed):
    assert plan_text(indexed, "SELECT name FROM users WHERE 3 = id AND age > 1") == [
        "Project name",
        "  Filter (age > 1)",
        "    IndexScan users USING users_pkey (id = 3)"]


def test_range_conjuncts_merge_into_tightest_bounds(indexed):
    assert plan_text(indexed, "SELECT name FROM users WHERE age >= 25 AND age < 40 AND age > 25 AND age <= 50") == [
        "Project name",
        "  IndexScan users USING users_age (age > 25 AND age < 40)"]


def test_between_becomes_inclusive_range(indexed):
    assert plan_text(indexed, "SELECT name FROM users WHERE age BETWEEN 20 AND 30") == [
        "Project name",
        "  IndexScan users USING users_age (age >= 20 AND age <= 30)"]


def test_reversed_range_comparison_is_flipped(indexed):
    assert plan_text(indexed, "SELECT name FROM users WHERE 30 > age")[1] == \
        "  IndexScan users USING users_age (age < 30)"


def test_negative_literal_bound_is_indexable(indexed):
    assert plan_text(indexed, "SELECT name FROM users WHERE age > -5")[1] == \
        "  IndexScan users USING users_age (age > -5)"


def test_hash_index_is_used_for_equality_but_not_ranges(indexed):
    assert plan_text(indexed, "SELECT id FROM orders WHERE user_id = 1")[1] == \
        "  IndexScan orders USING orders_user (user_id = 1)"
    assert plan_text(indexed, "SELECT id FROM orders WHERE user_id > 1")[1:] == [
        "  Filter (user_id > 1)", "    SeqScan orders"]


@pytest.mark.parametrize("where", ["id = 2.5", "age > 'x'", "id = NULL", "id = age", "id + 0 = 3",
                                   "age NOT BETWEEN 1 AND 2", "id IN (1, 2)"])
def test_non_indexable_predicates_use_sequential_scan(indexed, where):
    assert plan_text(indexed, f"SELECT name FROM users WHERE {where}")[2] == "    SeqScan users"


def test_boolean_column_index_needs_boolean_constant(db):
    db.execute("CREATE TABLE flags (id INTEGER, on_ BOOLEAN)")
    db.execute("CREATE INDEX flags_on ON flags (on_)")
    db.execute("INSERT INTO flags VALUES (1, TRUE), (2, FALSE)")
    assert plan_text(db, "SELECT id FROM flags WHERE on_ = TRUE")[1] == \
        "  IndexScan flags USING flags_on (on_ = TRUE)"
    assert plan_text(db, "SELECT id FROM flags WHERE on_ = 1")[2] == "    SeqScan flags"
    assert plan_text(db, "SELECT id FROM flags WHERE id = TRUE")[2] == "    SeqScan flags"


def test_integral_float_constant_is_coerced_for_index_lookup(indexed):
    assert plan_text(indexed, "SELECT name FROM users WHERE id = 2.0")[1] == \
        "  IndexScan users USING users_pkey (id = 2)"


def test_predicates_are_pushed_below_hash_join_and_smaller_input_is_build_side(indexed):
    sql = ("SELECT u.name, o.product FROM users u JOIN orders o ON u.id = o.user_id "
           "WHERE u.city = 'oslo' AND o.qty > 1")
    assert plan_text(indexed, sql) == [
        "Project name, product",
        "  HashJoin INNER ON (o.user_id = u.id)",
        "    Filter (o.qty > 1)",
        "      SeqScan orders AS o",
        "    Filter (u.city = 'oslo')",
        "      SeqScan users AS u"]


def test_non_equi_join_uses_nested_loop(shop):
    assert plan_text(shop, "SELECT a.id FROM users a, users b WHERE a.age < b.age")[1:] == [
        "  NestedLoopJoin INNER ON (a.age < b.age)",
        "    SeqScan users AS a",
        "    SeqScan users AS b"]


def test_cross_join_without_condition(shop):
    assert plan_text(shop, "SELECT a.id FROM users a CROSS JOIN orders b")[1] == "  NestedLoopJoin CROSS"


def test_equi_join_with_extra_condition_keeps_residual(shop):
    sql = "SELECT u.id FROM users u JOIN orders o ON o.user_id = u.id AND o.qty > u.age"
    assert plan_text(shop, sql)[1] == "  HashJoin INNER ON ((o.user_id = u.id) AND (o.qty > u.age))"


def test_join_order_avoids_cross_products_between_small_tables(db):
    db.execute_script("""
        CREATE TABLE big (id INTEGER, k INTEGER);
        CREATE TABLE mid (id INTEGER);
        CREATE TABLE small (k INTEGER);
        INSERT INTO big VALUES (1, 1), (2, 1), (3, 2), (4, 2), (5, 3), (6, 3);
        INSERT INTO mid VALUES (1), (2), (3);
        INSERT INTO small VALUES (1);
    """)
    sql = "SELECT * FROM big, mid, small WHERE big.k = small.k AND big.id = mid.id"
    assert plan_text(db, sql)[1:] == [
        "  HashJoin INNER ON (big.id = mid.id)",
        "    HashJoin INNER ON (big.k = small.k)",
        "      SeqScan big",
        "      SeqScan small",
        "    SeqScan mid"]
    assert db.execute(sql).rows == [(1, 1, 1, 1), (2, 1, 2, 1)]


def eq(left, right):
    return n.BinaryOp("=", n.ColumnRef(left), n.ColumnRef(right))


def test_choose_join_order_single_table():
    assert choose_join_order({"a": 10}, []) == ("a",)


def test_choose_join_order_puts_smaller_input_on_build_side():
    assert choose_join_order({"a": 2, "b": 50}, [(eq("x", "y"), {"a", "b"})]) == ("b", "a")


def test_choose_join_order_ties_follow_from_order():
    assert choose_join_order({"a": 4, "b": 4}, [(eq("x", "y"), {"a", "b"})]) == ("a", "b")


def test_choose_join_order_joins_selective_pair_first():
    cards = {"big": 1000, "mid": 100, "tiny": 10}
    conjuncts = [(eq("k", "k2"), {"big", "tiny"}), (eq("m", "m2"), {"big", "mid"})]
    assert choose_join_order(cards, conjuncts) == ("big", "tiny", "mid")


def test_choose_join_order_prefers_connected_join_over_cross_product():
    cards = {"a": 100, "b": 100, "c": 100}
    conjuncts = [(eq("x", "y"), {"a", "c"}), (eq("y", "z"), {"c", "b"})]
    assert choose_join_order(cards, conjuncts) == ("a", "c", "b")


def test_choose_join_order_non_equality_predicates_are_less_selective():
    cards = {"a": 10, "b": 10, "c": 20}
    theta = n.BinaryOp("<", n.ColumnRef("x"), n.ColumnRef("y"))
    conjuncts = [(theta, {"a", "b"}), (eq("x", "z"), {"a", "c"})]
    assert choose_join_order(cards, conjuncts) == ("c", "a", "b")


def test_left_join_keeps_where_on_nullable_side_above_join(shop):
    sql = "SELECT u.name FROM users u LEFT JOIN orders o ON u.id = o.user_id WHERE o.id IS NULL AND u.age > 20"
    assert plan_text(shop, sql) == [
        "Project name",
        "  Filter o.id IS NULL",
        "    HashJoin LEFT ON (u.id = o.user_id)",
        "      Filter (u.age > 20)",
        "        SeqScan users AS u",
        "      SeqScan orders AS o"]


def test_left_join_pushes_right_only_on_conditions_into_right_input(shop):
    sql = "SELECT u.name FROM users u LEFT JOIN orders o ON u.id = o.user_id AND o.qty > 1 AND u.age > 30"
    assert plan_text(shop, sql)[1:] == [
        "  HashJoin LEFT ON ((u.id = o.user_id) AND (u.age > 30))",
        "    SeqScan users AS u",
        "    Filter (o.qty > 1)",
        "      SeqScan orders AS o"]


def test_inner_join_inside_left_join_tree_keeps_written_order(shop):
    sql = ("SELECT a.id FROM users a JOIN users b ON a.id = b.id "
           "LEFT JOIN orders o ON b.id = o.user_id")
    assert plan_text(shop, sql)[1:] == [
        "  HashJoin LEFT ON (b.id = o.user_id)",
        "    HashJoin INNER ON (a.id = b.id)",
        "      SeqScan users AS a",
        "      SeqScan users AS b",
        "    SeqScan orders AS o"]


def test_chained_left_joins_nest_in_written_order(shop):
    sql = "SELECT a.id FROM users a LEFT JOIN orders o ON a.id = o.user_id LEFT JOIN users b ON o.user_id = b.id"
    assert plan_text(shop, sql)[1:4] == [
        "  HashJoin LEFT ON (o.user_id = b.id)",
        "    HashJoin LEFT ON (a.id = o.user_id)",
        "      SeqScan users AS a"]


def test_aggregate_having_and_sort_plan(shop):
    sql = "SELECT city, COUNT(*) AS n FROM users GROUP BY city HAVING COUNT(*) > 1 ORDER BY n DESC"
    assert plan_text(shop, sql) == [
        "Sort n DESC",
        "  Project city, n",
        "    Filter (COUNT(*) > 1)",
        "      Aggregate GROUP BY city: COUNT(*)",
        "        SeqScan users"]


def test_aggregate_without_group_by_label(shop):
    assert plan_text(shop, "SELECT MAX(age), MIN(age) FROM users")[1] == "  Aggregate: MAX(age), MIN(age)"


def test_distinct_sort_nulls_and_limit_plan(shop):
    assert plan_text(shop, "SELECT DISTINCT city FROM users ORDER BY city NULLS LAST LIMIT 2") == [
        "Limit 2",
        "  Sort city NULLS LAST",
        "    Distinct",
        "      Project city",
        "        SeqScan users"]


def test_hidden_sort_column_is_trimmed_after_limit(shop):
    assert plan_text(shop, "SELECT name FROM users ORDER BY age * 2 DESC NULLS FIRST OFFSET 1") == [
        "Project name",
        "  Limit ALL OFFSET 1",
        "    Sort (age * 2) DESC NULLS FIRST",
        "      Project name, (age * 2)",
        "        SeqScan users"]


def test_select_without_from_uses_single_row_and_drops_true_where(db):
    assert plan_text(db, "SELECT 1 + 1 WHERE 1 = 1") == ["Project (1 + 1)", "  SingleRow"]
    assert plan_text(db, "SELECT 1 WHERE 2 > 3 OR EXISTS (SELECT 1) AND FALSE") == [
        "Project 1", "  Filter FALSE", "    SingleRow"]
    assert db.execute("SELECT 1 WHERE 2 > 3").rows == []


def test_derived_table_plan_pushes_outer_filter_above_subquery_scan(indexed):
    sql = "SELECT s.c FROM (SELECT city AS c FROM users WHERE age > 30) s WHERE s.c = 'oslo'"
    assert plan_text(indexed, sql) == [
        "Project c",
        "  Filter (s.c = 'oslo')",
        "    SubqueryScan AS s",
        "      Project c",
        "        IndexScan users USING users_age (age > 30)"]


def test_constant_false_predicate_stays_on_top(shop):
    assert plan_text(shop, "SELECT id FROM users WHERE 1 = 0")[1:] == ["  Filter FALSE", "    SeqScan users"]
    assert shop.execute("SELECT id FROM users WHERE 1 = 0").rows == []


def test_constant_folding_enables_index_lookup(shop):
    assert plan_text(shop, "SELECT name FROM users WHERE id = 1 + 1 AND TRUE")[1] == \
        "  IndexScan users USING users_pkey (id = 2)"


def test_true_and_predicate_simplifies_in_join_condition(shop):
    sql = "SELECT u.id FROM users u JOIN orders o ON (1 < 2 AND u.id = o.user_id) OR 1 = 0"
    assert plan_text(shop, sql)[1] == "  HashJoin INNER ON (o.user_id = u.id)"


def test_having_is_simplified_without_touching_aggregates(shop):
    sql = "SELECT city FROM users GROUP BY city HAVING COUNT(1 + 1) > 1 AND 2 = 2"
    assert plan_text(shop, sql)[1:3] == ["  Filter (COUNT((1 + 1)) > 1)", "    Aggregate GROUP BY city: COUNT((1 + 1))"]
    assert shop.execute(sql).rows == [("oslo",), ("rome",)]


def test_explain_dml_statements(shop):
    assert shop.explain("UPDATE users SET age = 1 WHERE id = 2") == \
        "Update users\n  IndexScan users USING users_pkey (id = 2)"
    assert shop.explain("DELETE FROM users WHERE name = 'x'") == \
        "Delete users\n  Filter (name = 'x')\n    SeqScan users"


def test_explain_rejects_other_statements(shop):
    with pytest.raises(ExecutionError, match="cannot explain INSERT statements"):
        shop.explain("INSERT INTO users VALUES (9, 'z', 1, 'x')")


def test_explain_function_indents_children():
    class Leaf:
        children = ()

        def label(self):
            return "Leaf"

    class Pair:
        children = (Leaf(), Leaf())

        def label(self):
            return "Pair"
    assert explain(Pair(), 1) == "  Pair\n    Leaf\n    Leaf"


def test_estimate_rows_for_scans(indexed):
    users = indexed.catalog.get_table("users")
    orders = indexed.catalog.get_table("orders")
    scan = SeqScan(users, "users")
    assert estimate_rows(scan) == 5
    assert estimate_rows(Filter(scan, n.Literal(True))) == 2
    assert estimate_rows(IndexScan(users, "u", users.indexes["users_pkey"], equal=1)) == 1
    assert estimate_rows(IndexScan(orders, "o", orders.indexes["orders_user"], equal=1)) == 1
    assert estimate_rows(IndexScan(users, "u", users.indexes["users_age"], low=3)) == 1
    assert estimate_rows(SubqueryScan(scan, "s")) == 5
    assert estimate_rows(Filter(Filter(Filter(scan, n.Literal(1)), n.Literal(1)), n.Literal(1))) == 1


def test_estimate_rows_scales_with_table_size(db):
    db.execute("CREATE TABLE t (a INTEGER)")
    db.execute("CREATE INDEX ta ON t (a)")
    db.execute("INSERT INTO t VALUES " + ", ".join(f"({i})" for i in range(60)))
    table = db.catalog.get_table("t")
    assert estimate_rows(IndexScan(table, "t", table.indexes["ta"], equal=1)) == 6
    assert estimate_rows(IndexScan(table, "t", table.indexes["ta"], low=1)) == 20


def test_constant_value_recognises_literals_and_negated_numbers():
    assert constant_value(n.Literal("x")) == (True, "x")
    assert constant_value(n.UnaryOp("-", n.Literal(2))) == (True, -2)
    assert constant_value(n.UnaryOp("-", n.Literal("x"))) == (False, None)
    assert constant_value(n.ColumnRef("a")) == (False, None)


def test_plan_select_result_names(shop):
    plan = Planner(shop.catalog).plan_select(parse("SELECT name, age + 1, city AS c, u.* FROM users u"))
    assert [name for _, name in plan.scope.columns] == ["name", "(age + 1)", "c", "id", "name", "age", "city"]


@pytest.mark.parametrize("sql, error, message", [
    ("SELECT * FROM users u, orders u", CatalogError, "duplicate table name or alias: u"),
    ("SELECT * FROM users, users", CatalogError, "duplicate table name or alias: users"),
    ("SELECT * FROM ghosts", CatalogError, "no such table: ghosts"),
    ("SELECT id FROM users, orders", CatalogError, "ambiguous column name: id"),
    ("SELECT * FROM users WHERE nope = 1", CatalogError, "no such column: nope"),
    ("SELECT x.* FROM users", CatalogError, "no such table: x"),
    ("SELECT name FROM users ORDER BY 2", ExecutionError, "ORDER BY position 2 is out of range"),
    ("SELECT DISTINCT name FROM users ORDER BY age", ExecutionError, "must appear in the select list"),
    ("SELECT name FROM users LIMIT -1", ExecutionError, "LIMIT must be a non-negative integer"),
    ("SELECT name FROM users LIMIT 1 OFFSET 'a'", ExecutionError, "OFFSET must be a non-negative integer"),
    ("SELECT name FROM users LIMIT (SELECT 1)", ExecutionError, "subqueries are not supported"),
    ("SELECT SUM(MAX(age)) FROM users", ExecutionError, "aggregate calls cannot be nested"),
    ("SELECT COUNT(*) FROM users GROUP BY COUNT(*)", ExecutionError, "not allowed in GROUP BY"),
    ("SELECT SUM(*) FROM users", ExecutionError, "wrong arguments for aggregate SUM"),
    ("SELECT MAX(age, id) FROM users", ExecutionError, "wrong arguments for aggregate MAX"),
    ("SELECT COUNT() FROM users", ExecutionError, "wrong arguments for aggregate COUNT"),
    ("SELECT name, COUNT(*) FROM users", ExecutionError, "column name must appear in GROUP BY"),
    ("SELECT city FROM users GROUP BY age HAVING name = 'x'", ExecutionError, "column city must appear"),
    ("SELECT ghost, COUNT(*) FROM users GROUP BY city", CatalogError, "no such column: ghost"),
])
def test_planning_errors(shop, sql, error, message):
    with pytest.raises(error, match=message):
        shop.execute(sql)
