"""Transactions implemented with an undo log.

Every change to tables or the catalog is recorded as an undo entry.  ROLLBACK
replays the entries newest-first to restore the state seen at BEGIN.  Each
statement also runs inside a savepoint, so a statement that fails half way
(for example on the third row of a multi-row INSERT) leaves no partial effects,
both inside an explicit transaction and in autocommit mode.
"""

from contextlib import contextmanager

from .errors import MiniSQLError, TransactionError


class TransactionManager:
    """Tracks the explicit transaction state and the undo log of a database.

    Attributes:
        active: True between BEGIN and COMMIT/ROLLBACK.
    """

    def __init__(self, catalog):
        """Manage transactions over ``catalog``."""
        self.catalog = catalog
        self.active = False
        self._log = []

    def __len__(self):
        """Number of undo entries currently recorded."""
        return len(self._log)

    # ------------------------------------------------------------ control

    def begin(self):
        """Start an explicit transaction.

        Raises:
            TransactionError: if a transaction is already active.
        """
        if self.active:
            raise TransactionError("a transaction is already active")
        self.active = True
        self._log.clear()

    def commit(self):
        """Make all changes since BEGIN permanent.

        Raises:
            TransactionError: if no transaction is active.
        """
        if not self.active:
            raise TransactionError("no transaction is active")
        self.active = False
        self._log.clear()

    def rollback(self):
        """Undo all changes since BEGIN and end the transaction.

        Raises:
            TransactionError: if no transaction is active.
        """
        if not self.active:
            raise TransactionError("no transaction is active")
        self.rollback_to(0)
        self.active = False

    def savepoint(self):
        """Return a marker for the current end of the undo log."""
        return len(self._log)

    def rollback_to(self, savepoint):
        """Undo, newest first, every entry recorded after ``savepoint`` and drop them."""
        while len(self._log) > savepoint:
            self._undo(self._log.pop())

    @contextmanager
    def statement(self):
        """Context manager giving a statement all-or-nothing behaviour.

        On a :class:`MiniSQLError` the statement's changes are undone and the
        error re-raised.  On success outside an explicit transaction the log is
        cleared (autocommit).
        """
        savepoint = self.savepoint()
        try:
            yield self
        except MiniSQLError:
            self.rollback_to(savepoint)
            raise
        if not self.active:
            self._log.clear()

    # ------------------------------------------------------------ recording

    def record(self, action, *details):
        """Append an undo entry ``(action, *details)``.

        Actions and details: ``insert`` (table, rowid); ``delete`` (table,
        rowid, row); ``update`` (table, rowid, old_row); ``create_table``
        (name); ``drop_table`` (table); ``create_index`` (name);
        ``drop_index`` (table, index).
        """
        self._log.append((action, *details))

    def _undo(self, entry):
        """Reverse the effect of a single undo entry."""
        action, *details = entry
        if action == "insert":
            table, rowid = details
            table.delete(rowid)
        elif action == "delete":
            table, rowid, row = details
            table.restore(rowid, row)
        elif action == "update":
            table, rowid, old_row = details
            table.update(rowid, old_row)
        elif action == "create_table":
            self.catalog.drop_table(details[0])
        elif action == "drop_table":
            self.catalog.restore_table(details[0])
        elif action == "create_index":
            self.catalog.drop_index(details[0])
        elif action == "drop_index":
            self.catalog.reattach_index(*details)
        else:
            raise TransactionError(f"unknown undo action {action!r}")
