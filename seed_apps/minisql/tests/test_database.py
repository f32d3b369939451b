"""End-to-end tests through the public Database API."""

import random

import pytest

from conftest import rows
from minisql import (CatalogError, ConstraintError, Database, ExecutionError, MiniSQLError, ParseError,
                     Result, SQLTypeError)


# ----------------------------------------------------------------- Result


def test_result_accessors(shop):
    result = shop.execute("SELECT id, name FROM users WHERE id < 3")
    assert result.columns == ["id", "name"]
    assert result.rowcount == 2 and len(result) == 2
    assert list(result) == [(1, "ann"), (2, "bob")]
    assert result.scalar() == 1
    assert result.column("name") == ["ann", "bob"]
    assert result.as_dicts() == [{"id": 1, "name": "ann"}, {"id": 2, "name": "bob"}]


def test_result_scalar_of_empty_result_and_unknown_column():
    result = Result(["a"], [])
    assert result.scalar() is None
    with pytest.raises(CatalogError, match="result has no column b"):
        result.column("b")


# ----------------------------------------------------------------- DDL


def test_create_table_if_not_exists_is_a_no_op_for_existing_table(shop):
    shop.execute("CREATE TABLE IF NOT EXISTS users (x INTEGER)")
    assert shop.catalog.get_table("users").schema.column_names == ["id", "name", "age", "city"]
    with pytest.raises(CatalogError, match="table users already exists"):
        shop.execute("CREATE TABLE users (x INTEGER)")


def test_create_table_errors(db):
    with pytest.raises(SQLTypeError, match="unknown type 'blob'"):
        db.execute("CREATE TABLE t (a BLOB)")
    with pytest.raises(SQLTypeError, match="cannot store TEXT value 'x' in INTEGER column"):
        db.execute("CREATE TABLE t (a INTEGER DEFAULT 'x')")
    with pytest.raises(CatalogError, match="duplicate column a"):
        db.execute("CREATE TABLE t (a INTEGER, a TEXT)")
    assert db.table_names() == []


def test_drop_table_and_if_exists(shop):
    shop.execute("DROP TABLE orders")
    assert shop.table_names() == ["users"]
    shop.execute("DROP TABLE IF EXISTS orders")
    with pytest.raises(CatalogError, match="no such table: orders"):
        shop.execute("DROP TABLE orders")


def test_unique_index_creation_fails_on_existing_duplicates(shop):
    with pytest.raises(ConstraintError, match="duplicate key 'oslo'"):
        shop.execute("CREATE UNIQUE INDEX users_city ON users (city)")
    shop.execute("CREATE INDEX users_city ON users (city)")


def test_unique_column_rejects_duplicates_but_allows_many_nulls(db):
    db.execute("CREATE TABLE t (a INTEGER, email TEXT UNIQUE)")
    db.execute("INSERT INTO t VALUES (1, 'x'), (2, NULL), (3, NULL)")
    with pytest.raises(ConstraintError, match="violates unique index t_email_key"):
        db.execute("INSERT INTO t VALUES (4, 'x')")
    assert rows(db, "SELECT COUNT(*) FROM t") == [(3,)]


def test_drop_index_and_unknown_index(shop):
    shop.execute("CREATE INDEX ix ON users (age) USING HASH")
    shop.execute("DROP INDEX ix")
    with pytest.raises(CatalogError, match="no such index: ix"):
        shop.execute("DROP INDEX ix")


# ----------------------------------------------------------------- INSERT / UPDATE / DELETE


def test_insert_with_column_list_uses_defaults_and_nulls(db):
    db.execute("CREATE TABLE t (id INTEGER PRIMARY KEY, status TEXT DEFAULT 'new', score REAL DEFAULT 1, note TEXT)")
    result = db.execute("INSERT INTO t (note, id) VALUES ('hi', 1), (NULL, 2)")
    assert result.rowcount == 2
    assert rows(db, "SELECT * FROM t") == [(1, "new", 1.0, "hi"), (2, "new", 1.0, None)]


