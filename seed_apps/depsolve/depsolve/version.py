"""Semantic versions (``MAJOR.MINOR.PATCH[-PRERELEASE][+BUILD]``).

Versions are totally ordered following the semantic versioning precedence
rules: the numeric release triple is compared first, a version *with* a
pre-release ranks below the same release without one, pre-release identifiers
are compared left to right (numeric identifiers numerically and below
alphanumeric ones, alphanumeric identifiers in ASCII order, a shorter list
ranks lower when it is a prefix of a longer one), and build metadata is
ignored entirely (also by ``==`` and ``hash``).
"""

from __future__ import annotations

import functools
import re

from .errors import VersionError

_NUMERIC = re.compile(r"^(0|[1-9][0-9]*)$")
_IDENTIFIER = re.compile(r"^[0-9A-Za-z-]+$")

Identifier = int | str


def _parse_number(text: str, source: str) -> int:
    """Parse one release component, rejecting leading zeros and non-digits."""
    if not _NUMERIC.match(text):
        raise VersionError(f"invalid numeric component {text!r} in version {source!r}")
    return int(text)


def _parse_identifiers(text: str, what: str, source: str, numeric: bool) -> tuple[Identifier, ...]:
    """Split a dot separated identifier list (pre-release or build metadata).

    When ``numeric`` is true, all-digit identifiers are converted to ``int``
    and must not carry leading zeros (the pre-release rule); otherwise every
    identifier is kept as a string (the build metadata rule).
    """
    if text == "":
        raise VersionError(f"empty {what} in version {source!r}")
    result: list[Identifier] = []
    for part in text.split("."):
        if not _IDENTIFIER.match(part):
            raise VersionError(f"invalid {what} identifier {part!r} in version {source!r}")
        if numeric and part.isdigit():
            if len(part) > 1 and part[0] == "0":
                raise VersionError(
                    f"numeric {what} identifier {part!r} has a leading zero in version {source!r}"
                )
            result.append(int(part))
        else:
            result.append(part)
    return tuple(result)


