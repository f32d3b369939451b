"""Store configuration and the injected logical clock."""

import dataclasses
from dataclasses import dataclass
from typing import Optional

from .errors import InvalidArgumentError
from .fs import FileSystem, OSFileSystem


class LogicalClock:
    """A manually driven, monotonic clock measured in abstract ticks.

    kvstore never reads wall-clock time; time-to-live values are expressed in
    ticks of this clock, and tests advance it explicitly.
    """

    def __init__(self, start: int = 0):
        """Start the clock at ``start`` (must be >= 0)."""
        if start < 0:
            raise InvalidArgumentError("clock start must be non-negative")
        self._now = start

    def now(self) -> int:
        """Return the current tick."""
        return self._now

    def advance(self, ticks: int = 1) -> int:
        """Move the clock forward by ``ticks`` (>= 0) and return the new time."""
        if ticks < 0:
            raise InvalidArgumentError("a logical clock cannot move backwards")
        self._now += ticks
        return self._now


@dataclass
class Options:
    """Tunable settings for :func:`kvstore.store.open`.

    Attributes:
        fs: filesystem to use; None means the real :class:`OSFileSystem`.
        clock: logical clock for TTLs; None creates a fresh clock at 0.
        create_if_missing: create the store directory if absent.
        error_if_exists: fail if a store already exists at the path.
        memtable_bytes: flush the memtable to a table once it holds this much.
        block_size: target size of a table data block in bytes.
        bloom_bits_per_key: Bloom filter budget per distinct key (0 disables
            the filter's usefulness but keeps it valid).
        wal_sync: fsync policy, "always", "never", "every:N" or a SyncPolicy.
        wal_segment_bytes: rotate to a new log segment past this size.
        auto_compact: run tiered compaction after every flush.
        compaction_min_merge / compaction_max_merge / compaction_size_ratio:
            parameters of :class:`kvstore.compaction.TieredCompactionPolicy`.
        rng_seed: seed for the memtable skip list level generator.
    """

    fs: Optional[FileSystem] = None
    clock: Optional[LogicalClock] = None
    create_if_missing: bool = True
    error_if_exists: bool = False
    memtable_bytes: int = 64 * 1024
    block_size: int = 4096
    bloom_bits_per_key: int = 10
    wal_sync: object = "always"
    wal_segment_bytes: int = 1 << 20
    auto_compact: bool = True
    compaction_min_merge: int = 4
    compaction_max_merge: int = 10
    compaction_size_ratio: float = 2.0
    rng_seed: int = 0

    def validate(self) -> None:
        """Raise :class:`InvalidArgumentError` naming the first invalid setting."""
        positive = ("memtable_bytes", "block_size", "wal_segment_bytes")
        for name in positive:
            if getattr(self, name) <= 0:
                raise InvalidArgumentError(f"{name} must be positive, got {getattr(self, name)}")
        if self.bloom_bits_per_key < 0:
            raise InvalidArgumentError("bloom_bits_per_key must be non-negative")
        if self.compaction_min_merge < 2:
            raise InvalidArgumentError("compaction_min_merge must be at least 2")
        if self.compaction_max_merge < self.compaction_min_merge:
            raise InvalidArgumentError("compaction_max_merge must be >= compaction_min_merge")
        if self.compaction_size_ratio < 1.0:
            raise InvalidArgumentError("compaction_size_ratio must be >= 1.0")

    def resolved(self) -> "Options":
        """Return a validated copy whose ``fs`` and ``clock`` are never None."""
        self.validate()
        return dataclasses.replace(
            self,
            fs=self.fs if self.fs is not None else OSFileSystem(),
            clock=self.clock if self.clock is not None else LogicalClock(),
        )
