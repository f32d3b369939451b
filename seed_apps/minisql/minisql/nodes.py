"""Abstract syntax tree for minisql statements and expressions.

Every node is an immutable (frozen) dataclass whose list-like fields are tuples,
so nodes compare and hash structurally.  The planner relies on this to match,
for example, ``SUM(price)`` in ``HAVING`` with the same call in the select list.
"""

from dataclasses import dataclass, fields
from typing import Optional

AGGREGATE_FUNCTIONS = frozenset({"count", "sum", "avg", "min", "max"})


class Expr:
    """Marker base class of expression nodes."""


class Statement:
    """Marker base class of statement nodes."""


# ---------------------------------------------------------------- expressions


@dataclass(frozen=True)
class Literal(Expr):
    """A constant: ``int``, ``float``, ``str``, ``bool`` or ``None`` (SQL NULL)."""

    value: object


@dataclass(frozen=True)
class ColumnRef(Expr):
    """A column reference, optionally qualified by a table name or alias."""

    name: str
    table: Optional[str] = None


@dataclass(frozen=True)
class Star(Expr):
    """``*`` or ``alias.*`` in a select list."""

    table: Optional[str] = None


@dataclass(frozen=True)
class UnaryOp(Expr):
    """Prefix operator: ``-``, ``+`` or ``NOT``."""

    op: str
    operand: Expr


@dataclass(frozen=True)
class BinaryOp(Expr):
    """Infix operator: arithmetic, ``||``, comparison, ``AND`` or ``OR``."""

    op: str
    left: Expr
    right: Expr


@dataclass(frozen=True)
class FunctionCall(Expr):
    """A scalar or aggregate function call; ``star`` marks ``COUNT(*)``."""

    name: str
    args: tuple = ()
    distinct: bool = False
    star: bool = False


@dataclass(frozen=True)
class IsNull(Expr):
    """``operand IS [NOT] NULL``."""

    operand: Expr
    negated: bool = False


@dataclass(frozen=True)
class Between(Expr):
    """``operand [NOT] BETWEEN low AND high`` (bounds inclusive)."""

    operand: Expr
    low: Expr
    high: Expr
    negated: bool = False


@dataclass(frozen=True)
class InList(Expr):
    """``operand [NOT] IN (item, ...)``."""

    operand: Expr
    items: tuple
    negated: bool = False


@dataclass(frozen=True)
class InSubquery(Expr):
    """``operand [NOT] IN (SELECT ...)``."""

    operand: Expr
    query: "Select"
    negated: bool = False


@dataclass(frozen=True)
class Exists(Expr):
    """``EXISTS (SELECT ...)``; ``NOT EXISTS`` parses as ``NOT`` applied to this node."""

    query: "Select"


@dataclass(frozen=True)
class ScalarSubquery(Expr):
    """A parenthesised ``SELECT`` used as a single value."""

    query: "Select"


@dataclass(frozen=True)
class Like(Expr):
    """``operand [NOT] LIKE pattern`` with ``%`` and ``_`` wildcards."""

    operand: Expr
    pattern: Expr
    negated: bool = False


@dataclass(frozen=True)
class Case(Expr):
    """``CASE [operand] WHEN .. THEN .. [ELSE ..] END``; ``whens`` holds (cond, result) pairs."""

    operand: Optional[Expr]
    whens: tuple
    default: Optional[Expr] = None


@dataclass(frozen=True)
class Cast(Expr):
    """``CAST(operand AS type_name)``."""

    operand: Expr
    type_name: str


# ---------------------------------------------------------------- queries


@dataclass(frozen=True)
class SelectItem:
    """One entry of a select list with an optional alias."""

    expr: Expr
    alias: Optional[str] = None


@dataclass(frozen=True)
class TableRef:
    """A base table in FROM, with optional alias."""

    name: str
    alias: Optional[str] = None

    @property
    def binding(self):
        """The name under which the table's columns are visible (alias or table name)."""
        return self.alias or self.name


