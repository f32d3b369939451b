import pytest

import kvstore
from conftest import make_options
from kvstore import LogicalClock, Options, WriteBatch
from kvstore.errors import (
    ClosedError,
    InvalidArgumentError,
    StoreExistsError,
    StoreNotFoundError,
)


@pytest.fixture
def store(backend, clock):
    fs, path = backend
    db = kvstore.open(path, make_options(fs, clock))
    yield db
    db.close()


@pytest.fixture
def mem_store(memfs, clock):
    db = kvstore.open("/db/main", make_options(memfs, clock))
    yield db
    db.close()


def test_put_then_get_returns_value(store):
    assert store.put(b"k", b"v") == 1
    assert store.get(b"k") == b"v"


def test_get_missing_key_returns_default(store):
    assert store.get(b"missing") is None
    assert store.get(b"missing", b"dflt") == b"dflt"


def test_put_overwrites_and_delete_removes(store):
    store.put(b"k", b"1")
    store.put(b"k", b"2")
    assert store.get(b"k") == b"2"
    assert store.delete(b"k") == 3
    assert store.get(b"k") is None
    assert store.contains(b"k") is False


def test_str_keys_and_values_are_utf8_encoded(store):
    store.put("ключ", "значение")
    assert store.get("ключ") == "значение".encode()
    assert store.get("ключ".encode()) == "значение".encode()


def test_empty_key_is_rejected(store):
    with pytest.raises(InvalidArgumentError):
        store.put(b"", b"v")
    with pytest.raises(InvalidArgumentError):
        store.get(b"")


def test_write_batch_is_applied_with_consecutive_sequences(store):
    store.put(b"old", b"x")
    batch = WriteBatch().put(b"a", b"1").put(b"b", b"2").delete(b"old").put(b"a", b"3")
    assert store.write(batch) == 5
    assert store.scan() == [(b"a", b"3"), (b"b", b"2")]
    assert store.last_sequence == 5


def test_empty_batch_changes_nothing(store):
    store.put(b"a", b"1")
    assert store.write(WriteBatch()) == 1
    assert store.last_sequence == 1


def fill(db, n=20):
    for i in range(n):
        db.put(f"key{i:02d}", f"val{i}")


def test_scan_bounds_are_half_open(store):
    fill(store)
    keys = [k for k, _ in store.scan(b"key05", b"key08")]
    assert keys == [b"key05", b"key06", b"key07"]
    assert [k for k, _ in store.scan(start="key18")] == [b"key18", b"key19"]
    assert [k for k, _ in store.scan(end="key02")] == [b"key00", b"key01"]


def test_scan_reverse_and_limit(store):
    fill(store)
    assert store.scan(reverse=True, limit=3) == [
        (b"key19", b"val19"), (b"key18", b"val18"), (b"key17", b"val17")]
    assert store.scan("key03", "key06", reverse=True) == [
        (b"key05", b"val5"), (b"key04", b"val4"), (b"key03", b"val3")]


def test_prefix_scan_returns_only_matching_keys(store):
    for key in [b"user:1", b"user:2", b"users", b"user;", b"admin:1", b"user\xff"]:
        store.put(key, b"x")
    assert [k for k, _ in store.prefix_scan(b"user:")] == [b"user:1", b"user:2"]
    assert [k for k, _ in store.prefix_scan("user", reverse=True)] == [
        b"user\xff", b"users", b"user;", b"user:2", b"user:1"]


def test_prefix_scan_with_composite_tuple_keys(store):
    for order_id, item in [(7, "apple"), (7, "pear"), (8, "fig"), (70, "kiwi")]:
        store.put(kvstore.encode_key_tuple(("order", order_id, item)), item)
    rows = store.prefix_scan(kvstore.encode_key_tuple(("order", 7)))
    assert [kvstore.decode_key_tuple(k) for k, _ in rows] == [("order", 7, "apple"), ("order", 7, "pear")]


def test_ttl_values_expire_with_logical_clock(store, clock):
    store.put(b"session", b"s", ttl=10)
    store.put(b"forever", b"f")
    clock.advance(9)
    assert store.get(b"session") == b"s"
    clock.advance(1)
    assert store.get(b"session") is None
    assert store.scan() == [(b"forever", b"f")]


def test_reads_span_memtable_and_multiple_tables(store):
    store.put(b"a", b"a1")
    store.put(b"b", b"b1")
    store.flush()
    store.put(b"a", b"a2")
    store.delete(b"b")
    store.put(b"c", b"c1")
    store.flush()
    store.put(b"c", b"c2")
    assert len(store.tables) == 2
    assert store.get(b"a") == b"a2"
    assert store.get(b"b") is None
    assert store.get(b"c") == b"c2"
    assert store.scan() == [(b"a", b"a2"), (b"c", b"c2")]
    assert store.scan(reverse=True) == [(b"c", b"c2"), (b"a", b"a2")]


