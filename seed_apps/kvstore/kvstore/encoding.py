"""Binary encodings shared by the log, the tables and the manifest.

Contents:

* unsigned LEB128 varints and length-prefixed byte strings,
* masked CRC32 checksums and checksummed record frames,
* :class:`Entry`, the versioned key/value record, and its codec,
* an order-preserving codec for composite (tuple) keys.
"""

import struct
import zlib
from dataclasses import dataclass
from typing import Optional

from .errors import ChecksumError, CorruptionError, TruncatedError

KIND_DELETE = 0
KIND_PUT = 1
MAX_SEQUENCE = (1 << 56) - 1

_CRC_MASK_DELTA = 0xA282EAD8
_U32 = 0xFFFFFFFF
FRAME_HEADER = struct.Struct("<II")

_FLAG_PUT = 0x01
_FLAG_EXPIRES = 0x02

_TAG_NONE = 0x01
_TAG_INT = 0x02
_TAG_BYTES = 0x03
_TAG_STR = 0x04
_INT_BIAS = 1 << 63


def to_bytes(value, what: str = "key") -> bytes:
    """Coerce ``value`` to ``bytes``.

    ``bytes`` are returned unchanged, ``bytearray``/``memoryview`` are copied
    and ``str`` is UTF-8 encoded.  Anything else raises ``TypeError`` whose
    message names ``what`` (e.g. "key must be bytes or str, not int").
    """
    if isinstance(value, bytes):
        return value
    if isinstance(value, (bytearray, memoryview)):
        return bytes(value)
    if isinstance(value, str):
        return value.encode("utf-8")
    raise TypeError(f"{what} must be bytes or str, not {type(value).__name__}")


def encode_uvarint(value: int) -> bytes:
    """Encode a non-negative integer as an unsigned LEB128 varint.

    Seven bits per byte, least significant group first; every byte but the
    last has its high bit set.  ``ValueError`` for negative input.
    """
    if value < 0:
        raise ValueError(f"cannot encode negative varint {value}")
    out = bytearray()
    while True:
        group = value & 0x7F
        value >>= 7
        if value:
            out.append(group | 0x80)
        else:
            out.append(group)
            return bytes(out)


def decode_uvarint(buf, pos: int = 0) -> tuple:
    """Decode a varint starting at ``buf[pos]``.

    Returns ``(value, next_pos)``.  Raises :class:`TruncatedError` when the
    buffer ends inside the varint and :class:`CorruptionError` when the varint
    is longer than 10 bytes.
    """
    result = 0
    shift = 0
    while True:
        if pos >= len(buf):
            raise TruncatedError("varint runs past the end of the buffer")
        byte = buf[pos]
        pos += 1
        result |= (byte & 0x7F) << shift
        if not byte & 0x80:
            return result, pos
        shift += 7
        if shift >= 70:
            raise CorruptionError("varint is longer than 10 bytes")


def encode_bytes(data: bytes) -> bytes:
    """Return ``data`` prefixed by its length as a varint."""
    return encode_uvarint(len(data)) + bytes(data)


def decode_bytes(buf, pos: int = 0) -> tuple:
    """Decode a length-prefixed byte string at ``pos``.

    Returns ``(data, next_pos)``; :class:`TruncatedError` if the declared
    length runs past the end of ``buf``.
    """
    length, pos = decode_uvarint(buf, pos)
    end = pos + length
    if end > len(buf):
        raise TruncatedError(f"byte string of length {length} runs past the end of the buffer")
    return bytes(buf[pos:end]), end


def crc32(data) -> int:
    """Return the unsigned CRC32 (``zlib.crc32``) of ``data``."""
    return zlib.crc32(data) & _U32


def mask_crc(crc: int) -> int:
    """Scramble a CRC so that checksums of data containing checksums stay strong.

    Rotates the 32-bit value right by 15 bits and adds ``0xA282EAD8`` modulo
    2**32.  :func:`unmask_crc` is the inverse.
    """
    rotated = ((crc >> 15) | (crc << 17)) & _U32
    return (rotated + _CRC_MASK_DELTA) & _U32


