"""Public entry point: :class:`Database` executes SQL text and returns :class:`Result` objects."""

from dataclasses import dataclass, field

from . import nodes as n
from .catalog import Catalog, Column, TableSchema
from .errors import CatalogError, ExecutionError
from .executor import Executor
from .expressions import evaluate_constant
from .parser import parse, parse_script
from .planner import Planner, explain
from .sqltypes import coerce_to_column, resolve_type
from .transactions import TransactionManager


@dataclass
class Result:
    """Outcome of one statement.

    Attributes:
        columns: result column names (empty for statements other than SELECT).
        rows: result rows as tuples (empty for statements other than SELECT).
        rowcount: number of rows returned (SELECT) or affected (INSERT, UPDATE,
            DELETE); 0 for other statements.
    """

    columns: list = field(default_factory=list)
    rows: list = field(default_factory=list)
    rowcount: int = 0

    def __iter__(self):
        """Iterate over the rows."""
        return iter(self.rows)

    def __len__(self):
        """Number of rows."""
        return len(self.rows)

    def scalar(self):
        """Return the first value of the first row, or None when there are no rows."""
        return self.rows[0][0] if self.rows else None

    def column(self, name):
        """Return the list of values of column ``name``.

        Raises:
            CatalogError: if the result has no column of that name.
        """
        if name not in self.columns:
            raise CatalogError(f"result has no column {name}")
        position = self.columns.index(name)
        return [row[position] for row in self.rows]

    def as_dicts(self):
        """Return the rows as dictionaries keyed by column name."""
        return [dict(zip(self.columns, row)) for row in self.rows]