def test_insert_coerces_values_to_column_types(db):
    db.execute("CREATE TABLE t (i INTEGER, r REAL, b BOOLEAN)")
    db.execute("INSERT INTO t VALUES (2.0, 3, 1)")
    assert rows(db, "SELECT i, r, b, TYPEOF(i), TYPEOF(r), TYPEOF(b) FROM t") == [
        (2, 3.0, True, "integer", "real", "boolean")]


def test_insert_evaluates_constant_expressions_and_scalar_subqueries(shop):
    shop.execute("INSERT INTO users VALUES ((SELECT MAX(id) FROM users) + 1, 'fo' || 'x', 2 * 10, NULL)")
    assert rows(shop, "SELECT * FROM users WHERE id = 6") == [(6, "fox", 20, None)]


@pytest.mark.parametrize("sql, error, message", [
    ("INSERT INTO users VALUES (6, NULL, 1, 'x')", ConstraintError, "NULL value in NOT NULL column users.name"),
    ("INSERT INTO users VALUES (1, 'dup', 1, 'x')", ConstraintError, "violates unique index users_pkey"),
    ("INSERT INTO users (id) VALUES (7)", ConstraintError, "NOT NULL column users.name"),
    ("INSERT INTO users VALUES (6, 'x')", ExecutionError, "INSERT expects 4 values but got 2"),
    ("INSERT INTO users (id, nope) VALUES (6, 1)", CatalogError, "no column nope in table users"),
    ("INSERT INTO users (id, id) VALUES (6, 1)", CatalogError, "listed more than once"),
    ("INSERT INTO users VALUES ('6', 'x', 1, 'y')", SQLTypeError, "cannot store TEXT value"),
    ("INSERT INTO ghosts VALUES (1)", CatalogError, "no such table: ghosts"),
    ("INSERT INTO users VALUES (id, 'x', 1, 'y')", CatalogError, "no such column: id"),
])
def test_insert_errors(shop, sql, error, message):
    with pytest.raises(error, match=message):
        shop.execute(sql)
    assert rows(shop, "SELECT COUNT(*) FROM users") == [(5,)]


def test_insert_select_copies_rows(shop):
    shop.execute("CREATE TABLE names (n TEXT, a INTEGER)")
    result = shop.execute("INSERT INTO names SELECT name, age FROM users WHERE city = 'rome' ORDER BY name DESC")
    assert result.rowcount == 2
    assert rows(shop, "SELECT * FROM names") == [("eve", 25), ("bob", 25)]


def test_text_length_limit_is_enforced(db):
    db.execute("CREATE TABLE t (code VARCHAR(3))")
    db.execute("INSERT INTO t VALUES ('abc')")
    with pytest.raises(ConstraintError, match="longer than 3 characters"):
        db.execute("INSERT INTO t VALUES ('abcd')")


def test_update_computes_from_old_row_values(db):
    db.execute("CREATE TABLE t (a INTEGER, b INTEGER)")
    db.execute("INSERT INTO t VALUES (1, 2), (3, 4)")
    result = db.execute("UPDATE t SET a = b, b = a WHERE a > 2")
    assert result.rowcount == 1
    assert rows(db, "SELECT * FROM t") == [(1, 2), (4, 3)]


def test_update_through_index_keeps_index_consistent(shop):
    shop.execute("CREATE INDEX users_age ON users (age)")
    assert shop.execute("UPDATE users SET age = age + 100 WHERE age BETWEEN 20 AND 30").rowcount == 2
    assert rows(shop, "SELECT name FROM users WHERE age > 100") == [("bob",), ("eve",)]
    assert rows(shop, "SELECT name FROM users WHERE age < 100") == [("ann",), ("dee",)]


def test_update_unknown_column_fails(shop):
    with pytest.raises(CatalogError, match="no column nope in table users"):
        shop.execute("UPDATE users SET nope = 1")


