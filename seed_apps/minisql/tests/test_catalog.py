"""Tests for schemas and the catalog."""

import pytest

from minisql.catalog import Catalog, Column, TableSchema
from minisql.errors import CatalogError, ConstraintError, SQLTypeError
from minisql.sqltypes import SqlType


def schema(name="t"):
    return TableSchema(name, [
        Column("id", SqlType.INTEGER, primary_key=True, not_null=True),
        Column("email", SqlType.TEXT, length=10, unique=True),
        Column("score", SqlType.REAL),
    ])


def test_schema_positions_and_names():
    s = schema()
    assert s.column_names == ["id", "email", "score"]
    assert s.position("score") == 2
    assert s.column("email").length == 10


def test_schema_unknown_column():
    with pytest.raises(CatalogError, match="no column nope in table t"):
        schema().position("nope")


def test_schema_rejects_duplicate_columns_empty_tables_and_two_primary_keys():
    with pytest.raises(CatalogError, match="duplicate column a"):
        TableSchema("t", [Column("a", SqlType.TEXT), Column("a", SqlType.TEXT)])
    with pytest.raises(CatalogError, match="at least one column"):
        TableSchema("t", [])
    with pytest.raises(CatalogError, match="more than one primary key"):
        TableSchema("t", [Column("a", SqlType.INTEGER, primary_key=True),
                          Column("b", SqlType.INTEGER, primary_key=True)])


def test_validate_row_coerces_values():
    assert schema().validate_row([1, "a@b", 2]) == (1, "a@b", 2.0)


def test_validate_row_enforces_not_null_length_type_and_arity():
    s = schema()
    with pytest.raises(ConstraintError, match="NULL value in NOT NULL column t.id"):
        s.validate_row([None, "x", 1.0])
    with pytest.raises(ConstraintError, match="longer than 10"):
        s.validate_row([1, "x" * 11, 1.0])
    with pytest.raises(SQLTypeError):
        s.validate_row([1, "x", "high"])
    with pytest.raises(ConstraintError, match="has 3 columns but 2 values"):
        s.validate_row([1, "x"])


def test_create_table_adds_constraint_indexes():
    catalog = Catalog()
    table = catalog.create_table(schema())
    assert sorted(table.indexes) == ["t_email_key", "t_pkey"]
    assert table.indexes["t_pkey"].unique and table.indexes["t_pkey"].column == 0
    assert table.indexes["t_email_key"].column == 1
    assert catalog.table_names() == ["t"] and catalog.has_table("t")


def test_create_duplicate_table_fails():
    catalog = Catalog()
    catalog.create_table(schema())
    with pytest.raises(CatalogError, match="table t already exists"):
        catalog.create_table(schema())


def test_get_unknown_table_fails():
    with pytest.raises(CatalogError, match="no such table: ghost"):
        Catalog().get_table("ghost")


def test_drop_and_restore_table_with_its_indexes():
    catalog = Catalog()
    table = catalog.create_table(schema())
    catalog.create_index("by_score", "t", "score")
    dropped = catalog.drop_table("t")
    assert dropped is table and not catalog.has_table("t")
    with pytest.raises(CatalogError, match="no such index: by_score"):
        catalog.drop_index("by_score")
    catalog.restore_table(dropped)
    assert catalog.get_table("t") is table
    assert catalog.drop_index("by_score")[1].name == "by_score"


def test_create_index_validates_name_table_and_column():
    catalog = Catalog()
    catalog.create_table(schema())
    index = catalog.create_index("ix", "t", "score", kind="hash")
    assert index.kind == "hash" and index.column == 2
    with pytest.raises(CatalogError, match="index ix already exists"):
        catalog.create_index("ix", "t", "email")
    with pytest.raises(CatalogError, match="no column nope"):
        catalog.create_index("ix2", "t", "nope")
    with pytest.raises(CatalogError, match="no such table: u"):
        catalog.create_index("ix3", "u", "a")


def test_constraint_indexes_cannot_be_dropped():
    catalog = Catalog()
    catalog.create_table(schema())
    with pytest.raises(CatalogError, match="enforces a constraint"):
        catalog.drop_index("t_pkey")


def test_drop_index_then_reattach():
    catalog = Catalog()
    catalog.create_table(schema())
    catalog.create_index("ix", "t", "score")
    table, index = catalog.drop_index("ix")
    assert "ix" not in table.indexes
    catalog.reattach_index(table, index)
    assert table.indexes["ix"] is index
    assert catalog.drop_index("ix") == (table, index)
