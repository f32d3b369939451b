"""Query planner: turns a parsed SELECT into a tree of plan nodes.

The planner performs a few classic rewrites:

* **predicate pushdown** - WHERE (and ON) conjuncts that mention a single
  table are applied directly on top of that table's scan, unless the table is
  on the null-supplying side of a LEFT JOIN;
* **index selection** - a pushed ``column = constant`` predicate uses any index
  on the column, and ``<``, ``<=``, ``>``, ``>=`` and ``BETWEEN`` predicates
  use a sorted (btree) index as a range scan;
* **join ordering** - when a FROM clause only has inner/cross joins, the
  cheapest left-deep order under a simple cardinality-based cost model is
  found by dynamic programming over table subsets;
* **join algorithm choice** - joins with an equality between the two sides use
  a hash join, all others a nested-loop join.

Every plan node carries ``scope``: the :class:`~minisql.expressions.Scope` of
the rows it produces.
"""

from itertools import combinations

from . import nodes as n
from .errors import CatalogError, ConstraintError, ExecutionError, SQLTypeError
from .expressions import Scope, evaluate_constant
from .rewrite import is_literal, simplify_predicate
from .sqltypes import SqlType, coerce_to_column

_FLIPPED = {"=": "=", "<": ">", "<=": ">=", ">": "<", ">=": "<="}


class PlanNode:
    """Base class of plan nodes: ``children`` lists inputs, ``label()`` describes the node."""

    children = ()

    def label(self):
        """One-line description used by EXPLAIN."""
        raise NotImplementedError


class SeqScan(PlanNode):
    """Full scan of a base table in row id order."""

    def __init__(self, table, binding):
        """Scan ``table`` exposing its columns under ``binding``."""
        self.table = table
        self.binding = binding
        self.scope = Scope([(binding, name) for name in table.schema.column_names])

    def label(self):
        """``SeqScan <table> [AS <alias>]``."""
        name = self.table.schema.name
        return f"SeqScan {name}" + (f" AS {self.binding}" if self.binding != name else "")


class IndexScan(PlanNode):
    """Index lookup (``equal`` set) or range scan (``low``/``high`` bounds) of a base table."""

    def __init__(self, table, binding, index, equal=None, low=None, high=None,
                 low_inclusive=True, high_inclusive=True):
        """Describe an index access; for equality pass ``equal``, else the range bounds."""
        self.table = table
        self.binding = binding
        self.index = index
        self.equal = equal
        self.low, self.high = low, high
        self.low_inclusive, self.high_inclusive = low_inclusive, high_inclusive
        self.scope = Scope([(binding, name) for name in table.schema.column_names])

    def label(self):
        """``IndexScan <table> USING <index> (<condition>)``."""
        column = self.table.schema.columns[self.index.column].name
        render = n.render
        if self.equal is not None:
            condition = f"{column} = {render(n.Literal(self.equal))}"
        else:
            parts = []
            if self.low is not None:
                parts.append(f"{column} {'>=' if self.low_inclusive else '>'} {render(n.Literal(self.low))}")
            if self.high is not None:
                parts.append(f"{column} {'<=' if self.high_inclusive else '<'} {render(n.Literal(self.high))}")
            condition = " AND ".join(parts)
        name = self.table.schema.name
        alias = f" AS {self.binding}" if self.binding != name else ""
        return f"IndexScan {name}{alias} USING {self.index.name} ({condition})"


class SubqueryScan(PlanNode):
    """Re-exposes a subquery's output columns under an alias."""

    def __init__(self, child, binding):
        """Wrap the plan ``child`` so its columns are qualified by ``binding``."""
        self.children = (child,)
        self.binding = binding
        self.scope = Scope([(binding, name) for _, name in child.scope.columns])

    def label(self):
        """``SubqueryScan AS <alias>``."""
        return f"SubqueryScan AS {self.binding}"


class SingleRow(PlanNode):
    """Produces one empty row: the input of a SELECT without FROM."""

    scope = Scope([])

    def label(self):
        """``SingleRow``."""
        return "SingleRow"


class Filter(PlanNode):
    """Keeps rows for which ``predicate`` is TRUE."""

    def __init__(self, child, predicate):
        """Filter ``child`` by ``predicate`` (an expression over the child's scope)."""
        self.children = (child,)
        self.predicate = predicate
        self.scope = child.scope

    def label(self):
        """``Filter <predicate>``."""
        return f"Filter {n.render(self.predicate)}"


