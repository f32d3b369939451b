"""Tests for volcano operators and aggregate accumulators."""

import pytest

from minisql.errors import ExecutionError, SQLTypeError
from minisql.executor import (AggregateOp, AvgAccumulator, CountAccumulator, CountStarAccumulator,
                              DistinctOp, ExtremeAccumulator, FilterOp, HashJoinOp, LimitOp,
                              NestedLoopJoinOp, ProjectOp, SortOp, SumAccumulator, TrimOp,
                              make_accumulator)
from minisql.parser import parse_expression


def feed(accumulator, values):
    for value in values:
        accumulator.add(value)
    return accumulator.result()


def test_count_ignores_nulls_and_count_star_does_not():
    assert feed(CountAccumulator(), [1, None, 2, 2]) == 3
    assert feed(CountAccumulator(distinct=True), [1, None, 2, 2]) == 2
    assert feed(CountStarAccumulator(), [None, None]) == 2


def test_sum_keeps_integers_and_returns_null_for_no_input():
    assert feed(SumAccumulator(), [1, 2, None, 3]) == 6
    assert feed(SumAccumulator(), [1, 2.5]) == 3.5
    assert feed(SumAccumulator(), [None]) is None
    assert feed(SumAccumulator(distinct=True), [2, 2, 3]) == 5


def test_sum_rejects_text():
    with pytest.raises(SQLTypeError, match="cannot aggregate non-numeric value 'x'"):
        feed(SumAccumulator(), [1, "x"])


def test_avg_is_float_mean_of_non_null_values():
    assert feed(AvgAccumulator(), [1, 2, None]) == 1.5
    assert feed(AvgAccumulator(), []) is None
    assert feed(AvgAccumulator(distinct=True), [4, 4, 1]) == 2.5


def test_min_and_max_use_sql_ordering():
    assert feed(ExtremeAccumulator(-1), [3, None, 1, 2]) == 1
    assert feed(ExtremeAccumulator(1), ["pear", "apple", "zoo"]) == "zoo"
    assert feed(ExtremeAccumulator(1), []) is None


def test_make_accumulator_dispatch():
    call = parse_expression
    assert isinstance(make_accumulator(call("COUNT(*)")), CountStarAccumulator)
    assert make_accumulator(call("COUNT(DISTINCT a)")).distinct is True
    assert isinstance(make_accumulator(call("AVG(a)")), AvgAccumulator)
    assert isinstance(make_accumulator(call("SUM(a)")), SumAccumulator)
    assert make_accumulator(call("MIN(a)")).sign == -1
    assert make_accumulator(call("MAX(a)")).sign == 1
    with pytest.raises(ExecutionError, match="upper is not an aggregate function"):
        make_accumulator(call("UPPER(a)"))


def test_filter_keeps_only_true_rows():
    op = FilterOp([(1,), (2,), (3,)], lambda row: None if row[0] == 2 else row[0] > 1)
    assert list(op) == [(3,)]


def test_project_and_trim():
    assert list(ProjectOp([(1, 2)], [lambda r: r[1], lambda r: r[0] * 10])) == [(2, 10)]
    assert list(TrimOp([(1, 2, 3)], 2)) == [(1, 2)]


def test_nested_loop_left_join_pads_unmatched_rows():
    left = [(1,), (2,), (3,)]
    right = [(1, "a"), (1, "b"), (3, "c")]
    op = NestedLoopJoinOp(left, right, "LEFT", lambda row: row[0] == row[1], 2)
    assert list(op) == [(1, 1, "a"), (1, 1, "b"), (2, None, None), (3, 3, "c")]


def test_nested_loop_cross_join_without_condition():
    op = NestedLoopJoinOp([(1,), (2,)], [("x",), ("y",)], "INNER", None, 1)
    assert list(op) == [(1, "x"), (1, "y"), (2, "x"), (2, "y")]