@dataclass(frozen=True)
class SubqueryRef:
    """A derived table ``(SELECT ...) AS alias`` in FROM."""

    query: "Select"
    alias: str

    @property
    def binding(self):
        """The alias that qualifies the derived table's columns."""
        return self.alias


@dataclass(frozen=True)
class Join:
    """A join of two FROM items; ``kind`` is ``INNER``, ``LEFT`` or ``CROSS``."""

    left: object
    right: object
    kind: str
    condition: Optional[Expr] = None


@dataclass(frozen=True)
class OrderItem:
    """ORDER BY key; ``nulls_first`` is None when NULLS FIRST/LAST was not given."""

    expr: Expr
    descending: bool = False
    nulls_first: Optional[bool] = None


@dataclass(frozen=True)
class Select(Statement):
    """A complete SELECT statement."""

    items: tuple
    from_: object = None
    where: Optional[Expr] = None
    group_by: tuple = ()
    having: Optional[Expr] = None
    order_by: tuple = ()
    limit: Optional[Expr] = None
    offset: Optional[Expr] = None
    distinct: bool = False


# ---------------------------------------------------------------- other statements


@dataclass(frozen=True)
class Insert(Statement):
    """INSERT with either literal ``rows`` (tuples of expressions) or a ``query``."""

    table: str
    columns: tuple = ()
    rows: tuple = ()
    query: Optional[Select] = None


@dataclass(frozen=True)
class Update(Statement):
    """UPDATE with (column, expression) ``assignments``."""

    table: str
    assignments: tuple
    where: Optional[Expr] = None


@dataclass(frozen=True)
class Delete(Statement):
    """DELETE FROM table [WHERE ...]."""

    table: str
    where: Optional[Expr] = None


@dataclass(frozen=True)
class ColumnDef:
    """Column definition inside CREATE TABLE."""

    name: str
    type_name: str
    length: Optional[int] = None
    not_null: bool = False
    primary_key: bool = False
    unique: bool = False
    default: Optional[Expr] = None


@dataclass(frozen=True)
class CreateTable(Statement):
    """CREATE TABLE [IF NOT EXISTS] name (columns...)."""

    name: str
    columns: tuple
    if_not_exists: bool = False


@dataclass(frozen=True)
class DropTable(Statement):
    """DROP TABLE [IF EXISTS] name."""

    name: str
    if_exists: bool = False


@dataclass(frozen=True)
class CreateIndex(Statement):
    """CREATE [UNIQUE] INDEX name ON table (column) [USING HASH|BTREE]."""

    name: str
    table: str
    column: str
    unique: bool = False
    kind: str = "btree"


@dataclass(frozen=True)
class DropIndex(Statement):
    """DROP INDEX name."""

    name: str


@dataclass(frozen=True)
class Begin(Statement):
    """BEGIN [TRANSACTION]."""


@dataclass(frozen=True)
class Commit(Statement):
    """COMMIT."""


@dataclass(frozen=True)
class Rollback(Statement):
    """ROLLBACK."""


# ---------------------------------------------------------------- helpers


def children(expr):
    """Return the direct sub-expressions of ``expr`` in field order.

    Subquery bodies are not descended into: a ``Select`` is its own scope.
    """
    result = []
    for f in fields(expr):
        value = getattr(expr, f.name)
        if isinstance(value, Expr):
            result.append(value)
        elif isinstance(value, tuple):
            for item in value:
                if isinstance(item, Expr):
                    result.append(item)
                elif isinstance(item, tuple):
                    result.extend(x for x in item if isinstance(x, Expr))
    return result


def walk(expr):
    """Yield ``expr`` and all of its descendants in depth-first pre-order."""
    stack = [expr]
    while stack:
        node = stack.pop()
        yield node
        stack.extend(reversed(children(node)))


