"""Public API: the :class:`Store` and :func:`open`.

Write path: a batch gets consecutive sequence numbers, is appended to the
write-ahead log, then inserted into the memtable; a full memtable is flushed
to a new table and the tiered compaction policy may merge tables.

Read path: the memtable, then tables from newest to oldest.  Because tables
cover disjoint, age-ordered sequence ranges, the first version found that is
not newer than the reader's snapshot is the visible one.

Recovery on open: load the manifest, open its tables, delete leftovers of
interrupted flushes/compactions, repair the log and replay every record
newer than the manifest's last sequence into the memtable.
"""

from dataclasses import dataclass
from typing import Optional

from .batch import WriteBatch, decode_batch_record, encode_batch_record, validate_key
from .compaction import CompactionResult, TieredCompactionPolicy, compact_entries, run_compaction
from .encoding import MAX_SEQUENCE, to_bytes
from .errors import (
    ClosedError,
    InvalidArgumentError,
    StoreExistsError,
    StoreNotFoundError,
)
from .iterators import MergingIterator, prefix_upper_bound, scan_sources
from .manifest import MANIFEST_NAME, Manifest, load_manifest, save_manifest
from .memtable import MemTable
from .options import Options
from .snapshot import (
    CheckpointInfo,
    Snapshot,
    SnapshotRegistry,
    create_checkpoint,
    restore_checkpoint,
)
from .sstable import SSTableReader, SSTableWriter, TableMeta, parse_table_name, table_name
from .transactions import SNAPSHOT, Transaction
from .wal import (
    RecoveryReport,
    WriteAheadLog,
    delete_segments_before,
    recover_segments,
    sync_policy_from_spec,
)

_MISSING = object()


@dataclass(frozen=True)
class StoreStats:
    """Point-in-time counters describing a store."""

    last_sequence: int
    memtable_entries: int
    memtable_bytes: int
    table_count: int
    table_entries: int
    wal_segment: int
    live_snapshots: int


def _optional_key(value, what: str) -> Optional[bytes]:
    """Coerce a scan bound to bytes, keeping None as an open bound."""
    return None if value is None else to_bytes(value, what)


