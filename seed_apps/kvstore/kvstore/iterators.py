"""Iterators that combine the memtable and tables into one logical view.

Each source (memtable or table) yields the versions in a key range in
internal-key order (or its exact reverse).  :class:`MergingIterator` merges
sources with a heap, :func:`visible_entries` collapses versions to what a
snapshot sees, and :func:`scan_sources` packages both into a range scan.
"""

import heapq
from typing import Optional

from .errors import InvalidArgumentError


class _HeapItem:
    """Heap element: orders entries by internal key, then by source priority."""

    __slots__ = ("sort_key", "source", "entry", "reverse")

    def __init__(self, entry, source: int, reverse: bool):
        """Wrap ``entry`` from source number ``source`` for a heap ordered by ``reverse``."""
        self.sort_key = entry.sort_key
        self.source = source
        self.entry = entry
        self.reverse = reverse

    def __lt__(self, other: "_HeapItem") -> bool:
        """Order by internal key in the heap's direction, then by source index."""
        if self.sort_key != other.sort_key:
            if self.reverse:
                return self.sort_key > other.sort_key
            return self.sort_key < other.sort_key
        return self.source < other.source


class MergingIterator:
    """Merge entry streams that are each sorted in the same direction.

    Args:
        sources: iterables of entries, highest priority first.  Each must be
            in internal-key order (``reverse=False``) or its reverse.
        reverse: direction of every source and of the output.

    When two sources yield the same ``(key, seq)`` version only the one from
    the higher-priority (lower index) source is emitted.
    """

    def __init__(self, sources, reverse: bool = False):
        """Prime the heap with the first entry of every source."""
        self._reverse = reverse
        self._iters = [iter(source) for source in sources]
        self._heap = []
        self._last = None
        for index in range(len(self._iters)):
            self._push_next(index)

    def _push_next(self, index: int) -> None:
        """Pull the next entry of source ``index`` onto the heap, if any."""
        entry = next(self._iters[index], None)
        if entry is not None:
            heapq.heappush(self._heap, _HeapItem(entry, index, self._reverse))

    def __iter__(self):
        """Return self."""
        return self

    def __next__(self):
        """Return the next entry in merged order, skipping duplicate versions."""
        while self._heap:
            item = heapq.heappop(self._heap)
            self._push_next(item.source)
            identity = (item.entry.key, item.entry.seq)
            if identity == self._last:
                continue
            self._last = identity
            return item.entry
        raise StopIteration


def visible_entries(entries, snapshot_seq: int, now: Optional[int] = None):
    """Collapse a merged version stream into the live entries a snapshot sees.

    ``entries`` must group versions of the same key together (as merged
    streams in either direction do).  For each key the version with the
    largest ``seq <= snapshot_seq`` is selected; it is yielded only if it is
    a put that has not expired at logical time ``now``.  Keys come out in the
    order of the input stream.
    """
    current_key = None
    best = None
    for entry in entries:
        if entry.key != current_key:
            if best is not None and best.is_live(now):
                yield best
            current_key = entry.key
            best = None
        if entry.seq <= snapshot_seq and (best is None or entry.seq > best.seq):
            best = entry
    if best is not None and best.is_live(now):
        yield best


def key_in_range(key: bytes, start: Optional[bytes], end: Optional[bytes]) -> bool:
    """True if ``start <= key < end`` (None bounds are open)."""
    return (start is None or key >= start) and (end is None or key < end)


def prefix_upper_bound(prefix: bytes) -> Optional[bytes]:
    """Return the smallest key greater than every key starting with ``prefix``.

    Trailing 0xFF bytes are dropped and the last remaining byte incremented;
    None is returned when no such bound exists (empty or all-0xFF prefix).
    """
    bound = bytearray(prefix)
    while bound:
        if bound[-1] < 0xFF:
            bound[-1] += 1
            return bytes(bound)
        bound.pop()
    return None


def check_limit(limit: Optional[int]) -> None:
    """Raise InvalidArgumentError unless ``limit`` is None or a non-negative int."""
    if limit is not None and limit < 0:
        raise InvalidArgumentError(f"limit must be non-negative, got {limit}")


def scan_sources(sources, start: Optional[bytes], end: Optional[bytes], snapshot_seq: int,
                 now: Optional[int] = None, reverse: bool = False,
                 limit: Optional[int] = None) -> list:
    """Return the visible ``(key, value)`` pairs with keys in ``[start, end)``.

    Args:
        sources: objects with ``scan_entries(start, end, reverse)``, newest first.
        start, end: key bounds, None for open; ``start >= end`` gives ``[]``.
        snapshot_seq: versions newer than this are ignored.
        now: logical time for TTL expiry.
        reverse: descending key order if True.
        limit: maximum number of pairs (None for all).
    """
    check_limit(limit)
    if limit == 0 or (start is not None and end is not None and start >= end):
        return []
    merged = MergingIterator([s.scan_entries(start, end, reverse) for s in sources], reverse)
    result = []
    for entry in visible_entries(merged, snapshot_seq, now):
        result.append((entry.key, entry.value))
        if limit is not None and len(result) >= limit:
            break
    return result


def overlay_writes(base: list, writes: dict, start: Optional[bytes], end: Optional[bytes],
                   reverse: bool = False, limit: Optional[int] = None) -> list:
    """Merge uncommitted ``writes`` over a sorted scan result.

    Args:
        base: ``(key, value)`` pairs sorted ascending (descending if ``reverse``).
        writes: key -> new value, or None for a pending delete.
        start, end: only writes with keys in ``[start, end)`` are considered.
        reverse: direction of ``base`` and of the result.
        limit: maximum number of pairs returned.

    Pending writes replace base values for the same key, pending deletes hide
    them, and new keys are inserted in order.
    """
    check_limit(limit)
    pending = sorted((k for k in writes if key_in_range(k, start, end)), reverse=reverse)
    result = []
    i = j = 0
    while i < len(base) or j < len(pending):
        if limit is not None and len(result) >= limit:
            break
        if j >= len(pending):
            result.append(base[i])
            i += 1
            continue
        key = pending[j]
        if i < len(base) and base[i][0] != key and ((base[i][0] < key) != reverse):
            result.append(base[i])
            i += 1
            continue
        if i < len(base) and base[i][0] == key:
            i += 1
        j += 1
        if writes[key] is not None:
            result.append((key, writes[key]))
    return result
