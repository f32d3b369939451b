"""Iterator-model (volcano) execution of plan trees.

:class:`Executor` turns each :mod:`minisql.planner` node into an operator
object whose ``__iter__`` yields row tuples, pulling rows from its inputs on
demand.  Expressions are compiled against the scope of the operator's input.
"""

from collections import defaultdict
from functools import cmp_to_key
from itertools import islice

from . import planner as p
from .errors import ExecutionError, SQLTypeError
from .expressions import ExprCompiler
from .sqltypes import compare, is_number, sort_compare

# ------------------------------------------------------------------ aggregates


class Accumulator:
    """Base aggregate state: ignores NULL inputs and, if ``distinct``, repeated values."""

    def __init__(self, distinct=False):
        """Start an empty aggregation."""
        self.distinct = distinct
        self._seen = set()

    def add(self, value):
        """Feed one input value (NULLs and, for DISTINCT, duplicates are skipped)."""
        if value is None:
            return
        if self.distinct:
            if value in self._seen:
                return
            self._seen.add(value)
        self._accept(value)

    def _accept(self, value):
        """Incorporate a non-NULL value into the state."""
        raise NotImplementedError

    def result(self):
        """Return the aggregate value for the values fed so far."""
        raise NotImplementedError


class CountAccumulator(Accumulator):
    """COUNT(expr): number of non-NULL (optionally distinct) values."""

    def __init__(self, distinct=False):
        """Start counting at zero."""
        super().__init__(distinct)
        self.count = 0

    def _accept(self, value):
        """Count one value."""
        self.count += 1

    def result(self):
        """The count (0 for no input)."""
        return self.count


class CountStarAccumulator(CountAccumulator):
    """COUNT(*): number of rows, NULLs included."""

    def add(self, value):
        """Count every row regardless of its value."""
        self.count += 1


class SumAccumulator(Accumulator):
    """SUM(expr): NULL for no input; integer when all inputs are integers.

    Raises SQLTypeError for non-numeric input.
    """

    def __init__(self, distinct=False):
        """Start with no total."""
        super().__init__(distinct)
        self.total = None

    def _accept(self, value):
        """Add a number to the running total."""
        if not is_number(value):
            raise SQLTypeError(f"cannot aggregate non-numeric value {value!r}")
        self.total = value if self.total is None else self.total + value

    def result(self):
        """The total or NULL."""
        return self.total


class AvgAccumulator(SumAccumulator):
    """AVG(expr): float mean of the non-NULL inputs, NULL for no input."""

    def __init__(self, distinct=False):
        """Start with no values."""
        super().__init__(distinct)
        self.count = 0

    def _accept(self, value):
        """Add a number and count it."""
        super()._accept(value)
        self.count += 1

    def result(self):
        """The mean as a float, or NULL."""
        return None if self.count == 0 else self.total / self.count


class ExtremeAccumulator(Accumulator):
    """MIN/MAX using SQL comparison; ``sign`` is -1 for MIN and 1 for MAX."""

    def __init__(self, sign, distinct=False):
        """Start with no best value."""
        super().__init__(distinct)
        self.sign = sign
        self.best = None

    def _accept(self, value):
        """Keep ``value`` if it beats the current best."""
        if self.best is None or compare(value, self.best) == self.sign:
            self.best = value

    def result(self):
        """The minimum/maximum, or NULL for no input."""
        return self.best


def make_accumulator(call):
    """Return a fresh accumulator for aggregate ``call`` (a FunctionCall node).

    Raises:
        ExecutionError: for a function that is not an aggregate.
    """
    if call.name == "count":
        return CountStarAccumulator() if call.star else CountAccumulator(call.distinct)
    if call.name == "sum":
        return SumAccumulator(call.distinct)
    if call.name == "avg":
        return AvgAccumulator(call.distinct)
    if call.name in ("min", "max"):
        return ExtremeAccumulator(-1 if call.name == "min" else 1, call.distinct)
    raise ExecutionError(f"{call.name} is not an aggregate function")


# ------------------------------------------------------------------ operators


class SeqScanOp:
    """Yields all rows of a table in row id order."""

    def __init__(self, table):
        """Scan ``table``."""
        self.table = table

    def pairs(self):
        """Return ``(rowid, row)`` pairs."""
        return list(self.table.scan())

    def __iter__(self):
        """Yield row tuples."""
        for _, row in self.pairs():
            yield row


class IndexScanOp(SeqScanOp):
    """Yields the rows selected by an index lookup or range scan, in index order."""

    def __init__(self, node):
        """Execute the access described by IndexScan plan ``node``."""
        super().__init__(node.table)
        self.node = node

    def pairs(self):
        """Return ``(rowid, row)`` pairs found through the index."""
        node = self.node
        if node.equal is not None:
            rowids = node.index.lookup(node.equal)
        else:
            rowids = node.index.range_scan(node.low, node.high, node.low_inclusive, node.high_inclusive)
        return self.table.fetch(rowids)