def test_delete_reports_rowcount_and_removes_rows(shop):
    assert shop.execute("DELETE FROM orders WHERE price > 2").rowcount == 3
    assert rows(shop, "SELECT id FROM orders") == [(10,), (12,), (14,)]
    assert shop.execute("DELETE FROM orders").rowcount == 3
    assert rows(shop, "SELECT * FROM orders") == []


def test_execute_script_returns_one_result_per_statement(db):
    results = db.execute_script("CREATE TABLE t (a INT); INSERT INTO t VALUES (1), (2); SELECT SUM(a) FROM t")
    assert [r.rowcount for r in results] == [0, 2, 1]
    assert results[-1].scalar() == 3


def test_errors_share_a_common_base_class(db):
    with pytest.raises(MiniSQLError):
        db.execute("SELEC 1")
    with pytest.raises(ParseError):
        db.execute("SELECT 1; SELECT 2")


# ----------------------------------------------------------------- SELECT basics


def test_select_star_and_qualified_star(shop):
    assert shop.execute("SELECT * FROM users WHERE id = 1").rows == [(1, "ann", 31, "oslo")]
    result = shop.execute("SELECT o.*, u.name FROM users u JOIN orders o ON o.user_id = u.id WHERE o.id = 13")
    assert result.columns == ["id", "user_id", "product", "qty", "price", "name"]
    assert result.rows == [(13, 4, "pad", 3, 4.0, "dee")]


def test_select_without_from(db):
    result = db.execute("SELECT 1 + 2 AS three, 'a' || 'b', UPPER('x')")
    assert result.columns == ["three", "('a' || 'b')", "UPPER('x')"]
    assert result.rows == [(3, "ab", "X")]


def test_where_treats_null_comparisons_as_false(shop):
    assert rows(shop, "SELECT name FROM users WHERE age <> 25") == [("ann",), ("dee",)]
    assert rows(shop, "SELECT name FROM users WHERE NOT (age <> 25)") == [("bob",), ("eve",)]
    assert rows(shop, "SELECT name FROM users WHERE age IS NULL") == [("cy",)]


def test_quoted_identifiers_preserve_case(db):
    db.execute('CREATE TABLE "Mixed" ("Id" INTEGER, value TEXT)')
    db.execute("INSERT INTO \"Mixed\" VALUES (1, 'a')")
    result = db.execute('SELECT "Id", VALUE FROM "Mixed"')
    assert result.columns == ["Id", "value"] and result.rows == [(1, "a")]
    with pytest.raises(CatalogError, match="no such table: mixed"):
        db.execute("SELECT * FROM Mixed")


def test_like_between_in_and_case(shop):
    sql = ("SELECT name, CASE WHEN age BETWEEN 20 AND 30 THEN 'young' WHEN age > 30 THEN 'older' "
           "ELSE 'unknown' END FROM users WHERE name LIKE '_o%' OR city IN ('oslo') ORDER BY id")
    assert rows(shop, sql) == [("ann", "older"), ("bob", "young"), ("cy", "unknown")]


def test_cast_and_functions_in_queries(shop):
    sql = "SELECT CAST(age AS TEXT) || '!', ROUND(age / 2.0), SUBSTR(name, 2), COALESCE(city, '?') FROM users WHERE id = 4"
    assert rows(shop, sql) == [("42!", 21.0, "ee", "?")]


def test_integer_division_and_errors_at_runtime(shop):
    assert rows(shop, "SELECT age / 2, age % 7 FROM users WHERE id = 1") == [(15, 3)]
    with pytest.raises(ExecutionError, match="division by zero"):
        shop.execute("SELECT age / (id - 1) FROM users")


# ----------------------------------------------------------------- ORDER BY / LIMIT / DISTINCT


