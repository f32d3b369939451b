import pytest

import kvstore
from conftest import make_options
from kvstore.errors import CorruptionError, KVError, SnapshotReleasedError, StoreExistsError
from kvstore.snapshot import (
    CheckpointInfo,
    SnapshotRegistry,
    read_checkpoint_info,
    restore_checkpoint,
)


def test_registry_tracks_oldest_pinned_sequence_with_multiplicity():
    registry = SnapshotRegistry()
    assert registry.oldest(default=50) == 50
    registry.acquire(10)
    registry.acquire(10)
    registry.acquire(20)
    assert registry.oldest(default=50) == 10
    assert len(registry) == 3
    registry.release(10)
    assert registry.oldest(default=50) == 10
    registry.release(10)
    assert registry.oldest(default=50) == 20
    assert len(registry) == 1


def test_registry_release_of_unpinned_sequence_raises():
    with pytest.raises(KVError, match="not pinned"):
        SnapshotRegistry().release(3)


@pytest.fixture
def store(memfs, clock):
    db = kvstore.open("/db/main", make_options(memfs, clock))
    yield db
    db.close()


def test_snapshot_reads_ignore_later_writes(store):
    store.put(b"a", b"1")
    store.put(b"b", b"2")
    snap = store.snapshot()
    store.put(b"a", b"changed")
    store.delete(b"b")
    store.put(b"c", b"3")
    assert snap.get(b"a") == b"1"
    assert snap.get(b"b") == b"2"
    assert snap.get(b"c", "absent") == "absent"
    assert snap.scan() == [(b"a", b"1"), (b"b", b"2")]
    assert snap.scan(reverse=True, limit=1) == [(b"b", b"2")]
    assert store.scan() == [(b"a", b"changed"), (b"c", b"3")]


def test_snapshot_sequence_is_last_sequence_at_creation(store):
    store.put(b"a", b"1")
    store.put(b"a", b"2")
    with store.snapshot() as snap:
        assert snap.seq == 2


def test_released_snapshot_refuses_reads(store):
    snap = store.snapshot()
    snap.release()
    assert snap.released is True
    with pytest.raises(SnapshotReleasedError):
        snap.get(b"a")
    with pytest.raises(SnapshotReleasedError):
        snap.scan()


def test_snapshot_release_is_idempotent_and_context_manager_releases(store):
    with store.snapshot() as snap:
        assert store.stats().live_snapshots == 1
    assert snap.released is True
    snap.release()
    assert store.stats().live_snapshots == 0


def test_snapshot_survives_flush_and_full_compaction(store):
    store.put(b"k", b"old")
    store.put(b"gone", b"x")
    snap = store.snapshot()
    store.put(b"k", b"new")
    store.delete(b"gone")
    store.compact()
    assert snap.get(b"k") == b"old"
    assert snap.get(b"gone") == b"x"
    assert store.get(b"k") == b"new"
    snap.release()
    store.compact()
    assert store.stats().table_entries == 1


def test_checkpoint_copies_flushed_state(store, memfs, clock):
    store.put(b"a", b"1")
    store.flush()
    store.put(b"b", b"2")
    info = store.checkpoint("/backup/cp1")
    assert info == CheckpointInfo(last_sequence=2, table_count=2)
    assert read_checkpoint_info(memfs, "/backup/cp1") == info
    store.put(b"c", b"after")
    restored = kvstore.restore("/backup/cp1", "/db/restored", make_options(memfs, clock))
    assert restored.scan() == [(b"a", b"1"), (b"b", b"2")]
    assert restored.last_sequence == 2
    restored.close()


def test_checkpoint_into_non_empty_directory_is_refused(store, memfs):
    memfs.makedirs("/backup/cp")
    memfs.write_atomic("/backup/cp/junk", b"x")
    with pytest.raises(StoreExistsError):
        store.checkpoint("/backup/cp")


def test_restore_refuses_existing_store(store, memfs):
    store.put(b"a", b"1")
    store.checkpoint("/backup/cp")
    with pytest.raises(StoreExistsError):
        restore_checkpoint(memfs, "/backup/cp", "/db/main")


def test_restore_detects_corrupt_table_before_copying(store, memfs):
    store.put(b"a", b"1")
    store.checkpoint("/backup/cp")
    memfs.corrupt("/backup/cp/000001.sst", 2)
    with pytest.raises(CorruptionError):
        restore_checkpoint(memfs, "/backup/cp", "/db/other")
    assert not memfs.exists("/db/other")


def test_restore_detects_table_size_mismatch(store, memfs):
    store.put(b"a", b"1")
    store.checkpoint("/backup/cp")
    table = store.tables[0]
    from kvstore.manifest import Manifest, save_manifest
    wrong = Manifest(2, 1, 0, [type(table)(1, table.file_size + 1, 1, b"a", b"a", 1, 1)])
    save_manifest(memfs, "/backup/cp", wrong)
    with pytest.raises(CorruptionError, match="unexpected size"):
        restore_checkpoint(memfs, "/backup/cp", "/db/other")


def test_read_checkpoint_info_requires_marker(memfs):
    with pytest.raises(CorruptionError, match="not a checkpoint"):
        read_checkpoint_info(memfs, "/db")


def test_restore_requires_manifest(store, memfs):
    store.put(b"a", b"1")
    store.checkpoint("/backup/cp")
    memfs.remove("/backup/cp/MANIFEST")
    with pytest.raises(CorruptionError, match="no manifest"):
        restore_checkpoint(memfs, "/backup/cp", "/db/other")


def test_restore_checks_marker_against_manifest(store, memfs):
    store.put(b"a", b"1")
    store.checkpoint("/backup/cp")
    from kvstore.manifest import Manifest, save_manifest
    save_manifest(memfs, "/backup/cp", Manifest())
    with pytest.raises(CorruptionError, match="table count"):
        restore_checkpoint(memfs, "/backup/cp", "/db/other")


def test_checkpoint_on_real_filesystem(tmp_path):
    db = kvstore.open(str(tmp_path / "db"), make_options(kvstore.OSFileSystem()))
    db.put(b"k", b"v")
    db.checkpoint(str(tmp_path / "cp"))
    db.close()
    restored = kvstore.restore(str(tmp_path / "cp"), str(tmp_path / "copy"),
                               make_options(kvstore.OSFileSystem()))
    assert restored.get(b"k") == b"v"
    restored.close()
