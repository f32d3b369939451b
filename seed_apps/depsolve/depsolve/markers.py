"""Environment markers: ``python_version >= "3.8" and sys_platform == "linux"``.

The module is a small language pipeline: :func:`tokenize` produces tokens,
the recursive descent parser builds an expression tree of
:class:`Comparison` and :class:`BoolOp` nodes, and :meth:`Marker.evaluate`
interprets the tree against an environment dictionary.

Comparison rules:

* ``in`` / ``not in`` test substring containment of the left value in the
  right value.
* ``===`` compares the raw strings.
* ``<``, ``<=``, ``>``, ``>=`` and ``~=`` require both sides to be versions
  (loosely parsed, so ``"3.8"`` is ``3.8.0``); anything else is an error.
* ``==`` / ``!=`` compare as versions when both sides parse as versions and
  as plain strings otherwise.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Mapping, NamedTuple, Union

from .errors import MarkerError, SpecifierError, VersionError
from .specifiers import constraint_set
from .version import Version

VARIABLES = frozenset(
    {
        "python_version",
        "python_full_version",
        "sys_platform",
        "platform_system",
        "platform_machine",
        "platform_release",
        "os_name",
        "implementation_name",
        "extra",
    }
)

_PLATFORM_SYSTEMS = {"linux": "Linux", "darwin": "Darwin", "win32": "Windows", "cygwin": "CYGWIN_NT"}

_TOKEN_RE = re.compile(
    r"""
      (?P<ws>\s+)
    | (?P<lparen>\()
    | (?P<rparen>\))
    | (?P<string>'[^']*'|"[^"]*")
    | (?P<op>===|==|!=|<=|>=|~=|<|>)
    | (?P<word>[A-Za-z_][A-Za-z0-9_.]*)
    """,
    re.VERBOSE,
)

_KEYWORDS = frozenset({"and", "or", "not", "in"})


class Token(NamedTuple):
    """One marker token: kind (``lparen``, ``rparen``, ``string``, ``op``,
    ``word``), its source text (strings without quotes) and offset."""

    kind: str
    text: str
    position: int


def tokenize(text: str) -> list[Token]:
    """Split marker text into tokens, dropping whitespace.

    String tokens carry their content without the surrounding quotes.

    Raises:
        MarkerError: for an unterminated string or an unexpected character.
    """
    tokens: list[Token] = []
    position = 0
    while position < len(text):
        match = _TOKEN_RE.match(text, position)
        if match is None:
            if text[position] in "'\"":
                raise MarkerError(f"unterminated string starting at position {position} in {text!r}")
            raise MarkerError(f"unexpected character {text[position]!r} at position {position} in {text!r}")
        kind = match.lastgroup or ""
        if kind == "string":
            tokens.append(Token(kind, match.group()[1:-1], position))
        elif kind != "ws":
            tokens.append(Token(kind, match.group(), position))
        position = match.end()
    return tokens


@dataclass(frozen=True)
class Variable:
    """A reference to an environment variable inside a marker."""

    name: str


@dataclass(frozen=True)
class Literal:
    """A quoted string value inside a marker."""

    value: str


@dataclass(frozen=True)
class Comparison:
    """``left op right`` where each side is a :class:`Variable` or :class:`Literal`."""

    left: Union[Variable, Literal]
    op: str
    right: Union[Variable, Literal]


@dataclass(frozen=True)
class BoolOp:
    """An ``and``/``or`` over two or more operand nodes (flattened)."""

    op: str
    operands: tuple


Node = Union[Comparison, BoolOp]


def _combine(op: str, left: Node, right: Node) -> BoolOp:
    """Build ``left op right`` flattening nested operators of the same kind."""
    operands: list[Node] = []
    for node in (left, right):
        if isinstance(node, BoolOp) and node.op == op:
            operands.extend(node.operands)
        else:
            operands.append(node)
    return BoolOp(op, tuple(operands))


class _Parser:
    """Recursive descent parser: or_expr -> and_expr -> atom."""

    def __init__(self, text: str) -> None:
        self.text = text
        self.tokens = tokenize(text)
        self.index = 0

    def _peek(self) -> Token | None:
        return self.tokens[self.index] if self.index < len(self.tokens) else None

    def _error(self, expected: str) -> MarkerError:
        token = self._peek()
        where = "end of input" if token is None else f"{token.text!r} at position {token.position}"
        return MarkerError(f"expected {expected} but found {where} in marker {self.text!r}")

    def _is_word(self, word: str) -> bool:
        token = self._peek()
        return token is not None and token.kind == "word" and token.text == word

    def parse(self) -> Node:
        if not self.tokens:
            raise MarkerError("empty marker")
        node = self._or_expr()
        if self._peek() is not None:
            raise self._error("'and', 'or' or end of marker")
        return node

    def _or_expr(self) -> Node:
        node = self._and_expr()
        while self._is_word("or"):
            self.index += 1
            node = _combine("or", node, self._and_expr())
        return node

    def _and_expr(self) -> Node:
        node = self._atom()
        while self._is_word("and"):
            self.index += 1
            node = _combine("and", node, self._atom())
        return node

    def _atom(self) -> Node:
        token = self._peek()
        if token is not None and token.kind == "lparen":
            self.index += 1
            node = self._or_expr()
            token = self._peek()
            if token is None or token.kind != "rparen":
                raise self._error("')'")
            self.index += 1
            return node
        left = self._value()
        op = self._operator()
        right = self._value()
        return Comparison(left, op, right)

    def _value(self) -> Union[Variable, Literal]:
        token = self._peek()
        if token is None or token.kind not in ("string", "word") or (token.kind == "word" and token.text in _KEYWORDS):
            raise self._error("a variable or quoted string")
        self.index += 1
        if token.kind == "string":
            return Literal(token.text)
        if token.text not in VARIABLES:
            raise MarkerError(f"unknown marker variable {token.text!r} at position {token.position}")
        return Variable(token.text)

    def _operator(self) -> str:
        token = self._peek()
        if token is not None and token.kind == "op":
            self.index += 1
            return token.text
        if self._is_word("in"):
            self.index += 1
            return "in"
        if self._is_word("not"):
            self.index += 1
            if not self._is_word("in"):
                raise self._error("'in' after 'not'")
            self.index += 1
            return "not in"
        raise self._error("a comparison operator")


def _as_version(value: str) -> Version | None:
    """Loosely parse ``value`` as a version, returning ``None`` if it is not one."""
    try:
        return Version.parse(value, loose=True)
    except VersionError:
        return None


def compare_values(left: str, op: str, right: str) -> bool:
    """Apply one marker comparison operator to two string values.

    See the module docstring for the rules.

    Raises:
        MarkerError: for an ordering or ``~=`` comparison where a side is not
            a version, or for an unknown operator.
    """
    if op in ("in", "not in"):
        return (left in right) == (op == "in")
    if op == "===":
        return left == right
    left_version, right_version = _as_version(left), _as_version(right)
    if left_version is None or right_version is None:
        if op == "==":
            return left == right
        if op == "!=":
            return left != right
        raise MarkerError(f"cannot compare {left!r} {op} {right!r}: both sides must be versions")
    if op == "~=":
        try:
            return constraint_set("~=", right).contains(left_version)
        except SpecifierError as exc:
            raise MarkerError(str(exc)) from exc
    table = {
        "==": left_version == right_version,
        "!=": left_version != right_version,
        "<": left_version < right_version,
        "<=": left_version <= right_version,
        ">": left_version > right_version,
        ">=": left_version >= right_version,
    }
    if op not in table:
        raise MarkerError(f"unknown marker operator {op!r}")
    return table[op]


def _render(node: Node, parent: str | None = None) -> str:
    """Render a tree canonically: double-quoted strings, minimal parentheses."""
    if isinstance(node, Comparison):
        return f"{_render_value(node.left)} {node.op} {_render_value(node.right)}"
    inner = f" {node.op} ".join(_render(child, node.op) for child in node.operands)
    if parent == "and" and node.op == "or":
        return f"({inner})"
    return inner


def _render_value(value: Union[Variable, Literal]) -> str:
    """Render one operand: variables bare, literals double-quoted."""
    if isinstance(value, Variable):
        return value.name
    quote = "'" if '"' in value.value else '"'
    return f"{quote}{value.value}{quote}"


def make_environment(
    python_full_version: str = "3.11.4",
    sys_platform: str = "linux",
    platform_machine: str = "x86_64",
    implementation_name: str = "cpython",
    **overrides: str,
) -> dict[str, str]:
    """Build a complete marker environment from a few facts.

    ``python_version`` is derived as ``MAJOR.MINOR`` of
    ``python_full_version``; ``platform_system`` is derived from
    ``sys_platform`` (``linux`` -> ``Linux``, ``darwin`` -> ``Darwin``,
    ``win32`` -> ``Windows``, ``cygwin`` -> ``CYGWIN_NT``, otherwise the
    capitalized platform) and ``os_name`` is ``nt`` on ``win32`` and
    ``posix`` elsewhere. ``platform_release`` defaults to ``""``. Keyword
    ``overrides`` replace any derived value.

    Raises:
        MarkerError: if ``python_full_version`` is not a version or an
            override names an unknown variable.
    """
    version = _as_version(python_full_version)
    if version is None:
        raise MarkerError(f"invalid python version {python_full_version!r}")
    environment = {
        "python_version": f"{version.major}.{version.minor}",
        "python_full_version": python_full_version,
        "sys_platform": sys_platform,
        "platform_system": _PLATFORM_SYSTEMS.get(sys_platform, sys_platform.capitalize()),
        "platform_machine": platform_machine,
        "platform_release": "",
        "os_name": "nt" if sys_platform == "win32" else "posix",
        "implementation_name": implementation_name,
    }
    for name, value in overrides.items():
        if name not in VARIABLES:
            raise MarkerError(f"unknown marker variable {name!r}")
        environment[name] = value
    return environment


class Marker:
    """A parsed environment marker expression.

    Args:
        text: marker source, e.g. ``'os_name == "posix" and extra == "ssl"'``.

    Raises:
        MarkerError: if the text is not a valid marker.

    Markers compare equal when their canonical renderings (``str``) match.
    """

    __slots__ = ("tree",)

    def __init__(self, text: str) -> None:
        self.tree: Node = _Parser(text).parse()

    @classmethod
    def _from_tree(cls, tree: Node) -> "Marker":
        marker = cls.__new__(cls)
        marker.tree = tree
        return marker

    def evaluate(self, environment: Mapping[str, str]) -> bool:
        """Evaluate the marker with variable values taken from ``environment``.

        ``and`` / ``or`` short-circuit left to right. A missing ``extra``
        counts as the empty string.

        Raises:
            MarkerError: if another referenced variable is missing from the
                environment, or a comparison is invalid.
        """
        return self._evaluate(self.tree, environment)

    def _evaluate(self, node: Node, environment: Mapping[str, str]) -> bool:
        if isinstance(node, BoolOp):
            if node.op == "and":
                return all(self._evaluate(child, environment) for child in node.operands)
            return any(self._evaluate(child, environment) for child in node.operands)
        left = self._lookup(node.left, environment)
        right = self._lookup(node.right, environment)
        return compare_values(left, node.op, right)

    @staticmethod
    def _lookup(value: Union[Variable, Literal], environment: Mapping[str, str]) -> str:
        if isinstance(value, Literal):
            return value.value
        if value.name in environment:
            return environment[value.name]
        if value.name == "extra":
            return ""
        raise MarkerError(f"environment has no value for marker variable {value.name!r}")

    def variables(self) -> frozenset[str]:
        """Return the names of all environment variables the marker reads."""
        found: set[str] = set()
        stack: list[Node] = [self.tree]
        while stack:
            node = stack.pop()
            if isinstance(node, BoolOp):
                stack.extend(node.operands)
                continue
            for side in (node.left, node.right):
                if isinstance(side, Variable):
                    found.add(side.name)
        return frozenset(found)

    def __and__(self, other: "Marker") -> "Marker":
        """Return a marker true when both markers are true."""
        return Marker._from_tree(_combine("and", self.tree, other.tree))

    def __or__(self, other: "Marker") -> "Marker":
        """Return a marker true when either marker is true."""
        return Marker._from_tree(_combine("or", self.tree, other.tree))

    def __str__(self) -> str:
        """Canonical rendering (double quotes, minimal parentheses)."""
        return _render(self.tree)

    def __repr__(self) -> str:
        """``Marker('<canonical text>')``."""
        return f"Marker('{self}')"

    def __eq__(self, other: object) -> bool:
        """Markers are equal when their canonical renderings are equal."""
        if not isinstance(other, Marker):
            return NotImplemented
        return str(self) == str(other)

    def __hash__(self) -> int:
        """Hash of the canonical rendering."""
        return hash(str(self))