def unmask_crc(masked: int) -> int:
    """Invert :func:`mask_crc`."""
    rotated = (masked - _CRC_MASK_DELTA) & _U32
    return ((rotated >> 17) | (rotated << 15)) & _U32


def frame_record(payload: bytes) -> bytes:
    """Wrap ``payload`` in a frame: masked CRC32 (u32 LE), length (u32 LE), payload."""
    return FRAME_HEADER.pack(mask_crc(crc32(payload)), len(payload)) + bytes(payload)


def unframe_record(buf, pos: int = 0) -> tuple:
    """Read one frame written by :func:`frame_record` starting at ``pos``.

    Returns ``(payload, next_pos)``.  Raises :class:`TruncatedError` when the
    header or payload is incomplete and :class:`ChecksumError` when the CRC
    does not match the payload.
    """
    if pos + FRAME_HEADER.size > len(buf):
        raise TruncatedError(f"incomplete frame header at offset {pos}")
    masked, length = FRAME_HEADER.unpack_from(buf, pos)
    start = pos + FRAME_HEADER.size
    end = start + length
    if end > len(buf):
        raise TruncatedError(f"frame at offset {pos} declares {length} bytes but the buffer ends")
    payload = bytes(buf[start:end])
    if unmask_crc(masked) != crc32(payload):
        raise ChecksumError(f"checksum mismatch in frame at offset {pos}")
    return payload, end


@dataclass(frozen=True)
class Entry:
    """One version of a key.

    Attributes:
        key: user key.
        seq: sequence number assigned at commit; larger is newer.
        kind: :data:`KIND_PUT` or :data:`KIND_DELETE` (a tombstone).
        value: stored value (always ``b""`` for tombstones).
        expires_at: logical time at which a put stops being visible, or None.
    """

    key: bytes
    seq: int
    kind: int
    value: bytes = b""
    expires_at: Optional[int] = None

    @property
    def sort_key(self) -> tuple:
        """Internal ordering key: user key ascending, then newest version first."""
        return (self.key, -self.seq)

    @property
    def is_tombstone(self) -> bool:
        """True for delete markers."""
        return self.kind == KIND_DELETE

    def is_expired(self, now: Optional[int]) -> bool:
        """True if the entry has an expiry and logical time ``now`` reached it.

        ``now`` of None means "no clock" and never expires anything.
        """
        return self.expires_at is not None and now is not None and now >= self.expires_at

    def is_live(self, now: Optional[int]) -> bool:
        """True if the entry is a put that has not expired at ``now``."""
        return not self.is_tombstone and not self.is_expired(now)


def encode_entry(entry: Entry) -> bytes:
    """Serialise an :class:`Entry`.

    Layout: key (length-prefixed), seq (varint), flags byte (bit 0 = put,
    bit 1 = has expiry), expiry (varint, only if flagged), value
    (length-prefixed, only for puts).
    """
    flags = 0
    if entry.kind == KIND_PUT:
        flags |= _FLAG_PUT
    if entry.expires_at is not None:
        flags |= _FLAG_EXPIRES
    parts = [encode_bytes(entry.key), encode_uvarint(entry.seq), bytes([flags])]
    if entry.expires_at is not None:
        parts.append(encode_uvarint(entry.expires_at))
    if entry.kind == KIND_PUT:
        parts.append(encode_bytes(entry.value))
    return b"".join(parts)


