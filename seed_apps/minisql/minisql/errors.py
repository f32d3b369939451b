"""Exception hierarchy shared by every layer of minisql.

All errors raised on purpose by the engine derive from :class:`MiniSQLError`, so
callers can catch a single class while tests can check the precise category.
"""


class MiniSQLError(Exception):
    """Base class of every error raised deliberately by minisql."""


class LexError(MiniSQLError):
    """Raised by the lexer for malformed input such as an unterminated string.

    Attributes:
        position: zero-based character offset in the SQL text where the problem
            was detected.
    """

    def __init__(self, message, position):
        """Store ``position`` and format the message as ``"<message> at <position>"``."""
        super().__init__(f"{message} at {position}")
        self.position = position


class ParseError(MiniSQLError):
    """Raised by the parser when the token stream does not match the grammar."""


class CatalogError(MiniSQLError):
    """Raised for unknown or duplicate tables, columns and indexes, or ambiguous names."""


class ConstraintError(MiniSQLError):
    """Raised when a write would violate NOT NULL, UNIQUE / PRIMARY KEY or length limits."""


class SQLTypeError(MiniSQLError):
    """Raised when a value has the wrong SQL type for an operation or a column."""


class ExecutionError(MiniSQLError):
    """Raised for run-time failures: division by zero, bad function calls, misuse of aggregates."""


class TransactionError(MiniSQLError):
    """Raised for invalid transaction control, e.g. COMMIT without BEGIN."""
