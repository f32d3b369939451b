"""Row storage and secondary indexes.

A :class:`Table` keeps rows as tuples keyed by an ever-increasing integer row id
and maintains any number of single-column indexes:

* :class:`HashIndex` - dictionary from key to row ids, equality lookups only;
* :class:`SortedIndex` - a sorted key list searched with :mod:`bisect`,
  supporting equality lookups and range scans.

NULL keys are never stored in an index, so a UNIQUE index admits many NULLs.
"""

from bisect import bisect_left, bisect_right, insort

from .errors import CatalogError, ConstraintError


class Index:
    """Common behaviour of single-column indexes.

    Attributes:
        name: index name (lower case).
        column: position of the indexed column inside a row tuple.
        unique: whether duplicate non-NULL keys are rejected.
    """

    kind = "abstract"

    def __init__(self, name, column, unique=False):
        """Create an empty index on row position ``column``."""
        self.name = name
        self.column = column
        self.unique = unique
        self._buckets = {}

    def key_of(self, row):
        """Return the indexed value of ``row``."""
        return row[self.column]

    def lookup(self, key):
        """Return the row ids whose key equals ``key`` in ascending order ([] for NULL)."""
        if key is None:
            return []
        return list(self._buckets.get(key, ()))

    def check_unique(self, key, rowid=None):
        """Raise ConstraintError if this is a unique index already holding ``key``
        for a row other than ``rowid``.  NULL keys never conflict."""
        if not self.unique or key is None:
            return
        owners = self._buckets.get(key, ())
        if any(owner != rowid for owner in owners):
            raise ConstraintError(f"duplicate key {key!r} violates unique index {self.name}")

    def insert(self, key, rowid):
        """Add ``rowid`` under ``key`` keeping each key's row ids sorted.

        NULL keys are ignored.  Uniqueness is not checked here.
        """
        if key is None:
            return
        bucket = self._buckets.get(key)
        if bucket is None:
            self._buckets[key] = [rowid]
            self._on_new_key(key)
        else:
            insort(bucket, rowid)

    def remove(self, key, rowid):
        """Remove ``rowid`` from ``key``'s entry; drops the key when no ids remain."""
        if key is None:
            return
        bucket = self._buckets[key]
        bucket.remove(rowid)
        if not bucket:
            del self._buckets[key]
            self._on_removed_key(key)

    def __len__(self):
        """Number of row ids stored in the index."""
        return sum(len(bucket) for bucket in self._buckets.values())

    def _on_new_key(self, key):
        """Hook called when ``key`` gets its first row id."""

    def _on_removed_key(self, key):
        """Hook called when ``key`` loses its last row id."""


class HashIndex(Index):
    """Equality-only index backed by a dictionary."""

    kind = "hash"


class SortedIndex(Index):
    """Ordered index: keeps distinct keys in a sorted list for range scans."""

    kind = "btree"

    def __init__(self, name, column, unique=False):
        """Create an empty sorted index on row position ``column``."""
        super().__init__(name, column, unique)
        self._keys = []

    def _on_new_key(self, key):
        """Insert ``key`` into the sorted key list."""
        insort(self._keys, key)

    def _on_removed_key(self, key):
        """Delete ``key`` from the sorted key list."""
        del self._keys[bisect_left(self._keys, key)]

    def keys(self):
        """Return the distinct keys in ascending order."""
        return list(self._keys)

    def range_scan(self, low=None, high=None, low_inclusive=True, high_inclusive=True):
        """Return row ids with ``low <(=) key <(=) high`` ordered by key, then row id.

        ``None`` for ``low``/``high`` means unbounded on that side.  An empty
        list is returned when the bounds cross.
        """
        keys = self._keys
        if low is None:
            start = 0
        elif low_inclusive:
            start = bisect_left(keys, low)
        else:
            start = bisect_right(keys, low)
        if high is None:
            stop = len(keys)
        elif high_inclusive:
            stop = bisect_right(keys, high)
        else:
            stop = bisect_left(keys, high)
        result = []
        for key in keys[start:stop]:
            result.extend(self._buckets[key])
        return result


