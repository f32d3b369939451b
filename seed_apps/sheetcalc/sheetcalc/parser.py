"""Pratt (precedence-climbing) parser from tokens to a formula AST.

Operator precedence, loosest first (all binary operators are
left-associative, as in common spreadsheet programs):

====  ===========================  ==============
 1    comparison                   ``= <> < > <= >=``
 2    concatenation                ``&``
 3    additive                     ``+ -``
 4    multiplicative               ``* /``
 5    exponentiation               ``^``
 6    postfix percent              ``%``
 7    prefix sign                  ``+ -`` (so ``-2^2`` is 4)
====  ===========================  ==============
"""

from . import tokenizer as tk
from .errors import ParseError
from .nodes import Binary, Boolean, Call, CellNode, ErrorLiteral, Name, Number, Percent, RangeNode, Text, Unary
from .addressing import RangeRef

BINARY_PRECEDENCE = {
    "=": 1, "<>": 1, "<": 1, ">": 1, "<=": 1, ">=": 1,
    "&": 2,
    "+": 3, "-": 3,
    "*": 4, "/": 4,
    "^": 5,
}
PERCENT_PRECEDENCE = 6
PREFIX_PRECEDENCE = 7


def parse_formula(text):
    """Parse formula text into an AST; a single leading ``=`` is optional.

    Raises:
        TokenizeError: if the text cannot be tokenized.
        ParseError: if the tokens do not form one complete expression, e.g.
            ``"1+"``, ``"(1"``, ``"SUM(1,)"`` or ``"1 2"``.
    """
    if text.startswith("="):
        text = text[1:]
    return _Parser(tk.tokenize(text)).parse()


class _Parser:
    """Recursive Pratt parser over a token list ending with ``EOF``."""

    def __init__(self, tokens):
        """Start parsing at the first of ``tokens``."""
        self.tokens = tokens
        self.index = 0

    def peek(self):
        """Return the current token without consuming it."""
        return self.tokens[self.index]

    def advance(self):
        """Consume and return the current token."""
        token = self.tokens[self.index]
        if token.kind != tk.EOF:
            self.index += 1
        return token

    def expect(self, kind, what):
        """Consume a token of ``kind`` or raise :class:`ParseError` mentioning ``what``."""
        token = self.peek()
        if token.kind != kind:
            raise ParseError(f"expected {what}", token.pos)
        return self.advance()

    def parse(self):
        """Parse one full expression and require that nothing follows it."""
        if self.peek().kind == tk.EOF:
            raise ParseError("empty formula", 0)
        node = self.expression(0)
        token = self.peek()
        if token.kind != tk.EOF:
            raise ParseError(f"unexpected {token.text!r}", token.pos)
        return node

    def expression(self, min_precedence):
        """Parse an expression whose operators all bind at least ``min_precedence``."""
        left = self.prefix()
        while True:
            token = self.peek()
            if token.kind != tk.OP:
                return left
            if token.value == "%":
                if PERCENT_PRECEDENCE < min_precedence:
                    return left
                self.advance()
                left = Percent(left)
                continue
            precedence = BINARY_PRECEDENCE.get(token.value)
            if precedence is None or precedence < min_precedence:
                return left
            self.advance()
            right = self.expression(precedence + 1)
            left = Binary(token.value, left, right)

    def prefix(self):
        """Parse an operand: a literal, reference, name, call, group or signed operand."""
        token = self.advance()
        kind = token.kind
        if kind == tk.NUMBER:
            return Number(token.value)
        if kind == tk.STRING:
            return Text(token.value)
        if kind == tk.BOOL:
            return Boolean(token.value)
        if kind == tk.ERROR:
            return ErrorLiteral(token.value)
        if kind == tk.REF:
            if isinstance(token.value, RangeRef):
                return RangeNode(token.value)
            return CellNode(token.value)
        if kind == tk.NAME:
            return Name(token.value)
        if kind == tk.FUNC:
            return self.call(token)
        if kind == tk.LPAREN:
            node = self.expression(0)
            self.expect(tk.RPAREN, "')'")
            return node
        if kind == tk.OP and token.value in ("+", "-"):
            return Unary(token.value, self.expression(PREFIX_PRECEDENCE))
        if kind == tk.EOF:
            raise ParseError("unexpected end of formula", token.pos)
        raise ParseError(f"unexpected {token.text!r}", token.pos)

    def call(self, name_token):
        """Parse the parenthesised, comma-separated arguments of a function call."""
        self.expect(tk.LPAREN, "'('")
        args = []
        if self.peek().kind == tk.RPAREN:
            self.advance()
            return Call(name_token.value, ())
        while True:
            args.append(self.expression(0))
            token = self.advance()
            if token.kind == tk.RPAREN:
                return Call(name_token.value, tuple(args))
            if token.kind != tk.COMMA:
                raise ParseError("expected ',' or ')' in argument list", token.pos)
