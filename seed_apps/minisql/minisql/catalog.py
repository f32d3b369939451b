"""Schemas and the catalog of tables and indexes.

Names of tables, columns and indexes are case-sensitive strings; the lexer
already lower-cases unquoted identifiers, so ``Users`` and ``users`` written
without quotes refer to the same table.
"""

from dataclasses import dataclass
from typing import Optional

from .errors import CatalogError, ConstraintError
from .sqltypes import SqlType, coerce_to_column
from .storage import Table, make_index


@dataclass(frozen=True)
class Column:
    """A column of a table schema.

    Attributes:
        name: column name.
        type: the column's :class:`SqlType`.
        length: maximum length for TEXT columns, or None.
        not_null: whether NULL is rejected.
        primary_key: whether this is the table's primary key.
        unique: whether a UNIQUE constraint applies (implied by primary_key).
        default: value used when an INSERT omits the column (already coerced).
    """

    name: str
    type: SqlType
    length: Optional[int] = None
    not_null: bool = False
    primary_key: bool = False
    unique: bool = False
    default: object = None


class TableSchema:
    """Ordered collection of columns describing one table."""

    def __init__(self, name, columns):
        """Create a schema.

        Raises:
            CatalogError: for an empty column list, duplicate column names or
                more than one PRIMARY KEY column.
        """
        if not columns:
            raise CatalogError(f"table {name} must have at least one column")
        self.name = name
        self.columns = list(columns)
        self._positions = {}
        for position, column in enumerate(self.columns):
            if column.name in self._positions:
                raise CatalogError(f"duplicate column {column.name} in table {name}")
            self._positions[column.name] = position
        if sum(1 for c in self.columns if c.primary_key) > 1:
            raise CatalogError(f"table {name} has more than one primary key")

    @property
    def column_names(self):
        """List of column names in definition order."""
        return [column.name for column in self.columns]

    def position(self, name):
        """Return the zero-based position of column ``name``.

        Raises:
            CatalogError: if the table has no such column.
        """
        try:
            return self._positions[name]
        except KeyError:
            raise CatalogError(f"no column {name} in table {self.name}") from None

    def column(self, name):
        """Return the :class:`Column` called ``name`` (CatalogError if unknown)."""
        return self.columns[self.position(name)]

    def validate_row(self, values):
        """Coerce a full row of values to the column types and enforce NOT NULL.

        Args:
            values: sequence with one value per column, in column order.

        Returns:
            The coerced row as a tuple.

        Raises:
            ConstraintError: on a NULL in a NOT NULL column, an over-long string
                or a wrong number of values.
            SQLTypeError: when a value does not fit its column type.
        """
        if len(values) != len(self.columns):
            raise ConstraintError(
                f"table {self.name} has {len(self.columns)} columns but {len(values)} values were supplied")
        row = []
        for column, value in zip(self.columns, values):
            if value is None and column.not_null:
                raise ConstraintError(f"NULL value in NOT NULL column {self.name}.{column.name}")
            row.append(coerce_to_column(value, column.type, column.length))
        return tuple(row)


class Catalog:
    """Registry of tables (storage objects) and the indexes attached to them."""

    def __init__(self):
        """Create an empty catalog."""
        self.tables = {}
        self._index_owner = {}
        self._constraint_indexes = set()

    def table_names(self):
        """Return the names of all tables in alphabetical order."""
        return sorted(self.tables)

    def has_table(self, name):
        """Return True if a table called ``name`` exists."""
        return name in self.tables

    def get_table(self, name):
        """Return the storage :class:`Table` called ``name``.

        Raises:
            CatalogError: if there is no such table.
        """
        try:
            return self.tables[name]
        except KeyError:
            raise CatalogError(f"no such table: {name}") from None

    def create_table(self, schema):
        """Register a new table for ``schema`` and create its constraint indexes.

        A primary key column gets a unique btree index ``<table>_pkey``; every
        other UNIQUE column gets a unique btree index ``<table>_<column>_key``.

        Returns:
            The new storage :class:`Table`.

        Raises:
            CatalogError: if the table already exists.
        """
        if schema.name in self.tables:
            raise CatalogError(f"table {schema.name} already exists")
        table = Table(schema)
        self.tables[schema.name] = table
        for position, column in enumerate(schema.columns):
            if column.primary_key or column.unique:
                suffix = "pkey" if column.primary_key else f"{column.name}_key"
                index = make_index("btree", f"{schema.name}_{suffix}", position, unique=True)
                self._attach(table, index)
                self._constraint_indexes.add(index.name)
        return table

    def drop_table(self, name):
        """Remove table ``name`` and its indexes from the catalog and return the table.

        Raises:
            CatalogError: if there is no such table.
        """
        table = self.get_table(name)
        del self.tables[name]
        for index_name in table.indexes:
            del self._index_owner[index_name]
        return table

    def restore_table(self, table):
        """Re-register a previously dropped ``table`` together with its indexes (undo)."""
        self.tables[table.schema.name] = table
        for index_name in table.indexes:
            self._index_owner[index_name] = table.schema.name

    def create_index(self, name, table_name, column_name, unique=False, kind="btree"):
        """Build an index named ``name`` on ``table_name(column_name)`` and return it.

        Raises:
            CatalogError: if the index name is taken, or the table, column or kind is unknown.
            ConstraintError: if ``unique`` and existing rows contain duplicates.
        """
        if name in self._index_owner:
            raise CatalogError(f"index {name} already exists")
        table = self.get_table(table_name)
        position = table.schema.position(column_name)
        index = make_index(kind, name, position, unique)
        self._attach(table, index)
        return index

    def _attach(self, table, index):
        """Populate and attach ``index`` to ``table`` and record its owner."""
        table.add_index(index)
        self._index_owner[index.name] = table.schema.name

    def drop_index(self, name):
        """Detach index ``name`` and return ``(table, index)``.

        Raises:
            CatalogError: if no such index exists or it enforces a constraint
                (primary key / UNIQUE column indexes cannot be dropped).
        """
        if name not in self._index_owner:
            raise CatalogError(f"no such index: {name}")
        if name in self._constraint_indexes:
            raise CatalogError(f"index {name} enforces a constraint and cannot be dropped")
        table = self.tables[self._index_owner.pop(name)]
        return table, table.remove_index(name)

    def reattach_index(self, table, index):
        """Attach an already populated ``index`` to ``table`` again (undo of DROP INDEX)."""
        table.indexes[index.name] = index
        self._index_owner[index.name] = table.schema.name
