"""Tests for the recursive-descent parser."""

import pytest

from minisql import nodes as n
from minisql.errors import ParseError
from minisql.parser import parse, parse_expression, parse_script


def col(name, table=None):
    return n.ColumnRef(name, table)


def lit(value):
    return n.Literal(value)


def test_arithmetic_precedence_multiplication_binds_tighter():
    assert parse_expression("1 + 2 * 3") == n.BinaryOp("+", lit(1), n.BinaryOp("*", lit(2), lit(3)))


def test_additive_operators_are_left_associative():
    assert parse_expression("a - b - c") == n.BinaryOp("-", n.BinaryOp("-", col("a"), col("b")), col("c"))


def test_parentheses_override_precedence():
    assert parse_expression("(1 + 2) * 3") == n.BinaryOp("*", n.BinaryOp("+", lit(1), lit(2)), lit(3))


def test_and_binds_tighter_than_or():
    assert parse_expression("a OR b AND c") == n.BinaryOp("OR", col("a"), n.BinaryOp("AND", col("b"), col("c")))


def test_not_applies_to_whole_comparison():
    assert parse_expression("NOT a = 1") == n.UnaryOp("NOT", n.BinaryOp("=", col("a"), lit(1)))


def test_comparison_aliases_are_normalised():
    assert parse_expression("a == 1") == n.BinaryOp("=", col("a"), lit(1))
    assert parse_expression("a != 1") == n.BinaryOp("<>", col("a"), lit(1))


def test_negative_number_literal_is_folded():
    assert parse_expression("-5") == lit(-5)
    assert parse_expression("- -2.5") == lit(2.5)


def test_unary_minus_on_column_and_unary_plus_is_dropped():
    assert parse_expression("-a") == n.UnaryOp("-", col("a"))
    assert parse_expression("+a") == col("a")


def test_concat_operator_at_additive_level():
    assert parse_expression("a || 'x' = b") == n.BinaryOp("=", n.BinaryOp("||", col("a"), lit("x")), col("b"))


def test_qualified_column_reference():
    assert parse_expression("u.name") == col("name", "u")


def test_boolean_and_null_literals():
    assert parse_expression("TRUE") == lit(True)
    assert parse_expression("false") == lit(False)
    assert parse_expression("NULL") == lit(None)


def test_is_null_and_is_not_null():
    assert parse_expression("a IS NULL") == n.IsNull(col("a"))
    assert parse_expression("a IS NOT NULL") == n.IsNull(col("a"), negated=True)


def test_between_and_not_between():
    assert parse_expression("a BETWEEN 1 AND 2 + 1") == n.Between(col("a"), lit(1), n.BinaryOp("+", lit(2), lit(1)))
    assert parse_expression("a NOT BETWEEN 1 AND 2").negated is True


def test_in_list_and_not_in():
    assert parse_expression("a IN (1, 2)") == n.InList(col("a"), (lit(1), lit(2)))
    assert parse_expression("a NOT IN ('x')") == n.InList(col("a"), (lit("x"),), negated=True)


def test_in_subquery():
    expr = parse_expression("a IN (SELECT b FROM t)")
    assert isinstance(expr, n.InSubquery)
    assert expr.query.items == (n.SelectItem(col("b")),)


def test_like_and_not_like():
    assert parse_expression("name LIKE 'a%'") == n.Like(col("name"), lit("a%"))
    assert parse_expression("name NOT LIKE 'a%'") == n.Like(col("name"), lit("a%"), negated=True)


def test_exists_and_not_exists():
    expr = parse_expression("NOT EXISTS (SELECT 1)")
    assert isinstance(expr, n.UnaryOp) and isinstance(expr.operand, n.Exists)


def test_scalar_subquery_in_parentheses():
    expr = parse_expression("(SELECT MAX(a) FROM t) + 1")
    assert isinstance(expr.left, n.ScalarSubquery)


def test_searched_case_expression():
    expr = parse_expression("CASE WHEN a > 1 THEN 'big' ELSE 'small' END")
    assert expr == n.Case(None, ((n.BinaryOp(">", col("a"), lit(1)), lit("big")),), lit("small"))