@functools.total_ordering
class Version:
    """An immutable semantic version.

    Args:
        major, minor, patch: non-negative integers (``bool`` is rejected).
        prerelease: tuple of identifiers (``int`` or ``str``) or a dotted
            string such as ``"rc.1"``; empty means a final release.
        build: tuple of string identifiers or a dotted string; ignored when
            comparing versions.

    Raises:
        VersionError: if a component is negative or not an integer, or an
            identifier string is malformed.
    """

    __slots__ = ("major", "minor", "patch", "prerelease", "build")

    def __init__(
        self,
        major: int,
        minor: int = 0,
        patch: int = 0,
        prerelease: tuple[Identifier, ...] | str = (),
        build: tuple[str, ...] | str = (),
    ) -> None:
        for label, value in (("major", major), ("minor", minor), ("patch", patch)):
            if not isinstance(value, int) or isinstance(value, bool) or value < 0:
                raise VersionError(f"{label} component must be a non-negative integer, got {value!r}")
        if isinstance(prerelease, str):
            prerelease = _parse_identifiers(prerelease, "pre-release", prerelease, True) if prerelease else ()
        if isinstance(build, str):
            build = _parse_identifiers(build, "build metadata", build, False) if build else ()
        self.major = major
        self.minor = minor
        self.patch = patch
        self.prerelease = tuple(prerelease)
        self.build = tuple(str(part) for part in build)

    @classmethod
    def parse(cls, text: str, *, loose: bool = False) -> "Version":
        """Parse a version string.

        Strict mode requires exactly ``MAJOR.MINOR.PATCH`` optionally followed
        by ``-PRERELEASE`` and/or ``+BUILD``. Loose mode additionally strips
        surrounding whitespace and one leading ``v``/``V`` and accepts one or
        two release components, padding the missing ones with zeros
        (``"v1.2"`` -> ``1.2.0``).

        Raises:
            VersionError: if ``text`` is not a string or is malformed.
        """
        if not isinstance(text, str):
            raise VersionError(f"version must be a string, got {type(text).__name__}")
        source = text
        if loose:
            text = text.strip()
            if text[:1] in ("v", "V"):
                text = text[1:]
        core, has_build, build_text = text.partition("+")
        core, has_pre, pre_text = core.partition("-")
        parts = core.split(".")
        if len(parts) != 3 and not (loose and 1 <= len(parts) <= 3):
            raise VersionError(f"version {source!r} must have the form MAJOR.MINOR.PATCH")
        numbers = [_parse_number(part, source) for part in parts]
        numbers.extend([0] * (3 - len(numbers)))
        prerelease = _parse_identifiers(pre_text, "pre-release", source, True) if has_pre else ()
        build = _parse_identifiers(build_text, "build metadata", source, False) if has_build else ()
        return cls(numbers[0], numbers[1], numbers[2], prerelease, build)  # type: ignore[arg-type]

    @property
    def release(self) -> tuple[int, int, int]:
        """The ``(major, minor, patch)`` triple."""
        return (self.major, self.minor, self.patch)

    @property
    def is_prerelease(self) -> bool:
        """True when the version carries pre-release identifiers."""
        return bool(self.prerelease)

    def bump_major(self) -> "Version":
        """Return the next major release.

        A pre-release of an ``X.0.0`` release bumps to ``X.0.0`` itself
        (``2.0.0-rc.1`` -> ``2.0.0``); otherwise ``(major + 1).0.0``.
        """
        if self.prerelease and self.minor == 0 and self.patch == 0:
            return Version(self.major, 0, 0)
        return Version(self.major + 1, 0, 0)

    def bump_minor(self) -> "Version":
        """Return the next minor release.

        A pre-release of an ``X.Y.0`` release bumps to ``X.Y.0``; otherwise
        ``X.(Y + 1).0``.
        """
        if self.prerelease and self.patch == 0:
            return Version(self.major, self.minor, 0)
        return Version(self.major, self.minor + 1, 0)

    def bump_patch(self) -> "Version":
        """Return the next patch release.

        A pre-release bumps to its own final release (``1.2.3-rc`` ->
        ``1.2.3``); a final release increments the patch number.
        """
        if self.prerelease:
            return Version(self.major, self.minor, self.patch)
        return Version(self.major, self.minor, self.patch + 1)

    def lowest_prerelease(self) -> "Version":
        """Return the smallest version sharing this release triple.

        That is the release with the single pre-release identifier ``0``
        (``2.0.0`` -> ``2.0.0-0``). It is used as an exclusive upper bound
        that also excludes every pre-release of the bound.
        """
        return Version(self.major, self.minor, self.patch, (0,))

    def without_build(self) -> "Version":
        """Return a copy of this version with build metadata removed."""
        return Version(self.major, self.minor, self.patch, self.prerelease)

    def _key(self) -> tuple:
        """Sort key implementing semver precedence (build metadata ignored)."""
        if self.prerelease:
            identifiers = tuple(
                (0, part, "") if isinstance(part, int) else (1, 0, part) for part in self.prerelease
            )
            return (self.major, self.minor, self.patch, 0, identifiers)
        return (self.major, self.minor, self.patch, 1, ())

    def __eq__(self, other: object) -> bool:
        """Equal when precedence is equal (build metadata ignored)."""
        if not isinstance(other, Version):
            return NotImplemented
        return self._key() == other._key()

    def __lt__(self, other: object) -> bool:
        """Semantic versioning precedence comparison."""
        if not isinstance(other, Version):
            return NotImplemented
        return self._key() < other._key()

    def __hash__(self) -> int:
        """Hash consistent with ``__eq__`` (build metadata ignored)."""
        return hash(self._key())

    def __str__(self) -> str:
        """``MAJOR.MINOR.PATCH[-PRE][+BUILD]``."""
        text = f"{self.major}.{self.minor}.{self.patch}"
        if self.prerelease:
            text += "-" + ".".join(str(part) for part in self.prerelease)
        if self.build:
            text += "+" + ".".join(self.build)
        return text

    def __repr__(self) -> str:
        """``Version('1.2.3')``."""
        return f"Version('{self}')"


def parse_partial(text: str) -> tuple[Version, int]:
    """Parse a possibly incomplete version as written inside a constraint.

    Accepts ``"1"``, ``"1.2"``, ``"v1.2.3"`` and full versions with
    pre-release/build suffixes. Returns ``(version, given)`` where ``version``
    is padded with zeros and ``given`` is the number of release components
    actually written (1 to 3).

    Raises:
        VersionError: if the text is malformed, or a pre-release/build suffix
            is attached to a version with fewer than three components.
    """
    version = Version.parse(text, loose=True)
    core = text.strip().lstrip("vV").partition("+")[0].partition("-")[0]
    given = core.count(".") + 1
    if given < 3 and (version.prerelease or version.build):
        raise VersionError(f"partial version {text!r} cannot carry a pre-release or build suffix")
    return version, given
