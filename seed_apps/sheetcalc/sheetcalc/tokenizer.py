"""Formula lexer: turns formula text into a list of :class:`Token` objects.

Recognised tokens: numbers (``12``, ``.5``, ``1.2E-3``), strings in double
quotes with ``""`` as an escaped quote, ``TRUE``/``FALSE``, error literals
(``#DIV/0!``...), cell and range references (optionally sheet-qualified, e.g.
``'My Sheet'!$A$1:B4``), function names (an identifier followed by ``(``),
defined names, operators (``+ - * / ^ & % = <> < > <= >=``), parentheses and
commas.  The stream always ends with an ``EOF`` token.
"""

import re
from dataclasses import dataclass

from .addressing import parse_reference
from .errors import AddressError, TokenizeError
from .values import ERRORS_BY_CODE

NUMBER = "NUMBER"
STRING = "STRING"
BOOL = "BOOL"
ERROR = "ERROR"
REF = "REF"
NAME = "NAME"
FUNC = "FUNC"
OP = "OP"
LPAREN = "LPAREN"
RPAREN = "RPAREN"
COMMA = "COMMA"
EOF = "EOF"

_NUMBER_RE = re.compile(r"(?:\d+(?:\.\d*)?|\.\d+)(?:[eE][+-]?\d+)?")
_SHEET = r"(?:[A-Za-z_][A-Za-z0-9_.]*|'(?:[^']|'')+')"
_CELL = r"\$?[A-Za-z]{1,3}\$?\d+"
_REF_RE = re.compile(rf"(?:{_SHEET}!)?{_CELL}(?::{_CELL})?")
_IDENT_RE = re.compile(r"[A-Za-z_][A-Za-z0-9_.]*")
_WORD_CONTINUES = set("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789_.$!")
_TWO_CHAR_OPS = ("<=", ">=", "<>")
_ONE_CHAR_OPS = "+-*/^&%=<>"


@dataclass(frozen=True)
class Token:
    """One lexical token.

    Attributes:
        kind: one of the module-level kind constants (``NUMBER``, ``REF``...).
        text: the exact source text of the token.
        value: the decoded payload: a float for numbers, the unescaped string,
            a bool, an :class:`~sheetcalc.values.ErrorValue`, a
            :class:`~sheetcalc.addressing.CellRef`/``RangeRef``, an upper-cased
            function name, the operator text, or ``None``.
        pos: zero-based offset of the token in the formula text.
    """

    kind: str
    text: str
    value: object
    pos: int


def tokenize(formula):
    """Tokenize ``formula`` (without the leading ``=``) into a token list.

    Raises:
        TokenizeError: for unterminated strings, unknown error literals,
            invalid references or unexpected characters; the exception's
            ``position`` points at the offending character.
    """
    return _Lexer(formula).run()


class _Lexer:
    """Single-pass scanner over the formula text."""

    def __init__(self, text):
        """Prepare to scan ``text`` from the beginning."""
        self.text = text
        self.pos = 0
        self.tokens = []

    def run(self):
        """Scan the whole text and return the token list ending with ``EOF``."""
        while True:
            while self.pos < len(self.text) and self.text[self.pos].isspace():
                self.pos += 1
            if self.pos >= len(self.text):
                self.tokens.append(Token(EOF, "", None, self.pos))
                return self.tokens
            char = self.text[self.pos]
            if char.isdigit() or (char == "." and self._peek(1).isdigit()):
                self._number()
            elif char == '"':
                self._string()
            elif char == "#":
                self._error_literal()
            elif char.isalpha() or char in "_$'":
                self._word()
            elif char in "(),":
                kind = {"(": LPAREN, ")": RPAREN, ",": COMMA}[char]
                self._emit(kind, char, None)
            else:
                self._operator()

    def _peek(self, offset):
        """Return the character ``offset`` places ahead, or ``""`` past the end."""
        index = self.pos + offset
        return self.text[index] if index < len(self.text) else ""

    def _next_significant(self, index):
        """Return the first non-space character at or after ``index``, or ``""`` at the end."""
        while index < len(self.text) and self.text[index].isspace():
            index += 1
        return self.text[index] if index < len(self.text) else ""

    def _emit(self, kind, text, value):
        """Append a token starting at the current position and advance past it."""
        self.tokens.append(Token(kind, text, value, self.pos))
        self.pos += len(text)

    def _number(self):
        """Lex a numeric literal."""
        match = _NUMBER_RE.match(self.text, self.pos)
        self._emit(NUMBER, match.group(), float(match.group()))

    def _string(self):
        """Lex a double-quoted string; ``""`` inside stands for one quote."""
        index = self.pos + 1
        chars = []
        while True:
            if index >= len(self.text):
                raise TokenizeError("unterminated string", self.pos)
            char = self.text[index]
            if char == '"':
                if self.text.startswith('""', index):
                    chars.append('"')
                    index += 2
                    continue
                break
            chars.append(char)
            index += 1
        self._emit(STRING, self.text[self.pos:index + 1], "".join(chars))

    def _error_literal(self):
        """Lex an error literal such as ``#N/A`` (longest known code wins)."""
        for code in sorted(ERRORS_BY_CODE, key=len, reverse=True):
            if self.text[self.pos:self.pos + len(code)].upper() == code:
                self._emit(ERROR, self.text[self.pos:self.pos + len(code)], ERRORS_BY_CODE[code])
                return
        raise TokenizeError("unknown error literal", self.pos)

    def _word(self):
        """Lex a reference, function name, boolean or defined name."""
        match = _REF_RE.match(self.text, self.pos)
        if (match is not None and self._next_significant(match.end()) != "("
                and self._peek(match.end() - self.pos) not in _WORD_CONTINUES):
            try:
                reference = parse_reference(match.group())
            except AddressError as exc:
                raise TokenizeError(f"invalid reference: {exc}", self.pos) from exc
            self._emit(REF, match.group(), reference)
            return
        ident = _IDENT_RE.match(self.text, self.pos)
        if ident is None:
            raise TokenizeError("invalid reference", self.pos)
        word = ident.group()
        next_char = self._next_significant(ident.end())
        if next_char == "!":
            raise TokenizeError("invalid sheet-qualified reference", self.pos)
        if next_char == "(":
            self._emit(FUNC, word, word.upper())
        elif word.upper() in ("TRUE", "FALSE"):
            self._emit(BOOL, word, word.upper() == "TRUE")
        else:
            self._emit(NAME, word, word)

    def _operator(self):
        """Lex a one- or two-character operator."""
        pair = self.text[self.pos:self.pos + 2]
        if pair in _TWO_CHAR_OPS:
            self._emit(OP, pair, pair)
        elif self.text[self.pos] in _ONE_CHAR_OPS:
            self._emit(OP, self.text[self.pos], self.text[self.pos])
        else:
            raise TokenizeError(f"unexpected character {self.text[self.pos]!r}", self.pos)