def test_simple_case_expression_without_else():
    expr = parse_expression("CASE a WHEN 1 THEN 'one' WHEN 2 THEN 'two' END")
    assert expr == n.Case(col("a"), ((lit(1), lit("one")), (lit(2), lit("two"))), None)


def test_cast_expression():
    assert parse_expression("CAST(a AS integer)") == n.Cast(col("a"), "integer")


def test_function_calls_star_distinct_and_empty_args():
    assert parse_expression("COUNT(*)") == n.FunctionCall("count", (), star=True)
    assert parse_expression("count(DISTINCT a)") == n.FunctionCall("count", (col("a"),), distinct=True)
    assert parse_expression("Upper(a, 'b')") == n.FunctionCall("upper", (col("a"), lit("b")))
    assert parse_expression("f()") == n.FunctionCall("f", ())


def test_select_with_every_clause():
    stmt = parse("SELECT DISTINCT a AS x, b y FROM t WHERE a > 1 GROUP BY a, b "
                 "HAVING COUNT(*) > 1 ORDER BY x DESC NULLS FIRST, y LIMIT 5 OFFSET 2")
    assert stmt.distinct is True
    assert stmt.items == (n.SelectItem(col("a"), "x"), n.SelectItem(col("b"), "y"))
    assert stmt.from_ == n.TableRef("t")
    assert stmt.where == n.BinaryOp(">", col("a"), lit(1))
    assert stmt.group_by == (col("a"), col("b"))
    assert stmt.having == n.BinaryOp(">", n.FunctionCall("count", (), star=True), lit(1))
    assert stmt.order_by == (n.OrderItem(col("x"), True, True), n.OrderItem(col("y"), False, None))
    assert (stmt.limit, stmt.offset) == (lit(5), lit(2))


def test_select_all_keyword_and_nulls_last():
    stmt = parse("SELECT ALL a FROM t ORDER BY a ASC NULLS LAST")
    assert stmt.distinct is False
    assert stmt.order_by == (n.OrderItem(col("a"), False, False),)


def test_select_star_and_qualified_star():
    stmt = parse("SELECT *, u.* FROM users u")
    assert stmt.items == (n.SelectItem(n.Star()), n.SelectItem(n.Star("u")))
    assert stmt.from_ == n.TableRef("users", "u")


def test_select_without_from():
    assert parse("SELECT 1 + 1").from_ is None


def test_joins_are_left_associative():
    stmt = parse("SELECT * FROM a JOIN b ON a.id = b.id LEFT OUTER JOIN c ON b.id = c.id CROSS JOIN d, e")
    outer = stmt.from_
    assert outer.kind == "CROSS" and outer.right == n.TableRef("e")
    assert outer.left.kind == "CROSS" and outer.left.right == n.TableRef("d")
    left_join = outer.left.left
    assert left_join.kind == "LEFT" and left_join.right == n.TableRef("c")
    assert left_join.left == n.Join(n.TableRef("a"), n.TableRef("b"), "INNER",
                                    n.BinaryOp("=", col("id", "a"), col("id", "b")))


def test_inner_join_keyword_and_as_alias():
    stmt = parse("SELECT * FROM a AS x INNER JOIN b AS y ON x.k = y.k")
    assert stmt.from_.kind == "INNER"
    assert stmt.from_.left == n.TableRef("a", "x")


def test_derived_table_requires_alias():
    stmt = parse("SELECT * FROM (SELECT 1 AS one) AS s")
    assert isinstance(stmt.from_, n.SubqueryRef) and stmt.from_.alias == "s"
    with pytest.raises(ParseError, match="alias for derived table"):
        parse("SELECT * FROM (SELECT 1)")


def test_insert_values_with_columns_and_multiple_rows():
    stmt = parse("INSERT INTO t (a, b) VALUES (1, 'x'), (2, NULL)")
    assert stmt == n.Insert("t", ("a", "b"), ((lit(1), lit("x")), (lit(2), lit(None))))


def test_insert_select():
    stmt = parse("INSERT INTO t SELECT a FROM s")
    assert stmt.columns == () and stmt.rows == () and isinstance(stmt.query, n.Select)