def test_order_by_multiple_keys_and_directions(shop):
    assert rows(shop, "SELECT name FROM users ORDER BY age DESC, name") == [
        ("dee",), ("ann",), ("bob",), ("eve",), ("cy",)]


def test_nulls_sort_first_ascending_and_last_descending_by_default(shop):
    assert rows(shop, "SELECT id FROM users ORDER BY city, id") == [(4,), (1,), (3,), (2,), (5,)]
    assert rows(shop, "SELECT id FROM users ORDER BY city DESC, id") == [(2,), (5,), (1,), (3,), (4,)]


def test_explicit_nulls_placement(shop):
    assert rows(shop, "SELECT id FROM users ORDER BY age NULLS LAST, id") == [(2,), (5,), (1,), (4,), (3,)]
    assert rows(shop, "SELECT id FROM users ORDER BY age DESC NULLS FIRST") == [(3,), (4,), (1,), (2,), (5,)]


def test_order_by_position_alias_and_unselected_column(shop):
    assert rows(shop, "SELECT name, age FROM users ORDER BY 2 DESC, 1 LIMIT 2") == [("dee", 42), ("ann", 31)]
    assert rows(shop, "SELECT name AS who FROM users ORDER BY who DESC LIMIT 1") == [("eve",)]
    assert rows(shop, "SELECT name FROM users ORDER BY id DESC LIMIT 2") == [("eve",), ("dee",)]


def test_order_by_alias_shadowing_input_column(shop):
    assert rows(shop, "SELECT -id AS id FROM users ORDER BY id LIMIT 2") == [(-5,), (-4,)]


def test_limit_and_offset(shop):
    assert rows(shop, "SELECT id FROM users ORDER BY id LIMIT 2 OFFSET 3") == [(4,), (5,)]
    assert rows(shop, "SELECT id FROM users ORDER BY id OFFSET 4") == [(5,)]
    assert rows(shop, "SELECT id FROM users LIMIT 0") == []


def test_distinct_rows(shop):
    assert rows(shop, "SELECT DISTINCT city FROM users ORDER BY city") == [(None,), ("oslo",), ("rome",)]
    assert rows(shop, "SELECT DISTINCT age, city FROM users WHERE city = 'rome'") == [(25, "rome")]


# ----------------------------------------------------------------- aggregation


def test_aggregates_over_whole_table(shop):
    assert rows(shop, "SELECT COUNT(*), COUNT(age), COUNT(DISTINCT age), SUM(age), AVG(age), MIN(name), MAX(age) "
                      "FROM users") == [(5, 4, 3, 123, 30.75, "ann", 42)]


def test_aggregates_over_empty_input(shop):
    assert rows(shop, "SELECT COUNT(*), SUM(age), MAX(age) FROM users WHERE id > 100") == [(0, None, None)]
    assert rows(shop, "SELECT city, COUNT(*) FROM users WHERE id > 100 GROUP BY city") == []


def test_group_by_with_having_and_order(shop):
    sql = ("SELECT user_id, COUNT(*) AS n, SUM(qty * price) AS total FROM orders "
           "GROUP BY user_id HAVING COUNT(*) > 1 ORDER BY total DESC")
    assert rows(shop, sql) == [(1, 2, 10.0), (2, 2, 7.5)]


def test_group_by_null_values_form_one_group(shop):
    assert rows(shop, "SELECT city, COUNT(*) FROM users GROUP BY city ORDER BY city") == [
        (None, 1), ("oslo", 2), ("rome", 2)]


def test_order_by_aggregate_not_in_select_list(shop):
    assert rows(shop, "SELECT product FROM orders GROUP BY product ORDER BY COUNT(*) DESC, product") == [
        ("pen",), ("pad",), ("ink",)]


def test_group_by_expression_and_qualified_column(shop):
    assert rows(shop, "SELECT age / 10, COUNT(*) FROM users WHERE age IS NOT NULL GROUP BY age / 10 ORDER BY 1") == [
        (2, 2), (3, 1), (4, 1)]
    assert rows(shop, "SELECT u.city, COUNT(*) FROM users u GROUP BY city ORDER BY city LIMIT 1") == [(None, 1)]


