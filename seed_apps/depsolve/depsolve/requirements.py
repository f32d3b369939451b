"""Requirement strings: ``name[extra1,extra2] >=1.0,<2 ; marker``.

A requirement names a package (normalized to its canonical form), an
optional set of extras, an optional version specifier (bare or wrapped in
parentheses) and an optional environment marker after ``;``.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from typing import Mapping

from .errors import MarkerError, RequirementError, SpecifierError
from .intervals import VersionSet
from .markers import Marker
from .specifiers import Specifier

_NAME_RE = re.compile(r"[A-Za-z0-9](?:[A-Za-z0-9._-]*[A-Za-z0-9])?")
_SEPARATORS = re.compile(r"[-_.]+")


def canonical_name(name: str) -> str:
    """Return the canonical form of a package or extra name.

    Names are lower-cased and every run of ``-``, ``_`` and ``.`` becomes a
    single ``-`` (``"Foo__Bar.baz"`` -> ``"foo-bar-baz"``).

    Raises:
        RequirementError: if ``name`` is not a valid name (must start and end
            with a letter or digit and contain only letters, digits, ``-``,
            ``_`` and ``.``).
    """
    if not isinstance(name, str) or not _NAME_RE.fullmatch(name):
        raise RequirementError(f"invalid package name {name!r}")
    return _SEPARATORS.sub("-", name).lower()


def _parse_extras(text: str, source: str) -> frozenset[str]:
    """Parse the comma separated contents of an ``[extras]`` block."""
    extras = set()
    for item in text.split(","):
        item = item.strip()
        if not item:
            if text.strip():
                raise RequirementError(f"empty extra name in {source!r}")
            continue
        extras.add(canonical_name(item))
    return frozenset(extras)


@dataclass(frozen=True)
class Requirement:
    """A dependency on a package.

    Attributes:
        name: canonical package name.
        specifier: allowed versions (an empty specifier allows any version).
        extras: canonical names of the requested extras.
        marker: environment marker gating the requirement, or ``None``.
    """

    name: str
    specifier: Specifier = field(default_factory=Specifier)
    extras: frozenset[str] = frozenset()
    marker: Marker | None = None

    @classmethod
    def parse(cls, text: str) -> "Requirement":
        """Parse a requirement string.

        Accepted forms include ``"foo"``, ``"Foo_Bar >=1.0, <2"``,
        ``"foo[ssl,http2] ^1.2"``, ``"foo (>=1.0)"`` and
        ``'foo >=1 ; python_version < "3.9"'``.

        Raises:
            RequirementError: if the name, extras, specifier or marker part is
                invalid (specifier and marker errors are wrapped).
        """
        head, has_marker, marker_text = text.partition(";")
        head = head.strip()
        match = _NAME_RE.match(head)
        if match is None:
            raise RequirementError(f"requirement {text!r} must start with a package name")
        name = canonical_name(match.group())
        rest = head[match.end():].lstrip()
        extras: frozenset[str] = frozenset()
        if rest.startswith("["):
            close = rest.find("]")
            if close < 0:
                raise RequirementError(f"unclosed extras list in {text!r}")
            extras = _parse_extras(rest[1:close], text)
            rest = rest[close + 1:].strip()
        if rest.startswith("("):
            if not rest.endswith(")"):
                raise RequirementError(f"unclosed parenthesis in {text!r}")
            rest = rest[1:-1]
        try:
            specifier = Specifier(rest)
        except SpecifierError as exc:
            raise RequirementError(f"invalid version specifier in {text!r}: {exc}") from exc
        marker = None
        if has_marker:
            if not marker_text.strip():
                raise RequirementError(f"empty marker after ';' in {text!r}")
            try:
                marker = Marker(marker_text)
            except MarkerError as exc:
                raise RequirementError(f"invalid marker in {text!r}: {exc}") from exc
        return cls(name, specifier, extras, marker)

    @property
    def allowed(self) -> VersionSet:
        """The version set allowed by the specifier."""
        return self.specifier.allowed

    def applies(self, environment: Mapping[str, str] | None) -> bool:
        """True if the requirement is active in ``environment``.

        Requirements without a marker always apply; a ``None`` environment
        means "do not filter" and also always applies.

        Raises:
            MarkerError: propagated from marker evaluation.
        """
        if self.marker is None or environment is None:
            return True
        return self.marker.evaluate(environment)

    def __str__(self) -> str:
        """Canonical text: ``name[sorted,extras] spec ; marker``."""
        text = self.name
        if self.extras:
            text += "[" + ",".join(sorted(self.extras)) + "]"
        if self.specifier.text:
            text += " " + self.specifier.text
        if self.marker is not None:
            text += " ; " + str(self.marker)
        return text


def parse_requirements(text: str) -> list[Requirement]:
    """Parse a requirements file body, one requirement per logical line.

    Blank lines are skipped, ``#`` starts a comment when it begins the line
    or follows whitespace, and a trailing backslash joins the next physical
    line.

    Raises:
        RequirementError: for an invalid requirement, with the 1-based number
            of the physical line where the logical line started.
    """
    requirements: list[Requirement] = []
    pending = ""
    start_line = 0
    for number, raw in enumerate(text.splitlines(), start=1):
        if not pending:
            start_line = number
        line = re.sub(r"(^|\s)#.*$", "", raw)
        if line.rstrip().endswith("\\"):
            pending += line.rstrip()[:-1] + " "
            continue
        logical = (pending + line).strip()
        pending = ""
        if not logical:
            continue
        try:
            requirements.append(Requirement.parse(logical))
        except RequirementError as exc:
            raise RequirementError(f"line {start_line}: {exc}") from exc
    if pending.strip():
        raise RequirementError(f"line {start_line}: continuation at end of input")
    return requirements