def test_update_with_multiple_assignments_and_where():
    stmt = parse("UPDATE t SET a = a + 1, b = 'z' WHERE id = 3")
    assert stmt == n.Update("t", (("a", n.BinaryOp("+", col("a"), lit(1))), ("b", lit("z"))),
                            n.BinaryOp("=", col("id"), lit(3)))


def test_delete_with_and_without_where():
    assert parse("DELETE FROM t") == n.Delete("t")
    assert parse("DELETE FROM t WHERE a < 0").where == n.BinaryOp("<", col("a"), lit(0))


def test_create_table_with_constraints():
    stmt = parse("CREATE TABLE IF NOT EXISTS t (id INTEGER PRIMARY KEY, name VARCHAR(20) NOT NULL UNIQUE, "
                 "score REAL DEFAULT -1.5, note TEXT NULL)")
    assert stmt.if_not_exists is True
    assert stmt.columns == (
        n.ColumnDef("id", "integer", None, not_null=True, primary_key=True),
        n.ColumnDef("name", "varchar", 20, not_null=True, unique=True),
        n.ColumnDef("score", "real", default=lit(-1.5)),
        n.ColumnDef("note", "text"),
    )


def test_create_table_rejects_non_integer_length():
    with pytest.raises(ParseError, match="type length must be an integer"):
        parse("CREATE TABLE t (a VARCHAR(2.5))")


def test_create_index_variants():
    assert parse("CREATE INDEX ix ON t (a)") == n.CreateIndex("ix", "t", "a", False, "btree")
    assert parse("CREATE UNIQUE INDEX ix ON t (a) USING HASH") == n.CreateIndex("ix", "t", "a", True, "hash")
    assert parse("CREATE INDEX ix ON t (a) USING btree").kind == "btree"


def test_drop_statements():
    assert parse("DROP TABLE IF EXISTS t") == n.DropTable("t", True)
    assert parse("DROP TABLE t") == n.DropTable("t", False)
    assert parse("DROP INDEX ix") == n.DropIndex("ix")


def test_transaction_statements():
    assert parse("BEGIN TRANSACTION") == n.Begin()
    assert parse("begin") == n.Begin()
    assert parse("COMMIT;") == n.Commit()
    assert parse("ROLLBACK") == n.Rollback()


def test_contextual_words_can_be_column_names():
    stmt = parse("SELECT first, last, key, nulls FROM t ORDER BY first")
    assert [item.expr.name for item in stmt.items] == ["first", "last", "key", "nulls"]


def test_parse_script_splits_statements_and_skips_empty_ones():
    statements = parse_script(";SELECT 1;; SELECT 2;")
    assert [s.items[0].expr for s in statements] == [lit(1), lit(2)]


def test_parse_rejects_multiple_statements():
    with pytest.raises(ParseError, match="expected a single statement, got 2"):
        parse("SELECT 1; SELECT 2")


@pytest.mark.parametrize("sql, message", [
    ("", "empty SQL text"),
    ("SELEC 1", "expected a statement but found 'selec'"),
    ("SELECT", "expected an expression but found end of input"),
    ("SELECT 1 2", "expected ';' but found 2"),
    ("SELECT a FROM", "expected table name"),
    ("SELECT (1 + 2", "expected ')'"),
    ("SELECT a FROM t ORDER BY a NULLS", "expected FIRST or LAST"),
    ("SELECT CASE END", "expected an expression"),
    ("SELECT CASE a END", "expected WHEN"),
    ("UPDATE t SET a 1", "expected '='"),
    ("CREATE UNIQUE TABLE t (a INT)", "expected INDEX"),
    ("CREATE INDEX ix ON t (a) USING tree", "expected HASH or BTREE"),
    ("CREATE TABLE t (id INT PRIMARY)", "expected KEY"),
    ("INSERT INTO t VALUES 1", "expected '('"),
    ("SELECT a AS FROM t", "expected alias"),
    ("SELECT a FROM t GROUP a", "expected BY but found 'a'"),
    ("INSERT t VALUES (1)", "expected INTO"),
])
def test_syntax_errors_describe_expectation(sql, message):
    with pytest.raises(ParseError, match=message.replace("(", r"\(").replace(")", r"\)")):
        parse(sql)


def test_parse_expression_rejects_trailing_tokens():
    with pytest.raises(ParseError, match="expected end of input"):
        parse_expression("a b")