def make_index(kind, name, column, unique=False):
    """Create an empty index of ``kind`` ``"hash"`` or ``"btree"``.

    Raises:
        CatalogError: for any other kind.
    """
    if kind == "hash":
        return HashIndex(name, column, unique)
    if kind == "btree":
        return SortedIndex(name, column, unique)
    raise CatalogError(f"unknown index kind {kind!r}")


class Table:
    """Heap of rows with index maintenance.

    Attributes:
        schema: the owning :class:`~minisql.catalog.TableSchema` (used for names).
        rows: mapping of row id to row tuple.
        indexes: mapping of index name to index object.
    """

    def __init__(self, schema):
        """Create an empty table described by ``schema``."""
        self.schema = schema
        self.rows = {}
        self.indexes = {}
        self.next_rowid = 1

    def __len__(self):
        """Number of stored rows."""
        return len(self.rows)

    def scan(self):
        """Yield ``(rowid, row)`` pairs in ascending row id order."""
        for rowid in sorted(self.rows):
            yield rowid, self.rows[rowid]

    def fetch(self, rowids):
        """Return ``(rowid, row)`` pairs for ``rowids`` in the given order."""
        return [(rowid, self.rows[rowid]) for rowid in rowids]

    def _check_unique(self, row, rowid=None):
        """Check every unique index for a conflict with ``row`` (ignoring ``rowid`` itself)."""
        for index in self.indexes.values():
            index.check_unique(index.key_of(row), rowid)

    def insert(self, row):
        """Store ``row`` under a fresh row id and return that id.

        Raises:
            ConstraintError: if a unique index already contains one of its keys;
                the table is left unchanged.
        """
        row = tuple(row)
        self._check_unique(row)
        rowid = self.next_rowid
        self.next_rowid += 1
        self._place(rowid, row)
        return rowid

    def restore(self, rowid, row):
        """Put back a previously deleted row under its original ``rowid`` (used by undo)."""
        self._check_unique(row)
        self._place(rowid, tuple(row))

    def _place(self, rowid, row):
        """Store ``row`` at ``rowid`` and add it to all indexes."""
        self.rows[rowid] = row
        for index in self.indexes.values():
            index.insert(index.key_of(row), rowid)

    def delete(self, rowid):
        """Remove the row ``rowid`` from the heap and indexes and return it."""
        row = self.rows.pop(rowid)
        for index in self.indexes.values():
            index.remove(index.key_of(row), rowid)
        return row

    def update(self, rowid, new_row):
        """Replace row ``rowid`` with ``new_row`` and return the old row.

        Only indexes whose key changed are touched.

        Raises:
            ConstraintError: if the new row conflicts with another row in a
                unique index; the table is left unchanged.
        """
        new_row = tuple(new_row)
        old_row = self.rows[rowid]
        self._check_unique(new_row, rowid)
        for index in self.indexes.values():
            old_key, new_key = index.key_of(old_row), index.key_of(new_row)
            if old_key != new_key or type(old_key) is not type(new_key):
                index.remove(old_key, rowid)
                index.insert(new_key, rowid)
        self.rows[rowid] = new_row
        return old_row

    def add_index(self, index):
        """Populate ``index`` from the existing rows and attach it to the table.

        Raises:
            CatalogError: if an index with the same name is already attached.
            ConstraintError: if ``index`` is unique and existing rows contain a
                duplicate key; the index is then not attached.
        """
        if index.name in self.indexes:
            raise CatalogError(f"index {index.name} already exists")
        for rowid, row in self.scan():
            key = index.key_of(row)
            index.check_unique(key)
            index.insert(key, rowid)
        self.indexes[index.name] = index

    def remove_index(self, name):
        """Detach and return the index called ``name`` (KeyError if absent)."""
        return self.indexes.pop(name)

    def find_index(self, column, kinds=("hash", "btree")):
        """Return an attached index on row position ``column`` whose kind is in ``kinds``.

        Unique indexes are preferred, then the order of ``kinds``, then index name;
        returns None if no index qualifies.
        """
        candidates = [ix for ix in self.indexes.values() if ix.column == column and ix.kind in kinds]
        if not candidates:
            return None
        candidates.sort(key=lambda ix: (not ix.unique, kinds.index(ix.kind), ix.name))
        return candidates[0]
