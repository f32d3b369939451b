import pytest

from kvstore.encoding import (
    KIND_DELETE,
    KIND_PUT,
    Entry,
    crc32,
    decode_bytes,
    decode_entry,
    decode_key_tuple,
    decode_uvarint,
    encode_bytes,
    encode_entry,
    encode_key_tuple,
    encode_uvarint,
    frame_record,
    mask_crc,
    to_bytes,
    unframe_record,
    unmask_crc,
)
from kvstore.errors import ChecksumError, CorruptionError, TruncatedError


@pytest.mark.parametrize("value", [0, 1, 127, 128, 300, 16383, 16384, 2**32, 2**63 - 1])
def test_uvarint_roundtrip_preserves_value_and_consumes_all_bytes(value):
    data = encode_uvarint(value)
    assert decode_uvarint(data) == (value, len(data))


@pytest.mark.parametrize("value,expected", [
    (0, b"\x00"), (127, b"\x7f"), (128, b"\x80\x01"), (300, b"\xac\x02"),
    (16384, b"\x80\x80\x01"),
])
def test_uvarint_uses_little_endian_seven_bit_groups(value, expected):
    assert encode_uvarint(value) == expected


def test_uvarint_rejects_negative_numbers():
    with pytest.raises(ValueError):
        encode_uvarint(-1)


def test_decode_uvarint_starts_at_given_offset_and_returns_next_offset():
    buf = b"\xff" + encode_uvarint(300) + b"\x05"
    assert decode_uvarint(buf, 1) == (300, 3)
    assert decode_uvarint(buf, 3) == (5, 4)


def test_decode_uvarint_raises_truncated_when_continuation_bit_runs_off_end():
    with pytest.raises(TruncatedError):
        decode_uvarint(b"\x80\x80")


def test_decode_uvarint_rejects_varints_longer_than_ten_bytes():
    with pytest.raises(CorruptionError):
        decode_uvarint(b"\x80" * 11 + b"\x01")


def test_length_prefixed_bytes_roundtrip_sequence():
    buf = encode_bytes(b"abc") + encode_bytes(b"") + encode_bytes(b"\x00" * 200)
    first, pos = decode_bytes(buf)
    second, pos = decode_bytes(buf, pos)
    third, pos = decode_bytes(buf, pos)
    assert (first, second, third) == (b"abc", b"", b"\x00" * 200)
    assert pos == len(buf)


def test_decode_bytes_raises_truncated_when_length_exceeds_buffer():
    with pytest.raises(TruncatedError):
        decode_bytes(b"\x05abc")


def test_crc32_matches_standard_check_value():
    assert crc32(b"123456789") == 0xCBF43926


def test_mask_crc_of_zero_is_the_mask_delta():
    assert mask_crc(0) == 0xA282EAD8


@pytest.mark.parametrize("crc", [0, 1, 0xFFFFFFFF, 0x12345678, crc32(b"hello")])
def test_unmask_crc_inverts_mask_crc(crc):
    assert unmask_crc(mask_crc(crc)) == crc


def test_mask_crc_changes_nonzero_values():
    assert mask_crc(crc32(b"hello")) == 0xEF8F56F9


def test_frame_record_layout_is_masked_crc_length_payload():
    assert frame_record(b"abc").hex() == "2055072603000000616263"


def test_unframe_record_reads_consecutive_frames():
    buf = frame_record(b"one") + frame_record(b"") + frame_record(b"three")
    payload1, pos = unframe_record(buf)
    payload2, pos = unframe_record(buf, pos)
    payload3, pos = unframe_record(buf, pos)
    assert [payload1, payload2, payload3] == [b"one", b"", b"three"]
    assert pos == len(buf)


def test_unframe_record_raises_truncated_for_partial_header():
    with pytest.raises(TruncatedError):
        unframe_record(frame_record(b"abc")[:5])


def test_unframe_record_raises_truncated_for_partial_payload():
    with pytest.raises(TruncatedError):
        unframe_record(frame_record(b"abcdef")[:-1])


def test_unframe_record_raises_checksum_error_for_flipped_payload_byte():
    data = bytearray(frame_record(b"abcdef"))
    data[-1] ^= 0x01
    with pytest.raises(ChecksumError):
        unframe_record(bytes(data))


def test_entry_sort_key_orders_newest_version_first():
    entries = [Entry(b"b", 1, KIND_PUT), Entry(b"a", 1, KIND_PUT), Entry(b"a", 9, KIND_PUT)]
    ordered = sorted(entries, key=lambda e: e.sort_key)
    assert [(e.key, e.seq) for e in ordered] == [(b"a", 9), (b"a", 1), (b"b", 1)]