def test_nested_loop_inner_join_drops_unknown_conditions():
    op = NestedLoopJoinOp([(None,), (1,)], [(1,)], "INNER", lambda row: None if row[0] is None else True, 1)
    assert list(op) == [(1, 1)]


def test_hash_join_matches_keys_and_never_matches_null_keys():
    left = [(1, "l1"), (None, "l2"), (2, "l3")]
    right = [(2, "r1"), (None, "r2"), (1, "r3"), (2, "r4")]
    op = HashJoinOp(left, right, "INNER", [lambda r: r[0]], [lambda r: r[0]], None, 2)
    assert list(op) == [(1, "l1", 1, "r3"), (2, "l3", 2, "r1"), (2, "l3", 2, "r4")]


def test_hash_left_join_with_residual_pads_rows_failing_residual():
    left = [(1, 5), (2, 0), (None, 1)]
    right = [(1, 3), (2, 9)]
    op = HashJoinOp(left, right, "LEFT", [lambda r: r[0]], [lambda r: r[0]], lambda row: row[1] > row[3], 2)
    assert list(op) == [(1, 5, 1, 3), (2, 0, None, None), (None, 1, None, None)]


def test_aggregate_groups_in_first_seen_order():
    rows = [("b", 1), ("a", 2), ("b", 3), ("a", None)]
    calls = [parse_expression("COUNT(*)"), parse_expression("SUM(x)")]
    op = AggregateOp(rows, [lambda r: r[0]], calls, [None, lambda r: r[1]])
    assert list(op) == [("b", 2, 4), ("a", 2, 2)]


def test_aggregate_without_groups_yields_one_row_even_for_empty_input():
    calls = [parse_expression("COUNT(*)"), parse_expression("MAX(x)")]
    assert list(AggregateOp([], [], calls, [None, lambda r: r[0]])) == [(0, None)]


def test_aggregate_with_groups_yields_nothing_for_empty_input():
    assert list(AggregateOp([], [lambda r: r[0]], [parse_expression("COUNT(*)")], [None])) == []


def test_distinct_keeps_first_occurrences():
    assert list(DistinctOp([(1,), (2,), (1,), (None,), (None,)])) == [(1,), (2,), (None,)]


def test_sort_multiple_keys_with_explicit_null_placement():
    rows = [(1, "b"), (None, "a"), (2, "a"), (1, "a"), (None, "c")]
    op = SortOp(rows, [(0, True, False), (1, False, True)])
    assert list(op) == [(2, "a"), (1, "a"), (1, "b"), (None, "a"), (None, "c")]


def test_sort_is_stable_and_nulls_first_ascending():
    rows = [(2, "x"), (None, "y"), (2, "z"), (1, "w")]
    assert list(SortOp(rows, [(0, False, True)])) == [(None, "y"), (1, "w"), (2, "x"), (2, "z")]


def test_limit_and_offset():
    assert list(LimitOp(iter([(i,) for i in range(10)]), 3, 2)) == [(2,), (3,), (4,)]
    assert list(LimitOp([(1,), (2,)], None, 1)) == [(2,)]
    assert list(LimitOp([(1,), (2,)], 0, 0)) == []


def test_limit_stops_pulling_from_child():
    pulled = []

    def source():
        for i in range(100):
            pulled.append(i)
            yield (i,)
    assert list(LimitOp(source(), 2, 0)) == [(0,), (1,)]
    assert len(pulled) == 2


def test_matching_rows_uses_index_and_filter(shop):
    shop.execute("CREATE INDEX users_age ON users (age)")
    source = shop.planner.plan_table_source("users", parse_expression("age >= 25 AND city = 'rome'"))
    assert shop.executor.matching_rows(source) == [(2, (2, "bob", 25, "rome")), (5, (5, "eve", 25, "rome"))]


def test_matching_rows_without_filter_returns_all_pairs(shop):
    source = shop.planner.plan_table_source("orders", None)
    assert [rowid for rowid, _ in shop.executor.matching_rows(source)] == [1, 2, 3, 4, 5, 6]
