import random

import pytest

from kvstore.encoding import KIND_DELETE, KIND_PUT, Entry
from kvstore.errors import InvalidArgumentError
from kvstore.memtable import MemTable, SkipList


def make_list(keys, seed=7):
    skiplist = SkipList(random.Random(seed))
    for key in keys:
        skiplist.insert(key, key * 10)
    return skiplist


def test_skiplist_iterates_in_sorted_order_regardless_of_insert_order():
    keys = list(range(200))
    random.Random(3).shuffle(keys)
    skiplist = make_list(keys)
    assert [k for k, _ in skiplist] == list(range(200))
    assert len(skiplist) == 200


def test_skiplist_insert_reports_new_versus_replaced():
    skiplist = SkipList(random.Random(1))
    assert skiplist.insert("a", 1) is True
    assert skiplist.insert("a", 2) is False
    assert skiplist.get("a") == 2
    assert len(skiplist) == 1


def test_skiplist_get_and_contains_for_missing_keys():
    skiplist = make_list([1, 3, 5])
    assert skiplist.get(3) == 30
    assert skiplist.get(4, "none") == "none"
    assert 5 in skiplist
    assert 4 not in skiplist
    assert 9 not in skiplist


def test_skiplist_seek_starts_at_first_key_not_less_than_target():
    skiplist = make_list([10, 20, 30, 40])
    assert [k for k, _ in skiplist.seek(20)] == [20, 30, 40]
    assert [k for k, _ in skiplist.seek(25)] == [30, 40]
    assert list(skiplist.seek(41)) == []


def test_skiplist_seek_reverse_yields_descending_keys_below_target():
    skiplist = make_list([10, 20, 30, 40])
    assert [k for k, _ in skiplist.seek_reverse(30)] == [20, 10]
    assert [k for k, _ in skiplist.seek_reverse(31)] == [30, 20, 10]
    assert [v for _, v in skiplist.seek_reverse()] == [400, 300, 200, 100]
    assert list(skiplist.seek_reverse(10)) == []


def test_skiplist_reverse_iteration_on_empty_list_is_empty():
    assert list(SkipList(random.Random(0)).seek_reverse()) == []


def test_skiplist_height_is_deterministic_for_a_seed_and_logarithmic():
    first = make_list(range(1000), seed=42)
    second = make_list(range(1000), seed=42)
    assert first.height == second.height
    assert 3 <= first.height <= 12
    assert SkipList(random.Random(0)).height == 1


def test_skiplist_height_never_exceeds_max_level():
    skiplist = SkipList(random.Random(5), max_level=2, branching=2)
    for i in range(100):
        skiplist.insert(i, i)
    assert skiplist.height == 2


@pytest.mark.parametrize("kwargs", [{"max_level": 0}, {"branching": 1}])
def test_skiplist_rejects_invalid_parameters(kwargs):
    with pytest.raises(InvalidArgumentError):
        SkipList(random.Random(0), **kwargs)


def build_memtable():
    table = MemTable()
    for entry in [
        Entry(b"a", 1, KIND_PUT, b"a1"),
        Entry(b"a", 4, KIND_PUT, b"a4"),
        Entry(b"b", 2, KIND_PUT, b"b2"),
        Entry(b"b", 5, KIND_DELETE),
        Entry(b"c", 3, KIND_PUT, b"c3"),
    ]:
        table.add(entry)
    return table


def test_memtable_get_returns_newest_version_visible_at_snapshot():
    table = build_memtable()
    assert table.get(b"a", 10).value == b"a4"
    assert table.get(b"a", 3).value == b"a1"
    assert table.get(b"a", 0) is None


def test_memtable_get_returns_tombstones():
    table = build_memtable()
    assert table.get(b"b", 9).is_tombstone
    assert table.get(b"b", 4).value == b"b2"


def test_memtable_get_unknown_key_returns_none():
    table = build_memtable()
    assert table.get(b"bb", 10) is None
    assert table.get(b"z", 10) is None


def test_memtable_scan_yields_internal_key_order_within_bounds():
    table = build_memtable()
    assert [(e.key, e.seq) for e in table.scan_entries()] == [
        (b"a", 4), (b"a", 1), (b"b", 5), (b"b", 2), (b"c", 3)]
    assert [(e.key, e.seq) for e in table.scan_entries(b"b", b"c")] == [(b"b", 5), (b"b", 2)]
    assert [e.key for e in table.scan_entries(start=b"bb")] == [b"c"]


def test_memtable_reverse_scan_is_exact_reverse_of_forward_scan():
    table = build_memtable()
    forward = list(table.scan_entries(b"a", b"c"))
    assert list(table.scan_entries(b"a", b"c", reverse=True)) == forward[::-1]
    assert [(e.key, e.seq) for e in table.scan_entries(start=b"b", reverse=True)] == [
        (b"c", 3), (b"b", 2), (b"b", 5)]


def test_memtable_tracks_size_count_and_max_sequence():
    table = build_memtable()
    assert len(table) == 5
    assert table.max_seq == 5
    assert table.approximate_bytes == 5 + 8 + 5 * MemTable.ENTRY_OVERHEAD


def test_memtable_readding_same_version_does_not_grow_size():
    table = MemTable()
    table.add(Entry(b"k", 1, KIND_PUT, b"v"))
    table.add(Entry(b"k", 1, KIND_PUT, b"v"))
    assert len(table) == 1
    assert table.approximate_bytes == 2 + MemTable.ENTRY_OVERHEAD
