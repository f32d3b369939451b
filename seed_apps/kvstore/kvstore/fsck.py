"""Offline consistency checker ("fsck") for a store directory.

:func:`check_store` inspects a store without modifying it and reports every
violated invariant as a human-readable problem string, so operators can
decide whether to restore from a checkpoint.
"""

from dataclasses import dataclass, field

from .batch import decode_batch_record
from .errors import CorruptionError
from .manifest import MANIFEST_NAME, load_manifest
from .sstable import SSTableReader, parse_table_name, table_name
from .wal import parse_segment_name, read_segment, segment_name


@dataclass
class IntegrityReport:
    """Result of :func:`check_store`.

    Attributes:
        problems: one message per violated invariant, in discovery order.
        tables_checked: number of manifest tables that could be opened.
        entries_checked: number of table entries decoded and checked.
        log_records: number of intact log records examined.
    """

    problems: list = field(default_factory=list)
    tables_checked: int = 0
    entries_checked: int = 0
    log_records: int = 0

    @property
    def ok(self) -> bool:
        """True when no problem was found."""
        return not self.problems


def _check_table(fs, directory: str, meta, manifest, report: IntegrityReport) -> None:
    """Check one manifest table, appending problems to ``report``."""
    label = f"table {meta.number}"
    path = fs.join(directory, table_name(meta.number))
    if not fs.exists(path):
        report.problems.append(f"{label}: file missing")
        return
    if fs.size(path) != meta.file_size:
        report.problems.append(f"{label}: size {fs.size(path)} != manifest {meta.file_size}")
    try:
        reader = SSTableReader(fs, directory, meta.number)
        reader.verify()
    except CorruptionError as exc:
        report.problems.append(f"{label}: {exc}")
        return
    report.tables_checked += 1
    if reader.meta != meta:
        report.problems.append(f"{label}: metadata differs from manifest")
    previous = None
    for entry in reader.scan_entries():
        report.entries_checked += 1
        if previous is not None and entry.sort_key <= previous.sort_key:
            report.problems.append(f"{label}: entries out of order at key {entry.key!r}")
            break
        previous = entry
    if meta.number >= manifest.next_file_number:
        report.problems.append(f"{label}: number not below next_file_number")
    if meta.max_seq > manifest.last_sequence:
        report.problems.append(
            f"{label}: sequence {meta.max_seq} beyond manifest last_sequence "
            f"{manifest.last_sequence}"
        )


def check_store(fs, directory: str) -> IntegrityReport:
    """Check the store in ``directory`` and return an :class:`IntegrityReport`.

    Checks performed (each failure adds one problem and checking continues):

    1. The manifest exists and decodes (decoding also enforces disjoint,
       age-ordered table sequence ranges); otherwise that is the only problem.
    2. Every manifest table: the file exists, its size matches, all blocks
       pass their checksums, its properties equal the manifest metadata, its
       entries are strictly increasing in internal-key order, its number is
       below ``next_file_number`` and its sequences do not exceed
       ``last_sequence``.
    3. No table file exists that the manifest does not list ("orphan") and
       no log segment below the manifest's ``log_number`` remains ("stale").
    4. The remaining log segments parse cleanly and their records carry
       strictly increasing sequence numbers.
    """
    report = IntegrityReport()
    if not fs.exists(fs.join(directory, MANIFEST_NAME)):
        report.problems.append("manifest missing")
        return report
    try:
        manifest = load_manifest(fs, directory)
    except CorruptionError as exc:
        report.problems.append(f"manifest unreadable: {exc}")
        return report
    for meta in manifest.tables:
        _check_table(fs, directory, meta, manifest, report)
    live = set(manifest.table_numbers())
    segments = []
    for name in fs.listdir(directory):
        number = parse_table_name(name)
        if number is not None and number not in live:
            report.problems.append(f"orphan table file {name}")
        segment = parse_segment_name(name)
        if segment is not None and segment < manifest.log_number:
            report.problems.append(f"stale log segment {name}")
        elif segment is not None:
            segments.append(segment)
    last_seq = None
    for segment in sorted(segments):
        data = fs.read(fs.join(directory, segment_name(segment)))
        records, valid_length, error = read_segment(data)
        if error is not None:
            report.problems.append(f"log segment {segment}: {error} (valid up to {valid_length})")
        for payload in records:
            report.log_records += 1
            try:
                entries = decode_batch_record(payload)
            except CorruptionError as exc:
                report.problems.append(f"log segment {segment}: {exc}")
                continue
            if last_seq is not None and entries[0].seq <= last_seq:
                report.problems.append(
                    f"log segment {segment}: sequence {entries[0].seq} not after {last_seq}")
            last_seq = entries[-1].seq
    return report
