"""Tokenizer turning SQL text into a list of :class:`Token` objects.

Supported lexical elements:

* reserved keywords (case-insensitive, normalised to upper case),
* identifiers (unquoted ones are lower-cased; ``"quoted"`` ones keep their case
  and may contain ``""`` as an escaped double quote),
* string literals in single quotes with ``''`` as an escaped quote,
* integer and decimal numbers, including exponents (``1.5e3``) and a leading dot
  (``.25``),
* operators ``= == <> != < <= > >= + - * / % ||`` and punctuation ``( ) , ; .``,
* ``-- line comments`` and ``/* block comments */`` which are skipped.
"""

from dataclasses import dataclass
from enum import Enum

from .errors import LexError


class TokenType(Enum):
    """Category of a token."""

    KEYWORD = "keyword"
    IDENT = "ident"
    STRING = "string"
    NUMBER = "number"
    OPERATOR = "operator"
    PUNCT = "punct"
    EOF = "eof"


KEYWORDS = frozenset(
    """
    SELECT DISTINCT ALL FROM WHERE GROUP BY HAVING ORDER ASC DESC LIMIT OFFSET AS
    JOIN INNER LEFT OUTER CROSS ON AND OR NOT NULL IS IN BETWEEN LIKE CASE WHEN
    THEN ELSE END CAST TRUE FALSE INSERT INTO VALUES UPDATE SET DELETE CREATE
    TABLE DROP INDEX UNIQUE PRIMARY DEFAULT IF EXISTS BEGIN COMMIT ROLLBACK
    """.split()
)

_TWO_CHAR_OPERATORS = ("<=", ">=", "<>", "!=", "==", "||")
_ONE_CHAR_OPERATORS = "=<>+-*/%"
_PUNCTUATION = "(),;."


@dataclass(frozen=True)
class Token:
    """A single lexical token.

    Attributes:
        type: the :class:`TokenType`.
        value: keyword text in upper case, identifier name, decoded string,
            ``int``/``float`` for numbers, or the operator/punctuation text.
        position: zero-based offset of the token's first character.
    """

    type: TokenType
    value: object
    position: int

    def is_keyword(self, *words):
        """Return True if this token is a keyword equal to one of ``words``."""
        return self.type is TokenType.KEYWORD and self.value in words

    def is_punct(self, char):
        """Return True if this token is the punctuation character ``char``."""
        return self.type is TokenType.PUNCT and self.value == char

    def is_operator(self, *ops):
        """Return True if this token is an operator equal to one of ``ops``."""
        return self.type is TokenType.OPERATOR and self.value in ops


