import pytest

from kvstore.compaction import (
    CompactionResult,
    TieredCompactionPolicy,
    compact_entries,
    run_compaction,
)
from kvstore.encoding import KIND_DELETE, KIND_PUT, Entry
from kvstore.errors import InvalidArgumentError
from kvstore.sstable import SSTableReader, SSTableWriter, TableMeta


def put(key, seq, expires_at=None):
    return Entry(key, seq, KIND_PUT, b"v%d" % seq, expires_at)


def tomb(key, seq):
    return Entry(key, seq, KIND_DELETE)


def ids(entries):
    return [(e.key, e.seq, e.kind) for e in entries]


def test_compaction_drops_versions_shadowed_below_smallest_snapshot():
    stream = [put(b"a", 9), put(b"a", 5), put(b"a", 2), put(b"b", 1)]
    assert ids(compact_entries(stream, 100, False)) == [(b"a", 9, 1), (b"b", 1, 1)]


def test_compaction_keeps_versions_needed_by_older_snapshot():
    stream = [put(b"a", 9), put(b"a", 5), put(b"a", 2)]
    assert ids(compact_entries(stream, 6, False)) == [(b"a", 9, 1), (b"a", 5, 1)]
    assert ids(compact_entries(stream, 1, False)) == [(b"a", 9, 1), (b"a", 5, 1), (b"a", 2, 1)]


def test_compaction_drops_tombstone_and_older_versions_at_bottom_level():
    stream = [tomb(b"a", 7), put(b"a", 3), put(b"b", 4)]
    assert ids(compact_entries(stream, 10, True)) == [(b"b", 4, 1)]


def test_compaction_keeps_tombstone_when_older_data_may_exist_below():
    stream = [tomb(b"a", 7), put(b"a", 3)]
    assert ids(compact_entries(stream, 10, False)) == [(b"a", 7, 0)]


def test_compaction_keeps_tombstone_newer_than_smallest_snapshot():
    stream = [tomb(b"a", 7), put(b"a", 3)]
    assert ids(compact_entries(stream, 5, True)) == [(b"a", 7, 0), (b"a", 3, 1)]


def test_compaction_turns_expired_put_into_tombstone_when_it_must_stay():
    stream = [put(b"a", 7, expires_at=20), put(b"a", 3)]
    assert ids(compact_entries(stream, 10, False, now=20)) == [(b"a", 7, 0)]
    assert ids(compact_entries(stream, 10, False, now=19)) == [(b"a", 7, 1)]


def test_compaction_drops_expired_put_at_bottom_level():
    stream = [put(b"a", 7, expires_at=20), put(b"b", 3)]
    assert ids(compact_entries(stream, 10, True, now=25)) == [(b"b", 3, 1)]


def meta(number, size, seq):
    return TableMeta(number, size, 1, b"a", b"z", seq, seq)


def sizes(tables):
    return [t.file_size for t in tables] if tables else None


def test_policy_picks_nothing_when_too_few_tables():
    policy = TieredCompactionPolicy(min_merge=3)
    assert policy.pick([meta(1, 100, 1), meta(2, 100, 2)]) is None
    assert policy.pick([]) is None


def test_policy_picks_run_of_similar_sized_adjacent_tables():
    policy = TieredCompactionPolicy(min_merge=3, size_ratio=2.0)
    tables = [meta(1, 5000, 1), meta(2, 100, 2), meta(3, 150, 3), meta(4, 120, 4), meta(5, 9000, 5)]
    assert sizes(policy.pick(tables)) == [100, 150, 120]


def test_policy_prefers_run_with_smallest_total_size():
    policy = TieredCompactionPolicy(min_merge=2, size_ratio=1.5)
    tables = [meta(1, 1000, 1), meta(2, 1100, 2), meta(3, 5000, 3), meta(4, 10, 4), meta(5, 12, 5)]
    assert sizes(policy.pick(tables)) == [10, 12]


def test_policy_limits_run_length_to_max_merge():
    policy = TieredCompactionPolicy(min_merge=2, max_merge=3)
    tables = [meta(i, 100, i) for i in range(1, 7)]
    assert [t.number for t in policy.pick(tables)] == [1, 2, 3]


def test_policy_prefers_longer_run_over_smaller_total():
    policy = TieredCompactionPolicy(min_merge=2, size_ratio=1.5)
    tables = [meta(1, 1000, 1), meta(2, 1000, 2), meta(3, 1000, 3), meta(4, 10, 4), meta(5, 10, 5)]
    assert [t.number for t in policy.pick(tables)] == [1, 2, 3]


def test_policy_breaks_tie_in_favour_of_older_run():
    policy = TieredCompactionPolicy(min_merge=2, max_merge=2)
    tables = [meta(1, 100, 1), meta(2, 100, 2), meta(3, 100, 3)]
    assert [t.number for t in policy.pick(tables)] == [1, 2]


def test_policy_ratio_uses_running_min_and_max():
    policy = TieredCompactionPolicy(min_merge=3, size_ratio=2.0)
    tables = [meta(1, 100, 1), meta(2, 190, 2), meta(3, 210, 3)]
    assert policy.pick(tables) is None


@pytest.mark.parametrize("kwargs", [
    {"min_merge": 1}, {"min_merge": 4, "max_merge": 3}, {"size_ratio": 0.5},
])
def test_policy_validates_parameters(kwargs):
    with pytest.raises(InvalidArgumentError):
        TieredCompactionPolicy(**kwargs)


def write(fs, number, entries):
    writer = SSTableWriter(fs, "/db", number, block_size=64)
    for entry in sorted(entries, key=lambda e: e.sort_key):
        writer.add(entry)
    writer.finish()
    return SSTableReader(fs, "/db", number)


def test_run_compaction_merges_tables_into_one(memfs):
    old = write(memfs, 1, [put(b"a", 1), put(b"b", 2), put(b"c", 3)])
    new = write(memfs, 2, [put(b"a", 4), tomb(b"b", 5)])
    result = run_compaction(memfs, "/db", [old, new], 3, smallest_snapshot=100,
                            drop_tombstones=True, now=0, block_size=64, bloom_bits_per_key=10)
    assert result.input_numbers == [1, 2]
    assert (result.entries_read, result.entries_written, result.entries_dropped) == (5, 2, 3)
    output = SSTableReader(memfs, "/db", 3)
    assert ids(output.scan_entries()) == [(b"a", 4, 1), (b"c", 3, 1)]
    assert result.output == output.meta


def test_run_compaction_with_nothing_surviving_writes_no_table(memfs):
    old = write(memfs, 1, [put(b"a", 1)])
    new = write(memfs, 2, [tomb(b"a", 2)])
    result = run_compaction(memfs, "/db", [old, new], 3, smallest_snapshot=10,
                            drop_tombstones=True, now=0, block_size=64, bloom_bits_per_key=10)
    assert result.output is None
    assert result.entries_written == 0
    assert not memfs.exists("/db/000003.sst")


def test_compaction_result_entries_dropped():
    assert CompactionResult([1], None, 10, 4).entries_dropped == 6