class Database:
    """An in-memory SQL database.

    Example::

        db = Database()
        db.execute("CREATE TABLE t (id INTEGER PRIMARY KEY, name TEXT)")
        db.execute("INSERT INTO t VALUES (1, 'ann')")
        db.execute("SELECT name FROM t").rows   # [('ann',)]
    """

    def __init__(self):
        """Create an empty database in autocommit mode."""
        self.catalog = Catalog()
        self.transactions = TransactionManager(self.catalog)
        self.planner = Planner(self.catalog)
        self.executor = Executor(self._run_subquery)
        self._handlers = {
            n.Select: self._select, n.Insert: self._insert, n.Update: self._update,
            n.Delete: self._delete, n.CreateTable: self._create_table,
            n.DropTable: self._drop_table, n.CreateIndex: self._create_index,
            n.DropIndex: self._drop_index, n.Begin: self._begin, n.Commit: self._commit,
            n.Rollback: self._rollback,
        }

    # ------------------------------------------------------------ public API

    def execute(self, sql):
        """Parse and execute a single SQL statement and return its :class:`Result`.

        Raises:
            MiniSQLError: any subclass, describing why the statement failed.  A
                failed statement has no effect on the data.
        """
        return self.execute_statement(parse(sql))

    def execute_script(self, sql):
        """Execute several ``;``-separated statements in order; return their results.

        Execution stops at the first failing statement (earlier ones keep
        their effects).
        """
        return [self.execute_statement(statement) for statement in parse_script(sql)]

    def execute_statement(self, statement):
        """Execute an already parsed statement node."""
        return self._handlers[type(statement)](statement)

    def explain(self, sql):
        """Return the plan of a SELECT, UPDATE or DELETE statement as indented text.

        UPDATE and DELETE plans start with an ``Update <table>`` or ``Delete <table>``
        line above the plan of the rows they touch.

        Raises:
            ExecutionError: for other statement kinds.
        """
        statement = parse(sql)
        if isinstance(statement, n.Select):
            return explain(self.planner.plan_select(statement))
        if isinstance(statement, (n.Update, n.Delete)):
            source = self.planner.plan_table_source(statement.table, statement.where)
            return f"{type(statement).__name__} {statement.table}\n{explain(source, 1)}"
        raise ExecutionError(f"cannot explain {type(statement).__name__.upper()} statements")

    def table_names(self):
        """Return the names of all tables, alphabetically."""
        return self.catalog.table_names()

    # ------------------------------------------------------------ queries

    def _run_subquery(self, select):
        """Plan and run ``select``; return ``(column_names, rows)``."""
        plan = self.planner.plan_select(select)
        return [name for _, name in plan.scope.columns], self.executor.run(plan)

    def _select(self, statement):
        """Execute a SELECT."""
        columns, rows = self._run_subquery(statement)
        return Result(columns, rows, len(rows))

    # ------------------------------------------------------------ DML

    def _insert(self, statement):
        """Execute INSERT ... VALUES or INSERT ... SELECT.

        Omitted columns take their DEFAULT (or NULL).

        Raises:
            CatalogError: for unknown or repeated target columns.
            ExecutionError: when a row has the wrong number of values.
            ConstraintError, SQLTypeError: for values the table rejects.
        """
        table = self.catalog.get_table(statement.table)
        schema = table.schema
        targets = list(statement.columns) or schema.column_names
        if len(set(targets)) != len(targets):
            raise CatalogError("a column is listed more than once in INSERT")
        positions = [schema.position(name) for name in targets]
        if statement.query is not None:
            source_rows = self._run_subquery(statement.query)[1]
        else:
            source_rows = [[evaluate_constant(e, self._run_subquery) for e in row] for row in statement.rows]
        with self.transactions.statement():
            for values in source_rows:
                if len(values) != len(positions):
                    raise ExecutionError(f"INSERT expects {len(positions)} values but got {len(values)}")
                full = [column.default for column in schema.columns]
                for position, value in zip(positions, values):
                    full[position] = value
                rowid = table.insert(schema.validate_row(full))
                self.transactions.record("insert", table, rowid)
        return Result(rowcount=len(source_rows))

    def _update(self, statement):
        """Execute UPDATE: new values are computed from each row's old values.

        Raises:
            CatalogError: for unknown columns.
            ConstraintError, SQLTypeError: for values the table rejects.
        """
        table = self.catalog.get_table(statement.table)
        source = self.planner.plan_table_source(statement.table, statement.where)
        compiler = self.executor.compiler(source.scope)
        assignments = [(table.schema.position(column), compiler.compile(expr))
                       for column, expr in statement.assignments]
        pairs = self.executor.matching_rows(source)
        with self.transactions.statement():
            for rowid, row in pairs:
                new_row = list(row)
                for position, function in assignments:
                    new_row[position] = function(row)
                old_row = table.update(rowid, table.schema.validate_row(new_row))
                self.transactions.record("update", table, rowid, old_row)
        return Result(rowcount=len(pairs))

    def _delete(self, statement):
        """Execute DELETE and report the number of removed rows."""
        table = self.catalog.get_table(statement.table)
        source = self.planner.plan_table_source(statement.table, statement.where)
        pairs = self.executor.matching_rows(source)
        with self.transactions.statement():
            for rowid, _ in pairs:
                row = table.delete(rowid)
                self.transactions.record("delete", table, rowid, row)
        return Result(rowcount=len(pairs))

    # ------------------------------------------------------------ DDL

    def _create_table(self, statement):
        """Execute CREATE TABLE; defaults are evaluated once and coerced to the column type.

        Raises:
            CatalogError: if the table exists (unless IF NOT EXISTS) or the schema is invalid.
            SQLTypeError: for unknown types or defaults that do not fit their column.
        """
        if statement.if_not_exists and self.catalog.has_table(statement.name):
            return Result()
        columns = []
        for definition in statement.columns:
            sqltype = resolve_type(definition.type_name)
            default = None
            if definition.default is not None:
                default = coerce_to_column(evaluate_constant(definition.default), sqltype, definition.length)
            columns.append(Column(definition.name, sqltype, definition.length, definition.not_null,
                                  definition.primary_key, definition.unique, default))
        with self.transactions.statement():
            self.catalog.create_table(TableSchema(statement.name, columns))
            self.transactions.record("create_table", statement.name)
        return Result()

    def _drop_table(self, statement):
        """Execute DROP TABLE [IF EXISTS]."""
        if statement.if_exists and not self.catalog.has_table(statement.name):
            return Result()
        with self.transactions.statement():
            self.transactions.record("drop_table", self.catalog.drop_table(statement.name))
        return Result()

    def _create_index(self, statement):
        """Execute CREATE [UNIQUE] INDEX."""
        with self.transactions.statement():
            self.catalog.create_index(statement.name, statement.table, statement.column,
                                      statement.unique, statement.kind)
            self.transactions.record("create_index", statement.name)
        return Result()

    def _drop_index(self, statement):
        """Execute DROP INDEX."""
        with self.transactions.statement():
            table, index = self.catalog.drop_index(statement.name)
            self.transactions.record("drop_index", table, index)
        return Result()

    # ------------------------------------------------------------ transactions

    def _begin(self, statement):
        """Execute BEGIN."""
        self.transactions.begin()
        return Result()

    def _commit(self, statement):
        """Execute COMMIT."""
        self.transactions.commit()
        return Result()

    def _rollback(self, statement):
        """Execute ROLLBACK."""
        self.transactions.rollback()
        return Result()