class Lexer:
    """Single-pass scanner over an SQL string.

    Use :meth:`tokenize` to obtain all tokens; the last token is always of type
    :attr:`TokenType.EOF`.
    """

    def __init__(self, text):
        """Prepare to scan ``text`` from its beginning."""
        self.text = text
        self.pos = 0

    def tokenize(self):
        """Scan the whole input and return the list of tokens ending with EOF.

        Raises:
            LexError: on an unexpected character, an unterminated string,
                quoted identifier or block comment, or a malformed number.
        """
        tokens = []
        while True:
            self._skip_whitespace_and_comments()
            if self.pos >= len(self.text):
                tokens.append(Token(TokenType.EOF, None, self.pos))
                return tokens
            tokens.append(self._next_token())

    def _next_token(self):
        """Scan exactly one token starting at the current (non-blank) position."""
        ch = self.text[self.pos]
        nxt = self.text[self.pos + 1] if self.pos + 1 < len(self.text) else ""
        if ch == "'":
            return self._read_string()
        if ch == '"':
            return self._read_quoted_identifier()
        if ch.isdigit() or (ch == "." and nxt.isdigit()):
            return self._read_number()
        if ch.isalpha() or ch == "_":
            return self._read_word()
        return self._read_symbol()

    def _skip_whitespace_and_comments(self):
        """Advance past blanks, ``--`` comments and ``/* */`` comments.

        Raises:
            LexError: if a block comment is not closed.
        """
        text = self.text
        while self.pos < len(text):
            if text[self.pos].isspace():
                self.pos += 1
            elif text.startswith("--", self.pos):
                end = text.find("\n", self.pos)
                self.pos = len(text) if end < 0 else end + 1
            elif text.startswith("/*", self.pos):
                end = text.find("*/", self.pos + 2)
                if end < 0:
                    raise LexError("unterminated block comment", self.pos)
                self.pos = end + 2
            else:
                return

    def _read_delimited(self, quote, what):
        """Read text between ``quote`` characters where a doubled quote escapes itself.

        Returns the decoded text and leaves ``pos`` after the closing quote.
        Raises LexError naming ``what`` when the closing quote is missing.
        """
        start = self.pos
        self.pos += 1
        parts = []
        while True:
            end = self.text.find(quote, self.pos)
            if end < 0:
                raise LexError(f"unterminated {what}", start)
            parts.append(self.text[self.pos:end])
            if self.text.startswith(quote * 2, end):
                parts.append(quote)
                self.pos = end + 2
            else:
                self.pos = end + 1
                return "".join(parts)

    def _read_string(self):
        """Read a single-quoted string literal into a STRING token."""
        start = self.pos
        return Token(TokenType.STRING, self._read_delimited("'", "string literal"), start)

    def _read_quoted_identifier(self):
        """Read a double-quoted identifier; its case is preserved.

        Raises:
            LexError: if the identifier is empty or unterminated.
        """
        start = self.pos
        name = self._read_delimited('"', "quoted identifier")
        if not name:
            raise LexError("empty quoted identifier", start)
        return Token(TokenType.IDENT, name, start)

    def _read_number(self):
        """Read an integer or decimal literal (with optional exponent).

        Integers become ``int``; anything with a dot or exponent becomes ``float``.

        Raises:
            LexError: if an exponent marker has no digits or the number runs
                directly into letters (``12abc``).
        """
        text = self.text
        start = self.pos
        is_float = False
        while self.pos < len(text) and text[self.pos].isdigit():
            self.pos += 1
        if self.pos < len(text) and text[self.pos] == ".":
            is_float = True
            self.pos += 1
            while self.pos < len(text) and text[self.pos].isdigit():
                self.pos += 1
        if self.pos < len(text) and text[self.pos] in "eE":
            is_float = True
            self.pos += 1
            if self.pos < len(text) and text[self.pos] in "+-":
                self.pos += 1
            digits_start = self.pos
            while self.pos < len(text) and text[self.pos].isdigit():
                self.pos += 1
            if self.pos == digits_start:
                raise LexError("malformed number exponent", start)
        if self.pos < len(text) and (text[self.pos].isalpha() or text[self.pos] == "_"):
            raise LexError("malformed number", start)
        literal = text[start:self.pos]
        value = float(literal) if is_float else int(literal)
        return Token(TokenType.NUMBER, value, start)

    def _read_word(self):
        """Read a keyword or an unquoted identifier (lower-cased)."""
        text = self.text
        start = self.pos
        while self.pos < len(text) and (text[self.pos].isalnum() or text[self.pos] == "_"):
            self.pos += 1
        word = text[start:self.pos]
        if word.upper() in KEYWORDS:
            return Token(TokenType.KEYWORD, word.upper(), start)
        return Token(TokenType.IDENT, word.lower(), start)

    def _read_symbol(self):
        """Read an operator or punctuation character.

        Raises:
            LexError: for a character that starts no token.
        """
        start = self.pos
        pair = self.text[start:start + 2]
        if pair in _TWO_CHAR_OPERATORS:
            self.pos += 2
            return Token(TokenType.OPERATOR, pair, start)
        ch = self.text[start]
        self.pos += 1
        if ch in _ONE_CHAR_OPERATORS:
            return Token(TokenType.OPERATOR, ch, start)
        if ch in _PUNCTUATION:
            return Token(TokenType.PUNCT, ch, start)
        raise LexError(f"unexpected character {ch!r}", start)


def tokenize(text):
    """Tokenize ``text`` and return a list of tokens terminated by an EOF token.

    Raises:
        LexError: on malformed input (see :meth:`Lexer.tokenize`).
    """
    return Lexer(text).tokenize()