def is_aggregate(expr):
    """Return True if ``expr`` is a call of COUNT, SUM, AVG, MIN or MAX."""
    return isinstance(expr, FunctionCall) and expr.name in AGGREGATE_FUNCTIONS


def find_aggregates(expr):
    """Return the aggregate calls contained in ``expr``, outermost first, without duplicates."""
    found = []
    for node in walk(expr):
        if is_aggregate(node) and node not in found:
            found.append(node)
    return found


def split_conjuncts(expr):
    """Split a predicate on top-level ``AND`` into a flat list of conjuncts.

    ``None`` yields an empty list; ``a AND (b AND c)`` yields ``[a, b, c]``.
    """
    if expr is None:
        return []
    if isinstance(expr, BinaryOp) and expr.op == "AND":
        return split_conjuncts(expr.left) + split_conjuncts(expr.right)
    return [expr]


def join_conjuncts(conjuncts):
    """Combine predicates with ``AND`` (left-deep); an empty list gives ``None``."""
    result = None
    for conjunct in conjuncts:
        result = conjunct if result is None else BinaryOp("AND", result, conjunct)
    return result


def _render_literal(value):
    """Render a Python constant as SQL literal text."""
    if value is None:
        return "NULL"
    if isinstance(value, bool):
        return "TRUE" if value else "FALSE"
    if isinstance(value, str):
        return "'" + value.replace("'", "''") + "'"
    return repr(value)


def render(expr):
    """Render an expression back to SQL text.

    Binary operators are fully parenthesised (``(a + 1)``), keywords are upper
    case and function names upper case, e.g. ``COUNT(DISTINCT x)``.  Subqueries
    render as ``(SELECT ...)``.  Used for default column names and EXPLAIN output.
    """
    if isinstance(expr, Literal):
        return _render_literal(expr.value)
    if isinstance(expr, ColumnRef):
        return f"{expr.table}.{expr.name}" if expr.table else expr.name
    if isinstance(expr, Star):
        return f"{expr.table}.*" if expr.table else "*"
    if isinstance(expr, UnaryOp):
        sep = " " if expr.op == "NOT" else ""
        return f"{expr.op}{sep}{render(expr.operand)}"
    if isinstance(expr, BinaryOp):
        return f"({render(expr.left)} {expr.op} {render(expr.right)})"
    if isinstance(expr, FunctionCall):
        if expr.star:
            inner = "*"
        else:
            inner = ("DISTINCT " if expr.distinct else "") + ", ".join(render(a) for a in expr.args)
        return f"{expr.name.upper()}({inner})"
    not_ = "NOT " if getattr(expr, "negated", False) else ""
    if isinstance(expr, IsNull):
        return f"{render(expr.operand)} IS {not_}NULL"
    if isinstance(expr, Between):
        return f"{render(expr.operand)} {not_}BETWEEN {render(expr.low)} AND {render(expr.high)}"
    if isinstance(expr, InList):
        return f"{render(expr.operand)} {not_}IN ({', '.join(render(i) for i in expr.items)})"
    if isinstance(expr, InSubquery):
        return f"{render(expr.operand)} {not_}IN (SELECT ...)"
    if isinstance(expr, Exists):
        return "EXISTS (SELECT ...)"
    if isinstance(expr, ScalarSubquery):
        return "(SELECT ...)"
    if isinstance(expr, Like):
        return f"{render(expr.operand)} {not_}LIKE {render(expr.pattern)}"
    if isinstance(expr, Case):
        parts = ["CASE"]
        if expr.operand is not None:
            parts.append(render(expr.operand))
        for cond, result in expr.whens:
            parts.append(f"WHEN {render(cond)} THEN {render(result)}")
        if expr.default is not None:
            parts.append(f"ELSE {render(expr.default)}")
        parts.append("END")
        return " ".join(parts)
    if isinstance(expr, Cast):
        return f"CAST({render(expr.operand)} AS {expr.type_name.upper()})"
    raise TypeError(f"cannot render {type(expr).__name__}")