class Join(PlanNode):
    """Join of two inputs.  Hash joins have ``left_keys``/``right_keys`` pairs;
    ``condition`` holds the remaining (residual) predicate, or None."""

    def __init__(self, left, right, kind, condition=None, left_keys=(), right_keys=()):
        """Join ``left`` and ``right``; ``kind`` is ``INNER`` or ``LEFT``."""
        self.children = (left, right)
        self.kind = kind
        self.condition = condition
        self.left_keys = tuple(left_keys)
        self.right_keys = tuple(right_keys)
        self.scope = left.scope.concat(right.scope)

    @property
    def is_hash(self):
        """True when the join has equality keys and runs as a hash join."""
        return bool(self.left_keys)

    def label(self):
        """``HashJoin <kind> ON ...``, ``NestedLoopJoin <kind> ON ...`` or ``NestedLoopJoin CROSS``."""
        conjuncts = [n.BinaryOp("=", lk, rk) for lk, rk in zip(self.left_keys, self.right_keys)]
        conjuncts += n.split_conjuncts(self.condition)
        algorithm = "HashJoin" if self.is_hash else "NestedLoopJoin"
        if not conjuncts:
            return f"{algorithm} {'CROSS' if self.kind == 'INNER' else self.kind}"
        return f"{algorithm} {self.kind} ON {n.render(n.join_conjuncts(conjuncts))}"


class Aggregate(PlanNode):
    """Groups rows by ``group_exprs`` and computes ``aggregates`` per group.

    Output rows hold the group values followed by the aggregate results.
    """

    def __init__(self, child, group_exprs, aggregates, scope):
        """Aggregate ``child``; ``scope`` is the prepared post-aggregation scope."""
        self.children = (child,)
        self.group_exprs = tuple(group_exprs)
        self.aggregates = tuple(aggregates)
        self.scope = scope

    def label(self):
        """``Aggregate [GROUP BY ...]: <aggregates>``."""
        text = "Aggregate"
        if self.group_exprs:
            text += " GROUP BY " + ", ".join(n.render(e) for e in self.group_exprs)
        if self.aggregates:
            text += ": " + ", ".join(n.render(a) for a in self.aggregates)
        return text


class Project(PlanNode):
    """Computes output expressions; output columns are named ``names``."""

    def __init__(self, child, exprs, names):
        """Project ``child`` onto ``exprs`` (expressions over the child scope)."""
        self.children = (child,)
        self.exprs = tuple(exprs)
        self.names = tuple(names)
        self.scope = Scope([(None, name) for name in names])

    def label(self):
        """``Project <name>, ...``."""
        return "Project " + ", ".join(self.names)


class Trim(PlanNode):
    """Keeps only the first ``width`` columns (drops hidden ORDER BY columns)."""

    def __init__(self, child, width):
        """Keep the first ``width`` columns of ``child``'s rows."""
        self.children = (child,)
        self.width = width
        self.scope = Scope(child.scope.columns[:width])

    def label(self):
        """``Project <name>, ...`` listing the kept columns."""
        return "Project " + ", ".join(name for _, name in self.scope.columns)


class Distinct(PlanNode):
    """Removes duplicate rows, keeping first occurrences."""

    def __init__(self, child):
        """Deduplicate the rows of ``child``."""
        self.children = (child,)
        self.scope = child.scope

    def label(self):
        """``Distinct``."""
        return "Distinct"


class Sort(PlanNode):
    """Orders rows by ``keys``: ``(position, descending, nulls_first)`` triples."""

    def __init__(self, child, keys):
        """Sort ``child`` by the given row positions."""
        self.children = (child,)
        self.keys = tuple(keys)
        self.scope = child.scope

    def label(self):
        """``Sort <column> [DESC] [NULLS FIRST|LAST], ...`` (NULLS shown only when non-default)."""
        parts = []
        for position, descending, nulls_first in self.keys:
            text = self.scope.columns[position][1] + (" DESC" if descending else "")
            if nulls_first != (not descending):
                text += " NULLS FIRST" if nulls_first else " NULLS LAST"
            parts.append(text)
        return "Sort " + ", ".join(parts)


