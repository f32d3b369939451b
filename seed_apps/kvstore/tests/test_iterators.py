import pytest

from kvstore.encoding import KIND_DELETE, KIND_PUT, Entry
from kvstore.errors import InvalidArgumentError
from kvstore.iterators import (
    MergingIterator,
    key_in_range,
    overlay_writes,
    prefix_upper_bound,
    scan_sources,
    visible_entries,
)


def put(key, seq, value=None, expires_at=None):
    return Entry(key, seq, KIND_PUT, value if value is not None else key + str(seq).encode(), expires_at)


def tomb(key, seq):
    return Entry(key, seq, KIND_DELETE)


class ListSource:
    """A scan source backed by a list of entries in internal order."""

    def __init__(self, entries):
        self.entries = sorted(entries, key=lambda e: e.sort_key)

    def scan_entries(self, start=None, end=None, reverse=False):
        chosen = [e for e in self.entries if key_in_range(e.key, start, end)]
        return iter(chosen[::-1] if reverse else chosen)


def ids(entries):
    return [(e.key, e.seq) for e in entries]


def test_merging_iterator_interleaves_sources_in_internal_order():
    newer = [put(b"a", 5), put(b"c", 6)]
    older = [put(b"a", 1), put(b"b", 2), put(b"c", 3)]
    merged = MergingIterator([newer, older])
    assert ids(merged) == [(b"a", 5), (b"a", 1), (b"b", 2), (b"c", 6), (b"c", 3)]


def test_merging_iterator_reverse_merges_reversed_sources():
    newer = [put(b"c", 6), put(b"a", 5)]
    older = [put(b"c", 3), put(b"b", 2), put(b"a", 1)]
    merged = MergingIterator([newer, older], reverse=True)
    assert ids(merged) == [(b"c", 3), (b"c", 6), (b"b", 2), (b"a", 1), (b"a", 5)]


def test_merging_iterator_emits_duplicate_version_once_from_first_source():
    first = [put(b"a", 1, b"from-first")]
    second = [put(b"a", 1, b"from-second"), put(b"b", 2)]
    merged = list(MergingIterator([first, second]))
    assert [e.value for e in merged] == [b"from-first", b"b2"]


def test_merging_iterator_handles_empty_and_no_sources():
    assert list(MergingIterator([])) == []
    assert ids(MergingIterator([[], [put(b"x", 1)], []])) == [(b"x", 1)]


def test_visible_entries_picks_newest_version_at_or_below_snapshot():
    stream = [put(b"a", 9), put(b"a", 4), put(b"a", 2), put(b"b", 7)]
    assert ids(visible_entries(stream, snapshot_seq=5)) == [(b"a", 4)]
    assert ids(visible_entries(stream, snapshot_seq=100)) == [(b"a", 9), (b"b", 7)]


def test_visible_entries_hides_deleted_and_expired_keys():
    stream = [tomb(b"a", 3), put(b"a", 1), put(b"b", 2, expires_at=10), put(b"c", 1, expires_at=50)]
    assert ids(visible_entries(stream, 100, now=10)) == [(b"c", 1)]
    assert ids(visible_entries(stream, 2, now=10)) == [(b"a", 1), (b"c", 1)]


def test_visible_entries_works_on_reverse_streams():
    stream = [put(b"b", 1), put(b"b", 8), put(b"a", 2), put(b"a", 6)]
    assert ids(visible_entries(stream, snapshot_seq=7)) == [(b"b", 1), (b"a", 6)]


@pytest.mark.parametrize("key,start,end,expected", [
    (b"b", None, None, True), (b"b", b"b", b"c", True), (b"c", b"b", b"c", False),
    (b"a", b"b", None, False), (b"z", None, b"z", False),
])
def test_key_in_range_is_half_open(key, start, end, expected):
    assert key_in_range(key, start, end) is expected


@pytest.mark.parametrize("prefix,expected", [
    (b"abc", b"abd"), (b"a\xff", b"b"), (b"a\xff\xff", b"b"), (b"\xff\xff", None), (b"", None),
    (b"\x00", b"\x01"),
])
def test_prefix_upper_bound(prefix, expected):
    assert prefix_upper_bound(prefix) == expected


@pytest.fixture
def sources():
    newer = ListSource([put(b"b", 10, b"B"), tomb(b"d", 11), put(b"f", 12, b"F")])
    older = ListSource([put(b"a", 1, b"A"), put(b"b", 2, b"b-old"), put(b"d", 3, b"D"),
                        put(b"e", 4, b"E", expires_at=5)])
    return [newer, older]


def test_scan_sources_returns_visible_pairs(sources):
    assert scan_sources(sources, None, None, 100, now=0) == [
        (b"a", b"A"), (b"b", b"B"), (b"e", b"E"), (b"f", b"F")]
    assert scan_sources(sources, None, None, 100, now=5) == [(b"a", b"A"), (b"b", b"B"), (b"f", b"F")]


def test_scan_sources_respects_snapshot_bounds_reverse_and_limit(sources):
    assert scan_sources(sources, None, None, 4, now=0) == [
        (b"a", b"A"), (b"b", b"b-old"), (b"d", b"D"), (b"e", b"E")]
    assert scan_sources(sources, b"b", b"f", 100, now=0) == [(b"b", b"B"), (b"e", b"E")]
    assert scan_sources(sources, None, None, 100, now=0, reverse=True, limit=2) == [
        (b"f", b"F"), (b"e", b"E")]


def test_scan_sources_empty_cases(sources):
    assert scan_sources(sources, b"c", b"c", 100) == []
    assert scan_sources(sources, b"d", b"a", 100) == []
    assert scan_sources(sources, None, None, 100, limit=0) == []


def test_scan_sources_rejects_negative_limit(sources):
    with pytest.raises(InvalidArgumentError):
        scan_sources(sources, None, None, 100, limit=-1)


BASE = [(b"a", b"1"), (b"c", b"3"), (b"e", b"5")]


def test_overlay_writes_inserts_replaces_and_deletes():
    writes = {b"b": b"new-b", b"c": None, b"e": b"new-e", b"z": b"26"}
    assert overlay_writes(BASE, writes, None, None) == [
        (b"a", b"1"), (b"b", b"new-b"), (b"e", b"new-e"), (b"z", b"26")]


def test_overlay_writes_reverse_order():
    writes = {b"b": b"new-b", b"c": None, b"f": b"6"}
    assert overlay_writes(BASE[::-1], writes, None, None, reverse=True) == [
        (b"f", b"6"), (b"e", b"5"), (b"b", b"new-b"), (b"a", b"1")]


def test_overlay_writes_ignores_writes_outside_range_and_applies_limit():
    writes = {b"0": b"x", b"b": b"B", b"f": b"y"}
    assert overlay_writes(BASE, writes, b"a", b"f", limit=3) == [
        (b"a", b"1"), (b"b", b"B"), (b"c", b"3")]


def test_overlay_writes_with_no_writes_returns_base():
    assert overlay_writes(BASE, {}, None, None) == BASE