class SingleRowOp:
    """Yields exactly one empty row."""

    def __iter__(self):
        """Yield ``()`` once."""
        yield ()


class FilterOp:
    """Passes through rows for which the compiled predicate returns TRUE."""

    def __init__(self, child, predicate):
        """Filter ``child`` rows with ``predicate(row) -> True/False/None``."""
        self.child = child
        self.predicate = predicate

    def __iter__(self):
        """Yield qualifying rows."""
        predicate = self.predicate
        for row in self.child:
            if predicate(row) is True:
                yield row


class ProjectOp:
    """Maps each input row to a tuple of computed values."""

    def __init__(self, child, functions):
        """Apply ``functions`` (one per output column) to each row of ``child``."""
        self.child = child
        self.functions = functions

    def __iter__(self):
        """Yield projected rows."""
        functions = self.functions
        for row in self.child:
            yield tuple(fn(row) for fn in functions)


class TrimOp:
    """Cuts rows down to their first ``width`` values."""

    def __init__(self, child, width):
        """Trim rows of ``child``."""
        self.child = child
        self.width = width

    def __iter__(self):
        """Yield trimmed rows."""
        for row in self.child:
            yield row[:self.width]


class NestedLoopJoinOp:
    """Joins every left row with every (materialised) right row satisfying the condition.

    For LEFT joins, a left row without any match is emitted once padded with NULLs.
    """

    def __init__(self, left, right, kind, condition, right_width):
        """``condition`` is a compiled predicate over concatenated rows or None."""
        self.left, self.right = left, right
        self.kind = kind
        self.condition = condition
        self.right_width = right_width

    def __iter__(self):
        """Yield joined rows in left order, then right order."""
        right_rows = list(self.right)
        padding = (None,) * self.right_width
        for left_row in self.left:
            matched = False
            for right_row in right_rows:
                row = left_row + right_row
                if self.condition is None or self.condition(row) is True:
                    matched = True
                    yield row
            if not matched and self.kind == "LEFT":
                yield left_row + padding


class HashJoinOp:
    """Equi-join: builds a hash table over the right input and probes it with left rows.

    Rows whose key contains NULL never match.  A residual condition, if any, is
    checked on each candidate pair.  LEFT joins pad unmatched left rows with NULLs.
    Output order: left rows in input order, matches in right input order.
    """

    def __init__(self, left, right, kind, left_keys, right_keys, residual, right_width):
        """Key lists are compiled functions over the left and right rows respectively."""
        self.left, self.right = left, right
        self.kind = kind
        self.left_keys, self.right_keys = left_keys, right_keys
        self.residual = residual
        self.right_width = right_width

    @staticmethod
    def _key(functions, row):
        """Compute the join key of ``row``; None if any component is NULL."""
        key = tuple(fn(row) for fn in functions)
        return None if None in key else key

    def __iter__(self):
        """Build, then probe, yielding joined rows."""
        table = defaultdict(list)
        for right_row in self.right:
            key = self._key(self.right_keys, right_row)
            if key is not None:
                table[key].append(right_row)
        padding = (None,) * self.right_width
        for left_row in self.left:
            key = self._key(self.left_keys, left_row)
            matched = False
            for right_row in (table.get(key, ()) if key is not None else ()):
                row = left_row + right_row
                if self.residual is None or self.residual(row) is True:
                    matched = True
                    yield row
            if not matched and self.kind == "LEFT":
                yield left_row + padding


class AggregateOp:
    """Hash aggregation: one output row per distinct group key, in first-seen order.

    Without GROUP BY expressions exactly one row is produced, even for empty input.
    """

    def __init__(self, child, group_functions, calls, argument_functions):
        """``calls`` are aggregate FunctionCall nodes, ``argument_functions`` their compiled
        argument (None for COUNT(*))."""
        self.child = child
        self.group_functions = group_functions
        self.calls = calls
        self.argument_functions = argument_functions

    def __iter__(self):
        """Consume the input and yield group values followed by aggregate results."""
        groups = {}
        for row in self.child:
            key = tuple(fn(row) for fn in self.group_functions)
            accumulators = groups.get(key)
            if accumulators is None:
                accumulators = groups[key] = [make_accumulator(call) for call in self.calls]
            for accumulator, argument in zip(accumulators, self.argument_functions):
                accumulator.add(argument(row) if argument is not None else row)
        if not groups and not self.group_functions:
            groups[()] = [make_accumulator(call) for call in self.calls]
        for key, accumulators in groups.items():
            yield key + tuple(acc.result() for acc in accumulators)


class DistinctOp:
    """Drops rows equal to an earlier row."""

    def __init__(self, child):
        """Deduplicate ``child``."""
        self.child = child

    def __iter__(self):
        """Yield first occurrences only."""
        seen = set()
        for row in self.child:
            if row not in seen:
                seen.add(row)
                yield row


