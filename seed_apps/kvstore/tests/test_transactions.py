import pytest

import kvstore
from conftest import make_options
from kvstore.errors import ConflictError, InvalidArgumentError, TransactionClosedError


@pytest.fixture
def store(memfs, clock):
    db = kvstore.open("/db/main", make_options(memfs, clock))
    db.put(b"a", b"1")
    db.put(b"b", b"2")
    db.put(b"c", b"3")
    yield db
    db.close()


def test_transaction_reads_its_own_writes(store):
    txn = store.begin()
    txn.put(b"a", b"mine")
    txn.delete(b"b")
    txn.put(b"new", b"n")
    assert txn.get(b"a") == b"mine"
    assert txn.get(b"b", "deleted") == "deleted"
    assert txn.get(b"new") == b"n"
    assert txn.get(b"c") == b"3"
    assert store.get(b"a") == b"1"


def test_transaction_does_not_see_commits_after_it_began(store):
    txn = store.begin()
    store.put(b"a", b"outside")
    assert txn.get(b"a") == b"1"
    assert txn.snapshot_seq == 3


def test_commit_applies_writes_atomically_and_returns_sequence(store):
    txn = store.begin()
    txn.put(b"a", b"x")
    txn.delete(b"c")
    assert txn.commit() == 5
    assert txn.state == "committed"
    assert store.scan() == [(b"a", b"x"), (b"b", b"2")]


def test_write_write_conflict_aborts_second_committer(store):
    first = store.begin()
    second = store.begin()
    first.put(b"a", b"first")
    second.put(b"a", b"second")
    second.put(b"b", b"also")
    first.commit()
    with pytest.raises(ConflictError) as info:
        second.commit()
    assert info.value.keys == [b"a"]
    assert second.state == "rolled_back"
    assert store.get(b"a") == b"first"
    assert store.get(b"b") == b"2"
    assert store.stats().live_snapshots == 0


def test_snapshot_isolation_ignores_read_only_keys_changed_by_others(store):
    txn = store.begin()
    assert txn.get(b"b") == b"2"
    store.put(b"b", b"changed")
    txn.put(b"a", b"based-on-b")
    assert txn.commit() == 5


def test_serializable_isolation_detects_stale_reads(store):
    txn = store.begin("serializable")
    assert txn.isolation == "serializable"
    txn.get(b"b")
    store.put(b"b", b"changed")
    txn.put(b"a", b"based-on-b")
    with pytest.raises(ConflictError) as info:
        txn.commit()
    assert info.value.keys == [b"b"]


def test_serializable_isolation_detects_phantoms_in_scanned_range(store):
    txn = store.begin("serializable")
    assert txn.scan(b"a", b"c") == [(b"a", b"1"), (b"b", b"2")]
    store.put(b"bb", b"phantom")
    store.put(b"z", b"outside-range")
    txn.put(b"summary", b"2 rows")
    with pytest.raises(ConflictError) as info:
        txn.commit()
    assert info.value.keys == [b"bb"]


def test_serializable_range_check_sees_changes_in_flushed_tables(store):
    txn = store.begin("serializable")
    txn.scan(b"a", b"c")
    store.delete(b"a")
    store.flush()
    txn.put(b"x", b"y")
    with pytest.raises(ConflictError):
        txn.commit()


def test_serializable_commit_succeeds_without_interference(store):
    txn = store.begin("serializable")
    txn.get(b"a")
    txn.scan(b"a", b"c")
    store.put(b"zz", b"unrelated")
    txn.put(b"a", b"ok")
    txn.commit()
    assert store.get(b"a") == b"ok"


def test_read_only_transaction_commits_at_its_snapshot(store):
    txn = store.begin("serializable")
    txn.get(b"a")
    store.put(b"a", b"changed")
    assert txn.commit() == 3


def test_rollback_discards_writes_and_closes_transaction(store):
    txn = store.begin()
    txn.put(b"a", b"x")
    txn.rollback()
    assert txn.state == "rolled_back"
    assert store.get(b"a") == b"1"
    for action in (lambda: txn.get(b"a"), lambda: txn.put(b"a", b"y"), txn.commit, txn.rollback,
                   lambda: txn.delete(b"a"), lambda: txn.scan(), txn.savepoint):
        with pytest.raises(TransactionClosedError):
            action()


def test_context_manager_commits_on_success(store):
    with store.begin() as txn:
        txn.put(b"a", b"ctx")
    assert store.get(b"a") == b"ctx"
    assert txn.state == "committed"


def test_context_manager_rolls_back_on_exception(store):
    with pytest.raises(RuntimeError):
        with store.begin() as txn:
            txn.put(b"a", b"ctx")
            raise RuntimeError("boom")
    assert txn.state == "rolled_back"
    assert store.get(b"a") == b"1"


def test_context_manager_tolerates_explicit_finish(store):
    with store.begin() as txn:
        txn.put(b"a", b"x")
        txn.rollback()
    with pytest.raises(ValueError):
        with store.begin() as other:
            other.commit()
            raise ValueError("after commit")
    assert store.get(b"a") == b"1"


def test_savepoint_rollback_to_discards_later_writes(store):
    txn = store.begin()
    txn.put(b"a", b"keep")
    mark = txn.savepoint()
    txn.put(b"a", b"discard")
    txn.delete(b"b")
    txn.rollback_to(mark)
    assert txn.pending_writes() == {b"a": b"keep"}
    assert txn.get(b"b") == b"2"
    txn.commit()
    assert store.scan() == [(b"a", b"keep"), (b"b", b"2"), (b"c", b"3")]


def test_rollback_to_rebuilds_deletes(store):
    txn = store.begin()
    txn.delete(b"a")
    mark = txn.savepoint()
    txn.put(b"a", b"back")
    txn.rollback_to(mark)
    assert txn.pending_writes() == {b"a": None}


@pytest.mark.parametrize("mark", [-1, 5])
def test_rollback_to_rejects_invalid_savepoints(store, mark):
    txn = store.begin()
    txn.put(b"a", b"x")
    with pytest.raises(InvalidArgumentError):
        txn.rollback_to(mark)


def test_transaction_scan_overlays_pending_writes(store):
    txn = store.begin()
    txn.put(b"b", b"B")
    txn.delete(b"c")
    txn.put(b"d", b"D")
    assert txn.scan() == [(b"a", b"1"), (b"b", b"B"), (b"d", b"D")]
    assert txn.scan(reverse=True, limit=2) == [(b"d", b"D"), (b"b", b"B")]
    assert txn.scan("b", "d") == [(b"b", b"B")]


def test_transaction_put_with_ttl_expires_after_commit(store, clock):
    txn = store.begin()
    txn.put(b"session", b"s", ttl=5)
    txn.commit()
    clock.advance(4)
    assert store.get(b"session") == b"s"
    clock.advance(1)
    assert store.get(b"session") is None


def test_transaction_put_rejects_bad_ttl(store):
    with pytest.raises(InvalidArgumentError):
        store.begin().put(b"k", b"v", ttl=0)


def test_begin_rejects_unknown_isolation_without_leaking_snapshot(store):
    with pytest.raises(InvalidArgumentError):
        store.begin("read-committed")
    assert store.stats().live_snapshots == 0


def test_conflict_error_message_lists_keys():
    error = ConflictError([b"b", b"a"])
    assert error.keys == [b"a", b"b"]
    assert str(error) == "transaction conflict on 2 key(s): b'a', b'b'"
