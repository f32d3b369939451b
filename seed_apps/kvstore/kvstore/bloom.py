"""Bloom filter used by SSTables to skip lookups of absent keys.

Bit positions come from double hashing of a 64-bit FNV-1a hash: with
``h1`` the low and ``h2`` the (odd) high 32 bits, probe ``i`` sets bit
``(h1 + i * h2) mod num_bits``.
"""

import math

from .encoding import decode_uvarint, encode_uvarint
from .errors import CorruptionError, InvalidArgumentError

_FNV_OFFSET = 0xCBF29CE484222325
_FNV_PRIME = 0x100000001B3
_U64 = (1 << 64) - 1


def fnv1a_64(data: bytes) -> int:
    """Return the 64-bit FNV-1a hash of ``data``."""
    value = _FNV_OFFSET
    for byte in data:
        value ^= byte
        value = (value * _FNV_PRIME) & _U64
    return value


class BloomFilter:
    """Probabilistic set membership with no false negatives.

    Args:
        num_bits: size of the bit array (>= 1).
        num_hashes: number of probes per key (1..30).
        bits: optional existing bit array of ``ceil(num_bits / 8)`` bytes.
    """

    def __init__(self, num_bits: int, num_hashes: int, bits: bytes = None):
        """Create a filter; see the class docstring for the arguments."""
        if num_bits < 1:
            raise InvalidArgumentError("a Bloom filter needs at least one bit")
        if not 1 <= num_hashes <= 30:
            raise InvalidArgumentError("num_hashes must be between 1 and 30")
        size = (num_bits + 7) // 8
        if bits is not None and len(bits) != size:
            raise InvalidArgumentError(f"expected {size} bytes of bits, got {len(bits)}")
        self.num_bits = num_bits
        self.num_hashes = num_hashes
        self._bits = bytearray(bits) if bits is not None else bytearray(size)

    @classmethod
    def for_capacity(cls, expected_keys: int, bits_per_key: int = 10) -> "BloomFilter":
        """Size a filter for ``expected_keys`` keys at ``bits_per_key`` bits each.

        Uses at least 64 bits and ``round(bits_per_key * ln 2)`` probes,
        clamped to 1..30 (the false-positive optimum).
        """
        num_bits = max(64, expected_keys * bits_per_key)
        num_hashes = min(30, max(1, round(bits_per_key * math.log(2))))
        return cls(num_bits, num_hashes)

    def _positions(self, key: bytes):
        """Yield the ``num_hashes`` bit positions probed for ``key``."""
        digest = fnv1a_64(key)
        h1 = digest & 0xFFFFFFFF
        h2 = (digest >> 32) | 1
        for i in range(self.num_hashes):
            yield (h1 + i * h2) % self.num_bits

    def add(self, key: bytes) -> None:
        """Insert ``key``."""
        for pos in self._positions(key):
            self._bits[pos >> 3] |= 1 << (pos & 7)

    def might_contain(self, key: bytes) -> bool:
        """False if ``key`` was definitely never added; True if it may have been."""
        return all(self._bits[pos >> 3] & (1 << (pos & 7)) for pos in self._positions(key))

    def fill_ratio(self) -> float:
        """Fraction of bits that are set."""
        set_bits = sum(bin(byte).count("1") for byte in self._bits)
        return set_bits / self.num_bits

    def estimated_false_positive_rate(self) -> float:
        """Estimate the false-positive probability as ``fill_ratio ** num_hashes``."""
        return self.fill_ratio() ** self.num_hashes

    def to_bytes(self) -> bytes:
        """Serialise as varint num_bits, one byte num_hashes, then the bit array."""
        return encode_uvarint(self.num_bits) + bytes([self.num_hashes]) + bytes(self._bits)

    @classmethod
    def from_bytes(cls, data: bytes) -> "BloomFilter":
        """Parse :meth:`to_bytes` output; CorruptionError if it is malformed."""
        num_bits, pos = decode_uvarint(data, 0)
        if pos >= len(data):
            raise CorruptionError("bloom filter is missing its hash count")
        num_hashes = data[pos]
        try:
            return cls(num_bits, num_hashes, data[pos + 1:])
        except InvalidArgumentError as exc:
            raise CorruptionError(f"malformed bloom filter: {exc}") from exc