class Limit(PlanNode):
    """Skips ``offset`` rows then passes at most ``limit`` rows (None = unlimited)."""

    def __init__(self, child, limit, offset):
        """Limit the output of ``child``."""
        self.children = (child,)
        self.limit = limit
        self.offset = offset
        self.scope = child.scope

    def label(self):
        """``Limit <n> [OFFSET <m>]``."""
        text = "Limit " + ("ALL" if self.limit is None else str(self.limit))
        return text + (f" OFFSET {self.offset}" if self.offset else "")


def explain(node, depth=0):
    """Render a plan tree as text, one node per line, children indented by two spaces."""
    lines = ["  " * depth + node.label()]
    for child in node.children:
        lines.append(explain(child, depth + 1))
    return "\n".join(lines)


def estimate_rows(node):
    """Rough output cardinality used for join ordering.

    SeqScan: table size; unique equality IndexScan: 1; other equality scans:
    size // 10; range scans: size // 3; Filter: half its input; SubqueryScan:
    its input; anything else: 1000.  Never less than 1.
    """
    if isinstance(node, SeqScan):
        estimate = len(node.table)
    elif isinstance(node, IndexScan):
        size = len(node.table)
        if node.equal is not None:
            estimate = 1 if node.index.unique else size // 10
        else:
            estimate = size // 3
    elif isinstance(node, Filter):
        estimate = estimate_rows(node.children[0]) // 2
    elif isinstance(node, SubqueryScan):
        estimate = estimate_rows(node.children[0])
    else:
        estimate = 1000
    return max(estimate, 1)


def constant_value(expr):
    """Return ``(True, value)`` if ``expr`` is a literal (or negated numeric literal), else ``(False, None)``."""
    if isinstance(expr, n.Literal):
        return True, expr.value
    if isinstance(expr, n.UnaryOp) and expr.op == "-" and isinstance(expr.operand, n.Literal):
        value = expr.operand.value
        if isinstance(value, (int, float)) and not isinstance(value, bool):
            return True, -value
    return False, None


def choose_join_order(cardinalities, conjuncts):
    """Choose a left-deep inner join order by dynamic programming over table subsets.

    Args:
        cardinalities: mapping ``binding -> estimated rows``; its iteration
            order (the FROM order) breaks ties.
        conjuncts: ``(expr, bindings)`` join predicates, each mentioning at
            least two bindings.

    Cost model: appending table ``t`` to an already joined set ``S`` yields
    ``rows(S) * rows(t) * selectivity`` rows (at least 1), where every
    conjunct that becomes applicable with ``t`` (mentions ``t``, all its
    tables in ``S + t``) divides the selectivity by ``max(rows(S), rows(t))``
    if it is an equality and by 3 otherwise.  The cost of an order is the sum,
    over all joins, of the join's output rows plus the rows of its right-hand
    (build) input.  For every subset the cheapest order is kept; ties go to
    the order whose FROM positions are lexicographically smallest.

    Returns:
        A tuple of all bindings, in join order.
    """
    names = list(cardinalities)
    position = {binding: i for i, binding in enumerate(names)}
    best = {frozenset([b]): (0.0, float(cardinalities[b]), (b,)) for b in names}
    for size in range(2, len(names) + 1):
        for combo in combinations(names, size):
            subset = frozenset(combo)
            options = []
            for last in combo:
                cost, rows, order = best[subset - {last}]
                right_rows = cardinalities[last]
                selectivity = 1.0
                for expr, bindings in conjuncts:
                    if last in bindings and bindings <= subset:
                        if isinstance(expr, n.BinaryOp) and expr.op == "=":
                            selectivity /= max(rows, right_rows)
                        else:
                            selectivity /= 3
                out = max(1.0, rows * right_rows * selectivity)
                ranks = [position[b] for b in order] + [position[last]]
                options.append((cost + out + right_rows, ranks, out, order + (last,)))
            total, _, out, order = min(options)
            best[subset] = (total, out, order)
    return best[frozenset(names)][2]


def predicate_conjuncts(predicate):
    """Simplify ``predicate`` and split it into conjuncts, dropping constant TRUE ones.

    ``None`` gives an empty list; a predicate that simplifies to FALSE gives
    ``[Literal(False)]``.
    """
    return [c for c in n.split_conjuncts(simplify_predicate(predicate)) if not is_literal(c, True)]


def _leaves(from_):
    """Return the table items of a FROM tree in left-to-right order."""
    if isinstance(from_, n.Join):
        return _leaves(from_.left) + _leaves(from_.right)
    return [from_]