def test_get_at_reads_historical_versions_across_tables(mem_store):
    mem_store.put(b"k", b"v1")
    mem_store.flush()
    mem_store.put(b"k", b"v2")
    mem_store.flush()
    mem_store.put(b"k", b"v3")
    assert [mem_store.get_at(b"k", seq) for seq in (0, 1, 2, 3)] == [None, b"v1", b"v2", b"v3"]
    assert mem_store.scan_at(1) == [(b"k", b"v1")]


def test_flush_of_empty_memtable_returns_none(mem_store):
    assert mem_store.flush() is None
    assert mem_store.tables == []


def test_flush_writes_table_and_empties_memtable(mem_store):
    fill(mem_store, 5)
    meta = mem_store.flush()
    assert (meta.entry_count, meta.smallest_key, meta.largest_key) == (5, b"key00", b"key04")
    assert (meta.min_seq, meta.max_seq) == (1, 5)
    stats = mem_store.stats()
    assert (stats.memtable_entries, stats.table_count, stats.table_entries) == (0, 1, 5)


def test_first_flush_drops_tombstones_and_shadowed_versions(mem_store):
    mem_store.put(b"a", b"1")
    mem_store.put(b"a", b"2")
    mem_store.put(b"b", b"1")
    mem_store.delete(b"b")
    meta = mem_store.flush()
    assert meta.entry_count == 1
    assert mem_store.get(b"a") == b"2"


def test_flush_where_nothing_survives_still_advances_manifest(mem_store):
    mem_store.put(b"a", b"1")
    mem_store.delete(b"a")
    assert mem_store.flush() is None
    assert mem_store.tables == []
    assert mem_store.stats().memtable_entries == 0


def test_later_flush_keeps_tombstones_that_shadow_older_tables(mem_store):
    mem_store.put(b"a", b"1")
    mem_store.flush()
    mem_store.delete(b"a")
    meta = mem_store.flush()
    assert meta.entry_count == 1
    assert mem_store.get(b"a") is None


def test_memtable_size_limit_triggers_automatic_flush(memfs, clock):
    db = kvstore.open("/db/auto", make_options(memfs, clock, memtable_bytes=200))
    fill(db, 30)
    assert len(db.tables) >= 3
    assert db.scan() == [(f"key{i:02d}".encode(), f"val{i}".encode()) for i in range(30)]
    db.close()


def test_auto_compaction_merges_similar_tables(memfs, clock):
    db = kvstore.open("/db/auto", make_options(memfs, clock, auto_compact=True,
                                               compaction_min_merge=3, compaction_max_merge=3))
    for round_no in range(3):
        db.put(b"k%d" % round_no, b"v")
        db.flush()
    assert len(db.tables) == 1
    assert db.scan() == [(b"k0", b"v"), (b"k1", b"v"), (b"k2", b"v")]
    db.close()


def test_maybe_compact_returns_results_until_policy_is_satisfied(mem_store):
    for i in range(8):
        mem_store.put(b"k%d" % i, b"v")
        mem_store.flush()
    results = mem_store.maybe_compact()
    assert [len(r.input_numbers) for r in results] == [8]
    assert len(mem_store.tables) == 1
    assert mem_store.maybe_compact() == []


def test_compact_merges_all_tables_and_drops_garbage(mem_store):
    mem_store.put(b"a", b"1")
    mem_store.put(b"b", b"1")
    mem_store.flush()
    mem_store.put(b"a", b"2")
    mem_store.delete(b"b")
    result = mem_store.compact()
    assert (result.entries_read, result.entries_written) == (4, 1)
    assert len(mem_store.tables) == 1
    assert mem_store.scan() == [(b"a", b"2")]


def test_compact_of_middle_run_keeps_tombstones(mem_store):
    mem_store.put(b"a", b"old")
    mem_store.flush()
    mem_store.delete(b"a")
    mem_store.flush()
    mem_store.put(b"z", b"1")
    mem_store.flush()
    first, second, third = mem_store.tables
    result = mem_store._compact_tables([second, third])
    assert result.entries_written == 2
    assert mem_store.get(b"a") is None


def test_compact_removes_input_files(memfs, clock):
    db = kvstore.open("/db/files", make_options(memfs, clock))
    db.put(b"a", b"1")
    db.flush()
    db.put(b"b", b"2")
    db.flush()
    db.compact()
    assert [n for n in memfs.listdir("/db/files") if n.endswith(".sst")] == ["000003.sst"]
    db.close()


def test_compact_empty_store_returns_none(mem_store):
    assert mem_store.compact() is None


def test_compaction_can_delete_everything(mem_store):
    mem_store.put(b"a", b"1")
    mem_store.flush()
    mem_store.delete(b"a")
    mem_store.flush()
    result = mem_store.compact()
    assert result.output is None
    assert mem_store.tables == []


