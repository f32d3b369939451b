import pytest

from kvstore.encoding import frame_record
from kvstore.errors import ChecksumError, ClosedError, InvalidArgumentError, TruncatedError
from kvstore.wal import (
    RecoveryReport,
    SyncAlways,
    SyncEveryN,
    SyncNever,
    WriteAheadLog,
    delete_segments_before,
    list_segments,
    parse_segment_name,
    read_segment,
    recover_segments,
    segment_name,
    sync_policy_from_spec,
)


def make_log(fs, policy=None, max_bytes=1 << 20, first=1):
    return WriteAheadLog(fs, "/db", first, policy or SyncAlways(), max_bytes)


def test_segment_name_is_zero_padded():
    assert segment_name(7) == "wal-000007.log"
    assert segment_name(1234567) == "wal-1234567.log"


@pytest.mark.parametrize("name,expected", [
    ("wal-000007.log", 7), ("wal-1234567.log", 1234567), ("wal-7.log", None),
    ("000007.sst", None), ("wal-000007.log.tmp", None),
])
def test_parse_segment_name(name, expected):
    assert parse_segment_name(name) == expected


def test_list_segments_ignores_other_files_and_sorts(memfs):
    for name in ["wal-000010.log", "wal-000002.log", "MANIFEST", "000003.sst"]:
        memfs.write_atomic("/db/" + name, b"")
    assert list_segments(memfs, "/db") == [2, 10]


def test_delete_segments_before_removes_only_older_segments(memfs):
    for n in [1, 2, 3, 4]:
        memfs.write_atomic("/db/" + segment_name(n), b"")
    assert delete_segments_before(memfs, "/db", 3) == [1, 2]
    assert list_segments(memfs, "/db") == [3, 4]


@pytest.mark.parametrize("policy,pending,expected", [
    (SyncAlways(), 1, True), (SyncNever(), 50, False),
    (SyncEveryN(3), 2, False), (SyncEveryN(3), 3, True),
])
def test_sync_policies_decide_by_pending_count(policy, pending, expected):
    assert policy.should_sync(pending) is expected


def test_sync_every_n_requires_positive_interval():
    with pytest.raises(InvalidArgumentError):
        SyncEveryN(0)


@pytest.mark.parametrize("spec,cls", [("always", SyncAlways), ("never", SyncNever), ("every:4", SyncEveryN)])
def test_sync_policy_from_spec_parses_names(spec, cls):
    assert type(sync_policy_from_spec(spec)) is cls


def test_sync_policy_from_spec_keeps_interval_and_passes_policies_through():
    assert sync_policy_from_spec("every:4").n == 4
    policy = SyncNever()
    assert sync_policy_from_spec(policy) is policy


@pytest.mark.parametrize("spec", ["sometimes", "every:", "every:x", 3])
def test_sync_policy_from_spec_rejects_unknown_specs(spec):
    with pytest.raises(InvalidArgumentError):
        sync_policy_from_spec(spec)


def test_read_segment_returns_all_records_of_intact_segment():
    data = frame_record(b"a") + frame_record(b"bb")
    records, valid, error = read_segment(data)
    assert (records, valid, error) == ([b"a", b"bb"], len(data), None)


def test_read_segment_stops_at_torn_record():
    good = frame_record(b"a")
    records, valid, error = read_segment(good + frame_record(b"bbbb")[:-2])
    assert records == [b"a"] and valid == len(good)
    assert isinstance(error, TruncatedError)


def test_read_segment_stops_at_checksum_mismatch():
    bad = bytearray(frame_record(b"zz"))
    bad[-1] ^= 1
    records, valid, error = read_segment(frame_record(b"a") + bytes(bad) + frame_record(b"c"))
    assert records == [b"a"] and valid == 9
    assert isinstance(error, ChecksumError)


def test_append_writes_framed_records_to_current_segment(memfs):
    log = make_log(memfs)
    assert log.append(b"first") == 1
    log.append(b"second")
    log.close()
    assert read_segment(memfs.read("/db/wal-000001.log"))[0] == [b"first", b"second"]


def test_append_rotates_when_segment_would_exceed_limit(memfs):
    log = make_log(memfs, max_bytes=30)
    segments = [log.append(b"x" * 10) for _ in range(4)]
    log.close()
    assert segments == [1, 2, 3, 4]
    assert list_segments(memfs, "/db") == [1, 2, 3, 4]


def test_oversized_record_is_still_written_to_empty_segment(memfs):
    log = make_log(memfs, max_bytes=8)
    assert log.append(b"y" * 50) == 1
    assert log.segment == 1


def test_explicit_rotate_returns_next_segment_number(memfs):
    log = make_log(memfs, first=5)
    assert log.rotate() == 6
    assert log.segment == 6
    assert list_segments(memfs, "/db") == [5, 6]


def test_log_rejects_non_positive_segment_size(memfs):
    with pytest.raises(InvalidArgumentError):
        make_log(memfs, max_bytes=0)


def test_append_and_rotate_after_close_raise(memfs):
    log = make_log(memfs)
    log.close()
    log.close()
    with pytest.raises(ClosedError):
        log.append(b"x")
    with pytest.raises(ClosedError):
        log.rotate()


def test_sync_always_makes_every_record_survive_crash(memfs):
    log = make_log(memfs, SyncAlways())
    for i in range(3):
        log.append(bytes([i]))
    memfs.crash()
    assert recover_segments(memfs, "/db").records == [b"\x00", b"\x01", b"\x02"]


def test_sync_never_loses_unsynced_records_on_crash(memfs):
    log = make_log(memfs, SyncNever())
    log.append(b"a")
    log.append(b"b")
    memfs.crash()
    assert recover_segments(memfs, "/db").records == []


def test_sync_every_n_keeps_only_records_up_to_last_sync(memfs):
    log = make_log(memfs, SyncEveryN(2))
    for payload in [b"a", b"b", b"c"]:
        log.append(payload)
    memfs.crash()
    assert recover_segments(memfs, "/db").records == [b"a", b"b"]


def test_recover_clean_log_reports_clean():
    report = RecoveryReport()
    assert report.clean is True


def test_recover_truncates_torn_tail_and_reports_offset(memfs):
    log = make_log(memfs, SyncNever())
    log.append(b"kept")
    log.sync()
    log.append(b"torn-record")
    memfs.crash(torn_bytes=6)
    report = recover_segments(memfs, "/db")
    assert report.records == [b"kept"]
    assert (report.truncated_segment, report.truncated_at) == (1, 12)
    assert report.clean is False
    assert memfs.size("/db/wal-000001.log") == 12


def test_recover_drops_segments_after_corruption(memfs):
    log = make_log(memfs, max_bytes=20)
    for payload in [b"one-1", b"two-2", b"three", b"four4"]:
        log.append(payload)
    log.close()
    memfs.corrupt("/db/wal-000002.log", 10)
    report = recover_segments(memfs, "/db")
    assert report.records == [b"one-1"]
    assert report.segments == [1, 2]
    assert report.truncated_segment == 2 and report.truncated_at == 0
    assert report.dropped_segments == [3, 4]
    assert list_segments(memfs, "/db") == [1, 2]
