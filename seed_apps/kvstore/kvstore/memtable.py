"""In-memory write buffer: a skip list of versioned entries.

The skip list is a generic ordered map whose node heights come from an
injected ``random.Random`` so that its shape is reproducible.  The
:class:`MemTable` stores :class:`~kvstore.encoding.Entry` objects under the
internal key ``(user_key, -seq)``, so iteration yields keys ascending and,
within a key, newest versions first.
"""

import random
from typing import Optional

from .encoding import MAX_SEQUENCE, Entry
from .errors import InvalidArgumentError


class _Node:
    """Skip list node with one forward pointer per level."""

    __slots__ = ("key", "value", "forward")

    def __init__(self, key, value, level: int):
        """Create a node of height ``level`` with no successors."""
        self.key = key
        self.value = value
        self.forward = [None] * level


class SkipList:
    """Ordered map with expected O(log n) insert and search.

    Args:
        rng: random source used to choose node heights.
        max_level: maximum number of levels (>= 1).
        branching: a node reaches level i+1 with probability 1/branching (>= 2).
    """

    def __init__(self, rng: random.Random, max_level: int = 12, branching: int = 4):
        """Create an empty list; see the class docstring for the arguments."""
        if max_level < 1:
            raise InvalidArgumentError("max_level must be at least 1")
        if branching < 2:
            raise InvalidArgumentError("branching must be at least 2")
        self._rng = rng
        self._max_level = max_level
        self._branching = branching
        self._head = _Node(None, None, max_level)
        self._level = 1
        self._len = 0

    @property
    def height(self) -> int:
        """Number of levels currently in use (1 for an empty list)."""
        return self._level

    def _random_level(self) -> int:
        """Draw a node height: 1, plus one per consecutive 1-in-``branching`` success."""
        level = 1
        while level < self._max_level and self._rng.randrange(self._branching) == 0:
            level += 1
        return level

    def _find_greater_or_equal(self, key, update: Optional[list] = None):
        """Return the first node with ``node.key >= key`` (or None).

        If ``update`` is given, ``update[i]`` is set to the last node at level
        ``i`` whose key is below ``key`` (the insertion predecessors).
        """
        node = self._head
        for level in range(self._level - 1, -1, -1):
            nxt = node.forward[level]
            while nxt is not None and nxt.key < key:
                node = nxt
                nxt = node.forward[level]
            if update is not None:
                update[level] = node
        return node.forward[0]

    def _find_less_than(self, key):
        """Return the last node with ``node.key < key``, or the head if none."""
        node = self._head
        for level in range(self._level - 1, -1, -1):
            nxt = node.forward[level]
            while nxt is not None and nxt.key < key:
                node = nxt
                nxt = node.forward[level]
        return node

    def _find_last(self):
        """Return the last node, or the head if the list is empty."""
        node = self._head
        for level in range(self._level - 1, -1, -1):
            while node.forward[level] is not None:
                node = node.forward[level]
        return node

    def insert(self, key, value) -> bool:
        """Map ``key`` to ``value``; return True if the key was new, False if replaced."""
        update = [self._head] * self._max_level
        node = self._find_greater_or_equal(key, update)
        if node is not None and node.key == key:
            node.value = value
            return False
        level = self._random_level()
        self._level = max(self._level, level)
        new = _Node(key, value, level)
        for i in range(level):
            new.forward[i] = update[i].forward[i]
            update[i].forward[i] = new
        self._len += 1
        return True

    def get(self, key, default=None):
        """Return the value stored under ``key`` or ``default``."""
        node = self._find_greater_or_equal(key)
        if node is not None and node.key == key:
            return node.value
        return default

    def __contains__(self, key) -> bool:
        """True if ``key`` is present."""
        node = self._find_greater_or_equal(key)
        return node is not None and node.key == key

    def __len__(self) -> int:
        """Number of keys."""
        return self._len

    def __iter__(self):
        """Iterate ``(key, value)`` pairs in ascending key order."""
        return self.seek(None)

    def seek(self, key=None):
        """Yield ``(key, value)`` pairs ascending, starting at the first key >= ``key``.

        ``key`` of None starts at the smallest key.
        """
        node = self._head.forward[0] if key is None else self._find_greater_or_equal(key)
        while node is not None:
            yield node.key, node.value
            node = node.forward[0]

    def seek_reverse(self, key=None):
        """Yield ``(key, value)`` pairs descending, starting at the last key < ``key``.

        ``key`` of None starts at the largest key.  Each step re-searches from
        the head (the list has no back pointers), costing O(log n).
        """
        node = self._find_last() if key is None else self._find_less_than(key)
        while node is not self._head:
            yield node.key, node.value
            node = self._find_less_than(node.key)


class MemTable:
    """Mutable sorted buffer of entries awaiting a flush to an SSTable."""

    ENTRY_OVERHEAD = 16

    def __init__(self, rng_seed: int = 0):
        """Create an empty memtable whose skip list is seeded with ``rng_seed``."""
        self._list = SkipList(random.Random(rng_seed))
        self._bytes = 0
        self._max_seq = 0

    def add(self, entry: Entry) -> None:
        """Insert ``entry`` under ``(key, -seq)``; re-adding the same version replaces it."""
        if self._list.insert(entry.sort_key, entry):
            self._bytes += len(entry.key) + len(entry.value) + self.ENTRY_OVERHEAD
        self._max_seq = max(self._max_seq, entry.seq)

    def get(self, key: bytes, snapshot_seq: int) -> Optional[Entry]:
        """Return the newest version of ``key`` with ``seq <= snapshot_seq``.

        Tombstones are returned as-is so callers can stop searching older
        data; None means the memtable knows nothing about the key at that
        snapshot.
        """
        for _, entry in self._list.seek((key, -snapshot_seq)):
            return entry if entry.key == key else None
        return None

    def scan_entries(self, start: Optional[bytes] = None, end: Optional[bytes] = None,
                     reverse: bool = False):
        """Yield every stored version whose key lies in ``[start, end)``.

        Forward order is internal-key order (key ascending, newest first);
        ``reverse=True`` yields exactly the reverse sequence.  None bounds are
        open.
        """
        if not reverse:
            origin = None if start is None else (start, -MAX_SEQUENCE)
            for (key, _), entry in self._list.seek(origin):
                if end is not None and key >= end:
                    return
                yield entry
        else:
            origin = None if end is None else (end, -MAX_SEQUENCE)
            for (key, _), entry in self._list.seek_reverse(origin):
                if start is not None and key < start:
                    return
                yield entry

    @property
    def approximate_bytes(self) -> int:
        """Key and value bytes stored plus a fixed per-entry overhead."""
        return self._bytes

    @property
    def max_seq(self) -> int:
        """Largest sequence number added (0 if empty)."""
        return self._max_seq

    def __len__(self) -> int:
        """Number of stored versions."""
        return len(self._list)
