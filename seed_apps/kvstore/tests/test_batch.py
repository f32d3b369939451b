import pytest

from kvstore.batch import (
    BatchOp,
    WriteBatch,
    decode_batch_record,
    encode_batch_record,
    validate_key,
)
from kvstore.encoding import KIND_DELETE, KIND_PUT, Entry, encode_entry, encode_uvarint
from kvstore.errors import CorruptionError, InvalidArgumentError


def test_batch_records_operations_in_order_and_chains():
    batch = WriteBatch().put("a", "1").delete(b"b").put(b"c", b"3", ttl=4)
    assert len(batch) == 3
    assert list(batch) == [
        BatchOp(KIND_PUT, b"a", b"1", None),
        BatchOp(KIND_DELETE, b"b", b"", None),
        BatchOp(KIND_PUT, b"c", b"3", 4),
    ]


def test_batch_rejects_empty_keys():
    with pytest.raises(InvalidArgumentError):
        WriteBatch().put(b"", b"v")
    with pytest.raises(InvalidArgumentError):
        WriteBatch().delete("")


@pytest.mark.parametrize("ttl", [0, -3])
def test_batch_rejects_non_positive_ttl(ttl):
    with pytest.raises(InvalidArgumentError, match="ttl must be positive"):
        WriteBatch().put(b"k", b"v", ttl=ttl)


def test_batch_rejects_non_bytes_values():
    with pytest.raises(TypeError, match="value must be bytes or str"):
        WriteBatch().put(b"k", 12)


def test_validate_key_returns_bytes():
    assert validate_key("abc") == b"abc"


def test_approximate_size_sums_key_and_value_lengths():
    batch = WriteBatch().put(b"ab", b"cde").delete(b"xyz")
    assert batch.approximate_size() == 8


def test_clear_empties_batch():
    batch = WriteBatch().put(b"a", b"1")
    batch.clear()
    assert len(batch) == 0 and list(batch) == []


def test_to_entries_numbers_consecutively_and_resolves_ttl():
    batch = WriteBatch().put(b"a", b"1").delete(b"b").put(b"c", b"3", ttl=5)
    assert batch.to_entries(10, now=100) == [
        Entry(b"a", 10, KIND_PUT, b"1", None),
        Entry(b"b", 11, KIND_DELETE, b"", None),
        Entry(b"c", 12, KIND_PUT, b"3", 105),
    ]


def test_batch_record_roundtrip():
    entries = [Entry(b"a", 7, KIND_PUT, b"x"), Entry(b"b", 8, KIND_DELETE), Entry(b"c", 9, KIND_PUT, b"", 3)]
    assert decode_batch_record(encode_batch_record(entries)) == entries


def test_decode_batch_record_rejects_empty_batch():
    with pytest.raises(CorruptionError, match="no entries"):
        decode_batch_record(encode_uvarint(0))


def test_decode_batch_record_rejects_non_consecutive_sequences():
    payload = encode_uvarint(2) + encode_entry(Entry(b"a", 1, KIND_PUT, b"")) + encode_entry(
        Entry(b"b", 3, KIND_PUT, b""))
    with pytest.raises(CorruptionError, match="not consecutive"):
        decode_batch_record(payload)


def test_decode_batch_record_rejects_trailing_bytes():
    payload = encode_batch_record([Entry(b"a", 1, KIND_PUT, b"")]) + b"\x00"
    with pytest.raises(CorruptionError, match="trailing"):
        decode_batch_record(payload)
