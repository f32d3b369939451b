"""Tests for SQL types, coercion, comparison and three-valued logic."""

import pytest

from minisql.errors import ConstraintError, SQLTypeError
from minisql.sqltypes import (SqlType, cast_value, coerce_to_column, compare, is_number, logical_and,
                              logical_not, logical_or, resolve_type, sort_compare, to_condition, type_name)


@pytest.mark.parametrize("name, expected", [
    ("INT", SqlType.INTEGER), ("bigint", SqlType.INTEGER), ("Double", SqlType.REAL),
    ("varchar", SqlType.TEXT), ("bool", SqlType.BOOLEAN), ("text", SqlType.TEXT),
])
def test_resolve_type_aliases(name, expected):
    assert resolve_type(name) is expected


def test_resolve_unknown_type_raises():
    with pytest.raises(SQLTypeError, match="unknown type 'blob'"):
        resolve_type("blob")


def test_is_number_excludes_booleans():
    assert is_number(3) and is_number(2.5)
    assert not is_number(True) and not is_number("3") and not is_number(None)


@pytest.mark.parametrize("value, name", [
    (None, "NULL"), (True, "BOOLEAN"), (1, "INTEGER"), (1.5, "REAL"), ("x", "TEXT"),
])
def test_type_name(value, name):
    assert type_name(value) == name


def test_type_name_rejects_non_sql_values():
    with pytest.raises(SQLTypeError, match="unsupported value"):
        type_name([1])


@pytest.mark.parametrize("value, sqltype, expected", [
    (None, SqlType.INTEGER, None),
    (5, SqlType.INTEGER, 5),
    (2.0, SqlType.INTEGER, 2),
    (3, SqlType.REAL, 3.0),
    ("abc", SqlType.TEXT, "abc"),
    (True, SqlType.BOOLEAN, True),
    (0, SqlType.BOOLEAN, False),
    (1, SqlType.BOOLEAN, True),
])
def test_coerce_to_column_accepts_compatible_values(value, sqltype, expected):
    result = coerce_to_column(value, sqltype)
    assert result == expected and type(result) is type(expected)


@pytest.mark.parametrize("value, sqltype", [
    (2.5, SqlType.INTEGER), ("5", SqlType.INTEGER), (True, SqlType.INTEGER),
    ("1.0", SqlType.REAL), (5, SqlType.TEXT), (2, SqlType.BOOLEAN), ("true", SqlType.BOOLEAN),
])
def test_coerce_to_column_rejects_incompatible_values(value, sqltype):
    with pytest.raises(SQLTypeError, match=f"in {sqltype.value} column"):
        coerce_to_column(value, sqltype)


def test_coerce_enforces_text_length():
    assert coerce_to_column("abc", SqlType.TEXT, 3) == "abc"
    with pytest.raises(ConstraintError, match="longer than 3 characters"):
        coerce_to_column("abcd", SqlType.TEXT, 3)


@pytest.mark.parametrize("value, sqltype, expected", [
    (None, SqlType.TEXT, None),
    (True, SqlType.TEXT, "TRUE"),
    (False, SqlType.TEXT, "FALSE"),
    (12, SqlType.TEXT, "12"),
    (1.5, SqlType.TEXT, "1.5"),
    (" Yes ", SqlType.BOOLEAN, True),
    ("f", SqlType.BOOLEAN, False),
    (0.0, SqlType.BOOLEAN, False),
    (7, SqlType.BOOLEAN, True),
    ("3.9", SqlType.INTEGER, 3),
    (-3.9, SqlType.INTEGER, -3),
    (" 42 ", SqlType.INTEGER, 42),
    (True, SqlType.INTEGER, 1),
    ("2.5", SqlType.REAL, 2.5),
    (4, SqlType.REAL, 4.0),
])
def test_cast_value(value, sqltype, expected):
    result = cast_value(value, sqltype)
    assert result == expected and type(result) is type(expected)


@pytest.mark.parametrize("value, sqltype", [("maybe", SqlType.BOOLEAN), ("abc", SqlType.INTEGER),
                                            ("", SqlType.REAL)])
def test_cast_value_rejects_unparsable_strings(value, sqltype):
    with pytest.raises(SQLTypeError, match="cannot cast"):
        cast_value(value, sqltype)


@pytest.mark.parametrize("left, right, expected", [
    (1, 2, -1), (2, 2.0, 0), (3.5, 3, 1), ("a", "b", -1), ("b", "a", 1),
    (False, True, -1), (True, True, 0), (None, 1, None), ("x", None, None),
])
def test_compare(left, right, expected):
    assert compare(left, right) == expected


@pytest.mark.parametrize("left, right", [(1, "1"), ("a", True), (True, 1)])
def test_compare_incompatible_types_raises(left, right):
    with pytest.raises(SQLTypeError, match="cannot compare"):
        compare(left, right)


def test_sort_compare_places_nulls_by_flag():
    assert sort_compare(None, None, True) == 0
    assert sort_compare(None, 1, True) == -1
    assert sort_compare(None, 1, False) == 1
    assert sort_compare(1, None, True) == 1
    assert sort_compare(1, None, False) == -1
    assert sort_compare(1, 2, False) == -1


TRUTH = [True, False, None]


@pytest.mark.parametrize("left", TRUTH)
@pytest.mark.parametrize("right", TRUTH)
def test_three_valued_and_or_truth_tables(left, right):
    def to_k(v):
        return {True: 2, None: 1, False: 0}[v]
    from_k = {2: True, 1: None, 0: False}
    assert logical_and(left, right) is from_k[min(to_k(left), to_k(right))]
    assert logical_or(left, right) is from_k[max(to_k(left), to_k(right))]


def test_logical_not():
    assert logical_not(True) is False
    assert logical_not(False) is True
    assert logical_not(None) is None


def test_to_condition():
    assert to_condition(None) is None
    assert to_condition(False) is False
    assert to_condition(3) is True
    assert to_condition(0.0) is False
    with pytest.raises(SQLTypeError, match="used as a condition"):
        to_condition("yes")
