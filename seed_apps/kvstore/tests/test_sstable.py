import struct

import pytest

from kvstore.encoding import KIND_DELETE, KIND_PUT, Entry
from kvstore.errors import ChecksumError, ClosedError, CorruptionError, InvalidArgumentError
from kvstore.sstable import (
    FOOTER,
    SSTableReader,
    SSTableWriter,
    TableMeta,
    parse_table_name,
    table_name,
)


def sample_entries():
    """Versions of 30 keys: every key has a put; every third has a newer version;
    key 10 ends with a tombstone."""
    entries = []
    seq = 1
    for i in range(30):
        key = f"key{i:02d}".encode()
        versions = [Entry(key, seq, KIND_PUT, f"v{i}-old".encode())]
        seq += 1
        if i % 3 == 0:
            versions.append(Entry(key, seq, KIND_PUT, f"v{i}-new".encode()))
            seq += 1
        if i == 10:
            versions.append(Entry(key, seq, KIND_DELETE))
            seq += 1
        entries.extend(versions)
    return sorted(entries, key=lambda e: e.sort_key)


def write_table(fs, entries=None, number=1, block_size=64):
    writer = SSTableWriter(fs, "/db", number, block_size=block_size)
    for entry in entries if entries is not None else sample_entries():
        writer.add(entry)
    return writer.finish()


@pytest.fixture
def reader(memfs):
    write_table(memfs)
    return SSTableReader(memfs, "/db", 1)


def test_table_name_roundtrip():
    assert table_name(12) == "000012.sst"
    assert parse_table_name("000012.sst") == 12
    assert parse_table_name("wal-000012.log") is None
    assert parse_table_name("12.sst") is None


def test_writer_meta_describes_table(memfs):
    entries = sample_entries()
    meta = write_table(memfs, entries)
    assert meta == TableMeta(1, memfs.size("/db/000001.sst"), len(entries), b"key00", b"key29",
                             1, max(e.seq for e in entries))


def test_reader_meta_matches_writer_meta(memfs):
    meta = write_table(memfs)
    assert SSTableReader(memfs, "/db", 1).meta == meta


def test_small_block_size_produces_many_blocks(memfs):
    write_table(memfs, block_size=64)
    write_table(memfs, number=2, block_size=1 << 16)
    assert SSTableReader(memfs, "/db", 1).block_count > 5
    assert SSTableReader(memfs, "/db", 2).block_count == 1


def test_get_returns_newest_version_at_snapshot(reader):
    newest = reader.get(b"key03", 1000)
    assert (newest.value, newest.seq) == (b"v3-new", 6)
    assert reader.get(b"key03", 5).value == b"v3-old"
    assert reader.get(b"key03", 4) is None


def test_get_returns_tombstone_for_deleted_key(reader):
    assert reader.get(b"key10", 1000).is_tombstone
    assert reader.get(b"key10", 1000).seq == 16
    assert reader.get(b"key10", 15).value == b"v10-old"


def test_get_returns_none_for_absent_keys_inside_and_outside_range(reader):
    assert reader.get(b"key05x", 1000) is None
    assert reader.get(b"a", 1000) is None
    assert reader.get(b"zzz", 1000) is None


def test_get_of_largest_key_before_its_first_version_returns_none(reader):
    assert reader.get(b"key29", 1) is None


def test_every_written_version_is_found_at_its_own_sequence(reader):
    for entry in sample_entries():
        assert reader.get(entry.key, entry.seq) == entry


def test_may_contain_uses_bloom_filter(reader):
    assert reader.may_contain(b"key07") is True
    misses = sum(reader.may_contain(f"absent{i}".encode()) for i in range(200))
    assert misses < 20


def test_scan_without_bounds_returns_all_entries_in_order(reader):
    assert list(reader.scan_entries()) == sample_entries()


def test_scan_with_bounds_is_half_open(reader):
    keys = sorted({e.key for e in reader.scan_entries(b"key05", b"key08")})
    assert keys == [b"key05", b"key06", b"key07"]
    assert [e.key for e in reader.scan_entries(b"key285")] == [b"key29"]
    assert list(reader.scan_entries(b"zzz")) == []


def test_reverse_scan_is_exact_reverse_of_forward(reader):
    assert list(reader.scan_entries(reverse=True)) == sample_entries()[::-1]
    forward = list(reader.scan_entries(b"key04", b"key13"))
    assert list(reader.scan_entries(b"key04", b"key13", reverse=True)) == forward[::-1]


