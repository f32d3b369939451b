"""Filesystem abstraction used for every byte kvstore reads or writes.

Two implementations are provided:

* :class:`OSFileSystem` talks to the real operating system.
* :class:`MemoryFileSystem` keeps files in memory and models durability: bytes
  written to a file only survive :meth:`MemoryFileSystem.crash` once the file
  has been synced, which lets tests simulate power loss and torn writes.

Paths are plain strings joined with ``/``.
"""

import abc
import builtins
import contextlib
import os
import posixpath

from .errors import ClosedError, FileSystemError


class FileWriter(abc.ABC):
    """A handle that writes one file sequentially."""

    @property
    @abc.abstractmethod
    def position(self) -> int:
        """Number of bytes in the file after the writes made so far."""

    @abc.abstractmethod
    def write(self, data: bytes) -> None:
        """Append ``data`` to the file; raises :class:`ClosedError` after close."""

    @abc.abstractmethod
    def sync(self) -> None:
        """Make everything written so far durable."""

    @abc.abstractmethod
    def close(self) -> None:
        """Release the handle; closing twice is allowed and does nothing."""


class FileSystem(abc.ABC):
    """Minimal set of file operations needed by the storage engine."""

    def join(self, *parts: str) -> str:
        """Join path components with ``/``."""
        return posixpath.join(*parts)

    @abc.abstractmethod
    def open_writer(self, path: str, truncate: bool = True) -> FileWriter:
        """Open ``path`` for writing, creating it; keep old bytes if not ``truncate``."""

    @abc.abstractmethod
    def read(self, path: str) -> bytes:
        """Return the full contents of ``path``; :class:`FileSystemError` if missing."""

    @abc.abstractmethod
    def exists(self, path: str) -> bool:
        """Return whether a file or directory exists at ``path``."""

    @abc.abstractmethod
    def listdir(self, path: str) -> list:
        """Return the sorted names of the entries directly inside directory ``path``."""

    @abc.abstractmethod
    def makedirs(self, path: str) -> None:
        """Create directory ``path`` and any missing parents (no error if present)."""

    @abc.abstractmethod
    def remove(self, path: str) -> None:
        """Delete the file at ``path``; :class:`FileSystemError` if missing."""

    @abc.abstractmethod
    def rename(self, src: str, dst: str) -> None:
        """Atomically move ``src`` to ``dst``, replacing ``dst`` if it exists."""

    @abc.abstractmethod
    def truncate(self, path: str, size: int) -> None:
        """Cut the file at ``path`` down to ``size`` bytes."""

    @abc.abstractmethod
    def size(self, path: str) -> int:
        """Return the length in bytes of the file at ``path``."""

    def write_atomic(self, path: str, data: bytes) -> None:
        """Durably replace ``path`` with ``data``.

        The bytes go to ``path + ".tmp"`` first, are synced, and the temporary
        file is then renamed over ``path``, so readers see either the old or
        the new contents, never a mix.
        """
        tmp = path + ".tmp"
        writer = self.open_writer(tmp)
        writer.write(data)
        writer.sync()
        writer.close()
        self.rename(tmp, path)

    def copy_file(self, src: str, dst: str) -> int:
        """Durably copy ``src`` to ``dst`` and return the number of bytes copied."""
        data = self.read(src)
        self.write_atomic(dst, data)
        return len(data)


@contextlib.contextmanager
def _translate_os_errors(operation: str, path: str):
    """Re-raise ``OSError`` from the body as :class:`FileSystemError`."""
    try:
        yield
    except OSError as exc:
        raise FileSystemError(f"{operation} {path!r} failed: {exc.strerror or exc}") from exc


