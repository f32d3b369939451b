"""Write-ahead log: append-only, checksummed, segmented.

Every committed batch is framed (see :func:`kvstore.encoding.frame_record`)
and appended to the current segment file ``wal-NNNNNN.log``.  Segments rotate
once they exceed a size limit.  Recovery reads segments in order and stops at
the first torn or corrupt frame: that segment is truncated to its last good
record and every later segment is deleted, because nothing written after a
hole can be trusted.
"""

import abc
import re
from dataclasses import dataclass, field
from typing import Optional

from .encoding import frame_record, unframe_record
from .errors import ClosedError, CorruptionError, InvalidArgumentError
from .fs import FileSystem

_SEGMENT_RE = re.compile(r"^wal-(\d{6,})\.log$")


def segment_name(number: int) -> str:
    """Return the file name of segment ``number``, e.g. ``wal-000007.log``."""
    return f"wal-{number:06d}.log"


def parse_segment_name(name: str) -> Optional[int]:
    """Return the segment number encoded in ``name`` or None if it is not a segment."""
    match = _SEGMENT_RE.match(name)
    return int(match.group(1)) if match else None


def list_segments(fs: FileSystem, directory: str) -> list:
    """Return the sorted numbers of all segment files in ``directory``."""
    numbers = (parse_segment_name(name) for name in fs.listdir(directory))
    return sorted(n for n in numbers if n is not None)


def delete_segments_before(fs: FileSystem, directory: str, number: int) -> list:
    """Delete every segment numbered below ``number``; return the deleted numbers."""
    removed = []
    for existing in list_segments(fs, directory):
        if existing < number:
            fs.remove(fs.join(directory, segment_name(existing)))
            removed.append(existing)
    return removed


class SyncPolicy(abc.ABC):
    """Decides when the log calls fsync.  Subclasses implement :meth:`should_sync`."""

    @abc.abstractmethod
    def should_sync(self, pending: int) -> bool:
        """Return True if ``pending`` unsynced records should be synced now."""


class SyncAlways(SyncPolicy):
    """Sync after every record (no acknowledged write is ever lost)."""

    def should_sync(self, pending: int) -> bool:
        """Always True."""
        return True


class SyncNever(SyncPolicy):
    """Never sync on append; data becomes durable only on rotate/close."""

    def should_sync(self, pending: int) -> bool:
        """Always False."""
        return False


class SyncEveryN(SyncPolicy):
    """Sync once ``n`` records have accumulated since the last sync."""

    def __init__(self, n: int):
        """``n`` must be at least 1."""
        if n < 1:
            raise InvalidArgumentError(f"sync interval must be >= 1, got {n}")
        self.n = n

    def should_sync(self, pending: int) -> bool:
        """True when ``pending >= n``."""
        return pending >= self.n


def sync_policy_from_spec(spec) -> SyncPolicy:
    """Build a policy from ``"always"``, ``"never"``, ``"every:N"`` or a SyncPolicy.

    Policies are returned unchanged; anything else raises InvalidArgumentError.
    """
    if isinstance(spec, SyncPolicy):
        return spec
    if spec == "always":
        return SyncAlways()
    if spec == "never":
        return SyncNever()
    if isinstance(spec, str) and spec.startswith("every:"):
        count = spec[len("every:"):]
        if count.isdigit():
            return SyncEveryN(int(count))
    raise InvalidArgumentError(f"unknown wal sync policy {spec!r}")


def read_segment(data: bytes) -> tuple:
    """Parse consecutive frames from one segment's bytes.

    Returns ``(records, valid_length, error)`` where ``records`` are the
    payloads of the intact frames, ``valid_length`` is the offset just past
    the last intact frame and ``error`` is the :class:`CorruptionError` that
    stopped parsing, or None if the whole segment was valid.
    """
    records = []
    pos = 0
    while pos < len(data):
        try:
            payload, next_pos = unframe_record(data, pos)
        except CorruptionError as exc:
            return records, pos, exc
        records.append(payload)
        pos = next_pos
    return records, pos, None


