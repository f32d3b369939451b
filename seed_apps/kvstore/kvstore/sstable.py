"""Immutable sorted string tables.

File layout (all integers little-endian)::

    data block 0 | crc | data block 1 | crc | ... |
    index frame | bloom frame | properties frame | footer

* A data block is a run of encoded entries in internal-key order followed by
  the masked CRC32 of the block (u32).
* The index frame lists, per block, the internal key of its last entry
  (user key, seq) and the block's offset and length.
* The bloom frame holds a :class:`~kvstore.bloom.BloomFilter` over user keys.
* The properties frame holds entry count, smallest/largest user key and the
  sequence range.
* The footer is ``<QIQIQIQ``: offset and length of the three frames and a
  magic number.
"""

import bisect
import re
import struct
from dataclasses import dataclass
from typing import Optional

from .bloom import BloomFilter
from .encoding import (
    MAX_SEQUENCE,
    Entry,
    crc32,
    decode_bytes,
    decode_entry,
    decode_uvarint,
    encode_bytes,
    encode_entry,
    encode_uvarint,
    frame_record,
    mask_crc,
    unframe_record,
    unmask_crc,
)
from .errors import ChecksumError, ClosedError, CorruptionError, InvalidArgumentError
from .fs import FileSystem

MAGIC = 0x315245544B56534B
FOOTER = struct.Struct("<QIQIQIQ")
_BLOCK_CRC = struct.Struct("<I")
_TABLE_RE = re.compile(r"^(\d{6,})\.sst$")


def table_name(number: int) -> str:
    """Return the file name of table ``number``, e.g. ``000012.sst``."""
    return f"{number:06d}.sst"


def parse_table_name(name: str) -> Optional[int]:
    """Return the table number encoded in ``name`` or None."""
    match = _TABLE_RE.match(name)
    return int(match.group(1)) if match else None


@dataclass(frozen=True)
class TableMeta:
    """Summary of one table, as recorded in the manifest."""

    number: int
    file_size: int
    entry_count: int
    smallest_key: bytes
    largest_key: bytes
    min_seq: int
    max_seq: int

    def overlaps(self, start: Optional[bytes], end: Optional[bytes]) -> bool:
        """True if some key in ``[smallest_key, largest_key]`` lies in ``[start, end)``."""
        if start is not None and self.largest_key < start:
            return False
        if end is not None and self.smallest_key >= end:
            return False
        return True