class _OSWriter(FileWriter):
    """:class:`FileWriter` backed by a real file object."""

    def __init__(self, path: str, truncate: bool):
        """Open ``path`` in binary write or append mode."""
        with _translate_os_errors("open", path):
            self._fh = builtins.open(path, "wb" if truncate else "ab")
        self._path = path
        self._closed = False

    @property
    def position(self) -> int:
        """Current end-of-file offset."""
        return self._fh.tell()

    def write(self, data: bytes) -> None:
        """Append ``data``; raises :class:`ClosedError` after close."""
        if self._closed:
            raise ClosedError(f"writer for {self._path!r} is closed")
        with _translate_os_errors("write", self._path):
            self._fh.write(data)

    def sync(self) -> None:
        """Flush Python buffers and ``fsync`` the file descriptor."""
        if self._closed:
            raise ClosedError(f"writer for {self._path!r} is closed")
        with _translate_os_errors("sync", self._path):
            self._fh.flush()
            os.fsync(self._fh.fileno())

    def close(self) -> None:
        """Close the underlying file once."""
        if not self._closed:
            self._fh.close()
            self._closed = True


class OSFileSystem(FileSystem):
    """:class:`FileSystem` over the host operating system."""

    def open_writer(self, path: str, truncate: bool = True) -> FileWriter:
        """Open a real file for writing (see :meth:`FileSystem.open_writer`)."""
        return _OSWriter(path, truncate)

    def read(self, path: str) -> bytes:
        """Read a whole real file."""
        with _translate_os_errors("read", path):
            with builtins.open(path, "rb") as fh:
                return fh.read()

    def exists(self, path: str) -> bool:
        """Return ``os.path.exists(path)``."""
        return os.path.exists(path)

    def listdir(self, path: str) -> list:
        """Return the sorted directory listing."""
        with _translate_os_errors("list", path):
            return sorted(os.listdir(path))

    def makedirs(self, path: str) -> None:
        """Create the directory tree."""
        with _translate_os_errors("mkdir", path):
            os.makedirs(path, exist_ok=True)

    def remove(self, path: str) -> None:
        """Delete a real file."""
        with _translate_os_errors("remove", path):
            os.remove(path)

    def rename(self, src: str, dst: str) -> None:
        """Rename with ``os.replace`` semantics."""
        with _translate_os_errors("rename", src):
            os.replace(src, dst)

    def truncate(self, path: str, size: int) -> None:
        """Truncate a real file."""
        with _translate_os_errors("truncate", path):
            os.truncate(path, size)

    def size(self, path: str) -> int:
        """Return the file size from the OS."""
        with _translate_os_errors("stat", path):
            return os.path.getsize(path)


class _MemFile:
    """Contents of one in-memory file plus how much of it is durable."""

    __slots__ = ("data", "synced")

    def __init__(self):
        """Create an empty file record."""
        self.data = bytearray()
        self.synced = 0


class _MemWriter(FileWriter):
    """Writer into a :class:`MemoryFileSystem` file.

    A writer belongs to one "generation" of the filesystem; after
    :meth:`MemoryFileSystem.crash` every older writer refuses to work, just
    like file descriptors of a process that died.
    """

    def __init__(self, fs: "MemoryFileSystem", path: str, generation: int):
        """Bind the writer to ``path`` of ``fs`` for crash generation ``generation``."""
        self._fs = fs
        self._path = path
        self._generation = generation
        self._closed = False

    def _file(self) -> _MemFile:
        """Return the target file, checking the handle is still usable."""
        if self._closed:
            raise ClosedError(f"writer for {self._path!r} is closed")
        if self._generation != self._fs.generation:
            raise FileSystemError(f"writer for {self._path!r} was invalidated by a crash")
        try:
            return self._fs.files[self._path]
        except KeyError:
            raise FileSystemError(f"file {self._path!r} was removed while open") from None

    @property
    def position(self) -> int:
        """Current length of the file."""
        return len(self._file().data)

    def write(self, data: bytes) -> None:
        """Append ``data`` (not yet durable)."""
        self._file().data.extend(data)

    def sync(self) -> None:
        """Mark all current bytes of the file durable."""
        target = self._file()
        target.synced = len(target.data)
        self._fs.sync_count += 1

    def close(self) -> None:
        """Close the handle; unsynced bytes stay volatile."""
        self._closed = True