def test_compaction_discards_expired_values(mem_store, clock):
    mem_store.put(b"temp", b"t", ttl=3)
    mem_store.put(b"keep", b"k")
    mem_store.flush()
    clock.advance(5)
    mem_store.compact()
    assert mem_store.stats().table_entries == 1


def test_stats_reports_counters(mem_store):
    mem_store.put(b"a", b"12345")
    snap = mem_store.snapshot()
    stats = mem_store.stats()
    assert stats == kvstore.StoreStats(last_sequence=1, memtable_entries=1, memtable_bytes=22,
                                       table_count=0, table_entries=0, wal_segment=1,
                                       live_snapshots=1)
    snap.release()


def test_keys_modified_since_reports_only_newer_keys(mem_store):
    mem_store.put(b"a", b"1")
    mem_store.put(b"b", b"1")
    mem_store.flush()
    mem_store.put(b"b", b"2")
    assert mem_store.keys_modified_since([b"b", b"a", b"zz"], 2) == [b"b"]
    assert mem_store.keys_modified_since([b"a"], 0) == [b"a"]


def test_range_modified_since_skips_old_tables(mem_store):
    mem_store.put(b"a", b"1")
    mem_store.flush()
    mem_store.put(b"b", b"2")
    mem_store.flush()
    mem_store.put(b"c", b"3")
    assert mem_store.range_modified_since(None, None, 1) == [b"b", b"c"]
    assert mem_store.range_modified_since(b"a", b"c", 0) == [b"a", b"b"]


def test_closed_store_rejects_operations(store):
    store.close()
    store.close()
    assert store.closed is True
    for action in (lambda: store.put(b"a", b"1"), lambda: store.get(b"a"), store.scan,
                   store.snapshot, store.flush, store.stats, store.maybe_compact,
                   lambda: store.keys_modified_since([b"a"], 0),
                   lambda: store.range_modified_since(None, None, 0)):
        with pytest.raises(ClosedError):
            action()


def test_store_context_manager_closes(memfs):
    with kvstore.open("/db/ctx", make_options(memfs)) as db:
        db.put(b"a", b"1")
    assert db.closed is True


def test_error_if_exists_refuses_existing_store(memfs):
    kvstore.open("/db/x", make_options(memfs)).close()
    with pytest.raises(StoreExistsError):
        kvstore.open("/db/x", make_options(memfs, error_if_exists=True))


def test_create_if_missing_false_refuses_new_store(memfs):
    with pytest.raises(StoreNotFoundError):
        kvstore.open("/db/none", make_options(memfs, create_if_missing=False))


def test_open_with_default_options_uses_real_filesystem(tmp_path):
    db = kvstore.open(str(tmp_path / "defaults"))
    db.put(b"a", b"b")
    assert db.get(b"a") == b"b"
    db.close()
    assert (tmp_path / "defaults" / "MANIFEST").exists()


@pytest.mark.parametrize("field,value", [
    ("memtable_bytes", 0), ("block_size", -1), ("wal_segment_bytes", 0),
    ("bloom_bits_per_key", -1), ("compaction_min_merge", 1), ("compaction_max_merge", 1),
    ("compaction_size_ratio", 0.9),
])
def test_invalid_options_are_rejected(memfs, field, value):
    with pytest.raises(InvalidArgumentError, match=field):
        kvstore.open("/db/bad", make_options(memfs, **{field: value}))


def test_options_resolved_fills_defaults():
    resolved = Options().resolved()
    assert isinstance(resolved.fs, kvstore.OSFileSystem)
    assert resolved.clock.now() == 0


def test_invalid_wal_sync_option_is_rejected(memfs):
    with pytest.raises(InvalidArgumentError, match="wal sync"):
        kvstore.open("/db/bad", make_options(memfs, wal_sync="sometimes"))


def test_logical_clock_advances_monotonically():
    clock = LogicalClock(5)
    assert clock.now() == 5
    assert clock.advance() == 6
    assert clock.advance(10) == 16
    with pytest.raises(InvalidArgumentError):
        clock.advance(-1)
    with pytest.raises(InvalidArgumentError):
        LogicalClock(-1)


def test_many_random_operations_match_a_dict_model(memfs, clock):
    import random

    rng = random.Random(1234)
    db = kvstore.open("/db/model", make_options(memfs, clock, memtable_bytes=400,
                                                auto_compact=True, compaction_min_merge=2,
                                                block_size=64))
    model = {}
    for step in range(600):
        key = b"k%03d" % rng.randrange(60)
        if rng.random() < 0.25:
            db.delete(key)
            model.pop(key, None)
        else:
            value = b"v%d" % step
            db.put(key, value)
            model[key] = value
    assert db.scan() == sorted(model.items())
    assert db.scan(reverse=True) == sorted(model.items(), reverse=True)
    assert all(db.get(k) == v for k, v in model.items())
    db.compact()
    assert db.scan() == sorted(model.items())
    db.close()
