"""Point-in-time snapshots and on-disk checkpoints.

A :class:`Snapshot` pins a sequence number: reads through it ignore every
later write, and compaction keeps the versions it needs until it is released.
A checkpoint is a self-contained copy of the store's tables and manifest in
another directory, from which a store can be restored.
"""

from dataclasses import dataclass
from typing import Optional

from .encoding import decode_uvarint, encode_uvarint, frame_record, unframe_record
from .errors import CorruptionError, KVError, SnapshotReleasedError, StoreExistsError
from .manifest import MANIFEST_NAME, Manifest, load_manifest, save_manifest
from .sstable import SSTableReader, table_name

CHECKPOINT_MARKER = "CHECKPOINT"


class SnapshotRegistry:
    """Multiset of sequence numbers pinned by live snapshots and transactions."""

    def __init__(self):
        """Create an empty registry."""
        self._counts = {}

    def acquire(self, seq: int) -> None:
        """Pin ``seq`` (may be pinned several times)."""
        self._counts[seq] = self._counts.get(seq, 0) + 1

    def release(self, seq: int) -> None:
        """Unpin ``seq`` once; KVError if it is not pinned."""
        count = self._counts.get(seq)
        if count is None:
            raise KVError(f"sequence {seq} is not pinned by any snapshot")
        if count == 1:
            del self._counts[seq]
        else:
            self._counts[seq] = count - 1

    def oldest(self, default: int) -> int:
        """Smallest pinned sequence, or ``default`` if nothing is pinned."""
        return min(self._counts, default=default)

    def __len__(self) -> int:
        """Number of live pins (counting duplicates)."""
        return sum(self._counts.values())


class Snapshot:
    """Read-only, consistent view of a store as of sequence ``seq``.

    Obtained from :meth:`kvstore.store.Store.snapshot`.  Use as a context
    manager or call :meth:`release`; reading a released snapshot raises
    :class:`SnapshotReleasedError`.
    """

    def __init__(self, store, seq: int, registry: SnapshotRegistry):
        """Pin ``seq`` in ``registry`` and remember the ``store`` to read from."""
        self._store = store
        self._seq = seq
        self._registry = registry
        self._released = False
        registry.acquire(seq)

    @property
    def seq(self) -> int:
        """The pinned sequence number."""
        return self._seq

    @property
    def released(self) -> bool:
        """Whether :meth:`release` has been called."""
        return self._released

    def _check(self) -> None:
        """Raise SnapshotReleasedError if the snapshot was released."""
        if self._released:
            raise SnapshotReleasedError(f"snapshot at sequence {self._seq} was released")

    def get(self, key, default=None):
        """Return the value of ``key`` as of the snapshot, or ``default``."""
        self._check()
        return self._store.get_at(key, self._seq, default)

    def scan(self, start=None, end=None, reverse: bool = False, limit: Optional[int] = None):
        """Range scan as of the snapshot (see :meth:`kvstore.store.Store.scan`)."""
        self._check()
        return self._store.scan_at(self._seq, start, end, reverse, limit)

    def release(self) -> None:
        """Unpin the snapshot; calling it again has no effect."""
        if not self._released:
            self._released = True
            self._registry.release(self._seq)

    def __enter__(self) -> "Snapshot":
        """Return the snapshot itself."""
        return self

    def __exit__(self, exc_type, exc, tb) -> None:
        """Release on leaving the ``with`` block."""
        self.release()


@dataclass(frozen=True)
class CheckpointInfo:
    """Contents of a checkpoint's marker file."""

    last_sequence: int
    table_count: int


def _encode_marker(manifest: Manifest) -> bytes:
    """Serialise the checkpoint marker for ``manifest``."""
    return frame_record(encode_uvarint(manifest.last_sequence)
                        + encode_uvarint(len(manifest.tables)))


def read_checkpoint_info(fs, directory: str) -> CheckpointInfo:
    """Read the marker of the checkpoint in ``directory``.

    Raises CorruptionError if ``directory`` holds no (valid) checkpoint marker.
    """
    path = fs.join(directory, CHECKPOINT_MARKER)
    if not fs.exists(path):
        raise CorruptionError(f"{directory!r} is not a checkpoint (no marker file)")
    payload, _ = unframe_record(fs.read(path), 0)
    last_sequence, pos = decode_uvarint(payload, 0)
    table_count, _ = decode_uvarint(payload, pos)
    return CheckpointInfo(last_sequence, table_count)


def create_checkpoint(fs, source_dir: str, manifest: Manifest, dest_dir: str) -> CheckpointInfo:
    """Copy the tables listed in ``manifest`` plus the manifest itself to ``dest_dir``.

    The caller must make sure everything to preserve is in tables (the store
    flushes first).  ``dest_dir`` must be absent or empty, otherwise
    StoreExistsError is raised.  A marker file is written last, so a
    half-written checkpoint is never mistaken for a complete one.
    """
    if fs.exists(dest_dir) and fs.listdir(dest_dir):
        raise StoreExistsError(f"checkpoint destination {dest_dir!r} is not empty")
    fs.makedirs(dest_dir)
    for meta in manifest.tables:
        name = table_name(meta.number)
        fs.copy_file(fs.join(source_dir, name), fs.join(dest_dir, name))
    save_manifest(fs, dest_dir, manifest)
    fs.write_atomic(fs.join(dest_dir, CHECKPOINT_MARKER), _encode_marker(manifest))
    return CheckpointInfo(manifest.last_sequence, len(manifest.tables))


def restore_checkpoint(fs, checkpoint_dir: str, target_dir: str) -> Manifest:
    """Verify the checkpoint in ``checkpoint_dir`` and install it into ``target_dir``.

    Every table is fully checksummed and its size compared with the
    manifest; any mismatch raises CorruptionError before anything is copied.
    ``target_dir`` must not already contain a store (StoreExistsError).
    Returns the restored manifest.
    """
    info = read_checkpoint_info(fs, checkpoint_dir)
    manifest = load_manifest(fs, checkpoint_dir)
    if manifest is None:
        raise CorruptionError(f"checkpoint {checkpoint_dir!r} has no manifest")
    if len(manifest.tables) != info.table_count:
        raise CorruptionError("checkpoint marker and manifest disagree on the table count")
    for meta in manifest.tables:
        reader = SSTableReader(fs, checkpoint_dir, meta.number)
        if reader.meta.file_size != meta.file_size:
            raise CorruptionError(f"table {meta.number} has an unexpected size")
        reader.verify()
    if fs.exists(fs.join(target_dir, MANIFEST_NAME)):
        raise StoreExistsError(f"a store already exists at {target_dir!r}")
    fs.makedirs(target_dir)
    for meta in manifest.tables:
        name = table_name(meta.number)
        fs.copy_file(fs.join(checkpoint_dir, name), fs.join(target_dir, name))
    save_manifest(fs, target_dir, manifest)
    return manifest