def test_reverse_scan_with_end_beyond_table_starts_at_last_entry(reader):
    got = [e.key for e in reader.scan_entries(b"key28", b"zzz", reverse=True)]
    assert got == [b"key29", b"key28"]


def test_reverse_scan_with_end_before_table_is_empty(reader):
    assert list(reader.scan_entries(end=b"a", reverse=True)) == []


def test_writer_rejects_out_of_order_entries(memfs):
    writer = SSTableWriter(memfs, "/db", 1)
    writer.add(Entry(b"b", 5, KIND_PUT, b""))
    with pytest.raises(InvalidArgumentError, match="increasing order"):
        writer.add(Entry(b"a", 9, KIND_PUT, b""))
    with pytest.raises(InvalidArgumentError):
        writer.add(Entry(b"b", 6, KIND_PUT, b""))


def test_writer_rejects_empty_table_and_reuse(memfs):
    writer = SSTableWriter(memfs, "/db", 1)
    with pytest.raises(InvalidArgumentError):
        writer.finish()
    writer.add(Entry(b"a", 1, KIND_PUT, b"x"))
    writer.finish()
    with pytest.raises(ClosedError):
        writer.add(Entry(b"b", 2, KIND_PUT, b"x"))
    with pytest.raises(ClosedError):
        writer.finish()


def test_writer_rejects_non_positive_block_size(memfs):
    with pytest.raises(InvalidArgumentError):
        SSTableWriter(memfs, "/db", 1, block_size=0)


def test_corrupt_data_block_raises_checksum_error_on_read(memfs):
    write_table(memfs)
    memfs.corrupt("/db/000001.sst", 3)
    table = SSTableReader(memfs, "/db", 1)
    with pytest.raises(ChecksumError):
        table.get(b"key00", 1000)
    with pytest.raises(ChecksumError):
        table.verify()


def test_reader_rejects_bad_magic(memfs):
    write_table(memfs)
    memfs.corrupt("/db/000001.sst", memfs.size("/db/000001.sst") - 1)
    with pytest.raises(CorruptionError, match="magic"):
        SSTableReader(memfs, "/db", 1)


def test_reader_rejects_file_shorter_than_footer(memfs):
    memfs.write_atomic("/db/000001.sst", b"tiny")
    with pytest.raises(CorruptionError, match="too short"):
        SSTableReader(memfs, "/db", 1)


def test_reader_rejects_footer_length_mismatch(memfs):
    write_table(memfs)
    data = bytearray(memfs.read("/db/000001.sst"))
    fields = list(FOOTER.unpack_from(data, len(data) - FOOTER.size))
    fields[1] += 1
    data[-FOOTER.size:] = FOOTER.pack(*fields)
    memfs.write_atomic("/db/000001.sst", bytes(data))
    with pytest.raises(CorruptionError, match="length"):
        SSTableReader(memfs, "/db", 1)


def test_data_block_past_end_of_file_is_corruption(memfs):
    write_table(memfs, [Entry(b"a", 1, KIND_PUT, b"x")])
    table = SSTableReader(memfs, "/db", 1)
    key, seq, offset, length = table._index[0]
    table._index[0] = (key, seq, offset, length + 10_000)
    with pytest.raises(CorruptionError, match="past the end"):
        table.get(b"a", 5)


def test_verify_returns_entry_count(reader):
    assert reader.verify() == len(sample_entries())


def test_verify_detects_count_mismatch_with_properties(memfs):
    write_table(memfs)
    table = SSTableReader(memfs, "/db", 1)
    table.meta = TableMeta(1, table.meta.file_size, 999, b"key00", b"key29", 1, 2)
    with pytest.raises(CorruptionError, match="properties say 999"):
        table.verify()


@pytest.mark.parametrize("start,end,expected", [
    (None, None, True), (b"a", b"c", True), (b"d", None, False), (None, b"b", False),
    (None, b"b\x00", True), (b"c", b"d", True), (b"c\x00", None, False),
])
def test_table_meta_overlaps_half_open_range(start, end, expected):
    meta = TableMeta(1, 10, 2, b"b", b"c", 1, 2)
    assert meta.overlaps(start, end) is expected


def test_block_checksum_is_little_endian_u32_after_block(memfs):
    write_table(memfs, [Entry(b"a", 1, KIND_PUT, b"x")])
    data = memfs.read("/db/000001.sst")
    from kvstore.encoding import crc32, encode_entry, mask_crc
    block = encode_entry(Entry(b"a", 1, KIND_PUT, b"x"))
    assert data[:len(block)] == block
    assert struct.unpack_from("<I", data, len(block))[0] == mask_crc(crc32(block))