class Store:
    """A persistent, ordered key-value store.  Create it with :func:`open`.

    Keys and values are ``bytes`` (``str`` is accepted and UTF-8 encoded);
    keys must be non-empty.  All methods raise :class:`ClosedError` after
    :meth:`close`.
    """

    def __init__(self, path: str, options: Optional[Options] = None):
        """Open or create the store in directory ``path`` and recover it."""
        self._path = path
        self._opts = (options if options is not None else Options()).resolved()
        self._fs = self._opts.fs
        self._clock = self._opts.clock
        self._sync_policy = sync_policy_from_spec(self._opts.wal_sync)
        self._policy = TieredCompactionPolicy(
            self._opts.compaction_min_merge,
            self._opts.compaction_max_merge,
            self._opts.compaction_size_ratio,
        )
        self._snapshots = SnapshotRegistry()
        self._readers = {}
        self._memtable = MemTable(self._opts.rng_seed)
        self._closed = False
        self.removed_orphans = []
        self.recovery = self._recover()

    # ----------------------------------------------------------------- recovery

    def _recover(self) -> RecoveryReport:
        """Load or create the manifest, open tables, clean up and replay the log."""
        fs = self._fs
        exists = fs.exists(fs.join(self._path, MANIFEST_NAME))
        if exists and self._opts.error_if_exists:
            raise StoreExistsError(f"a store already exists at {self._path!r}")
        if not exists:
            if not self._opts.create_if_missing:
                raise StoreNotFoundError(f"no store at {self._path!r}")
            fs.makedirs(self._path)
            save_manifest(fs, self._path, Manifest())
        self._manifest = load_manifest(fs, self._path)
        for meta in self._manifest.tables:
            self._readers[meta.number] = SSTableReader(fs, self._path, meta.number)
        self.removed_orphans = self._remove_orphans()
        delete_segments_before(fs, self._path, self._manifest.log_number)
        report = recover_segments(fs, self._path)
        self._last_seq = self._manifest.last_sequence
        for payload in report.records:
            for entry in decode_batch_record(payload):
                if entry.seq > self._manifest.last_sequence:
                    self._memtable.add(entry)
                    self._last_seq = max(self._last_seq, entry.seq)
        next_segment = max(report.segments + [self._manifest.log_number, 0]) + 1
        self._wal = WriteAheadLog(fs, self._path, next_segment, self._sync_policy,
                                  self._opts.wal_segment_bytes)
        return report

    def _remove_orphans(self) -> list:
        """Delete temporary files and tables not listed in the manifest; return their names."""
        live = set(self._manifest.table_numbers())
        removed = []
        for name in self._fs.listdir(self._path):
            number = parse_table_name(name)
            if name.endswith(".tmp") or (number is not None and number not in live):
                self._fs.remove(self._fs.join(self._path, name))
                removed.append(name)
        return removed

    # ------------------------------------------------------------------- writes

    def _check_open(self) -> None:
        """Raise ClosedError if the store was closed."""
        if self._closed:
            raise ClosedError("store is closed")

    def write(self, batch: WriteBatch) -> int:
        """Apply ``batch`` atomically; return the sequence number of its last entry.

        An empty batch changes nothing and returns the current last sequence.
        The batch is logged before it becomes visible; a full memtable is
        flushed afterwards.
        """
        self._check_open()
        if len(batch) == 0:
            return self._last_seq
        entries = batch.to_entries(self._last_seq + 1, self._clock.now())
        self._wal.append(encode_batch_record(entries))
        for entry in entries:
            self._memtable.add(entry)
        self._last_seq = entries[-1].seq
        if self._memtable.approximate_bytes >= self._opts.memtable_bytes:
            self.flush()
        return self._last_seq

    def put(self, key, value, ttl: Optional[int] = None) -> int:
        """Store ``key -> value``; with ``ttl`` it vanishes after that many clock ticks.

        Returns the sequence number assigned to the write.
        """
        return self.write(WriteBatch().put(key, value, ttl))

    def delete(self, key) -> int:
        """Delete ``key`` (a no-op for absent keys, still logged); return its sequence."""
        return self.write(WriteBatch().delete(key))

    # -------------------------------------------------------------------- reads

    def _lookup(self, key: bytes, seq: int):
        """Newest version (tombstones included) of ``key`` with sequence <= ``seq``."""
        entry = self._memtable.get(key, seq)
        if entry is not None:
            return entry
        for meta in reversed(self._manifest.tables):
            if meta.min_seq > seq:
                continue
            entry = self._readers[meta.number].get(key, seq)
            if entry is not None:
                return entry
        return None

    def get(self, key, default=None):
        """Return the current value of ``key``, or ``default`` if absent/deleted/expired."""
        return self.get_at(key, self._last_seq, default)

    def get_at(self, key, seq: int, default=None):
        """Return the value of ``key`` as of sequence ``seq`` (expiry uses the clock now)."""
        self._check_open()
        entry = self._lookup(validate_key(key), seq)
        if entry is None or not entry.is_live(self._clock.now()):
            return default
        return entry.value

    def contains(self, key) -> bool:
        """True if ``key`` currently has a live value."""
        return self.get(key, _MISSING) is not _MISSING

    def _sources(self, start: Optional[bytes], end: Optional[bytes], min_seq: int = 0) -> list:
        """Memtable plus the tables overlapping ``[start, end)`` with data newer
        than ``min_seq``, newest first."""
        sources = [self._memtable]
        for meta in reversed(self._manifest.tables):
            if meta.max_seq > min_seq and meta.overlaps(start, end):
                sources.append(self._readers[meta.number])
        return sources

    def scan(self, start=None, end=None, reverse: bool = False, limit: Optional[int] = None):
        """Return live ``(key, value)`` pairs with ``start <= key < end``.

        Pairs are sorted by key, descending when ``reverse``; at most ``limit``
        pairs are returned.  None bounds are open.
        """
        return self.scan_at(self._last_seq, start, end, reverse, limit)

    def scan_at(self, seq: int, start=None, end=None, reverse: bool = False,
                limit: Optional[int] = None):
        """Like :meth:`scan` but as of sequence number ``seq``."""
        self._check_open()
        lo = _optional_key(start, "start")
        hi = _optional_key(end, "end")
        return scan_sources(self._sources(lo, hi), lo, hi, seq, self._clock.now(), reverse, limit)

    def prefix_scan(self, prefix, reverse: bool = False, limit: Optional[int] = None):
        """Return live pairs whose key starts with ``prefix`` (see :meth:`scan`)."""
        data = to_bytes(prefix, "prefix")
        return self.scan(data, prefix_upper_bound(data), reverse, limit)

    # ------------------------------------------------- snapshots / transactions

    def snapshot(self) -> Snapshot:
        """Pin the current state; the snapshot must be released when done."""
        self._check_open()
        return Snapshot(self, self._last_seq, self._snapshots)

    def begin(self, isolation: str = SNAPSHOT) -> Transaction:
        """Start an optimistic transaction (``"snapshot"`` or ``"serializable"``)."""
        snap = self.snapshot()
        try:
            return Transaction(self, snap, isolation)
        except InvalidArgumentError:
            snap.release()
            raise

    def keys_modified_since(self, keys, seq: int) -> list:
        """Return, sorted, the ``keys`` whose newest version is newer than ``seq``."""
        self._check_open()
        modified = []
        for key in sorted(keys):
            entry = self._lookup(key, MAX_SEQUENCE)
            if entry is not None and entry.seq > seq:
                modified.append(key)
        return modified

    def range_modified_since(self, start: Optional[bytes], end: Optional[bytes], seq: int) -> list:
        """Return, sorted, the keys in ``[start, end)`` with any version newer than ``seq``."""
        self._check_open()
        sources = self._sources(start, end, min_seq=seq)
        merged = MergingIterator([s.scan_entries(start, end) for s in sources])
        return sorted({entry.key for entry in merged if entry.seq > seq})

    # --------------------------------------------------- flush and compaction

    def _oldest_snapshot(self) -> int:
        """Smallest sequence any live reader may still need."""
        return self._snapshots.oldest(self._last_seq)

    def flush(self) -> Optional[TableMeta]:
        """Write the memtable to a new table and retire the log segments it covered.

        Versions no reader can see are dropped on the way (and tombstones too
        when no older table exists).  Returns the new table's metadata, or
        None if the memtable was empty or nothing survived.  Runs
        :meth:`maybe_compact` afterwards when ``auto_compact`` is set.
        """
        self._check_open()
        if len(self._memtable) == 0:
            return None
        new_segment = self._wal.rotate()
        survivors = compact_entries(self._memtable.scan_entries(), self._oldest_snapshot(),
                                    not self._manifest.tables, self._clock.now())
        meta = None
        writer = None
        for entry in survivors:
            if writer is None:
                writer = SSTableWriter(self._fs, self._path, self._manifest.allocate_number(),
                                       self._opts.block_size, self._opts.bloom_bits_per_key)
            writer.add(entry)
        if writer is not None:
            meta = writer.finish()
            self._manifest.add_table(meta)
            self._readers[meta.number] = SSTableReader(self._fs, self._path, meta.number)
        self._manifest.last_sequence = self._last_seq
        self._manifest.log_number = new_segment
        save_manifest(self._fs, self._path, self._manifest)
        self._memtable = MemTable(self._opts.rng_seed)
        delete_segments_before(self._fs, self._path, new_segment)
        if self._opts.auto_compact:
            self.maybe_compact()
        return meta

    def _compact_tables(self, metas: list) -> CompactionResult:
        """Merge the adjacent tables ``metas`` and install the result."""
        oldest_live = self._manifest.tables[0].number
        result = run_compaction(
            self._fs, self._path, [self._readers[m.number] for m in metas],
            self._manifest.allocate_number(),
            smallest_snapshot=self._oldest_snapshot(),
            drop_tombstones=metas[0].number == oldest_live,
            now=self._clock.now(),
            block_size=self._opts.block_size,
            bloom_bits_per_key=self._opts.bloom_bits_per_key,
        )
        self._manifest.apply_compaction(result.input_numbers, result.output)
        save_manifest(self._fs, self._path, self._manifest)
        if result.output is not None:
            number = result.output.number
            self._readers[number] = SSTableReader(self._fs, self._path, number)
        for number in result.input_numbers:
            del self._readers[number]
            self._fs.remove(self._fs.join(self._path, table_name(number)))
        return result

    def maybe_compact(self) -> list:
        """Run policy-selected compactions until the policy picks nothing; return results."""
        self._check_open()
        results = []
        while True:
            picked = self._policy.pick(self._manifest.tables)
            if picked is None:
                return results
            results.append(self._compact_tables(picked))

    def compact(self) -> Optional[CompactionResult]:
        """Flush, then merge every table into one (dropping all garbage).

        Returns the compaction result, or None when the store has no tables.
        """
        self.flush()
        if not self._manifest.tables:
            return None
        return self._compact_tables(list(self._manifest.tables))

    # ---------------------------------------------------------------- admin

    def checkpoint(self, dest_dir: str) -> CheckpointInfo:
        """Flush and copy a consistent image of the store to ``dest_dir``."""
        self.flush()
        return create_checkpoint(self._fs, self._path, self._manifest, dest_dir)

    @property
    def last_sequence(self) -> int:
        """Sequence number of the most recent write (0 for a new store)."""
        return self._last_seq

    @property
    def tables(self) -> list:
        """Metadata of the live tables, oldest first (a copy)."""
        return list(self._manifest.tables)

    def stats(self) -> StoreStats:
        """Return current counters (see :class:`StoreStats`)."""
        self._check_open()
        return StoreStats(
            last_sequence=self._last_seq,
            memtable_entries=len(self._memtable),
            memtable_bytes=self._memtable.approximate_bytes,
            table_count=len(self._manifest.tables),
            table_entries=sum(m.entry_count for m in self._manifest.tables),
            wal_segment=self._wal.segment,
            live_snapshots=len(self._snapshots),
        )

    def close(self) -> None:
        """Sync and close the log.  Closing twice is harmless."""
        if not self._closed:
            self._wal.close()
            self._closed = True

    @property
    def closed(self) -> bool:
        """Whether :meth:`close` was called."""
        return self._closed

    def __enter__(self) -> "Store":
        """Return the store itself."""
        return self

    def __exit__(self, exc_type, exc, tb) -> None:
        """Close the store."""
        self.close()


def open(path: str, options: Optional[Options] = None) -> Store:  # noqa: A001 - public API name
    """Open (creating if allowed) the store in directory ``path``."""
    return Store(path, options)


def restore(checkpoint_dir: str, target_dir: str, options: Optional[Options] = None) -> Store:
    """Install the checkpoint from ``checkpoint_dir`` into ``target_dir`` and open it.

    Raises CorruptionError if the checkpoint is damaged and StoreExistsError
    if ``target_dir`` already holds a store.
    """
    resolved = (options if options is not None else Options()).resolved()
    restore_checkpoint(resolved.fs, checkpoint_dir, target_dir)
    return Store(target_dir, resolved)
