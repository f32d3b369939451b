import pytest

from kvstore.errors import ClosedError, FileSystemError
from kvstore.fs import MemoryFileSystem, OSFileSystem


@pytest.fixture(params=["memory", "os"])
def fs_root(request, tmp_path):
    """(filesystem, existing directory) for both implementations."""
    if request.param == "memory":
        fs = MemoryFileSystem()
        fs.makedirs("/root")
        return fs, "/root"
    return OSFileSystem(), str(tmp_path)


def test_written_bytes_can_be_read_back(fs_root):
    fs, root = fs_root
    path = fs.join(root, "a.bin")
    writer = fs.open_writer(path)
    writer.write(b"hello ")
    writer.write(b"world")
    assert writer.position == 11
    writer.sync()
    writer.close()
    assert fs.read(path) == b"hello world"
    assert fs.size(path) == 11


def test_open_writer_without_truncate_appends(fs_root):
    fs, root = fs_root
    path = fs.join(root, "log")
    fs.write_atomic(path, b"abc")
    writer = fs.open_writer(path, truncate=False)
    writer.write(b"def")
    writer.close()
    assert fs.read(path) == b"abcdef"


def test_open_writer_with_truncate_discards_old_contents(fs_root):
    fs, root = fs_root
    path = fs.join(root, "log")
    fs.write_atomic(path, b"abc")
    fs.open_writer(path).close()
    assert fs.read(path) == b""


def test_listdir_returns_sorted_names_of_files_and_directories(fs_root):
    fs, root = fs_root
    for name in ["b", "a", "c"]:
        fs.write_atomic(fs.join(root, name), b"x")
    fs.makedirs(fs.join(root, "sub", "deeper"))
    assert fs.listdir(root) == ["a", "b", "c", "sub"]
    assert fs.listdir(fs.join(root, "sub")) == ["deeper"]


def test_write_atomic_leaves_no_temporary_file(fs_root):
    fs, root = fs_root
    path = fs.join(root, "MANIFEST")
    fs.write_atomic(path, b"v1")
    fs.write_atomic(path, b"v2")
    assert fs.read(path) == b"v2"
    assert fs.listdir(root) == ["MANIFEST"]


def test_rename_replaces_destination(fs_root):
    fs, root = fs_root
    fs.write_atomic(fs.join(root, "src"), b"new")
    fs.write_atomic(fs.join(root, "dst"), b"old")
    fs.rename(fs.join(root, "src"), fs.join(root, "dst"))
    assert fs.read(fs.join(root, "dst")) == b"new"
    assert not fs.exists(fs.join(root, "src"))


def test_truncate_shortens_file(fs_root):
    fs, root = fs_root
    path = fs.join(root, "f")
    fs.write_atomic(path, b"0123456789")
    fs.truncate(path, 4)
    assert fs.read(path) == b"0123"


def test_remove_deletes_file_and_missing_file_raises(fs_root):
    fs, root = fs_root
    path = fs.join(root, "f")
    fs.write_atomic(path, b"x")
    fs.remove(path)
    assert fs.exists(path) is False
    with pytest.raises(FileSystemError):
        fs.remove(path)


def test_reading_missing_file_raises_filesystem_error(fs_root):
    fs, root = fs_root
    with pytest.raises(FileSystemError):
        fs.read(fs.join(root, "nope"))


def test_copy_file_returns_byte_count_and_copies_content(fs_root):
    fs, root = fs_root
    fs.write_atomic(fs.join(root, "a"), b"payload")
    assert fs.copy_file(fs.join(root, "a"), fs.join(root, "b")) == 7
    assert fs.read(fs.join(root, "b")) == b"payload"


def test_writer_refuses_writes_after_close(fs_root):
    fs, root = fs_root
    writer = fs.open_writer(fs.join(root, "f"))
    writer.close()
    writer.close()
    with pytest.raises(ClosedError):
        writer.write(b"x")
    with pytest.raises(ClosedError):
        writer.sync()


def test_os_open_writer_in_missing_directory_raises(tmp_path):
    with pytest.raises(FileSystemError):
        OSFileSystem().open_writer(str(tmp_path / "missing" / "f"))


def test_os_listdir_of_missing_directory_raises(tmp_path):
    with pytest.raises(FileSystemError):
        OSFileSystem().listdir(str(tmp_path / "missing"))


def test_memory_crash_discards_unsynced_bytes(memfs):
    writer = memfs.open_writer("/db/f")
    writer.write(b"durable")
    writer.sync()
    writer.write(b"volatile")
    memfs.crash()
    assert memfs.read("/db/f") == b"durable"


def test_memory_crash_with_torn_bytes_keeps_partial_tail(memfs):
    writer = memfs.open_writer("/db/f")
    writer.write(b"abc")
    writer.sync()
    writer.write(b"defgh")
    memfs.crash(torn_bytes=2)
    assert memfs.read("/db/f") == b"abcde"


def test_memory_crash_rejects_negative_torn_bytes(memfs):
    with pytest.raises(ValueError):
        memfs.crash(torn_bytes=-1)


def test_memory_writers_are_invalidated_by_crash(memfs):
    writer = memfs.open_writer("/db/f")
    memfs.crash()
    with pytest.raises(FileSystemError, match="invalidated by a crash"):
        writer.write(b"x")


def test_memory_write_to_removed_file_raises(memfs):
    writer = memfs.open_writer("/db/f")
    memfs.remove("/db/f")
    with pytest.raises(FileSystemError):
        writer.write(b"x")


def test_memory_truncate_reduces_synced_length(memfs):
    writer = memfs.open_writer("/db/f")
    writer.write(b"0123456789")
    writer.sync()
    memfs.truncate("/db/f", 3)
    writer.write(b"xyz")
    memfs.crash()
    assert memfs.read("/db/f") == b"012"


def test_memory_sync_count_counts_sync_calls(memfs):
    writer = memfs.open_writer("/db/f")
    writer.sync()
    writer.sync()
    assert memfs.sync_count == 2


def test_memory_open_writer_requires_parent_directory():
    fs = MemoryFileSystem()
    with pytest.raises(FileSystemError, match="parent directory"):
        fs.open_writer("/missing/f")


def test_memory_open_writer_on_directory_raises(memfs):
    with pytest.raises(FileSystemError, match="is a directory"):
        memfs.open_writer("/db")


def test_memory_makedirs_over_file_raises(memfs):
    memfs.write_atomic("/db/f", b"x")
    with pytest.raises(FileSystemError):
        memfs.makedirs("/db/f")


def test_memory_listdir_of_missing_directory_raises(memfs):
    with pytest.raises(FileSystemError):
        memfs.listdir("/nope")


def test_memory_paths_are_normalised(memfs):
    memfs.write_atomic("/db//x/../f", b"1")
    assert memfs.read("db/f") == b"1"
    assert memfs.exists("/db/f")


def test_memory_corrupt_flips_bits_at_offset(memfs):
    memfs.write_atomic("/db/f", b"\x00\x0f")
    memfs.corrupt("/db/f", 1, 0xF0)
    assert memfs.read("/db/f") == b"\x00\xff"
    with pytest.raises(ValueError):
        memfs.corrupt("/db/f", 2)
