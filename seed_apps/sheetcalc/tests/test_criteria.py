import pytest

from sheetcalc.criteria import Criterion, has_wildcards, wildcard_match
from sheetcalc.values import BLANK, NA


@pytest.mark.parametrize("pattern, text, expected", [
    ("a*", "apple", True), ("*LE", "apple", True), ("a?ple", "ample", True), ("a?ple", "aple", False),
    ("*", "", True), ("?", "", False), ("a*b*c", "aXbYbZc", True), ("a*b*c", "aXbYbZ", False),
    ("~*", "*", True), ("~*", "x", False), ("a~?", "a?", True), ("**x", "abcx", True), ("abc", "abcd", False),
    ("", "", True), ("a~", "a~", True),
])
def test_wildcard_match(pattern, text, expected):
    assert wildcard_match(pattern, text) is expected


def test_has_wildcards_ignores_escaped_characters():
    assert has_wildcards("a*") and has_wildcards("?")
    assert not has_wildcards("a~*b~?")
    assert not has_wildcards("plain")


@pytest.mark.parametrize("criterion, op, operand", [
    (">=10", ">=", 10.0), ("<>red", "<>", "red"), ("=", "=", BLANK), ("", "=", BLANK), ("<5%", "<", 0.05),
    ("true", "=", True), (3.0, "=", 3.0), (BLANK, "=", BLANK), ("a*", "=", "a*"), (">", ">", BLANK),
])
def test_criterion_parse(criterion, op, operand):
    parsed = Criterion.parse(criterion)
    assert (parsed.op, parsed.operand) == (op, operand)


@pytest.mark.parametrize("criterion, value, expected", [
    (">=10", 10.0, True), (">=10", 9.5, False), (">=10", "20", False), ("<b", "apple", True), ("<b", "Cat", False),
    ("<>red", "RED", False), ("<>red", 5.0, True), ("<>red", BLANK, True), ("ap*", "Apple", True),
    (5.0, 5, True), (5.0, "5", False), ("=", BLANK, True), ("=", "", True), ("=", 0.0, False),
    (True, True, True), (True, 1.0, False), (">3", NA, False), ("<>1", NA, False), (">5", True, False),
    ("<=3", 3.0, True), (">2", 3.0, True), ("<2", 3.0, False),
])
def test_criterion_matches(criterion, value, expected):
    assert Criterion.parse(criterion).matches(value) is expected