class MemoryFileSystem(FileSystem):
    """In-memory :class:`FileSystem` that can simulate crashes.

    Durability model: file creation, rename, removal and truncation are
    durable immediately; appended bytes become durable only when synced.
    ``sync_count`` counts sync calls, which lets tests observe fsync policies.
    """

    def __init__(self):
        """Create an empty filesystem containing only the root directory."""
        self.files = {}
        self.dirs = {"/"}
        self.generation = 0
        self.sync_count = 0

    @staticmethod
    def _norm(path: str) -> str:
        """Normalise ``path`` to an absolute, slash-separated form."""
        return posixpath.normpath("/" + path.lstrip("/"))

    def _require_file(self, path: str) -> _MemFile:
        """Return the file at ``path`` or raise :class:`FileSystemError`."""
        try:
            return self.files[self._norm(path)]
        except KeyError:
            raise FileSystemError(f"no such file: {path!r}") from None

    def open_writer(self, path: str, truncate: bool = True) -> FileWriter:
        """Open an in-memory file; its parent directory must exist."""
        norm = self._norm(path)
        if posixpath.dirname(norm) not in self.dirs:
            raise FileSystemError(f"parent directory of {path!r} does not exist")
        if norm in self.dirs:
            raise FileSystemError(f"{path!r} is a directory")
        if truncate or norm not in self.files:
            self.files[norm] = _MemFile()
        return _MemWriter(self, norm, self.generation)

    def read(self, path: str) -> bytes:
        """Return all bytes of the file, durable or not."""
        return bytes(self._require_file(path).data)

    def exists(self, path: str) -> bool:
        """Return whether a file or directory exists."""
        norm = self._norm(path)
        return norm in self.files or norm in self.dirs

    def listdir(self, path: str) -> list:
        """Return sorted names of files and directories directly inside ``path``."""
        norm = self._norm(path)
        if norm not in self.dirs:
            raise FileSystemError(f"no such directory: {path!r}")
        names = set()
        for entry in list(self.files) + list(self.dirs):
            if entry != norm and posixpath.dirname(entry) == norm:
                names.add(posixpath.basename(entry))
        return sorted(names)

    def makedirs(self, path: str) -> None:
        """Create the directory and all its parents."""
        norm = self._norm(path)
        if norm in self.files:
            raise FileSystemError(f"{path!r} is a file")
        while norm not in self.dirs:
            self.dirs.add(norm)
            norm = posixpath.dirname(norm)

    def remove(self, path: str) -> None:
        """Delete a file."""
        self._require_file(path)
        del self.files[self._norm(path)]

    def rename(self, src: str, dst: str) -> None:
        """Move a file, replacing the destination."""
        moved = self._require_file(src)
        del self.files[self._norm(src)]
        self.files[self._norm(dst)] = moved

    def truncate(self, path: str, size: int) -> None:
        """Shorten a file to ``size`` bytes (durably)."""
        target = self._require_file(path)
        del target.data[size:]
        target.synced = min(target.synced, size)

    def size(self, path: str) -> int:
        """Return the current length of a file."""
        return len(self._require_file(path).data)

    def crash(self, torn_bytes: int = 0) -> None:
        """Simulate power loss.

        Every file keeps its synced prefix plus at most ``torn_bytes`` of the
        bytes written after the last sync (a torn write); the rest is lost.
        All writers opened before the crash become unusable.
        """
        if torn_bytes < 0:
            raise ValueError("torn_bytes must be non-negative")
        for target in self.files.values():
            keep = min(len(target.data), target.synced + torn_bytes)
            del target.data[keep:]
            target.synced = keep
        self.generation += 1

    def corrupt(self, path: str, offset: int, mask: int = 0xFF) -> None:
        """XOR the byte at ``offset`` of ``path`` with ``mask`` (for fault injection)."""
        target = self._require_file(path)
        if not 0 <= offset < len(target.data):
            raise ValueError(f"offset {offset} outside file of {len(target.data)} bytes")
        target.data[offset] ^= mask
