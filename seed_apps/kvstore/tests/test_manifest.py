import pytest

from kvstore.encoding import encode_uvarint, frame_record
from kvstore.errors import ChecksumError, CorruptionError, InvalidArgumentError
from kvstore.manifest import (
    Manifest,
    decode_manifest,
    encode_manifest,
    load_manifest,
    save_manifest,
)
from kvstore.sstable import TableMeta


def meta(number, lo, hi):
    return TableMeta(number, 100 * number, 3, b"a%d" % number, b"z%d" % number, lo, hi)


def sample():
    return Manifest(next_file_number=9, last_sequence=40, log_number=5,
                    tables=[meta(1, 1, 10), meta(4, 11, 20), meta(7, 21, 40)])


def test_allocate_number_returns_increasing_numbers():
    manifest = Manifest()
    assert [manifest.allocate_number() for _ in range(3)] == [1, 2, 3]
    assert manifest.next_file_number == 4


def test_add_table_appends_newest_last():
    manifest = Manifest()
    manifest.add_table(meta(1, 1, 2))
    manifest.add_table(meta(2, 3, 4))
    assert manifest.table_numbers() == [1, 2]


def test_apply_compaction_replaces_run_in_place():
    manifest = sample()
    manifest.apply_compaction([4, 1], meta(8, 1, 20))
    assert manifest.table_numbers() == [8, 7]


def test_apply_compaction_with_no_output_removes_tables():
    manifest = sample()
    manifest.apply_compaction([4, 7], None)
    assert manifest.table_numbers() == [1]


def test_apply_compaction_rejects_unknown_table():
    with pytest.raises(InvalidArgumentError, match="unknown"):
        sample().apply_compaction([99], None)


def test_apply_compaction_rejects_non_adjacent_or_empty_runs():
    with pytest.raises(InvalidArgumentError, match="adjacent"):
        sample().apply_compaction([1, 7], None)
    with pytest.raises(InvalidArgumentError):
        sample().apply_compaction([], None)


def test_manifest_encoding_roundtrip():
    assert decode_manifest(encode_manifest(sample())) == sample()
    assert decode_manifest(encode_manifest(Manifest())) == Manifest()


def test_decode_manifest_detects_checksum_damage():
    data = bytearray(encode_manifest(sample()))
    data[12] ^= 0x40
    with pytest.raises(ChecksumError):
        decode_manifest(bytes(data))


@pytest.mark.parametrize("payload,message", [
    (b"XXXX" + encode_uvarint(1), "magic"),
    (b"KVMF" + encode_uvarint(2), "version"),
    (b"KVMF" + encode_uvarint(1) + bytes([1, 0, 0, 0]) + b"\x00", "trailing"),
])
def test_decode_manifest_rejects_bad_headers(payload, message):
    with pytest.raises(CorruptionError, match=message):
        decode_manifest(frame_record(payload))


def test_decode_manifest_rejects_trailing_bytes_after_frame():
    with pytest.raises(CorruptionError, match="trailing"):
        decode_manifest(encode_manifest(sample()) + b"\x00")


def test_decode_manifest_rejects_overlapping_sequence_ranges():
    bad = Manifest(tables=[meta(1, 1, 10), meta(2, 10, 20)])
    with pytest.raises(CorruptionError, match="overlap"):
        decode_manifest(encode_manifest(bad))


def test_save_and_load_manifest(memfs):
    assert load_manifest(memfs, "/db") is None
    save_manifest(memfs, "/db", sample())
    assert load_manifest(memfs, "/db") == sample()
    assert memfs.listdir("/db") == ["MANIFEST"]