def test_having_without_group_by(shop):
    assert rows(shop, "SELECT COUNT(*) FROM users HAVING COUNT(*) > 10") == []
    assert rows(shop, "SELECT COUNT(*) FROM users HAVING COUNT(*) > 1") == [(5,)]


def test_sum_of_text_column_fails(shop):
    with pytest.raises(SQLTypeError, match="cannot aggregate non-numeric value"):
        shop.execute("SELECT SUM(name) FROM users")


def test_aggregate_in_where_is_rejected(shop):
    with pytest.raises(ExecutionError, match="aggregate function COUNT is not allowed here"):
        shop.execute("SELECT id FROM users WHERE COUNT(*) > 1")


# ----------------------------------------------------------------- joins


def test_inner_join_drops_unmatched_rows(shop):
    sql = "SELECT u.name, o.product FROM users u JOIN orders o ON u.id = o.user_id ORDER BY o.id"
    assert rows(shop, sql) == [("ann", "pen"), ("ann", "ink"), ("bob", "pen"), ("dee", "pad"), ("bob", "pad")]


def test_left_join_keeps_unmatched_left_rows_with_nulls(shop):
    sql = "SELECT u.name, o.id FROM users u LEFT JOIN orders o ON u.id = o.user_id ORDER BY u.id, o.id"
    assert rows(shop, sql) == [("ann", 10), ("ann", 11), ("bob", 12), ("bob", 15), ("cy", None),
                               ("dee", 13), ("eve", None)]


def test_left_join_on_condition_versus_where_condition(shop):
    on_sql = "SELECT u.id, o.id FROM users u LEFT JOIN orders o ON u.id = o.user_id AND o.product = 'pad' ORDER BY u.id"
    assert rows(shop, on_sql) == [(1, None), (2, 15), (3, None), (4, 13), (5, None)]
    where_sql = ("SELECT u.id, o.id FROM users u LEFT JOIN orders o ON u.id = o.user_id "
                 "WHERE o.product = 'pad' ORDER BY u.id")
    assert rows(shop, where_sql) == [(2, 15), (4, 13)]


def test_anti_join_with_left_join_and_is_null(shop):
    sql = "SELECT u.name FROM users u LEFT JOIN orders o ON o.user_id = u.id WHERE o.id IS NULL"
    assert rows(shop, sql) == [("cy",), ("eve",)]


def test_self_join_with_non_equi_condition(shop):
    sql = "SELECT a.name, b.name FROM users a JOIN users b ON a.age < b.age AND a.city = b.city"
    assert rows(shop, sql) == []
    sql = "SELECT a.name, b.name FROM users a, users b WHERE a.age = b.age AND a.id < b.id"
    assert rows(shop, sql) == [("bob", "eve")]


def test_three_way_join_result_is_independent_of_join_order(db):
    db.execute_script("""
        CREATE TABLE a (id INTEGER, bid INTEGER);
        CREATE TABLE b (id INTEGER, cid INTEGER);
        CREATE TABLE c (id INTEGER, label TEXT);
        INSERT INTO a VALUES (1, 10), (2, 20), (3, 10), (4, 99);
        INSERT INTO b VALUES (10, 100), (20, 200);
        INSERT INTO c VALUES (100, 'x'), (200, 'y'), (300, 'z');
    """)
    sql = "SELECT a.id, c.label FROM a JOIN b ON a.bid = b.id JOIN c ON b.cid = c.id ORDER BY a.id"
    assert rows(db, sql) == [(1, "x"), (2, "y"), (3, "x")]
    reordered = "SELECT a.id, c.label FROM c, b, a WHERE b.cid = c.id AND a.bid = b.id ORDER BY a.id"
    assert rows(db, reordered) == [(1, "x"), (2, "y"), (3, "x")]


