"""Optimistic multi-key transactions with snapshot isolation.

A transaction reads from a snapshot pinned at ``begin`` and buffers its
writes locally (reads see the transaction's own writes).  Nothing touches the
store until :meth:`Transaction.commit`, which validates optimistically:

* ``"snapshot"`` isolation fails if any key the transaction *writes* was
  committed by someone else after the snapshot (first committer wins).
* ``"serializable"`` isolation additionally fails if any key it *read*, or
  any key inside a range it *scanned*, changed after the snapshot.

On success the buffered writes are applied as one atomic write batch.
"""

from typing import Optional

from .batch import WriteBatch, validate_key
from .encoding import KIND_DELETE, KIND_PUT, to_bytes
from .errors import ConflictError, InvalidArgumentError, TransactionClosedError
from .iterators import overlay_writes

SNAPSHOT = "snapshot"
SERIALIZABLE = "serializable"
_ACTIVE = "active"
_COMMITTED = "committed"
_ROLLED_BACK = "rolled_back"


class Transaction:
    """A unit of work started by :meth:`kvstore.store.Store.begin`.

    Use it as a context manager: the transaction commits when the block
    exits normally and rolls back when it raises.
    """

    def __init__(self, store, snapshot, isolation: str = SNAPSHOT):
        """Bind to ``store`` reading at the pinned ``snapshot``."""
        if isolation not in (SNAPSHOT, SERIALIZABLE):
            raise InvalidArgumentError(f"unknown isolation level {isolation!r}")
        self._store = store
        self._snapshot = snapshot
        self._isolation = isolation
        self._log = []
        self._writes = {}
        self._reads = set()
        self._ranges = []
        self._state = _ACTIVE

    @property
    def snapshot_seq(self) -> int:
        """Sequence number the transaction reads at."""
        return self._snapshot.seq

    @property
    def isolation(self) -> str:
        """``"snapshot"`` or ``"serializable"``."""
        return self._isolation

    @property
    def state(self) -> str:
        """``"active"``, ``"committed"`` or ``"rolled_back"``."""
        return self._state

    def _check_active(self) -> None:
        """Raise TransactionClosedError unless the transaction is active."""
        if self._state != _ACTIVE:
            raise TransactionClosedError(f"transaction is {self._state}")

    def get(self, key, default=None):
        """Read ``key``: the transaction's own pending write if any, else the snapshot.

        Keys read from the snapshot are remembered for serializable validation.
        """
        self._check_active()
        data = to_bytes(key, "key")
        if data in self._writes:
            pending = self._writes[data]
            return default if pending is None else pending
        self._reads.add(data)
        return self._snapshot.get(data, default)

    def put(self, key, value, ttl: Optional[int] = None) -> None:
        """Buffer ``key -> value`` (optionally expiring after ``ttl`` ticks)."""
        self._check_active()
        if ttl is not None and ttl <= 0:
            raise InvalidArgumentError(f"ttl must be positive, got {ttl}")
        entry = (KIND_PUT, validate_key(key), to_bytes(value, "value"), ttl)
        self._log.append(entry)
        self._writes[entry[1]] = entry[2]

    def delete(self, key) -> None:
        """Buffer a deletion of ``key``."""
        self._check_active()
        data = validate_key(key)
        self._log.append((KIND_DELETE, data, b"", None))
        self._writes[data] = None

    def scan(self, start=None, end=None, reverse: bool = False, limit: Optional[int] = None):
        """Range scan of the snapshot with the transaction's pending writes applied.

        Returns ``(key, value)`` pairs like :meth:`kvstore.store.Store.scan`.
        The scanned range is remembered for serializable validation.
        """
        self._check_active()
        lo = None if start is None else to_bytes(start, "start")
        hi = None if end is None else to_bytes(end, "end")
        self._ranges.append((lo, hi))
        base = self._snapshot.scan(lo, hi, reverse)
        return overlay_writes(base, self._writes, lo, hi, reverse, limit)

    def savepoint(self) -> int:
        """Return a marker for the current write position, for :meth:`rollback_to`."""
        self._check_active()
        return len(self._log)

    def rollback_to(self, savepoint: int) -> None:
        """Discard every write made after ``savepoint`` (reads stay recorded)."""
        self._check_active()
        if not 0 <= savepoint <= len(self._log):
            raise InvalidArgumentError(f"invalid savepoint {savepoint}")
        del self._log[savepoint:]
        self._writes = {}
        for kind, key, value, _ in self._log:
            self._writes[key] = value if kind == KIND_PUT else None

    def pending_writes(self) -> dict:
        """Return a copy of the buffered writes: key -> value, None for deletes."""
        return dict(self._writes)

    def _find_conflicts(self) -> set:
        """Return the keys whose committed state changed since the snapshot."""
        seq = self._snapshot.seq
        keys = set(self._writes)
        if self._isolation == SERIALIZABLE:
            keys |= self._reads
        conflicts = set(self._store.keys_modified_since(keys, seq))
        if self._isolation == SERIALIZABLE:
            for lo, hi in self._ranges:
                conflicts.update(self._store.range_modified_since(lo, hi, seq))
        return conflicts

    def commit(self) -> int:
        """Validate and apply the buffered writes atomically.

        Returns the sequence number of the last write applied (the snapshot
        sequence for a transaction without writes).  On a conflict the
        transaction is rolled back and :class:`ConflictError` listing the
        conflicting keys is raised.  A read-only transaction always commits.
        """
        self._check_active()
        if not self._log:
            self._finish(_COMMITTED)
            return self._snapshot.seq
        conflicts = self._find_conflicts()
        if conflicts:
            self._finish(_ROLLED_BACK)
            raise ConflictError(conflicts)
        batch = WriteBatch()
        for kind, key, value, ttl in self._log:
            if kind == KIND_PUT:
                batch.put(key, value, ttl)
            else:
                batch.delete(key)
        seq = self._store.write(batch)
        self._finish(_COMMITTED)
        return seq

    def rollback(self) -> None:
        """Discard all buffered writes and end the transaction."""
        self._check_active()
        self._finish(_ROLLED_BACK)

    def _finish(self, state: str) -> None:
        """Enter the final ``state`` and release the pinned snapshot."""
        self._state = state
        self._snapshot.release()

    def __enter__(self) -> "Transaction":
        """Return the transaction itself."""
        return self

    def __exit__(self, exc_type, exc, tb) -> None:
        """Commit on normal exit, roll back (if still active) on an exception."""
        if exc_type is None:
            if self._state == _ACTIVE:
                self.commit()
        elif self._state == _ACTIVE:
            self.rollback()

