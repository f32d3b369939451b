"""Tests for BEGIN/COMMIT/ROLLBACK, the undo log and statement atomicity."""

import pytest

from conftest import rows
from minisql.catalog import Catalog, Column, TableSchema
from minisql.errors import CatalogError, ConstraintError, SQLTypeError, TransactionError
from minisql.sqltypes import SqlType
from minisql.transactions import TransactionManager


def test_rollback_undoes_insert_update_and_delete(shop):
    before = rows(shop, "SELECT * FROM users")
    shop.execute("BEGIN")
    shop.execute("INSERT INTO users VALUES (6, 'fay', 20, 'nice')")
    shop.execute("UPDATE users SET age = age + 1 WHERE city = 'rome'")
    shop.execute("DELETE FROM users WHERE id = 1")
    assert len(rows(shop, "SELECT * FROM users")) == 5
    shop.execute("ROLLBACK")
    assert rows(shop, "SELECT * FROM users") == before


def test_rollback_restores_index_contents(shop):
    shop.execute("CREATE INDEX users_age ON users (age)")
    shop.execute("BEGIN")
    shop.execute("UPDATE users SET age = 99 WHERE id = 2")
    shop.execute("DELETE FROM users WHERE age = 31")
    shop.execute("ROLLBACK")
    assert rows(shop, "SELECT name FROM users WHERE age = 25") == [("bob",), ("eve",)]
    assert rows(shop, "SELECT name FROM users WHERE age = 31") == [("ann",)]
    assert rows(shop, "SELECT name FROM users WHERE age = 99") == []


def test_commit_keeps_changes(shop):
    shop.execute("BEGIN")
    shop.execute("DELETE FROM orders")
    shop.execute("COMMIT")
    assert rows(shop, "SELECT COUNT(*) FROM orders") == [(0,)]
    assert shop.transactions.active is False
    assert len(shop.transactions) == 0


def test_rollback_undoes_ddl(shop):
    shop.execute("BEGIN")
    shop.execute("CREATE TABLE tmp (a INTEGER)")
    shop.execute("DROP TABLE orders")
    shop.execute("CREATE INDEX users_city ON users (city)")
    shop.execute("ROLLBACK")
    assert shop.table_names() == ["orders", "users"]
    assert "users_city" not in shop.catalog.get_table("users").indexes
    assert rows(shop, "SELECT COUNT(*) FROM orders") == [(6,)]


def test_rollback_reattaches_dropped_index(shop):
    shop.execute("CREATE INDEX users_city ON users (city)")
    shop.execute("BEGIN")
    shop.execute("DROP INDEX users_city")
    shop.execute("INSERT INTO users VALUES (6, 'fay', 20, 'oslo')")
    shop.execute("ROLLBACK")
    assert shop.explain("SELECT id FROM users WHERE city = 'oslo'").splitlines()[1] == \
        "  IndexScan users USING users_city (city = 'oslo')"
    assert rows(shop, "SELECT id FROM users WHERE city = 'oslo'") == [(1,), (3,)]


def test_failed_multi_row_insert_leaves_no_rows_in_autocommit(shop):
    with pytest.raises(ConstraintError):
        shop.execute("INSERT INTO users VALUES (7, 'gus', 1, 'x'), (8, 'hal', 2, 'y'), (1, 'dup', 3, 'z')")
    assert rows(shop, "SELECT COUNT(*) FROM users") == [(5,)]
    assert len(shop.transactions) == 0


def test_failed_update_inside_transaction_keeps_earlier_statements(shop):
    shop.execute("BEGIN")
    shop.execute("INSERT INTO users VALUES (6, 'fay', 20, 'nice')")
    with pytest.raises(SQLTypeError):
        shop.execute("UPDATE users SET age = 'old' WHERE id >= 5")
    assert rows(shop, "SELECT age FROM users WHERE id >= 5") == [(25,), (20,)]
    shop.execute("COMMIT")
    assert rows(shop, "SELECT name FROM users WHERE id = 6") == [("fay",)]


def test_failed_update_on_unique_key_rolls_back_partial_changes(shop):
    with pytest.raises(ConstraintError):
        shop.execute("UPDATE users SET id = id + 1")
    assert rows(shop, "SELECT id FROM users") == [(1,), (2,), (3,), (4,), (5,)]


def test_autocommit_clears_undo_log_after_each_statement(shop):
    shop.execute("INSERT INTO users VALUES (6, 'fay', 20, 'nice')")
    assert len(shop.transactions) == 0


@pytest.mark.parametrize("script, message", [
    (["BEGIN", "BEGIN"], "a transaction is already active"),
    (["COMMIT"], "no transaction is active"),
    (["ROLLBACK"], "no transaction is active"),
    (["BEGIN", "COMMIT", "COMMIT"], "no transaction is active"),
])
def test_invalid_transaction_control(db, script, message):
    with pytest.raises(TransactionError, match=message):
        for statement in script:
            db.execute(statement)


def test_savepoint_and_rollback_to_undo_newer_entries_only():
    catalog = Catalog()
    manager = TransactionManager(catalog)
    manager.record("create_table", "a")
    table = catalog.create_table(TableSchema("a", [Column("x", SqlType.INTEGER)]))
    first = table.insert((1,))
    manager.record("insert", table, first)
    mark = manager.savepoint()
    second = table.insert((2,))
    manager.record("insert", table, second)
    manager.rollback_to(mark)
    assert list(table.scan()) == [(first, (1,))]
    assert len(manager) == 2


def test_statement_context_rolls_back_only_on_engine_errors():
    catalog = Catalog()
    manager = TransactionManager(catalog)
    with pytest.raises(CatalogError):
        with manager.statement():
            manager.record("create_table", "ghost")
            raise CatalogError("boom")
    assert len(manager) == 0


def test_unknown_undo_action_is_reported():
    manager = TransactionManager(Catalog())
    manager.begin()
    manager.record("teleport", 1)
    with pytest.raises(TransactionError, match="unknown undo action 'teleport'"):
        manager.rollback()