def decode_entry(buf, pos: int = 0) -> tuple:
    """Decode an entry written by :func:`encode_entry`.

    Returns ``(entry, next_pos)``.  Unknown flag bits raise
    :class:`CorruptionError`; short input raises :class:`TruncatedError`.
    """
    key, pos = decode_bytes(buf, pos)
    seq, pos = decode_uvarint(buf, pos)
    if pos >= len(buf):
        raise TruncatedError("entry ends before its flags byte")
    flags = buf[pos]
    pos += 1
    if flags & ~(_FLAG_PUT | _FLAG_EXPIRES):
        raise CorruptionError(f"unknown entry flags 0x{flags:02x}")
    expires_at = None
    if flags & _FLAG_EXPIRES:
        expires_at, pos = decode_uvarint(buf, pos)
    if flags & _FLAG_PUT:
        value, pos = decode_bytes(buf, pos)
        return Entry(key, seq, KIND_PUT, value, expires_at), pos
    return Entry(key, seq, KIND_DELETE, b"", expires_at), pos


def _escape(data: bytes) -> bytes:
    """Escape NUL bytes as ``00 FF`` and append the terminator ``00 01``."""
    return data.replace(b"\x00", b"\x00\xff") + b"\x00\x01"


def _unescape(buf: bytes, pos: int) -> tuple:
    """Inverse of :func:`_escape`; returns ``(raw_bytes, next_pos)``."""
    out = bytearray()
    while True:
        nul = buf.find(b"\x00", pos)
        if nul < 0 or nul + 1 >= len(buf):
            raise TruncatedError("unterminated string component in tuple key")
        out += buf[pos:nul]
        marker = buf[nul + 1]
        if marker == 0x01:
            return bytes(out), nul + 2
        if marker != 0xFF:
            raise CorruptionError(f"invalid escape 00 {marker:02x} in tuple key")
        out.append(0)
        pos = nul + 2


def encode_key_tuple(parts) -> bytes:
    """Encode a tuple of None/int/bytes/str into order-preserving bytes.

    Comparing two encodings bytewise gives the same result as comparing the
    tuples element by element (components of different types order as
    None < int < bytes < str), and the encoding of a tuple is a byte prefix of
    the encoding of any longer tuple that starts with it, which makes prefix
    scans over composite keys possible.  Integers must fit in a signed 64-bit
    range (``ValueError`` otherwise); ``bool`` and other types raise
    ``TypeError``.
    """
    out = bytearray()
    for part in parts:
        if part is None:
            out.append(_TAG_NONE)
        elif isinstance(part, bool):
            raise TypeError("bool is not a supported key component")
        elif isinstance(part, int):
            if not -_INT_BIAS <= part < _INT_BIAS:
                raise ValueError(f"integer key component {part} does not fit in 64 bits")
            out.append(_TAG_INT)
            out += (part + _INT_BIAS).to_bytes(8, "big")
        elif isinstance(part, (bytes, bytearray)):
            out.append(_TAG_BYTES)
            out += _escape(bytes(part))
        elif isinstance(part, str):
            out.append(_TAG_STR)
            out += _escape(part.encode("utf-8"))
        else:
            raise TypeError(f"unsupported key component type {type(part).__name__}")
    return bytes(out)


def decode_key_tuple(data: bytes) -> tuple:
    """Decode bytes produced by :func:`encode_key_tuple` back into a tuple.

    Raises :class:`CorruptionError` on unknown type tags or bad escapes and
    :class:`TruncatedError` when a component is cut short.
    """
    parts = []
    pos = 0
    while pos < len(data):
        tag = data[pos]
        pos += 1
        if tag == _TAG_NONE:
            parts.append(None)
        elif tag == _TAG_INT:
            if pos + 8 > len(data):
                raise TruncatedError("integer key component is cut short")
            parts.append(int.from_bytes(data[pos:pos + 8], "big") - _INT_BIAS)
            pos += 8
        elif tag in (_TAG_BYTES, _TAG_STR):
            raw, pos = _unescape(data, pos)
            parts.append(raw if tag == _TAG_BYTES else raw.decode("utf-8"))
        else:
            raise CorruptionError(f"unknown tuple key tag 0x{tag:02x}")
    return tuple(parts)