class SSTableWriter:
    """Builds a table file from entries supplied in strictly increasing internal order.

    Args:
        fs: filesystem.
        directory: directory to create the table in.
        number: table number (determines the file name).
        block_size: a block is closed once it reaches this many bytes.
        bloom_bits_per_key: Bloom filter budget.
    """

    def __init__(self, fs: FileSystem, directory: str, number: int,
                 block_size: int = 4096, bloom_bits_per_key: int = 10):
        """Prepare an empty table; see the class docstring for the arguments."""
        if block_size <= 0:
            raise InvalidArgumentError("block_size must be positive")
        self._fs = fs
        self._path = fs.join(directory, table_name(number))
        self._number = number
        self._block_size = block_size
        self._bloom_bits = bloom_bits_per_key
        self._out = bytearray()
        self._block = bytearray()
        self._index = []
        self._keys = []
        self._last = None
        self._count = 0
        self._min_seq = MAX_SEQUENCE
        self._max_seq = 0
        self._finished = False

    def add(self, entry: Entry) -> None:
        """Append ``entry``; InvalidArgumentError if it is not after the previous one."""
        if self._finished:
            raise ClosedError("table writer already finished")
        if self._last is not None and entry.sort_key <= self._last.sort_key:
            raise InvalidArgumentError(
                f"entries must be added in increasing order: {entry.sort_key!r} "
                f"after {self._last.sort_key!r}"
            )
        if self._last is None or entry.key != self._last.key:
            self._keys.append(entry.key)
        self._block += encode_entry(entry)
        self._last = entry
        self._count += 1
        self._min_seq = min(self._min_seq, entry.seq)
        self._max_seq = max(self._max_seq, entry.seq)
        if len(self._block) >= self._block_size:
            self._flush_block()

    def _flush_block(self) -> None:
        """Close the current block: write it with its CRC and index its last key."""
        if not self._block:
            return
        data = bytes(self._block)
        offset = len(self._out)
        self._out += data + _BLOCK_CRC.pack(mask_crc(crc32(data)))
        self._index.append((self._last.key, self._last.seq, offset, len(data)))
        self._block.clear()

    def finish(self) -> TableMeta:
        """Write index, filter, properties and footer; durably create the file.

        Returns the table's :class:`TableMeta`.  Raises InvalidArgumentError if
        no entry was added (empty tables are never written).
        """
        if self._finished:
            raise ClosedError("table writer already finished")
        if self._count == 0:
            raise InvalidArgumentError("cannot write a table without entries")
        self._flush_block()
        bloom = BloomFilter.for_capacity(len(self._keys), self._bloom_bits)
        for key in self._keys:
            bloom.add(key)
        index = bytearray(encode_uvarint(len(self._index)))
        for key, seq, offset, length in self._index:
            index += encode_bytes(key) + encode_uvarint(seq)
            index += encode_uvarint(offset) + encode_uvarint(length)
        props = (encode_uvarint(self._count) + encode_bytes(self._keys[0])
                 + encode_bytes(self._keys[-1]) + encode_uvarint(self._min_seq)
                 + encode_uvarint(self._max_seq))
        sections = []
        for payload in (bytes(index), bloom.to_bytes(), props):
            framed = frame_record(payload)
            sections.append((len(self._out), len(framed)))
            self._out += framed
        (io, il), (bo, bl), (po, pl) = sections
        self._out += FOOTER.pack(io, il, bo, bl, po, pl, MAGIC)
        self._fs.write_atomic(self._path, bytes(self._out))
        self._finished = True
        return TableMeta(self._number, len(self._out), self._count, self._keys[0],
                         self._keys[-1], self._min_seq, self._max_seq)


