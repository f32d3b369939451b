import pytest

from sheetcalc import tokenizer as tk
from sheetcalc.addressing import CellRef, parse_reference
from sheetcalc.errors import TokenizeError
from sheetcalc.values import DIV0, NA, NAME


def kinds(text):
    return [token.kind for token in tk.tokenize(text)]


def test_tokenize_simple_arithmetic_with_positions():
    tokens = tk.tokenize("1 + A1*2")
    assert [(t.kind, t.value, t.pos) for t in tokens] == [
        (tk.NUMBER, 1.0, 0), (tk.OP, "+", 2), (tk.REF, CellRef(0, 0), 4), (tk.OP, "*", 6),
        (tk.NUMBER, 2.0, 7), (tk.EOF, None, 8),
    ]


@pytest.mark.parametrize("text, value", [("12", 12.0), ("3.25", 3.25), (".5", 0.5), ("1.2E-3", 0.0012), ("4e2", 400.0), ("7.", 7.0)])
def test_tokenize_number_literals(text, value):
    token = tk.tokenize(text)[0]
    assert (token.kind, token.value, token.text) == (tk.NUMBER, value, text)


def test_tokenize_string_with_doubled_quotes():
    token = tk.tokenize('"say ""hi"""')[0]
    assert token.kind == tk.STRING
    assert token.value == 'say "hi"'
    assert token.text == '"say ""hi"""'


def test_tokenize_unterminated_string_reports_position():
    with pytest.raises(TokenizeError) as info:
        tk.tokenize('1&"abc')
    assert info.value.position == 2


def test_tokenize_booleans_case_insensitive():
    tokens = tk.tokenize("true,FALSE")
    assert [(t.kind, t.value) for t in tokens[:3]] == [(tk.BOOL, True), (tk.COMMA, None), (tk.BOOL, False)]


def test_tokenize_error_literals_prefer_longest_code():
    tokens = tk.tokenize("#N/A+#DIV/0!+#name?")
    assert [t.value for t in tokens if t.kind == tk.ERROR] == [NA, DIV0, NAME]


def test_tokenize_unknown_error_literal_fails():
    with pytest.raises(TokenizeError) as info:
        tk.tokenize("1+#OOPS!")
    assert info.value.position == 2


def test_tokenize_range_and_sheet_qualified_references():
    tokens = tk.tokenize("Sheet2!B3:C9+'My Sheet'!$A$1")
    assert tokens[0].kind == tk.REF and tokens[0].value == parse_reference("Sheet2!B3:C9")
    assert tokens[2].kind == tk.REF and tokens[2].value == CellRef(0, 0, True, True, "My Sheet")


def test_tokenize_function_name_even_if_it_looks_like_a_cell():
    tokens = tk.tokenize("LOG10 (A1)")
    assert [(t.kind, t.value) for t in tokens[:2]] == [(tk.FUNC, "LOG10"), (tk.LPAREN, None)]


def test_tokenize_defined_name_and_function_uppercasing():
    tokens = tk.tokenize("sum(Prices)")
    assert [(t.kind, t.value) for t in tokens[:4]] == [
        (tk.FUNC, "SUM"), (tk.LPAREN, None), (tk.NAME, "Prices"), (tk.RPAREN, None),
    ]


def test_tokenize_two_character_operators():
    tokens = tk.tokenize("1<=2<>3>=4&5%^6")
    assert [t.value for t in tokens if t.kind == tk.OP] == ["<=", "<>", ">=", "&", "%", "^"]


@pytest.mark.parametrize("text, position", [("1 ; 2", 2), ("A1:B", 2), ("$1", 0), ("Sheet 2!A1", 7), ("ZZZZ1!", 0)])
def test_tokenize_rejects_unexpected_input(text, position):
    with pytest.raises(TokenizeError) as info:
        tk.tokenize(text)
    assert info.value.position == position


def test_tokenize_reference_outside_grid_is_an_error():
    with pytest.raises(TokenizeError, match="invalid reference"):
        tk.tokenize("A1048577")


def test_tokenize_parentheses_and_commas():
    assert kinds("(1,2)") == [tk.LPAREN, tk.NUMBER, tk.COMMA, tk.NUMBER, tk.RPAREN, tk.EOF]
