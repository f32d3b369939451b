"""Tests for the row heap and the hash / sorted indexes."""

import pytest

from minisql.catalog import Column, TableSchema
from minisql.errors import CatalogError, ConstraintError
from minisql.sqltypes import SqlType
from minisql.storage import HashIndex, SortedIndex, Table, make_index


def make_table():
    schema = TableSchema("t", [Column("id", SqlType.INTEGER), Column("v", SqlType.TEXT)])
    return Table(schema)


def test_hash_index_lookup_returns_rowids_in_ascending_order():
    index = HashIndex("ix", 0)
    index.insert("a", 3)
    index.insert("a", 1)
    index.insert("b", 2)
    assert index.lookup("a") == [1, 3]
    assert index.lookup("zzz") == []
    assert len(index) == 3


def test_index_ignores_null_keys():
    index = HashIndex("ix", 0)
    index.insert(None, 1)
    index.remove(None, 1)
    assert index.lookup(None) == []
    assert len(index) == 0


def test_index_remove_drops_empty_keys():
    index = SortedIndex("ix", 0)
    index.insert(5, 1)
    index.insert(5, 2)
    index.remove(5, 1)
    assert index.keys() == [5]
    index.remove(5, 2)
    assert index.keys() == []
    assert index.lookup(5) == []


def test_unique_index_check_ignores_own_rowid_and_nulls():
    index = HashIndex("ix", 0, unique=True)
    index.insert(7, 1)
    index.check_unique(7, 1)
    index.check_unique(None)
    index.check_unique(8)
    with pytest.raises(ConstraintError, match="duplicate key 7 violates unique index ix"):
        index.check_unique(7, 2)


def test_non_unique_index_never_reports_duplicates():
    index = HashIndex("ix", 0)
    index.insert(7, 1)
    index.check_unique(7, 2)


def test_sorted_index_keeps_keys_sorted():
    index = SortedIndex("ix", 0)
    for rowid, key in enumerate([5, 1, 9, 3, 1]):
        index.insert(key, rowid)
    assert index.keys() == [1, 3, 5, 9]


@pytest.mark.parametrize("low, high, low_inc, high_inc, expected", [
    (None, None, True, True, [10, 14, 20, 30, 40]),
    (1, 1, True, True, [10, 14]),
    (2, 4, True, True, [20, 30, 40]),
    (2, 4, False, True, [30, 40]),
    (2, 4, True, False, [20, 30]),
    (2, 4, False, False, [30]),
    (None, 2, True, False, [10, 14]),
    (3, None, False, True, [40]),
    (1.5, 3.5, True, True, [20, 30]),
    (5, 1, True, True, []),
])
def test_sorted_index_range_scan(low, high, low_inc, high_inc, expected):
    index = SortedIndex("ix", 0)
    for key, rowid in [(3, 30), (1, 14), (4, 40), (2, 20), (1, 10)]:
        index.insert(key, rowid)
    assert index.range_scan(low, high, low_inc, high_inc) == expected


def test_make_index_kinds():
    assert isinstance(make_index("hash", "a", 0), HashIndex)
    sorted_index = make_index("btree", "b", 1, unique=True)
    assert isinstance(sorted_index, SortedIndex) and sorted_index.unique and sorted_index.column == 1
    with pytest.raises(CatalogError, match="unknown index kind 'gist'"):
        make_index("gist", "c", 0)


def test_table_insert_assigns_increasing_rowids_and_scan_orders_them():
    table = make_table()
    assert [table.insert((i, str(i))) for i in range(3)] == [1, 2, 3]
    assert list(table.scan()) == [(1, (0, "0")), (2, (1, "1")), (3, (2, "2"))]
    assert len(table) == 3


def test_table_delete_and_restore_keep_rowid_and_index():
    table = make_table()
    table.add_index(SortedIndex("ix", 1))
    table.insert((1, "a"))
    rowid = table.insert((2, "b"))
    table.insert((3, "c"))
    row = table.delete(rowid)
    assert row == (2, "b")
    assert table.indexes["ix"].lookup("b") == []
    table.restore(rowid, row)
    assert [r for r, _ in table.scan()] == [1, 2, 3]
    assert table.indexes["ix"].lookup("b") == [rowid]


def test_table_update_moves_index_entries_only_when_key_changes():
    table = make_table()
    table.add_index(HashIndex("by_v", 1))
    table.add_index(HashIndex("by_id", 0))
    rowid = table.insert((1, "a"))
    old = table.update(rowid, (1, "z"))
    assert old == (1, "a")
    assert table.indexes["by_v"].lookup("a") == []
    assert table.indexes["by_v"].lookup("z") == [rowid]
    assert table.indexes["by_id"].lookup(1) == [rowid]
    assert table.rows[rowid] == (1, "z")


def test_table_insert_rejects_duplicate_unique_key_without_changes():
    table = make_table()
    table.add_index(HashIndex("uq", 0, unique=True))
    table.insert((1, "a"))
    with pytest.raises(ConstraintError):
        table.insert((1, "b"))
    assert len(table) == 1 and table.next_rowid == 2


def test_table_update_rejects_conflicting_unique_key():
    table = make_table()
    table.add_index(SortedIndex("uq", 0, unique=True))
    table.insert((1, "a"))
    second = table.insert((2, "b"))
    with pytest.raises(ConstraintError):
        table.update(second, (1, "b"))
    assert table.rows[second] == (2, "b")
    assert table.indexes["uq"].lookup(2) == [second]


def test_add_index_populates_from_existing_rows():
    table = make_table()
    table.insert((5, "x"))
    table.insert((6, "x"))
    index = HashIndex("ix", 1)
    table.add_index(index)
    assert index.lookup("x") == [1, 2]


def test_add_unique_index_over_duplicates_fails_and_is_not_attached():
    table = make_table()
    table.insert((5, "x"))
    table.insert((6, "x"))
    with pytest.raises(ConstraintError):
        table.add_index(HashIndex("ix", 1, unique=True))
    assert "ix" not in table.indexes


def test_add_index_with_taken_name_fails():
    table = make_table()
    table.add_index(HashIndex("ix", 1))
    with pytest.raises(CatalogError, match="index ix already exists"):
        table.add_index(SortedIndex("ix", 0))


def test_fetch_returns_pairs_in_requested_order():
    table = make_table()
    table.insert((1, "a"))
    table.insert((2, "b"))
    assert table.fetch([2, 1]) == [(2, (2, "b")), (1, (1, "a"))]


def test_find_index_prefers_unique_then_kind_order_then_name():
    table = make_table()
    table.add_index(HashIndex("h2", 0))
    table.add_index(SortedIndex("b1", 0))
    assert table.find_index(0).name == "h2"
    assert table.find_index(0, kinds=("btree",)).name == "b1"
    table.add_index(SortedIndex("u", 0, unique=True))
    assert table.find_index(0).name == "u"
    assert table.find_index(1) is None


def test_remove_index_detaches():
    table = make_table()
    table.add_index(HashIndex("ix", 1))
    assert table.remove_index("ix").name == "ix"
    assert table.indexes == {}
