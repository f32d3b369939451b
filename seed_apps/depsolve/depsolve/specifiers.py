"""The version constraint language and its translation into version sets.

Grammar (whitespace is insignificant except as a clause separator)::

    specifier   := conjunction ("||" conjunction)*
    conjunction := clause ([","] clause)*
    clause      := VERSION "-" VERSION          (hyphen range)
                 | [OPERATOR] VERSION

Operators: ``==`` ``=`` (or none) exact/prefix match, ``!=``, ``<``, ``<=``,
``>``, ``>=``, ``~=`` compatible release, ``^`` caret and ``~`` tilde ranges.
Versions may be partial (``1.2``) and may use ``*``/``x`` wildcards
(``1.2.*``). An empty specifier matches every version.

Exclusive upper bounds produced by ranges (caret, tilde, wildcards, partial
versions) use :meth:`Version.lowest_prerelease` so that, for example,
``^1.2`` does not admit ``2.0.0-alpha``.
"""

from __future__ import annotations

import re
from typing import Iterable, NamedTuple

from .errors import SpecifierError, VersionError
from .intervals import VersionSet
from .version import Version, parse_partial

_TOKEN_RE = re.compile(
    r"""
      (?P<ws>\s+)
    | (?P<or>\|\|)
    | (?P<comma>,)
    | (?P<op>==|!=|<=|>=|~=|<|>|\^|~|=)
    | (?P<version>[vV]?[0-9][0-9A-Za-z.+*-]*|[*xX](?:\.[*xX])*)
    | (?P<hyphen>-)
    """,
    re.VERBOSE,
)

_WILDCARD_PARTS = ("*", "x", "X")


class Token(NamedTuple):
    """One lexical token of a specifier: kind, source text and offset."""

    kind: str
    text: str
    position: int


def tokenize(text: str) -> list[Token]:
    """Split specifier text into tokens, dropping whitespace.

    Token kinds are ``or``, ``comma``, ``op``, ``version`` and ``hyphen``.

    Raises:
        SpecifierError: at the first character that starts no token.
    """
    tokens: list[Token] = []
    position = 0
    while position < len(text):
        match = _TOKEN_RE.match(text, position)
        if match is None:
            raise SpecifierError(f"unexpected character {text[position]!r} at position {position} in {text!r}")
        kind = match.lastgroup or ""
        if kind != "ws":
            tokens.append(Token(kind, match.group(), position))
        position = match.end()
    return tokens


def _bump_prefix(prefix: tuple[int, ...]) -> Version:
    """Increment the last component of a release prefix and pad with zeros.

    ``(1, 2)`` -> ``1.3.0``; ``(0, 0, 3)`` -> ``0.0.4``; ``(4,)`` -> ``5.0.0``.
    """
    bumped = list(prefix[:-1]) + [prefix[-1] + 1]
    bumped.extend([0] * (3 - len(bumped)))
    return Version(bumped[0], bumped[1], bumped[2])


def _prefix_range(prefix: tuple[int, ...]) -> VersionSet:
    """All versions whose release starts with ``prefix`` (any version if empty)."""
    if not prefix:
        return VersionSet.any()
    padded = list(prefix) + [0] * (3 - len(prefix))
    return VersionSet.between(Version(padded[0], padded[1], padded[2]), _bump_prefix(prefix).lowest_prerelease())


def _wildcard_prefix(text: str) -> tuple[int, ...] | None:
    """Return the numeric prefix of a wildcard version, or ``None`` if not a wildcard.

    ``"1.2.*"`` -> ``(1, 2)``; ``"*"`` -> ``()``. A wildcard must be the last
    component(s): ``"1.*.3"`` is rejected.

    Raises:
        SpecifierError: for misplaced wildcards or malformed numbers.
    """
    core = text.lstrip("vV")
    if "-" in core or "+" in core:
        if "*" in core:
            raise SpecifierError(f"malformed wildcard version {text!r}")
        return None
    parts = core.split(".")
    if not any(part in _WILDCARD_PARTS for part in parts):
        if any("*" in part for part in parts):
            raise SpecifierError(f"malformed wildcard version {text!r}")
        return None
    first = next(index for index, part in enumerate(parts) if part in _WILDCARD_PARTS)
    if any(part not in _WILDCARD_PARTS for part in parts[first:]) or len(parts) > 3:
        raise SpecifierError(f"wildcards must be trailing components in {text!r}")
    prefix = []
    for part in parts[:first]:
        if not part.isdigit():
            raise SpecifierError(f"invalid component {part!r} in wildcard version {text!r}")
        prefix.append(int(part))
    return tuple(prefix)


