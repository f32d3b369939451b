"""Tests for the SQL tokenizer."""

import pytest

from minisql.errors import LexError
from minisql.lexer import Lexer, Token, TokenType, tokenize


def kinds_and_values(sql):
    """Return (type, value) pairs of all tokens except EOF."""
    return [(t.type, t.value) for t in tokenize(sql)[:-1]]


def test_keywords_are_case_insensitive_and_upper_cased():
    assert kinds_and_values("select FrOm") == [
        (TokenType.KEYWORD, "SELECT"), (TokenType.KEYWORD, "FROM")]


def test_unquoted_identifiers_are_lower_cased():
    assert kinds_and_values("Users _tmp1") == [
        (TokenType.IDENT, "users"), (TokenType.IDENT, "_tmp1")]


def test_quoted_identifier_keeps_case_and_unescapes_double_quotes():
    assert kinds_and_values('"My ""Col"""') == [(TokenType.IDENT, 'My "Col"')]


def test_quoted_identifier_may_be_a_keyword():
    assert kinds_and_values('"select"') == [(TokenType.IDENT, "select")]


def test_string_literal_unescapes_doubled_single_quote():
    assert kinds_and_values("'it''s'") == [(TokenType.STRING, "it's")]


def test_empty_string_literal():
    assert kinds_and_values("''") == [(TokenType.STRING, "")]


@pytest.mark.parametrize("text, value", [
    ("42", 42), ("3.25", 3.25), (".5", 0.5), ("1e3", 1000.0), ("2.5E-1", 0.25), ("7.", 7.0),
])
def test_number_literals(text, value):
    tokens = kinds_and_values(text)
    assert tokens == [(TokenType.NUMBER, value)]
    assert type(tokens[0][1]) is type(value)


@pytest.mark.parametrize("op", ["=", "==", "<>", "!=", "<", "<=", ">", ">=", "+", "-", "*", "/", "%", "||"])
def test_operators(op):
    assert kinds_and_values(f"a {op} b")[1] == (TokenType.OPERATOR, op)


def test_two_char_operators_without_spaces():
    assert [v for _, v in kinds_and_values("a<=b||c")] == ["a", "<=", "b", "||", "c"]


def test_punctuation_tokens():
    assert kinds_and_values("(a.b, c);") == [
        (TokenType.PUNCT, "("), (TokenType.IDENT, "a"), (TokenType.PUNCT, "."),
        (TokenType.IDENT, "b"), (TokenType.PUNCT, ","), (TokenType.IDENT, "c"),
        (TokenType.PUNCT, ")"), (TokenType.PUNCT, ";")]


def test_line_and_block_comments_are_skipped():
    sql = "SELECT -- the list\n a /* inline\n comment */ FROM t"
    assert [v for _, v in kinds_and_values(sql)] == ["SELECT", "a", "FROM", "t"]


def test_line_comment_at_end_of_input():
    assert [v for _, v in kinds_and_values("a -- trailing")] == ["a"]


def test_token_positions_are_character_offsets():
    tokens = tokenize("SELECT  x")
    assert [t.position for t in tokens] == [0, 8, 9]


def test_eof_token_terminates_stream():
    tokens = tokenize("   ")
    assert tokens == [Token(TokenType.EOF, None, 3)]


def test_minus_followed_by_number_is_separate_tokens():
    assert kinds_and_values("-5") == [(TokenType.OPERATOR, "-"), (TokenType.NUMBER, 5)]


@pytest.mark.parametrize("sql, message, position", [
    ("'abc", "unterminated string literal", 0),
    ('x "abc', "unterminated quoted identifier", 2),
    ("a /* never closed", "unterminated block comment", 2),
    ('""', "empty quoted identifier", 0),
    ("1e+", "malformed number exponent", 0),
    ("12abc", "malformed number", 0),
    ("a ? b", "unexpected character '?'", 2),
])
def test_lex_errors_report_message_and_position(sql, message, position):
    with pytest.raises(LexError) as info:
        tokenize(sql)
    assert info.value.position == position
    assert str(info.value) == f"{message} at {position}"


def test_token_predicates():
    keyword, ident, punct, op = tokenize("SELECT a , +")[:4]
    assert keyword.is_keyword("FROM", "SELECT") and not keyword.is_keyword("FROM")
    assert not ident.is_keyword("a")
    assert punct.is_punct(",") and not punct.is_punct(";")
    assert op.is_operator("+", "-") and not keyword.is_operator("+")


def test_lexer_instance_tokenize_matches_function():
    assert Lexer("a+1").tokenize() == tokenize("a+1")
