import pytest

from sheetcalc.addressing import CellRef, parse_reference
from sheetcalc.errors import ParseError
from sheetcalc.nodes import (
    Binary, Boolean, Call, CellNode, ErrorLiteral, Name, Number, Percent, RangeNode, Text, Unary,
    children, names, references, transform, walk,
)
from sheetcalc.parser import parse_formula
from sheetcalc.printer import format_number_literal, precedence_of, to_formula
from sheetcalc.values import NA


def test_parse_respects_multiplicative_precedence():
    assert parse_formula("=1+2*3") == Binary("+", Number(1.0), Binary("*", Number(2.0), Number(3.0)))


def test_parse_binary_operators_are_left_associative():
    assert parse_formula("8-3-2") == Binary("-", Binary("-", Number(8.0), Number(3.0)), Number(2.0))
    assert parse_formula("2^3^2") == Binary("^", Binary("^", Number(2.0), Number(3.0)), Number(2.0))


def test_parse_unary_minus_binds_tighter_than_power():
    assert parse_formula("-2^2") == Binary("^", Unary("-", Number(2.0)), Number(2.0))


def test_parse_power_with_negative_exponent():
    assert parse_formula("2^-1") == Binary("^", Number(2.0), Unary("-", Number(1.0)))


def test_parse_percent_is_postfix_and_binds_after_sign():
    assert parse_formula("-A1%") == Percent(Unary("-", CellNode(CellRef(0, 0))))
    assert parse_formula("50%*2") == Binary("*", Percent(Number(50.0)), Number(2.0))


def test_parse_comparison_is_loosest_and_concat_above_it():
    tree = parse_formula('A1&"x"=B1+1')
    assert tree == Binary("=", Binary("&", CellNode(CellRef(0, 0)), Text("x")),
                          Binary("+", CellNode(CellRef(0, 1)), Number(1.0)))


def test_parse_function_calls_with_nested_arguments():
    tree = parse_formula("=IF(A1>0, SUM(B1:B3), NA())")
    assert tree == Call("IF", (
        Binary(">", CellNode(CellRef(0, 0)), Number(0.0)),
        Call("SUM", (RangeNode(parse_reference("B1:B3")),)),
        Call("NA", ()),
    ))


def test_parse_literals_names_and_errors():
    assert parse_formula("TRUE") == Boolean(True)
    assert parse_formula('"a"') == Text("a")
    assert parse_formula("#N/A") == ErrorLiteral(NA)
    assert parse_formula("Rate") == Name("Rate")
    assert parse_formula("(((1)))") == Number(1.0)


@pytest.mark.parametrize("text, message", [
    ("", "empty formula"), ("=", "empty formula"), ("1+", "unexpected end"), ("(1", "expected '\\)'"),
    ("1 2", "unexpected '2'"), ("SUM(1,)", "unexpected '\\)'"), ("SUM(1 2)", "expected ',' or '\\)'"),
    ("*3", "unexpected '\\*'"), (")", "unexpected '\\)'"),
])
def test_parse_errors_are_reported(text, message):
    with pytest.raises(ParseError, match=message):
        parse_formula(text)


def test_parse_error_carries_position():
    with pytest.raises(ParseError) as info:
        parse_formula("=1+(2*3")
    assert info.value.position == 6


@pytest.mark.parametrize("text, canonical", [
    ("= 1 + 2 * 3", "1+2*3"),
    ("(1+2)*3", "(1+2)*3"),
    ("1-(2-3)", "1-(2-3)"),
    ("(1-2)-3", "1-2-3"),
    ("2^(3^2)", "2^(3^2)"),
    ("-2^2", "-2^2"),
    ("-(2^2)", "-(2^2)"),
    ("-(A1%)", "-(A1%)"),
    ("(-A1)%", "-A1%"),
    ("(1+2)%", "(1+2)%"),
    ("--1", "--1"),
    ('"He said ""hi"""&A1', '"He said ""hi"""&A1'),
    ("sum( a1:b2 , 'My Sheet'!c3 )", "SUM(A1:B2,'My Sheet'!C3)"),
    ("IF(TRUE,#N/A,FALSE)", "IF(TRUE,#N/A,FALSE)"),
    ("1.5e3+0.25", "1500+0.25"),
    ("1E+20*Rate", "1E+20*Rate"),
    ("(A1=B1)=(C1<>D1)", "A1=B1=(C1<>D1)"),
    ("NOW()", "NOW()"),
])
def test_printer_produces_canonical_text_with_minimal_parentheses(text, canonical):
    tree = parse_formula(text)
    assert to_formula(tree) == canonical
    assert parse_formula(canonical) == tree


def test_printer_adds_equals_sign_on_request():
    assert to_formula(Number(3.0), with_equals=True) == "=3"


def test_printer_rejects_non_nodes():
    with pytest.raises(TypeError):
        to_formula(object())


def test_format_number_literal_round_trips():
    assert format_number_literal(42.0) == "42"
    assert format_number_literal(0.1) == "0.1"
    assert format_number_literal(1e-7) == "1E-07"
    assert float(format_number_literal(1 / 3)) == 1 / 3


def test_precedence_of_node_kinds():
    assert precedence_of(Binary("&", Number(1.0), Number(2.0))) == 2
    assert precedence_of(Percent(Number(1.0))) == 6
    assert precedence_of(Unary("-", Number(1.0))) == 7
    assert precedence_of(Number(1.0)) > 7


def test_walk_visits_in_preorder_and_children_are_ordered():
    tree = parse_formula("SUM(A1,2*B1)")
    assert [type(node).__name__ for node in walk(tree)] == ["Call", "CellNode", "Binary", "Number", "CellNode"]
    assert children(tree.args[1]) == (Number(2.0), CellNode(CellRef(0, 1)))
    assert children(Percent(Number(1.0))) == (Number(1.0),)
    assert children(Number(1.0)) == ()


def test_references_and_names_are_collected():
    tree = parse_formula("Rate*SUM(A1:B2)+Data!C3-rate")
    assert references(tree) == [parse_reference("A1:B2"), parse_reference("Data!C3")]
    assert names(tree) == {"RATE"}


def test_transform_rebuilds_bottom_up():
    tree = parse_formula("-(1+2)%+F(3)")

    def double(node):
        return Number(node.value * 2) if isinstance(node, Number) else node

    assert to_formula(transform(tree, double)) == "-(2+4)%+F(6)"