def _parse_version(text: str) -> tuple[Version, int]:
    """Parse a (possibly partial) version literal, converting errors to SpecifierError."""
    try:
        return parse_partial(text)
    except VersionError as exc:
        raise SpecifierError(str(exc)) from exc


def constraint_set(operator: str | None, text: str) -> VersionSet:
    """Translate one ``operator version`` clause into a :class:`VersionSet`.

    Semantics (``given`` = number of release components written):

    * ``None``/``=``/``==``: exact version when all three components are
      given, otherwise the prefix range (``==1.2`` means ``1.2.*``).
    * ``!=``: complement of the ``==`` set.
    * ``>=``, ``<``: plain bounds on the zero-padded version.
    * ``>``: ``> v`` for full versions; for partial ones everything above the
      prefix (``>1.2`` means ``>=1.3.0``).
    * ``<=``: ``<= v`` for full versions; partial ones include the whole
      prefix (``<=1.2`` means ``<1.3.0-0``).
    * ``~=``: compatible release, needs 2+ components (``~=1.4.2`` means
      ``>=1.4.2, <1.5.0-0``; ``~=1.4`` means ``>=1.4.0, <2.0.0-0``).
    * ``^``: caret, the left-most non-zero given component may not change
      (``^1.2.3`` < 2.0.0, ``^0.2.3`` < 0.3.0, ``^0.0.3`` < 0.0.4, ``^0`` < 1.0.0).
    * ``~``: tilde, minor may not change if given, else major
      (``~1.2.3`` < 1.3.0, ``~1`` < 2.0.0).
    * Wildcards (``1.2.*``) are only valid with no operator, ``=``, ``==``
      or ``!=``.

    Raises:
        SpecifierError: for an unusable operator/version combination.
    """
    prefix = _wildcard_prefix(text)
    if prefix is not None:
        if operator in (None, "=", "=="):
            return _prefix_range(prefix)
        if operator == "!=":
            return _prefix_range(prefix).complement()
        raise SpecifierError(f"operator {operator!r} cannot be used with wildcard version {text!r}")
    version, given = _parse_version(text)
    release = version.release[:given]
    if operator in (None, "=", "=="):
        return VersionSet.exact(version) if given == 3 else _prefix_range(release)
    if operator == "!=":
        return constraint_set("==", text).complement()
    if operator == ">=":
        return VersionSet.at_least(version)
    if operator == "<":
        return VersionSet.less_than(version)
    if operator == ">":
        return VersionSet.greater_than(version) if given == 3 else VersionSet.at_least(_bump_prefix(release))
    if operator == "<=":
        if given == 3:
            return VersionSet.at_most(version)
        return VersionSet.less_than(_bump_prefix(release).lowest_prerelease())
    if operator == "~=":
        if given < 2:
            raise SpecifierError(f"compatible release clause '~={text}' needs at least two components")
        return VersionSet.between(version, _bump_prefix(release[:-1]).lowest_prerelease())
    if operator == "^":
        if version.major > 0 or given == 1:
            keep = 1
        elif version.minor > 0 or given == 2:
            keep = 2
        else:
            keep = 3
        return VersionSet.between(version, _bump_prefix(version.release[:keep]).lowest_prerelease())
    if operator == "~":
        keep = 1 if given == 1 else 2
        return VersionSet.between(version, _bump_prefix(version.release[:keep]).lowest_prerelease())
    raise SpecifierError(f"unknown operator {operator!r}")


def hyphen_range(lower_text: str, upper_text: str) -> VersionSet:
    """Translate a ``LOW - HIGH`` range into a version set.

    The lower end is inclusive. A full upper version is inclusive; a partial
    upper version includes its whole prefix (``1.0 - 2.3`` means
    ``>=1.0.0, <2.4.0-0``).

    Raises:
        SpecifierError: if either end is malformed or uses wildcards.
    """
    if _wildcard_prefix(lower_text) is not None or _wildcard_prefix(upper_text) is not None:
        raise SpecifierError(f"hyphen range '{lower_text} - {upper_text}' cannot use wildcards")
    lower, _ = _parse_version(lower_text)
    upper, given = _parse_version(upper_text)
    if given == 3:
        upper_set = VersionSet.at_most(upper)
    else:
        upper_set = VersionSet.less_than(_bump_prefix(upper.release[:given]).lowest_prerelease())
    return VersionSet.at_least(lower).intersection(upper_set)


