"""Exception hierarchy for kvstore.

Every error that the library raises on purpose derives from :class:`KVError`, so
callers can handle storage failures without accidentally swallowing programming
errors such as ``TypeError`` or ``NotImplementedError``.
"""


class KVError(Exception):
    """Base class of every error deliberately raised by kvstore."""


class InvalidArgumentError(KVError, ValueError):
    """An argument or option value is outside its allowed domain."""


class CorruptionError(KVError):
    """Persistent data failed validation (bad magic, malformed structure, ...)."""


class TruncatedError(CorruptionError):
    """Data ended before a complete structure could be decoded (a torn write)."""


class ChecksumError(CorruptionError):
    """A stored CRC32 checksum did not match the bytes it protects."""


class FileSystemError(KVError):
    """A filesystem operation failed (missing file, write after a crash, ...)."""


class ClosedError(KVError):
    """An object (store, log, writer) was used after it was closed."""


class StoreExistsError(KVError):
    """A store or checkpoint already exists where a fresh one was required."""


class StoreNotFoundError(KVError):
    """No store exists at the path and ``create_if_missing`` was false."""


class SnapshotReleasedError(KVError):
    """A snapshot was read after :meth:`Snapshot.release` was called."""


class TransactionError(KVError):
    """Base class for transaction failures."""


class TransactionClosedError(TransactionError):
    """A transaction was used after it was committed or rolled back."""


class ConflictError(TransactionError):
    """Optimistic validation found keys changed by a concurrent commit.

    Attributes:
        keys: sorted list of the conflicting user keys.
    """

    def __init__(self, keys):
        """Store the conflicting ``keys`` (any iterable of bytes) sorted."""
        self.keys = sorted(keys)
        shown = ", ".join(repr(k) for k in self.keys[:5])
        super().__init__(f"transaction conflict on {len(self.keys)} key(s): {shown}")
