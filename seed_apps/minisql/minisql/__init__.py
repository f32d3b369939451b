"""minisql: a small SQL engine over in-memory tables.

Layering (each module only uses the ones above it)::

    errors -> lexer -> nodes -> parser
    sqltypes -> storage -> catalog
    expressions -> rewrite -> planner -> executor -> transactions -> database

The public API is :class:`Database` and :class:`Result`.
"""

from .database import Database, Result
from .errors import (CatalogError, ConstraintError, ExecutionError, LexError, MiniSQLError,
                     ParseError, SQLTypeError, TransactionError)

__all__ = [
    "Database", "Result", "MiniSQLError", "LexError", "ParseError", "CatalogError",
    "ConstraintError", "SQLTypeError", "ExecutionError", "TransactionError",
]
