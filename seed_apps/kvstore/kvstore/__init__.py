"""kvstore: a small log-structured key-value store.

Layers, bottom to top: ``fs`` (file I/O abstraction) -> ``encoding`` (varints,
checksums, entry codec) -> ``wal`` / ``memtable`` / ``bloom`` / ``sstable``
(storage structures) -> ``iterators`` / ``compaction`` / ``manifest`` ->
``snapshot`` / ``transactions`` -> ``store`` (public API), plus ``fsck``
(offline consistency checker).
"""

from .batch import WriteBatch
from .encoding import decode_key_tuple, encode_key_tuple
from .errors import (
    ChecksumError,
    ClosedError,
    ConflictError,
    CorruptionError,
    FileSystemError,
    InvalidArgumentError,
    KVError,
    SnapshotReleasedError,
    StoreExistsError,
    StoreNotFoundError,
    TransactionClosedError,
    TransactionError,
    TruncatedError,
)
from .fs import FileSystem, MemoryFileSystem, OSFileSystem
from .fsck import IntegrityReport, check_store
from .iterators import prefix_upper_bound
from .options import LogicalClock, Options
from .store import Store, StoreStats, open, restore
from .wal import SyncAlways, SyncEveryN, SyncNever, SyncPolicy

__all__ = [
    "ChecksumError", "ClosedError", "ConflictError", "CorruptionError", "FileSystem",
    "FileSystemError", "IntegrityReport", "InvalidArgumentError", "KVError", "LogicalClock",
    "MemoryFileSystem", "OSFileSystem", "Options", "SnapshotReleasedError", "Store",
    "StoreExistsError", "StoreNotFoundError", "StoreStats", "SyncAlways", "SyncEveryN",
    "SyncNever", "SyncPolicy", "TransactionClosedError", "TransactionError", "TruncatedError",
    "WriteBatch", "check_store", "decode_key_tuple", "encode_key_tuple", "open",
    "prefix_upper_bound", "restore",
]