@dataclass
class RecoveryReport:
    """Outcome of :func:`recover_segments`.

    Attributes:
        records: payloads of all intact records, oldest first.
        segments: numbers of the segments that were read.
        truncated_segment: segment cut at the first bad frame, if any.
        truncated_at: byte offset the segment was cut to.
        dropped_segments: later segments deleted because they followed a hole.
    """

    records: list = field(default_factory=list)
    segments: list = field(default_factory=list)
    truncated_segment: Optional[int] = None
    truncated_at: Optional[int] = None
    dropped_segments: list = field(default_factory=list)

    @property
    def clean(self) -> bool:
        """True if no truncation or deletion was necessary."""
        return self.truncated_segment is None and not self.dropped_segments


def recover_segments(fs: FileSystem, directory: str) -> RecoveryReport:
    """Read all segments in order, repairing the log at the first bad frame.

    The segment holding the first torn/corrupt frame is truncated to its last
    intact record and all higher-numbered segments are removed.
    """
    report = RecoveryReport()
    numbers = list_segments(fs, directory)
    for index, number in enumerate(numbers):
        path = fs.join(directory, segment_name(number))
        records, valid_length, error = read_segment(fs.read(path))
        report.records.extend(records)
        report.segments.append(number)
        if error is not None:
            fs.truncate(path, valid_length)
            report.truncated_segment = number
            report.truncated_at = valid_length
            for later in numbers[index + 1:]:
                fs.remove(fs.join(directory, segment_name(later)))
                report.dropped_segments.append(later)
            break
    return report


class WriteAheadLog:
    """Appends framed records to numbered segment files.

    Args:
        fs: filesystem.
        directory: directory that holds the segments.
        segment_number: number of the (new, empty) segment to start writing.
        policy: :class:`SyncPolicy` deciding when to fsync.
        max_segment_bytes: a non-empty segment is rotated before a record
            would push it past this size.
    """

    def __init__(self, fs: FileSystem, directory: str, segment_number: int,
                 policy: SyncPolicy, max_segment_bytes: int):
        """Create segment ``segment_number`` and validate the size limit."""
        if max_segment_bytes <= 0:
            raise InvalidArgumentError("max_segment_bytes must be positive")
        self._fs = fs
        self._dir = directory
        self._policy = policy
        self._max = max_segment_bytes
        self._segment = segment_number
        self._writer = fs.open_writer(fs.join(directory, segment_name(segment_number)))
        self._pending = 0
        self._closed = False

    @property
    def segment(self) -> int:
        """Number of the segment currently being written."""
        return self._segment

    def append(self, payload: bytes) -> int:
        """Frame and append ``payload``; return the segment it was written to.

        Rotates first if the current segment is non-empty and the frame would
        exceed the size limit, then syncs if the policy asks for it.
        Raises :class:`ClosedError` after :meth:`close`.
        """
        if self._closed:
            raise ClosedError("write-ahead log is closed")
        record = frame_record(payload)
        position = self._writer.position
        if position > 0 and position + len(record) > self._max:
            self.rotate()
        self._writer.write(record)
        self._pending += 1
        if self._policy.should_sync(self._pending):
            self.sync()
        return self._segment

    def sync(self) -> None:
        """Make all appended records durable."""
        self._writer.sync()
        self._pending = 0

    def rotate(self) -> int:
        """Sync and close the current segment, start the next; return its number."""
        if self._closed:
            raise ClosedError("write-ahead log is closed")
        self.sync()
        self._writer.close()
        self._segment += 1
        self._writer = self._fs.open_writer(self._fs.join(self._dir, segment_name(self._segment)))
        return self._segment

    def close(self) -> None:
        """Sync and close the log; further appends raise :class:`ClosedError`."""
        if self._closed:
            return
        self.sync()
        self._writer.close()
        self._closed = True
