import dataclasses

import pytest

import kvstore
from conftest import make_options
from kvstore.batch import encode_batch_record
from kvstore.encoding import KIND_PUT, Entry, frame_record
from kvstore.fsck import IntegrityReport, check_store
from kvstore.manifest import load_manifest, save_manifest
from kvstore.sstable import SSTableWriter
from kvstore.wal import segment_name

PATH = "/db/main"


@pytest.fixture
def db_fs(memfs, clock):
    """A closed store with one table (a, b, c) and two unflushed records."""
    db = kvstore.open(PATH, make_options(memfs, clock))
    db.put(b"a", b"1")
    db.put(b"b", b"2")
    db.put(b"c", b"3")
    db.flush()
    db.put(b"d", b"4")
    db.delete(b"a")
    db.close()
    return memfs


def edit_manifest(fs, **changes):
    manifest = load_manifest(fs, PATH)
    for key, value in changes.items():
        setattr(manifest, key, value)
    save_manifest(fs, PATH, manifest)


def edit_table_meta(fs, **changes):
    manifest = load_manifest(fs, PATH)
    manifest.tables[0] = dataclasses.replace(manifest.tables[0], **changes)
    save_manifest(fs, PATH, manifest)


def test_healthy_store_passes_with_exact_counts(db_fs):
    report = check_store(db_fs, PATH)
    assert report == IntegrityReport(problems=[], tables_checked=1, entries_checked=3, log_records=2)
    assert report.ok is True


def test_store_after_compaction_and_reopen_passes(memfs, clock):
    db = kvstore.open(PATH, make_options(memfs, clock, memtable_bytes=120, auto_compact=True,
                                         compaction_min_merge=2))
    for i in range(40):
        db.put(b"k%02d" % (i % 15), b"v%d" % i)
    db.close()
    assert check_store(memfs, PATH).problems == []


def test_missing_manifest_is_the_only_problem(memfs):
    assert check_store(memfs, "/db").problems == ["manifest missing"]


def test_unreadable_manifest_is_reported(db_fs):
    db_fs.corrupt(PATH + "/MANIFEST", 12)
    problems = check_store(db_fs, PATH).problems
    assert len(problems) == 1
    assert problems[0].startswith("manifest unreadable: checksum mismatch")


def test_missing_table_file_is_reported(db_fs):
    db_fs.remove(PATH + "/000001.sst")
    report = check_store(db_fs, PATH)
    assert report.problems == ["table 1: file missing"]
    assert report.tables_checked == 0


def test_corrupt_table_block_is_reported(db_fs):
    db_fs.corrupt(PATH + "/000001.sst", 1)
    assert check_store(db_fs, PATH).problems == ["table 1: checksum mismatch in data block 0"]


def test_table_size_mismatch_is_reported(db_fs):
    size = db_fs.size(PATH + "/000001.sst")
    edit_table_meta(db_fs, file_size=size + 7)
    assert check_store(db_fs, PATH).problems == [
        f"table 1: size {size} != manifest {size + 7}",
        "table 1: metadata differs from manifest",
    ]


def test_metadata_mismatch_is_reported(db_fs):
    edit_table_meta(db_fs, smallest_key=b"0")
    assert check_store(db_fs, PATH).problems == ["table 1: metadata differs from manifest"]


def test_table_number_must_be_below_next_file_number(db_fs):
    edit_manifest(db_fs, next_file_number=1)
    assert check_store(db_fs, PATH).problems == ["table 1: number not below next_file_number"]


def test_table_sequences_must_not_exceed_last_sequence(db_fs):
    edit_manifest(db_fs, last_sequence=2)
    problems = check_store(db_fs, PATH).problems
    assert problems[0] == "table 1: sequence 3 beyond manifest last_sequence 2"


def test_out_of_order_table_entries_are_reported(db_fs):
    writer = SSTableWriter(db_fs, PATH, 1)
    writer.add(Entry(b"b", 2, KIND_PUT, b"2"))
    writer._last = None
    writer.add(Entry(b"a", 1, KIND_PUT, b"1"))
    writer._last = None
    writer.add(Entry(b"c", 3, KIND_PUT, b"3"))
    meta = writer.finish()
    manifest = load_manifest(db_fs, PATH)
    manifest.tables[0] = meta
    save_manifest(db_fs, PATH, manifest)
    report = check_store(db_fs, PATH)
    assert report.problems == ["table 1: entries out of order at key b'a'"]
    assert report.entries_checked == 2


def test_orphan_tables_and_stale_segments_are_reported(db_fs):
    db_fs.write_atomic(PATH + "/000042.sst", b"junk")
    db_fs.write_atomic(PATH + "/" + segment_name(1), b"")
    assert check_store(db_fs, PATH).problems == [
        "orphan table file 000042.sst", "stale log segment wal-000001.log"]


def test_torn_log_record_is_reported_with_valid_length(db_fs):
    path = PATH + "/" + segment_name(2)
    db_fs.truncate(path, db_fs.size(path) - 3)
    report = check_store(db_fs, PATH)
    # record 1 = 8-byte header + 7-byte put of b"d"; record 2 = header + 5-byte delete of b"a"
    assert report.problems == [
        "log segment 2: frame at offset 15 declares 5 bytes but the buffer ends (valid up to 15)"
    ]
    assert report.log_records == 1


def test_undecodable_log_record_is_reported(db_fs):
    writer = db_fs.open_writer(PATH + "/" + segment_name(9))
    writer.write(frame_record(b"\x00"))
    writer.close()
    report = check_store(db_fs, PATH)
    assert report.problems == ["log segment 9: batch record contains no entries"]


def test_non_increasing_log_sequences_are_reported(db_fs):
    writer = db_fs.open_writer(PATH + "/" + segment_name(9))
    writer.write(frame_record(encode_batch_record([Entry(b"x", 4, KIND_PUT, b"")])))
    writer.close()
    assert check_store(db_fs, PATH).problems == ["log segment 9: sequence 4 not after 5"]