class SSTableReader:
    """Read-only access to a table file; blocks are decoded lazily and cached.

    Opening validates the footer magic and the checksums of the index,
    filter and properties frames (CorruptionError on failure).
    """

    def __init__(self, fs: FileSystem, directory: str, number: int):
        """Read and validate table ``number`` in ``directory`` (CorruptionError if damaged)."""
        path = fs.join(directory, table_name(number))
        self._data = fs.read(path)
        self._cache = {}
        if len(self._data) < FOOTER.size:
            raise CorruptionError(f"table {path!r} is too short to hold a footer")
        fields = FOOTER.unpack_from(self._data, len(self._data) - FOOTER.size)
        if fields[6] != MAGIC:
            raise CorruptionError(f"table {path!r} has a bad magic number")
        index_raw = self._section(fields[0], fields[1])
        self._bloom = BloomFilter.from_bytes(self._section(fields[2], fields[3]))
        self._index = self._parse_index(index_raw)
        self._index_keys = [(key, -seq) for key, seq, _, _ in self._index]
        props = self._section(fields[4], fields[5])
        count, pos = decode_uvarint(props, 0)
        smallest, pos = decode_bytes(props, pos)
        largest, pos = decode_bytes(props, pos)
        min_seq, pos = decode_uvarint(props, pos)
        max_seq, _ = decode_uvarint(props, pos)
        self.meta = TableMeta(number, len(self._data), count, smallest, largest, min_seq, max_seq)

    def _section(self, offset: int, length: int) -> bytes:
        """Return the payload of the frame at ``offset`` spanning ``length`` bytes."""
        payload, end = unframe_record(self._data, offset)
        if end != offset + length:
            raise CorruptionError("table section length does not match its footer entry")
        return payload

    @staticmethod
    def _parse_index(raw: bytes) -> list:
        """Decode the index payload into ``(last_key, last_seq, offset, length)`` tuples."""
        count, pos = decode_uvarint(raw, 0)
        index = []
        for _ in range(count):
            key, pos = decode_bytes(raw, pos)
            seq, pos = decode_uvarint(raw, pos)
            offset, pos = decode_uvarint(raw, pos)
            length, pos = decode_uvarint(raw, pos)
            index.append((key, seq, offset, length))
        return index

    @property
    def block_count(self) -> int:
        """Number of data blocks."""
        return len(self._index)

    def _block(self, block_no: int) -> tuple:
        """Return ``(entries, sort_keys)`` of a data block, verifying its CRC."""
        cached = self._cache.get(block_no)
        if cached is not None:
            return cached
        _, _, offset, length = self._index[block_no]
        end = offset + length
        if end + _BLOCK_CRC.size > len(self._data):
            raise CorruptionError(f"data block {block_no} extends past the end of the table")
        data = self._data[offset:end]
        (stored,) = _BLOCK_CRC.unpack_from(self._data, end)
        if unmask_crc(stored) != crc32(data):
            raise ChecksumError(f"checksum mismatch in data block {block_no}")
        entries = []
        pos = 0
        while pos < len(data):
            entry, pos = decode_entry(data, pos)
            entries.append(entry)
        result = (entries, [e.sort_key for e in entries])
        self._cache[block_no] = result
        return result

    def _locate(self, key: bytes, seq: int) -> Optional[tuple]:
        """Return ``(block_no, position)`` of the first entry >= internal key ``(key, -seq)``.

        Returns None when every entry in the table sorts before it.
        """
        target = (key, -seq)
        block_no = bisect.bisect_left(self._index_keys, target)
        if block_no == len(self._index):
            return None
        _, sort_keys = self._block(block_no)
        return block_no, bisect.bisect_left(sort_keys, target)

    def may_contain(self, key: bytes) -> bool:
        """Bloom filter check: False means ``key`` is certainly absent."""
        return self._bloom.might_contain(key)

    def get(self, key: bytes, snapshot_seq: int) -> Optional[Entry]:
        """Return the newest version of ``key`` with ``seq <= snapshot_seq`` (tombstones too).

        Keys outside the table's key range or rejected by the Bloom filter
        return None without touching any data block.
        """
        if key < self.meta.smallest_key or key > self.meta.largest_key:
            return None
        if not self._bloom.might_contain(key):
            return None
        located = self._locate(key, snapshot_seq)
        if located is None:
            return None
        block_no, pos = located
        entry = self._block(block_no)[0][pos]
        return entry if entry.key == key else None

    def scan_entries(self, start: Optional[bytes] = None, end: Optional[bytes] = None,
                     reverse: bool = False):
        """Yield every version with key in ``[start, end)``.

        Forward order is internal-key order; ``reverse=True`` yields the exact
        reverse of that sequence.  None bounds are open.
        """
        if not reverse:
            yield from self._scan_forward(start, end)
        else:
            yield from self._scan_backward(start, end)

    def _scan_forward(self, start, end):
        """Forward half of :meth:`scan_entries`."""
        if start is None:
            block_no, pos = 0, 0
        else:
            located = self._locate(start, MAX_SEQUENCE)
            if located is None:
                return
            block_no, pos = located
        while block_no < len(self._index):
            entries = self._block(block_no)[0]
            for entry in entries[pos:]:
                if end is not None and entry.key >= end:
                    return
                yield entry
            block_no, pos = block_no + 1, 0

    def _scan_backward(self, start, end):
        """Reverse half of :meth:`scan_entries`."""
        located = None if end is None else self._locate(end, MAX_SEQUENCE)
        if located is None:
            block_no = len(self._index) - 1
            pos = len(self._block(block_no)[0]) - 1
        else:
            block_no, pos = located[0], located[1] - 1
        while block_no >= 0:
            entries = self._block(block_no)[0]
            for i in range(pos, -1, -1):
                entry = entries[i]
                if start is not None and entry.key < start:
                    return
                yield entry
            block_no -= 1
            if block_no >= 0:
                pos = len(self._block(block_no)[0]) - 1

    def verify(self) -> int:
        """Decode and checksum every block; return the number of entries.

        Raises CorruptionError if a block is damaged or the count differs
        from the properties.
        """
        total = sum(len(self._block(i)[0]) for i in range(len(self._index)))
        if total != self.meta.entry_count:
            raise CorruptionError(
                f"table {self.meta.number} holds {total} entries, properties say "
                f"{self.meta.entry_count}"
            )
        return total