def test_join_with_unqualified_unique_column_names(shop):
    sql = "SELECT name, product FROM users JOIN orders ON users.id = user_id WHERE qty >= 3 ORDER BY product"
    assert rows(shop, sql) == [("dee", "pad"), ("bob", "pen")]


# ----------------------------------------------------------------- subqueries


def test_in_and_not_in_subqueries(shop):
    assert rows(shop, "SELECT name FROM users WHERE id IN (SELECT user_id FROM orders WHERE product = 'pen')") == [
        ("ann",), ("bob",)]
    assert rows(shop, "SELECT name FROM users WHERE id NOT IN (SELECT user_id FROM orders)") == [("cy",), ("eve",)]


def test_not_in_subquery_containing_null_returns_nothing(shop):
    shop.execute("INSERT INTO orders VALUES (16, NULL, 'cap', 1, 2.0)")
    assert rows(shop, "SELECT name FROM users WHERE id NOT IN (SELECT user_id FROM orders)") == []


def test_exists_and_scalar_subqueries(shop):
    assert rows(shop, "SELECT COUNT(*) FROM users WHERE EXISTS (SELECT 1 FROM orders WHERE qty > 4)") == [(5,)]
    assert rows(shop, "SELECT COUNT(*) FROM users WHERE NOT EXISTS (SELECT 1 FROM orders WHERE qty > 40)") == [(5,)]
    assert rows(shop, "SELECT name FROM users WHERE age = (SELECT MAX(age) FROM users)") == [("dee",)]
    assert rows(shop, "SELECT name, (SELECT COUNT(*) FROM orders) FROM users WHERE id = 1") == [("ann", 6)]


def test_derived_table_with_aggregation(shop):
    sql = ("SELECT t.city, t.n FROM (SELECT city, COUNT(*) AS n FROM users GROUP BY city) AS t "
           "WHERE t.n > 1 ORDER BY t.city")
    assert rows(shop, sql) == [("oslo", 2), ("rome", 2)]


def test_derived_table_joined_with_base_table(shop):
    sql = ("SELECT u.name, s.total FROM users u JOIN (SELECT user_id, SUM(price) AS total FROM orders "
           "GROUP BY user_id) s ON s.user_id = u.id ORDER BY s.total DESC")
    assert rows(shop, sql) == [("ann", 8.5), ("bob", 5.5), ("dee", 4.0)]


# ----------------------------------------------------------------- index consistency


def test_index_scans_return_same_rows_as_sequential_scans():
    rng = random.Random(7)
    plain, indexed = Database(), Database()
    for database in (plain, indexed):
        database.execute("CREATE TABLE t (id INTEGER PRIMARY KEY, v INTEGER, w TEXT)")
    indexed.execute("CREATE INDEX t_v ON t (v)")
    indexed.execute("CREATE INDEX t_w ON t (w) USING HASH")
    values = ", ".join(f"({i}, {rng.randint(0, 20)}, '{rng.choice('abc')}')" for i in range(200))
    for database in (plain, indexed):
        database.execute(f"INSERT INTO t VALUES {values}")
        database.execute("DELETE FROM t WHERE v = 7")
        database.execute("UPDATE t SET v = v + 1 WHERE w = 'a'")
    queries = ["SELECT id FROM t WHERE v = 5 ORDER BY id", "SELECT id FROM t WHERE v > 15 ORDER BY id",
               "SELECT id FROM t WHERE v BETWEEN 3 AND 6 AND w = 'b' ORDER BY id",
               "SELECT id FROM t WHERE v >= 18 AND v < 20 ORDER BY id", "SELECT id FROM t WHERE w = 'c' ORDER BY id",
               "SELECT COUNT(*) FROM t WHERE id < 50"]
    for sql in queries:
        assert "IndexScan" in indexed.explain(sql), sql
        assert indexed.execute(sql).rows == plain.execute(sql).rows, sql