@pytest.mark.parametrize("expires_at,now,expired", [
    (None, 100, False), (10, None, False), (10, 9, False), (10, 10, True), (10, 11, True),
])
def test_entry_is_expired_once_clock_reaches_expiry(expires_at, now, expired):
    assert Entry(b"k", 1, KIND_PUT, b"v", expires_at).is_expired(now) is expired


def test_entry_is_live_only_for_unexpired_puts():
    assert Entry(b"k", 1, KIND_PUT, b"v").is_live(5) is True
    assert Entry(b"k", 1, KIND_DELETE).is_live(5) is False
    assert Entry(b"k", 1, KIND_PUT, b"v", 5).is_live(5) is False
    assert Entry(b"k", 1, KIND_DELETE).is_tombstone is True


@pytest.mark.parametrize("entry", [
    Entry(b"key", 1, KIND_PUT, b"value"),
    Entry(b"key", 2**40, KIND_PUT, b""),
    Entry(b"k", 5, KIND_PUT, b"v", 9),
    Entry(b"gone", 7, KIND_DELETE),
    Entry(b"\x00\xff", 3, KIND_DELETE, b"", 4),
])
def test_entry_codec_roundtrip(entry):
    data = encode_entry(entry)
    assert decode_entry(data) == (entry, len(data))


def test_encode_entry_exact_bytes_for_put_with_expiry_and_delete():
    assert encode_entry(Entry(b"k", 5, KIND_PUT, b"v", 9)).hex() == "016b0503090176"
    assert encode_entry(Entry(b"k", 5, KIND_DELETE)).hex() == "016b0500"


def test_decode_entry_rejects_unknown_flag_bits():
    with pytest.raises(CorruptionError):
        decode_entry(b"\x01k\x05\x80")


def test_decode_entry_raises_truncated_when_flags_byte_missing():
    with pytest.raises(TruncatedError):
        decode_entry(b"\x01k\x05")


@pytest.mark.parametrize("value,expected", [
    (b"raw", b"raw"), (bytearray(b"ba"), b"ba"), (memoryview(b"mv"), b"mv"), ("h\u00e9", b"h\xc3\xa9"),
])
def test_to_bytes_coerces_supported_types(value, expected):
    result = to_bytes(value)
    assert result == expected and type(result) is bytes


def test_to_bytes_rejects_other_types_naming_the_argument():
    with pytest.raises(TypeError, match="value must be bytes or str, not int"):
        to_bytes(5, "value")


def test_key_tuple_roundtrip_mixed_components():
    parts = (None, -5, 0, 2**62, b"a\x00b", "x\x00y", "")
    assert decode_key_tuple(encode_key_tuple(parts)) == parts


def test_key_tuple_encoding_preserves_tuple_order():
    tuples = [("user", 10), ("user", -3), ("user", 2), ("admin", 99), ("user\x00", 0),
              ("user", 2, "z"), ("us",), (b"raw",), (None,), (-2**63,), (2**63 - 1,)]
    by_encoding = sorted(tuples, key=encode_key_tuple)

    def rank(t):
        order = {type(None): 0, int: 1, bytes: 2, str: 3}
        return [(order[type(p)], p if p is not None else 0) for p in t]

    assert by_encoding == sorted(tuples, key=rank)


def test_key_tuple_encoding_of_prefix_is_byte_prefix():
    assert encode_key_tuple(("orders", 7, "x")).startswith(encode_key_tuple(("orders", 7)))


def test_key_tuple_exact_encoding():
    assert encode_key_tuple(("a", 1)).hex() == "04610001028000000000000001"


def test_key_tuple_rejects_out_of_range_int():
    with pytest.raises(ValueError):
        encode_key_tuple((2**63,))


@pytest.mark.parametrize("bad", [True, 1.5, [1]])
def test_key_tuple_rejects_unsupported_types(bad):
    with pytest.raises(TypeError):
        encode_key_tuple((bad,))


@pytest.mark.parametrize("data,error", [
    (b"\x09", CorruptionError),
    (b"\x02\x00\x01", TruncatedError),
    (b"\x04ab", TruncatedError),
    (b"\x04a\x00\x07", CorruptionError),
])
def test_decode_key_tuple_rejects_malformed_input(data, error):
    with pytest.raises(error):
        decode_key_tuple(data)
