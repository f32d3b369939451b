"""End-to-end crash-recovery scenarios."""

import pytest

import kvstore
from conftest import make_options
from kvstore import WriteBatch
from kvstore.errors import CorruptionError
from kvstore.wal import list_segments, segment_name


def reopen(fs, clock, path="/db/main", **overrides):
    return kvstore.open(path, make_options(fs, clock, **overrides))


def test_reopen_after_clean_close_recovers_unflushed_writes(backend, clock):
    fs, path = backend
    db = kvstore.open(path, make_options(fs, clock))
    db.put(b"a", b"1")
    db.put(b"b", b"2")
    db.delete(b"a")
    db.close()
    db = kvstore.open(path, make_options(fs, clock))
    assert db.scan() == [(b"b", b"2")]
    assert db.last_sequence == 3
    assert db.recovery.clean is True
    db.close()


def test_reopen_combines_tables_and_log(backend, clock):
    fs, path = backend
    db = kvstore.open(path, make_options(fs, clock))
    db.put(b"a", b"table")
    db.flush()
    db.put(b"b", b"log")
    db.close()
    db = kvstore.open(path, make_options(fs, clock))
    assert db.scan() == [(b"a", b"table"), (b"b", b"log")]
    assert db.put(b"c", b"3") == 3
    db.close()


def test_sync_always_preserves_every_acknowledged_write_after_crash(memfs, clock):
    db = reopen(memfs, clock)
    for i in range(10):
        db.put(b"k%d" % i, b"v%d" % i)
    memfs.crash()
    db = reopen(memfs, clock)
    assert len(db.scan()) == 10
    assert db.last_sequence == 10


def test_sync_never_loses_unsynced_writes_after_crash(memfs, clock):
    db = reopen(memfs, clock, wal_sync="never")
    db.put(b"a", b"1")
    memfs.crash()
    db = reopen(memfs, clock)
    assert db.scan() == []
    assert db.last_sequence == 0


def test_sync_every_n_bounds_data_loss(memfs, clock):
    db = reopen(memfs, clock, wal_sync="every:3")
    for i in range(7):
        db.put(b"k%d" % i, b"v")
    memfs.crash()
    db = reopen(memfs, clock)
    assert [k for k, _ in db.scan()] == [b"k0", b"k1", b"k2", b"k3", b"k4", b"k5"]


def test_torn_final_record_is_truncated_on_open(memfs, clock):
    db = reopen(memfs, clock, wal_sync="never")
    db.put(b"a", b"1")
    db._wal.sync()
    db.put(b"b", b"2")
    memfs.crash(torn_bytes=5)
    db = reopen(memfs, clock)
    assert db.scan() == [(b"a", b"1")]
    report = db.recovery
    assert report.truncated_segment == 1
    assert memfs.size("/db/main/" + segment_name(1)) == report.truncated_at
    db.put(b"c", b"3")
    db.close()
    db = reopen(memfs, clock)
    assert db.scan() == [(b"a", b"1"), (b"c", b"3")]
    assert db.recovery.clean is True


def test_torn_batch_is_applied_all_or_nothing(memfs, clock):
    db = reopen(memfs, clock, wal_sync="never")
    db.write(WriteBatch().put(b"x", b"1").put(b"y", b"2").put(b"z", b"3"))
    memfs.crash(torn_bytes=20)
    db = reopen(memfs, clock)
    assert db.scan() == []


def test_corruption_in_older_segment_drops_later_segments(memfs, clock):
    db = reopen(memfs, clock, wal_segment_bytes=40)
    for i in range(6):
        db.put(b"key%d" % i, b"value-%d" % i)
    db.close()
    segments = list_segments(memfs, "/db/main")
    assert len(segments) >= 3
    memfs.corrupt("/db/main/" + segment_name(segments[1]), 9)
    db = reopen(memfs, clock)
    assert db.recovery.truncated_segment == segments[1]
    assert db.recovery.dropped_segments == segments[2:]
    assert [k for k, _ in db.scan()] == [b"key0"]


def test_recovery_does_not_replay_records_already_in_tables(memfs, clock):
    db = reopen(memfs, clock)
    db.put(b"a", b"1")
    db.flush()
    db.put(b"a", b"2")
    db.close()
    db = reopen(memfs, clock)
    stats = db.stats()
    assert (stats.memtable_entries, stats.table_entries) == (1, 1)
    assert db.get(b"a") == b"2"


def test_flush_retires_old_log_segments(memfs, clock):
    db = reopen(memfs, clock)
    db.put(b"a", b"1")
    db.flush()
    db.put(b"b", b"2")
    assert list_segments(memfs, "/db/main") == [2]
    db.close()


def test_crash_between_table_write_and_manifest_update_is_repaired(memfs, clock):
    db = reopen(memfs, clock)
    db.put(b"a", b"1")
    db.flush()
    db.put(b"b", b"2")
    memfs.write_atomic("/db/main/000009.sst", b"half-finished flush")
    memfs.write_atomic("/db/main/MANIFEST.tmp", b"partial")
    memfs.crash()
    db = reopen(memfs, clock)
    assert sorted(db.removed_orphans) == ["000009.sst", "MANIFEST.tmp"]
    assert db.scan() == [(b"a", b"1"), (b"b", b"2")]
    assert not memfs.exists("/db/main/000009.sst")


def test_leftover_segments_older_than_manifest_log_number_are_deleted(memfs, clock):
    db = reopen(memfs, clock)
    db.put(b"a", b"1")
    db.flush()
    db.close()
    memfs.write_atomic("/db/main/" + segment_name(1), b"garbage that must not be replayed")
    db = reopen(memfs, clock)
    assert 1 not in list_segments(memfs, "/db/main")
    assert db.recovery.clean is True
    assert db.get(b"a") == b"1"


def test_ttl_expiry_survives_recovery(memfs, clock):
    db = reopen(memfs, clock)
    db.put(b"temp", b"t", ttl=5)
    memfs.crash()
    db = reopen(memfs, clock)
    assert db.get(b"temp") == b"t"
    clock.advance(5)
    assert db.get(b"temp") is None


def test_crash_after_automatic_flushes_and_compactions_keeps_all_data(memfs, clock):
    db = reopen(memfs, clock, memtable_bytes=150, auto_compact=True, compaction_min_merge=2)
    expected = {}
    for i in range(80):
        key = b"k%02d" % (i % 25)
        db.put(key, b"v%d" % i)
        expected[key] = b"v%d" % i
    memfs.crash()
    db = reopen(memfs, clock)
    assert db.scan() == sorted(expected.items())


def test_corrupt_manifest_prevents_open(memfs, clock):
    reopen(memfs, clock).close()
    memfs.corrupt("/db/main/MANIFEST", 10)
    with pytest.raises(CorruptionError):
        reopen(memfs, clock)


def test_reopen_on_real_filesystem_after_flush_and_compaction(tmp_path):
    path = str(tmp_path / "db")
    options = make_options(kvstore.OSFileSystem(), memtable_bytes=200, auto_compact=True,
                           compaction_min_merge=2)
    db = kvstore.open(path, options)
    for i in range(40):
        db.put(b"k%02d" % i, b"v%d" % i)
    db.delete(b"k05")
    db.close()
    db = kvstore.open(path, options)
    assert len(db.scan()) == 39
    assert db.get(b"k05") is None
    db.close()
