import pytest

from kvstore.bloom import BloomFilter, fnv1a_64
from kvstore.errors import CorruptionError, InvalidArgumentError


@pytest.mark.parametrize("data,expected", [
    (b"", 0xCBF29CE484222325), (b"a", 0xAF63DC4C8601EC8C), (b"foobar", 0x85944171F73967E8),
])
def test_fnv1a_64_known_vectors(data, expected):
    assert fnv1a_64(data) == expected


def keys(n, prefix=b"key-"):
    return [prefix + str(i).encode() for i in range(n)]


def test_bloom_has_no_false_negatives():
    bloom = BloomFilter.for_capacity(500, 10)
    for key in keys(500):
        bloom.add(key)
    assert all(bloom.might_contain(key) for key in keys(500))


def test_bloom_false_positive_rate_is_low_at_ten_bits_per_key():
    bloom = BloomFilter.for_capacity(1000, 10)
    for key in keys(1000):
        bloom.add(key)
    false_positives = sum(bloom.might_contain(k) for k in keys(5000, b"other-"))
    assert false_positives / 5000 < 0.03


def test_empty_bloom_rejects_everything():
    bloom = BloomFilter.for_capacity(10)
    assert bloom.might_contain(b"anything") is False
    assert bloom.fill_ratio() == 0.0


@pytest.mark.parametrize("count,bits_per_key,num_bits,num_hashes", [
    (100, 10, 1000, 7), (1, 10, 64, 7), (0, 10, 64, 7), (50, 1, 64, 1), (10, 100, 1000, 30),
])
def test_for_capacity_sizes_filter(count, bits_per_key, num_bits, num_hashes):
    bloom = BloomFilter.for_capacity(count, bits_per_key)
    assert (bloom.num_bits, bloom.num_hashes) == (num_bits, num_hashes)


def test_fill_ratio_and_estimated_false_positive_rate():
    bloom = BloomFilter(8, 1)
    bloom.add(b"x")
    assert bloom.fill_ratio() == 1 / 8
    assert bloom.estimated_false_positive_rate() == pytest.approx(1 / 8)
    bloom2 = BloomFilter(8, 2, bytes([0b00001111]))
    assert bloom2.estimated_false_positive_rate() == pytest.approx(0.25)


def test_bloom_serialisation_roundtrip_preserves_membership():
    bloom = BloomFilter.for_capacity(20)
    for key in keys(20):
        bloom.add(key)
    copy = BloomFilter.from_bytes(bloom.to_bytes())
    assert (copy.num_bits, copy.num_hashes) == (bloom.num_bits, bloom.num_hashes)
    assert copy.to_bytes() == bloom.to_bytes()
    assert all(copy.might_contain(k) for k in keys(20))


@pytest.mark.parametrize("data", [b"\x40", b"\x40\x07\x00", b"\x40\x00" + bytes(8)])
def test_bloom_from_bytes_rejects_malformed_data(data):
    with pytest.raises(CorruptionError):
        BloomFilter.from_bytes(data)


@pytest.mark.parametrize("args", [(0, 3), (64, 0), (64, 31), (64, 3, b"\x00")])
def test_bloom_constructor_validates_arguments(args):
    with pytest.raises(InvalidArgumentError):
        BloomFilter(*args)