def _all_inner(from_):
    """True if the FROM tree contains no LEFT JOIN."""
    if isinstance(from_, n.Join):
        return from_.kind != "LEFT" and _all_inner(from_.left) and _all_inner(from_.right)
    return True


def _nullable_bindings(from_):
    """Return the bindings on the null-supplying side of any LEFT JOIN in the tree."""
    if not isinstance(from_, n.Join):
        return set()
    result = _nullable_bindings(from_.left) | _nullable_bindings(from_.right)
    if from_.kind == "LEFT":
        result |= {leaf.binding for leaf in _leaves(from_.right)}
    return result


class Planner:
    """Builds plan trees for SELECT statements and DML row sources."""

    def __init__(self, catalog):
        """Plan against the tables of ``catalog``."""
        self.catalog = catalog

    # ----------------------------------------------------------- entry points

    def plan_select(self, select):
        """Return the root plan node for ``select``; the root's scope names the result columns.

        Raises:
            CatalogError: for unknown tables/columns or duplicate table aliases.
            ExecutionError: for misuse of aggregates, bad ORDER BY positions or
                invalid LIMIT/OFFSET values.
        """
        where = predicate_conjuncts(select.where)
        if select.from_ is None:
            plan, scope = SingleRow(), SingleRow.scope
            if where:
                plan = Filter(plan, n.join_conjuncts(where))
        else:
            plan, scope = self._plan_from(select.from_, where)
        items = self._expand_stars(select.items, scope)
        exprs = [item.expr for item in items]
        names = [item.alias or (item.expr.name if isinstance(item.expr, n.ColumnRef) else n.render(item.expr))
                 for item in items]
        keys, hidden = self._order_keys(select, exprs, names)
        if select.group_by or select.having is not None or any(
                n.find_aggregates(e) for e in exprs + hidden):
            plan = self._plan_aggregate(plan, select, exprs + hidden)
        plan = Project(plan, exprs + hidden, names + [n.render(e) for e in hidden])
        if select.distinct:
            plan = Distinct(plan)
        if keys:
            plan = Sort(plan, keys)
        limit = self._limit_value(select.limit, "LIMIT")
        offset = self._limit_value(select.offset, "OFFSET")
        if limit is not None or offset:
            plan = Limit(plan, limit, offset or 0)
        if hidden:
            plan = Trim(plan, len(names))
        return plan

    def plan_table_source(self, table_name, where):
        """Plan the row source of UPDATE/DELETE: a scan of ``table_name`` filtered by ``where``.

        The result is a SeqScan or IndexScan, possibly under a single Filter.
        """
        table = self.catalog.get_table(table_name)
        scan = SeqScan(table, table_name)
        return self._access_path(scan, predicate_conjuncts(where))

    # ----------------------------------------------------------- FROM clause

    def _leaf_plan(self, ref):
        """Initial plan for a FROM item: SeqScan of a table or SubqueryScan of a derived table."""
        if isinstance(ref, n.SubqueryRef):
            return SubqueryScan(self.plan_select(ref.query), ref.alias)
        return SeqScan(self.catalog.get_table(ref.name), ref.binding)

    def _bindings_of(self, expr, scope):
        """Return the set of bindings whose columns ``expr`` references (resolving via ``scope``)."""
        bindings = set()
        for node in n.walk(expr):
            if isinstance(node, n.ColumnRef):
                bindings.add(scope.columns[scope.resolve(node.name, node.table)][0])
        return bindings

    def _plan_from(self, from_, where_conjuncts):
        """Plan a FROM tree plus WHERE conjuncts; returns ``(plan, scope_in_from_order)``.

        Raises:
            CatalogError: if two FROM items share the same binding.
        """
        refs = _leaves(from_)
        leaves = {}
        for ref in refs:
            if ref.binding in leaves:
                raise CatalogError(f"duplicate table name or alias: {ref.binding}")
            leaves[ref.binding] = self._leaf_plan(ref)
        scope = Scope([col for ref in refs for col in leaves[ref.binding].scope.columns])
        conjuncts = list(where_conjuncts)
        if _all_inner(from_):
            for join in self._joins(from_):
                conjuncts.extend(predicate_conjuncts(join.condition))
            nullable = set()
        else:
            nullable = _nullable_bindings(from_)
        pushed = {binding: [] for binding in leaves}
        residual = []
        join_conjuncts = []
        for conjunct in conjuncts:
            bindings = self._bindings_of(conjunct, scope)
            if len(bindings) == 1 and not bindings & nullable:
                pushed[bindings.pop()].append(conjunct)
            elif len(bindings) > 1 and not nullable:
                join_conjuncts.append((conjunct, bindings))
            else:
                residual.append(conjunct)
        for binding, plan in leaves.items():
            leaves[binding] = self._access_path(plan, pushed[binding])
        if not nullable:
            plan = self._order_joins([(ref.binding, leaves[ref.binding]) for ref in refs], join_conjuncts)
        else:
            plan = self._build_join_tree(from_, leaves, scope)
        if residual:
            plan = Filter(plan, n.join_conjuncts(residual))
        return plan, scope

    def _joins(self, from_):
        """Return all Join nodes of a FROM tree (pre-order)."""
        if not isinstance(from_, n.Join):
            return []
        return [from_] + self._joins(from_.left) + self._joins(from_.right)

    def _build_join_tree(self, from_, leaves, scope):
        """Plan a FROM tree containing LEFT JOINs in its written order.

        The parser builds left-deep trees, so the right input of every join is
        a single FROM item.  ON conjuncts of a LEFT JOIN that only mention the
        right-hand table are pushed into that table's access path.
        """
        if not isinstance(from_, n.Join):
            return leaves[from_.binding]
        left = self._build_join_tree(from_.left, leaves, scope)
        binding = from_.right.binding
        right, conjuncts = leaves[binding], predicate_conjuncts(from_.condition)
        if from_.kind == "LEFT":
            own = [c for c in conjuncts if self._bindings_of(c, scope) == {binding}]
            conjuncts = [c for c in conjuncts if c not in own]
            right = self._access_path(right, own)
        kind = "LEFT" if from_.kind == "LEFT" else "INNER"
        return self._make_join(left, right, kind, conjuncts, set(left.scope.bindings()), {binding})

    def _order_joins(self, items, join_conjuncts):
        """Build a left-deep inner join tree in the order chosen by :func:`choose_join_order`.

        ``items`` are ``(binding, plan)`` pairs in FROM order and
        ``join_conjuncts`` are ``(expr, bindings)`` pairs.  Each conjunct is
        applied at the first join where all of its tables are available.
        """
        plans = dict(items)
        order = choose_join_order({binding: estimate_rows(plan) for binding, plan in items}, join_conjuncts)
        current, joined = plans[order[0]], {order[0]}
        pending = list(join_conjuncts)
        for binding in order[1:]:
            available = joined | {binding}
            applicable = [c for c, b in pending if b <= available]
            pending = [(c, b) for c, b in pending if not b <= available]
            current = self._make_join(current, plans[binding], "INNER", applicable, joined, {binding})
            joined = available
        return current

    def _make_join(self, left, right, kind, conjuncts, left_bindings, right_bindings):
        """Create a Join node, extracting ``left_expr = right_expr`` equalities as hash keys.

        An equality conjunct whose two sides reference only left and only right
        bindings respectively (in either order) becomes a key pair; every other
        conjunct forms the residual condition.
        """
        left_keys, right_keys, residual = [], [], []
        for conjunct in conjuncts:
            if isinstance(conjunct, n.BinaryOp) and conjunct.op == "=":
                sides = [self._bindings_of(side, left.scope.concat(right.scope))
                         for side in (conjunct.left, conjunct.right)]
                if sides[0] and sides[1]:
                    if sides[0] <= left_bindings and sides[1] <= right_bindings:
                        left_keys.append(conjunct.left)
                        right_keys.append(conjunct.right)
                        continue
                    if sides[1] <= left_bindings and sides[0] <= right_bindings:
                        left_keys.append(conjunct.right)
                        right_keys.append(conjunct.left)
                        continue
            residual.append(conjunct)
        return Join(left, right, kind, n.join_conjuncts(residual), left_keys, right_keys)

    # ----------------------------------------------------------- index selection

    def _index_bound(self, conjunct, scan):
        """Classify ``conjunct`` as an indexable bound on ``scan``'s table.

        Returns a list of ``(position, op, value)`` triples (two for BETWEEN)
        with the value coerced to the column type, or ``[]`` when the conjunct
        is not of the form ``column op constant`` / ``constant op column`` /
        ``column BETWEEN constant AND constant``, or the constant is NULL, does
        not fit the column type, or is a boolean for a non-BOOLEAN column (or
        vice versa), so that index and sequential scans behave identically.
        """
        schema = scan.table.schema
        if isinstance(conjunct, n.Between) and not conjunct.negated:
            triples = [(conjunct.operand, ">=", conjunct.low), (conjunct.operand, "<=", conjunct.high)]
        elif isinstance(conjunct, n.BinaryOp) and conjunct.op in _FLIPPED:
            if isinstance(conjunct.left, n.ColumnRef):
                triples = [(conjunct.left, conjunct.op, conjunct.right)]
            else:
                triples = [(conjunct.right, _FLIPPED[conjunct.op], conjunct.left)]
        else:
            return []
        bounds = []
        for column, op, other in triples:
            is_const, value = constant_value(other)
            if not isinstance(column, n.ColumnRef) or not is_const or value is None:
                return []
            position = scan.scope.resolve(column.name, column.table)
            column_def = schema.columns[position]
            if (column_def.type is SqlType.BOOLEAN) != isinstance(value, bool):
                return []
            try:
                value = coerce_to_column(value, column_def.type, column_def.length)
            except (SQLTypeError, ConstraintError):
                return []
            bounds.append((position, op, value))
        return bounds

    def _access_path(self, plan, conjuncts):
        """Choose how to read a leaf and apply its pushed ``conjuncts``.

        For a SeqScan, an equality on an indexed column becomes an IndexScan
        lookup (first such conjunct wins); otherwise the range conjuncts on the
        first column that has a btree index are merged into one IndexScan range
        (tightest bounds win).  Conjuncts not consumed by the index are kept in
        a Filter above the scan.
        """
        if not isinstance(plan, SeqScan):
            return Filter(plan, n.join_conjuncts(conjuncts)) if conjuncts else plan
        table = plan.table
        classified = [(c, self._index_bound(c, plan)) for c in conjuncts]
        for conjunct, bounds in classified:
            if len(bounds) == 1 and bounds[0][1] == "=":
                index = table.find_index(bounds[0][0])
                if index is not None:
                    scan = IndexScan(table, plan.binding, index, equal=bounds[0][2])
                    return self._with_filter(scan, [c for c in conjuncts if c is not conjunct])
        for conjunct, bounds in classified:
            if not bounds or bounds[0][1] == "=":
                continue
            index = table.find_index(bounds[0][0], kinds=("btree",))
            if index is None:
                continue
            used = [c for c, b in classified
                    if b and b[0][0] == index.column and all(op != "=" for _, op, _ in b)]
            scan = IndexScan(table, plan.binding, index)
            for c, b in classified:
                if c in used:
                    for _, op, value in b:
                        self._tighten(scan, op, value)
            return self._with_filter(scan, [c for c in conjuncts if c not in used])
        return self._with_filter(plan, conjuncts)

    @staticmethod
    def _tighten(scan, op, value):
        """Narrow ``scan``'s range with the bound ``column op value``."""
        if op in (">", ">="):
            inclusive = op == ">="
            if scan.low is None or value > scan.low or (value == scan.low and not inclusive):
                scan.low, scan.low_inclusive = value, inclusive
        else:
            inclusive = op == "<="
            if scan.high is None or value < scan.high or (value == scan.high and not inclusive):
                scan.high, scan.high_inclusive = value, inclusive

    @staticmethod
    def _with_filter(plan, conjuncts):
        """Wrap ``plan`` in a Filter for ``conjuncts`` if there are any."""
        return Filter(plan, n.join_conjuncts(conjuncts)) if conjuncts else plan

    # ----------------------------------------------------------- select list, grouping, ordering

    @staticmethod
    def _expand_stars(items, scope):
        """Replace ``*`` and ``alias.*`` items by qualified column references."""
        expanded = []
        for item in items:
            if isinstance(item.expr, n.Star):
                if item.expr.table is None:
                    positions = range(len(scope.columns))
                else:
                    positions = scope.positions_for(item.expr.table)
                for position in positions:
                    binding, name = scope.columns[position]
                    expanded.append(n.SelectItem(n.ColumnRef(name, binding)))
            else:
                expanded.append(item)
        return expanded

    def _plan_aggregate(self, plan, select, output_exprs):
        """Add an Aggregate node (and a HAVING Filter) on top of ``plan``.

        The post-aggregation scope exposes each GROUP BY expression (column
        references keep their binding so both ``a`` and ``t.a`` resolve) and
        each aggregate call as slots.

        Raises:
            ExecutionError: for nested aggregates, aggregates in GROUP BY, bad
                aggregate arguments, or columns that are neither grouped nor
                aggregated.
        """
        input_scope = plan.scope
        aggregates = []
        for expr in output_exprs + ([select.having] if select.having is not None else []):
            for call in n.find_aggregates(expr):
                if call not in aggregates:
                    aggregates.append(call)
        for call in aggregates:
            if any(n.find_aggregates(arg) for arg in call.args):
                raise ExecutionError("aggregate calls cannot be nested")
            if call.star != (not call.args) or (call.star and call.name != "count") or len(call.args) > 1:
                raise ExecutionError(f"wrong arguments for aggregate {call.name.upper()}")
        columns, slots = [], {}
        for position, expr in enumerate(select.group_by):
            if n.find_aggregates(expr):
                raise ExecutionError("aggregate functions are not allowed in GROUP BY")
            if isinstance(expr, n.ColumnRef):
                columns.append(input_scope.columns[input_scope.resolve(expr.name, expr.table)])
            else:
                columns.append((None, n.render(expr)))
            slots[expr] = position
        for offset, call in enumerate(aggregates):
            columns.append((None, n.render(call)))
            slots[call] = len(select.group_by) + offset
        scope = Scope(columns, slots)
        for expr in output_exprs + ([select.having] if select.having is not None else []):
            self._check_grouped(expr, scope, input_scope)
        plan = Aggregate(plan, select.group_by, aggregates, scope)
        having = predicate_conjuncts(select.having)
        if having:
            plan = Filter(plan, n.join_conjuncts(having))
        return plan

    def _check_grouped(self, expr, scope, input_scope):
        """Ensure every column used outside an aggregate is available after grouping.

        Raises:
            ExecutionError: if a column of the input is neither grouped nor aggregated.
            CatalogError: if the column does not exist at all.
        """
        if expr in scope.slots:
            return
        if isinstance(expr, n.ColumnRef):
            try:
                scope.resolve(expr.name, expr.table)
            except CatalogError:
                input_scope.resolve(expr.name, expr.table)
                raise ExecutionError(
                    f"column {n.render(expr)} must appear in GROUP BY or be used in an aggregate") from None
            return
        for child in n.children(expr):
            self._check_grouped(child, scope, input_scope)

    def _order_keys(self, select, exprs, names):
        """Resolve ORDER BY items to output positions.

        An integer literal ``k`` means output column ``k`` (1-based); an
        unqualified name equal to exactly one output name refers to that
        column; an expression equal to a select expression reuses it; anything
        else is computed as an extra hidden column.

        Returns:
            ``(keys, hidden_exprs)`` where keys are ``(position, descending, nulls_first)``.

        Raises:
            ExecutionError: for an out-of-range position, or a hidden sort
                column combined with DISTINCT.
        """
        keys, hidden = [], []
        for item in select.order_by:
            expr = item.expr
            if isinstance(expr, n.Literal) and isinstance(expr.value, int) and not isinstance(expr.value, bool):
                if not 1 <= expr.value <= len(exprs):
                    raise ExecutionError(f"ORDER BY position {expr.value} is out of range")
                position = expr.value - 1
            elif isinstance(expr, n.ColumnRef) and expr.table is None and names.count(expr.name) == 1:
                position = names.index(expr.name)
            elif expr in exprs:
                position = exprs.index(expr)
            else:
                if select.distinct:
                    raise ExecutionError("ORDER BY expressions must appear in the select list with DISTINCT")
                position = len(exprs) + len(hidden)
                hidden.append(expr)
            nulls_first = (not item.descending) if item.nulls_first is None else item.nulls_first
            keys.append((position, item.descending, nulls_first))
        return keys, hidden

    def _limit_value(self, expr, what):
        """Evaluate a LIMIT/OFFSET expression to a non-negative integer (None if absent).

        Raises:
            ExecutionError: if the value is not a non-negative integer.
        """
        if expr is None:
            return None
        value = evaluate_constant(expr)
        if not isinstance(value, int) or isinstance(value, bool) or value < 0:
            raise ExecutionError(f"{what} must be a non-negative integer")
        return value
