"""Write batches: groups of puts and deletes applied atomically.

A :class:`WriteBatch` is built by the caller, turned into :class:`Entry`
objects with consecutive sequence numbers at commit time, and logged as a
single write-ahead-log record so that recovery replays all or none of it.
"""

from dataclasses import dataclass
from typing import Optional

from .encoding import (
    KIND_DELETE,
    KIND_PUT,
    Entry,
    decode_entry,
    decode_uvarint,
    encode_entry,
    encode_uvarint,
    to_bytes,
)
from .errors import CorruptionError, InvalidArgumentError


@dataclass(frozen=True)
class BatchOp:
    """One buffered operation: kind, key, value and optional TTL in ticks."""

    kind: int
    key: bytes
    value: bytes = b""
    ttl: Optional[int] = None


def validate_key(key) -> bytes:
    """Coerce ``key`` to bytes and reject empty keys with InvalidArgumentError."""
    data = to_bytes(key, "key")
    if not data:
        raise InvalidArgumentError("keys must be non-empty")
    return data


class WriteBatch:
    """An ordered list of puts and deletes applied atomically by the store.

    Later operations on the same key override earlier ones when applied.
    ``put`` and ``delete`` return the batch so calls can be chained.
    """

    def __init__(self):
        """Create an empty batch."""
        self._ops = []

    def put(self, key, value, ttl: Optional[int] = None) -> "WriteBatch":
        """Buffer ``key -> value``; ``ttl`` (positive ticks) makes it expire.

        Raises InvalidArgumentError for empty keys or a non-positive ttl and
        TypeError for keys/values that are not bytes or str.
        """
        if ttl is not None and ttl <= 0:
            raise InvalidArgumentError(f"ttl must be positive, got {ttl}")
        self._ops.append(BatchOp(KIND_PUT, validate_key(key), to_bytes(value, "value"), ttl))
        return self

    def delete(self, key) -> "WriteBatch":
        """Buffer a deletion of ``key``."""
        self._ops.append(BatchOp(KIND_DELETE, validate_key(key)))
        return self

    def __len__(self) -> int:
        """Number of buffered operations."""
        return len(self._ops)

    def __iter__(self):
        """Iterate over the buffered :class:`BatchOp` objects in order."""
        return iter(self._ops)

    def clear(self) -> None:
        """Drop every buffered operation."""
        self._ops.clear()

    def approximate_size(self) -> int:
        """Sum of key and value lengths of all operations."""
        return sum(len(op.key) + len(op.value) for op in self._ops)

    def to_entries(self, first_seq: int, now: int) -> list:
        """Materialise the batch as entries numbered ``first_seq, first_seq+1, ...``.

        A put with a TTL gets ``expires_at = now + ttl``.
        """
        entries = []
        for offset, op in enumerate(self._ops):
            expires_at = now + op.ttl if op.ttl is not None else None
            entries.append(Entry(op.key, first_seq + offset, op.kind, op.value, expires_at))
        return entries


def encode_batch_record(entries: list) -> bytes:
    """Serialise a committed batch as ``count`` (varint) followed by its entries."""
    return encode_uvarint(len(entries)) + b"".join(encode_entry(e) for e in entries)


def decode_batch_record(payload: bytes) -> list:
    """Decode a record written by :func:`encode_batch_record`.

    Validates that the record is non-empty, that its entries carry
    consecutive sequence numbers and that no bytes trail the last entry;
    violations raise :class:`CorruptionError`.
    """
    count, pos = decode_uvarint(payload, 0)
    if count == 0:
        raise CorruptionError("batch record contains no entries")
    entries = []
    for _ in range(count):
        entry, pos = decode_entry(payload, pos)
        if entries and entry.seq != entries[-1].seq + 1:
            raise CorruptionError(
                f"batch sequence numbers are not consecutive: {entries[-1].seq} then {entry.seq}"
            )
        entries.append(entry)
    if pos != len(payload):
        raise CorruptionError(f"{len(payload) - pos} trailing bytes after batch record")
    return entries
