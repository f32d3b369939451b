"""The manifest: durable description of which tables make up the store.

The manifest records the live tables (oldest first), the next file number,
the last sequence number persisted in tables and the first write-ahead-log
segment that still needs replaying.  It is rewritten atomically after every
flush and compaction.
"""

from dataclasses import dataclass, field

from .encoding import (
    decode_bytes,
    decode_uvarint,
    encode_bytes,
    encode_uvarint,
    frame_record,
    unframe_record,
)
from .errors import CorruptionError, InvalidArgumentError
from .sstable import TableMeta

MANIFEST_NAME = "MANIFEST"
_MAGIC = b"KVMF"
_VERSION = 1


@dataclass
class Manifest:
    """Mutable in-memory manifest state.

    Attributes:
        next_file_number: number for the next table created.
        last_sequence: highest sequence number stored in tables.
        log_number: first WAL segment needed by recovery.
        tables: live :class:`TableMeta` objects, oldest first.
    """

    next_file_number: int = 1
    last_sequence: int = 0
    log_number: int = 0
    tables: list = field(default_factory=list)

    def allocate_number(self) -> int:
        """Return a fresh file number and advance the counter."""
        number = self.next_file_number
        self.next_file_number += 1
        return number

    def add_table(self, meta: TableMeta) -> None:
        """Append a newly flushed table as the newest one."""
        self.tables.append(meta)

    def table_numbers(self) -> list:
        """Numbers of the live tables, oldest first."""
        return [meta.number for meta in self.tables]

    def apply_compaction(self, removed: list, added) -> None:
        """Replace the adjacent tables numbered ``removed`` by ``added`` (or by nothing).

        The replacement takes the position of the removed run so age order is
        preserved.  Raises InvalidArgumentError if a number is unknown or the
        removed tables are not adjacent.
        """
        numbers = self.table_numbers()
        try:
            positions = sorted(numbers.index(n) for n in removed)
        except ValueError:
            raise InvalidArgumentError(f"unknown table in {removed!r}") from None
        if not positions or positions != list(range(positions[0], positions[0] + len(positions))):
            raise InvalidArgumentError(f"tables {removed!r} are not adjacent")
        replacement = [added] if added is not None else []
        self.tables[positions[0]:positions[-1] + 1] = replacement


def _encode_meta(meta: TableMeta) -> bytes:
    """Serialise one :class:`TableMeta`."""
    return b"".join([
        encode_uvarint(meta.number),
        encode_uvarint(meta.file_size),
        encode_uvarint(meta.entry_count),
        encode_bytes(meta.smallest_key),
        encode_bytes(meta.largest_key),
        encode_uvarint(meta.min_seq),
        encode_uvarint(meta.max_seq),
    ])


def _decode_meta(buf: bytes, pos: int) -> tuple:
    """Deserialise one :class:`TableMeta`; returns ``(meta, next_pos)``."""
    number, pos = decode_uvarint(buf, pos)
    file_size, pos = decode_uvarint(buf, pos)
    entry_count, pos = decode_uvarint(buf, pos)
    smallest, pos = decode_bytes(buf, pos)
    largest, pos = decode_bytes(buf, pos)
    min_seq, pos = decode_uvarint(buf, pos)
    max_seq, pos = decode_uvarint(buf, pos)
    return TableMeta(number, file_size, entry_count, smallest, largest, min_seq, max_seq), pos


def encode_manifest(manifest: Manifest) -> bytes:
    """Serialise a manifest into a single checksummed frame."""
    parts = [
        _MAGIC,
        encode_uvarint(_VERSION),
        encode_uvarint(manifest.next_file_number),
        encode_uvarint(manifest.last_sequence),
        encode_uvarint(manifest.log_number),
        encode_uvarint(len(manifest.tables)),
    ]
    parts.extend(_encode_meta(meta) for meta in manifest.tables)
    return frame_record(b"".join(parts))


def decode_manifest(data: bytes) -> Manifest:
    """Parse :func:`encode_manifest` output.

    Raises CorruptionError for a bad checksum, magic or version, trailing
    bytes, or a table list that is not strictly increasing in sequence
    ranges (tables must cover disjoint, age-ordered sequence ranges).
    """
    payload, end = unframe_record(data, 0)
    if end != len(data):
        raise CorruptionError("trailing bytes after manifest frame")
    if payload[:4] != _MAGIC:
        raise CorruptionError("manifest has a bad magic prefix")
    version, pos = decode_uvarint(payload, 4)
    if version != _VERSION:
        raise CorruptionError(f"unsupported manifest version {version}")
    next_file, pos = decode_uvarint(payload, pos)
    last_seq, pos = decode_uvarint(payload, pos)
    log_number, pos = decode_uvarint(payload, pos)
    count, pos = decode_uvarint(payload, pos)
    tables = []
    for _ in range(count):
        meta, pos = _decode_meta(payload, pos)
        if tables and meta.min_seq <= tables[-1].max_seq:
            raise CorruptionError("manifest tables overlap in sequence ranges")
        tables.append(meta)
    if pos != len(payload):
        raise CorruptionError("trailing bytes inside manifest payload")
    return Manifest(next_file, last_seq, log_number, tables)


def save_manifest(fs, directory: str, manifest: Manifest) -> None:
    """Atomically write ``manifest`` to ``directory/MANIFEST``."""
    fs.write_atomic(fs.join(directory, MANIFEST_NAME), encode_manifest(manifest))


def load_manifest(fs, directory: str):
    """Return the manifest stored in ``directory`` or None if there is none."""
    path = fs.join(directory, MANIFEST_NAME)
    if not fs.exists(path):
        return None
    return decode_manifest(fs.read(path))