class SortOp:
    """Stable sort on ``(position, descending, nulls_first)`` keys."""

    def __init__(self, child, keys):
        """Sort ``child`` by ``keys``."""
        self.child = child
        self.keys = keys

    def _compare(self, left, right):
        """Compare two rows key by key; ``nulls_first`` is absolute, not flipped by DESC."""
        for position, descending, nulls_first in self.keys:
            a, b = left[position], right[position]
            if a is None or b is None:
                result = sort_compare(a, b, nulls_first)
            else:
                result = compare(a, b)
                if descending:
                    result = -result
            if result:
                return result
        return 0

    def __iter__(self):
        """Materialise, sort and yield the rows."""
        yield from sorted(self.child, key=cmp_to_key(self._compare))


class LimitOp:
    """Skips ``offset`` rows then yields at most ``limit`` rows (None = no limit)."""

    def __init__(self, child, limit, offset):
        """Limit ``child``."""
        self.child = child
        self.limit = limit
        self.offset = offset

    def __iter__(self):
        """Yield the selected slice lazily."""
        stop = None if self.limit is None else self.offset + self.limit
        yield from islice(self.child, self.offset, stop)


# ------------------------------------------------------------------ executor


class Executor:
    """Builds operator trees from plans and runs them."""

    def __init__(self, subquery_runner=None):
        """``subquery_runner(select) -> (columns, rows)`` evaluates subqueries in expressions."""
        self.subquery_runner = subquery_runner
        self._builders = {
            p.SeqScan: lambda node: SeqScanOp(node.table),
            p.IndexScan: IndexScanOp,
            p.SingleRow: lambda node: SingleRowOp(),
            p.SubqueryScan: lambda node: self.build(node.children[0]),
            p.Filter: self._build_filter,
            p.Project: self._build_project,
            p.Trim: lambda node: TrimOp(self.build(node.children[0]), node.width),
            p.Join: self._build_join,
            p.Aggregate: self._build_aggregate,
            p.Distinct: lambda node: DistinctOp(self.build(node.children[0])),
            p.Sort: lambda node: SortOp(self.build(node.children[0]), node.keys),
            p.Limit: lambda node: LimitOp(self.build(node.children[0]), node.limit, node.offset),
        }

    def compiler(self, scope):
        """Return an :class:`ExprCompiler` for ``scope`` using this executor's subquery runner."""
        return ExprCompiler(scope, self.subquery_runner)

    def build(self, node):
        """Return the operator tree for plan ``node``."""
        return self._builders[type(node)](node)

    def run(self, node):
        """Execute plan ``node`` and return all rows as a list of tuples."""
        return list(self.build(node))

    def _build_filter(self, node):
        """FilterOp with the predicate compiled against the child scope."""
        child = node.children[0]
        return FilterOp(self.build(child), self.compiler(child.scope).compile_condition(node.predicate))

    def _build_project(self, node):
        """ProjectOp with one compiled function per output expression."""
        child = node.children[0]
        compiler = self.compiler(child.scope)
        return ProjectOp(self.build(child), [compiler.compile(e) for e in node.exprs])

    def _build_join(self, node):
        """HashJoinOp when the plan has keys, otherwise NestedLoopJoinOp."""
        left, right = node.children
        condition = None
        if node.condition is not None:
            condition = self.compiler(node.scope).compile_condition(node.condition)
        right_width = len(right.scope)
        if node.is_hash:
            left_compiler, right_compiler = self.compiler(left.scope), self.compiler(right.scope)
            return HashJoinOp(self.build(left), self.build(right), node.kind,
                              [left_compiler.compile(k) for k in node.left_keys],
                              [right_compiler.compile(k) for k in node.right_keys],
                              condition, right_width)
        return NestedLoopJoinOp(self.build(left), self.build(right), node.kind, condition, right_width)

    def _build_aggregate(self, node):
        """AggregateOp with compiled group expressions and aggregate arguments."""
        child = node.children[0]
        compiler = self.compiler(child.scope)
        group_functions = [compiler.compile(e) for e in node.group_exprs]
        arguments = [None if call.star else compiler.compile(call.args[0]) for call in node.aggregates]
        return AggregateOp(self.build(child), group_functions, node.aggregates, arguments)

    def matching_rows(self, plan):
        """Return the ``(rowid, row)`` pairs produced by a DML source plan.

        ``plan`` must be a SeqScan or IndexScan, optionally under one Filter
        (as built by :meth:`Planner.plan_table_source`).  The result is fully
        materialised before any modification happens.
        """
        predicate = None
        if isinstance(plan, p.Filter):
            predicate = self.compiler(plan.scope).compile_condition(plan.predicate)
            plan = plan.children[0]
        pairs = self.build(plan).pairs()
        if predicate is None:
            return pairs
        return [(rowid, row) for rowid, row in pairs if predicate(row) is True]