class _Parser:
    """Recursive descent parser over the token list of one specifier."""

    def __init__(self, text: str) -> None:
        self.text = text
        self.tokens = tokenize(text)
        self.index = 0
        self.mentions_prerelease = False

    def _peek(self) -> Token | None:
        return self.tokens[self.index] if self.index < len(self.tokens) else None

    def _take(self, kind: str, what: str) -> Token:
        token = self._peek()
        if token is None or token.kind != kind:
            where = "end of input" if token is None else f"{token.text!r} at position {token.position}"
            raise SpecifierError(f"expected {what} but found {where} in {self.text!r}")
        self.index += 1
        return token

    def _note_version(self, text: str) -> None:
        if "-" in text.partition("+")[0]:
            self.mentions_prerelease = True

    def parse(self) -> VersionSet:
        """Parse the whole token stream; an empty stream means any version."""
        if not self.tokens:
            return VersionSet.any()
        result = self._conjunction()
        while self._peek() is not None and self._peek().kind == "or":
            self.index += 1
            result = result.union(self._conjunction())
        token = self._peek()
        if token is not None:
            raise SpecifierError(f"unexpected {token.text!r} at position {token.position} in {self.text!r}")
        return result

    def _conjunction(self) -> VersionSet:
        result = self._clause()
        while True:
            token = self._peek()
            if token is not None and token.kind == "comma":
                self.index += 1
            elif token is None or token.kind not in ("op", "version"):
                return result
            result = result.intersection(self._clause())

    def _clause(self) -> VersionSet:
        token = self._peek()
        operator = None
        if token is not None and token.kind == "op":
            operator = token.text
            self.index += 1
        version = self._take("version", "a version")
        self._note_version(version.text)
        following = self._peek()
        if operator is None and following is not None and following.kind == "hyphen":
            self.index += 1
            upper = self._take("version", "the upper end of a hyphen range")
            self._note_version(upper.text)
            return hyphen_range(version.text, upper.text)
        return constraint_set(operator, version.text)


def parse_specifier(text: str) -> VersionSet:
    """Parse constraint text into the :class:`VersionSet` it allows.

    Raises:
        SpecifierError: if the text is not valid constraint syntax.
    """
    return _Parser(text).parse()


class Specifier:
    """A parsed version constraint that remembers its source text.

    Attributes:
        text: the constraint with runs of whitespace collapsed to one space.
        allowed: the :class:`VersionSet` of versions satisfying it.
        mentions_prerelease: true when a version literal in the text carries
            a pre-release suffix (used to opt in to pre-release candidates).

    Raises:
        SpecifierError: if ``text`` is not valid constraint syntax.
    """

    __slots__ = ("text", "allowed", "mentions_prerelease")

    def __init__(self, text: str = "") -> None:
        parser = _Parser(text)
        self.allowed = parser.parse()
        self.mentions_prerelease = parser.mentions_prerelease
        self.text = " ".join(text.split())

    def contains(self, version: Version | str) -> bool:
        """True when ``version`` (a Version or strict version string) satisfies the constraint."""
        if isinstance(version, str):
            version = Version.parse(version)
        return self.allowed.contains(version)

    def __contains__(self, version: object) -> bool:
        """``version in spec`` for Version objects and strict version strings."""
        return isinstance(version, (Version, str)) and self.contains(version)

    def filter(self, versions: Iterable[Version]) -> list[Version]:
        """Return the satisfying members of ``versions`` sorted ascending."""
        return self.allowed.filter(versions)

    def best_match(self, versions: Iterable[Version]) -> Version | None:
        """Return the highest satisfying version from ``versions``, or ``None``."""
        matching = self.filter(versions)
        return matching[-1] if matching else None

    def __eq__(self, other: object) -> bool:
        """Specifiers are equal when they allow the same versions."""
        if not isinstance(other, Specifier):
            return NotImplemented
        return self.allowed == other.allowed

    def __hash__(self) -> int:
        """Hash of the allowed version set."""
        return hash(self.allowed)

    def __str__(self) -> str:
        """The normalized source text."""
        return self.text

    def __repr__(self) -> str:
        """``Specifier('<text>')``."""
        return f"Specifier('{self.text}')"
