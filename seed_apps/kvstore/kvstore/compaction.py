"""Compaction: merging sorted runs and choosing what to merge.

Tables are kept in age order and always cover disjoint, increasing sequence
ranges.  The tiered policy therefore only merges *adjacent* tables, which
preserves that invariant and lets point lookups stop at the newest table
holding a version of a key.
"""

from dataclasses import dataclass
from typing import Optional

from .encoding import KIND_DELETE, Entry
from .errors import InvalidArgumentError
from .iterators import MergingIterator
from .sstable import SSTableWriter, TableMeta


def compact_entries(entries, smallest_snapshot: int, drop_tombstones: bool,
                    now: Optional[int] = None):
    """Filter a merged version stream (internal-key order) down to what must be kept.

    For each key the versions arrive newest first.  A version is dropped when
    a newer version of the same key has ``seq <= smallest_snapshot`` (every
    live reader already sees that newer version).  A tombstone -- or a put
    that has expired at ``now`` -- with ``seq <= smallest_snapshot`` is also
    dropped when ``drop_tombstones`` is true (no older data can exist below
    the compaction output).  Expired puts that must be kept are rewritten as
    tombstones so their values are not carried forward.
    """
    current_key = None
    newer_seq = None
    for entry in entries:
        if entry.key != current_key:
            current_key = entry.key
            newer_seq = None
        dead = entry.is_tombstone or entry.is_expired(now)
        shadowed = newer_seq is not None and newer_seq <= smallest_snapshot
        newer_seq = entry.seq
        if shadowed:
            continue
        if dead and drop_tombstones and entry.seq <= smallest_snapshot:
            continue
        if dead and not entry.is_tombstone:
            entry = Entry(entry.key, entry.seq, KIND_DELETE)
        yield entry


@dataclass
class CompactionResult:
    """What a compaction did.

    Attributes:
        input_numbers: numbers of the tables that were merged.
        output: metadata of the new table, or None if nothing survived.
        entries_read: total entries in the inputs.
        entries_written: entries in the output.
    """

    input_numbers: list
    output: Optional[TableMeta]
    entries_read: int
    entries_written: int

    @property
    def entries_dropped(self) -> int:
        """Number of versions removed by the compaction."""
        return self.entries_read - self.entries_written


class TieredCompactionPolicy:
    """Size-tiered selection of adjacent tables.

    Args:
        min_merge: smallest number of tables worth merging (>= 2).
        max_merge: largest number of tables merged at once.
        size_ratio: tables belong to one tier while the largest is at most
            ``size_ratio`` times the smallest.
    """

    def __init__(self, min_merge: int = 4, max_merge: int = 10, size_ratio: float = 2.0):
        """Validate and store the policy parameters."""
        if min_merge < 2:
            raise InvalidArgumentError("min_merge must be at least 2")
        if max_merge < min_merge:
            raise InvalidArgumentError("max_merge must be >= min_merge")
        if size_ratio < 1.0:
            raise InvalidArgumentError("size_ratio must be >= 1.0")
        self.min_merge = min_merge
        self.max_merge = max_merge
        self.size_ratio = size_ratio

    def pick(self, tables: list) -> Optional[list]:
        """Choose a run of adjacent tables to merge, or None.

        ``tables`` is ordered oldest first.  For every start position the run
        is extended with following tables while ``max size <= size_ratio *
        min size`` and the run is shorter than ``max_merge``.  Among runs of
        at least ``min_merge`` tables the longest wins (it removes the most
        tables); equally long runs are ranked by smallest total file size,
        and remaining ties go to the older run.
        """
        best = None
        best_rank = None
        for start in range(len(tables)):
            low = high = tables[start].file_size
            stop = start + 1
            while stop < len(tables) and stop - start < self.max_merge:
                size = tables[stop].file_size
                if max(high, size) > self.size_ratio * min(low, size):
                    break
                low, high = min(low, size), max(high, size)
                stop += 1
            if stop - start < self.min_merge:
                continue
            rank = (-(stop - start), sum(t.file_size for t in tables[start:stop]))
            if best_rank is None or rank < best_rank:
                best, best_rank = tables[start:stop], rank
        return best


def run_compaction(fs, directory: str, inputs: list, output_number: int, *,
                   smallest_snapshot: int, drop_tombstones: bool, now: Optional[int],
                   block_size: int, bloom_bits_per_key: int) -> CompactionResult:
    """Merge the tables in ``inputs`` (readers, oldest first) into one new table.

    The merged stream is filtered by :func:`compact_entries`.  When nothing
    survives no file is written and ``output`` is None.
    """
    merged = MergingIterator([reader.scan_entries() for reader in reversed(inputs)])
    writer = None
    written = 0
    for entry in compact_entries(merged, smallest_snapshot, drop_tombstones, now):
        if writer is None:
            writer = SSTableWriter(fs, directory, output_number, block_size, bloom_bits_per_key)
        writer.add(entry)
        written += 1
    output = writer.finish() if writer is not None else None
    return CompactionResult(
        input_numbers=[reader.meta.number for reader in inputs],
        output=output,
        entries_read=sum(reader.meta.entry_count for reader in inputs),
        entries_written=written,
    )

