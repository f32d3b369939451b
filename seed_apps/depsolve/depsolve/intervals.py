"""Sets of versions represented as unions of disjoint intervals.

A :class:`VersionSet` is the algebra the rest of depsolve works in: every
constraint is parsed into one, the resolver intersects, unions and
complements them, and explanations render them back to constraint text.
Sets are always kept normalized: intervals are non-empty, sorted by lower
bound, pairwise disjoint and never adjacent (touching intervals are merged).
"""

from __future__ import annotations

from typing import Iterable

from .version import Version


class Interval:
    """A contiguous range of versions between two optional bounds.

    Args:
        lower: smallest bound, or ``None`` for unbounded below.
        upper: largest bound, or ``None`` for unbounded above.
        lower_closed: whether ``lower`` itself is included.
        upper_closed: whether ``upper`` itself is included.

    An unbounded side is always treated as open, whatever flag is passed.
    """

    __slots__ = ("lower", "upper", "lower_closed", "upper_closed")

    def __init__(
        self,
        lower: Version | None = None,
        upper: Version | None = None,
        lower_closed: bool = True,
        upper_closed: bool = False,
    ) -> None:
        self.lower = lower
        self.upper = upper
        self.lower_closed = lower_closed and lower is not None
        self.upper_closed = upper_closed and upper is not None

    def lower_key(self) -> tuple:
        """Sort key of the lower bound: unbounded first, closed before open."""
        if self.lower is None:
            return (0,)
        return (1, self.lower, 0 if self.lower_closed else 1)

    def upper_key(self) -> tuple:
        """Sort key of the upper bound: open before closed, unbounded last."""
        if self.upper is None:
            return (2,)
        return (1, self.upper, 1 if self.upper_closed else 0)

    def is_empty(self) -> bool:
        """True when no version lies inside the interval."""
        if self.lower is None or self.upper is None:
            return False
        if self.lower < self.upper:
            return False
        if self.lower == self.upper:
            return not (self.lower_closed and self.upper_closed)
        return True

    def contains(self, version: Version) -> bool:
        """True when ``version`` lies inside the interval."""
        if self.lower is not None:
            if version < self.lower or (version == self.lower and not self.lower_closed):
                return False
        if self.upper is not None:
            if version > self.upper or (version == self.upper and not self.upper_closed):
                return False
        return True

    def intersect(self, other: "Interval") -> "Interval":
        """Return the overlap of two intervals (possibly an empty interval)."""
        low = self if self.lower_key() >= other.lower_key() else other
        high = self if self.upper_key() <= other.upper_key() else other
        return Interval(low.lower, high.upper, low.lower_closed, high.upper_closed)

    def single_version(self) -> Version | None:
        """Return the only member when the interval is ``[v, v]``, else ``None``."""
        if self.lower is not None and self.lower == self.upper and self.lower_closed and self.upper_closed:
            return self.lower
        return None

    def __eq__(self, other: object) -> bool:
        """Intervals are equal when both bounds (value and closedness) match."""
        if not isinstance(other, Interval):
            return NotImplemented
        return self.lower_key() == other.lower_key() and self.upper_key() == other.upper_key()

    def __hash__(self) -> int:
        """Hash consistent with ``__eq__``."""
        return hash((self.lower_key(), self.upper_key()))

    def __repr__(self) -> str:
        """Mathematical notation, e.g. ``Interval([1.0.0, 2.0.0))``."""
        left = "(-inf" if self.lower is None else ("[" if self.lower_closed else "(") + str(self.lower)
        right = "+inf)" if self.upper is None else str(self.upper) + ("]" if self.upper_closed else ")")
        return f"Interval({left}, {right})"


def _joins(first: Interval, second: Interval) -> bool:
    """True when ``second`` (starting no earlier than ``first``) overlaps or touches it."""
    if first.upper is None or second.lower is None:
        return True
    if second.lower < first.upper:
        return True
    return second.lower == first.upper and (first.upper_closed or second.lower_closed)


def _normalize(intervals: Iterable[Interval]) -> tuple[Interval, ...]:
    """Drop empty intervals, sort the rest and merge overlapping/adjacent ones."""
    pending = sorted((iv for iv in intervals if not iv.is_empty()), key=Interval.lower_key)
    merged: list[Interval] = []
    for interval in pending:
        if merged and _joins(merged[-1], interval):
            last = merged[-1]
            high = last if last.upper_key() >= interval.upper_key() else interval
            merged[-1] = Interval(last.lower, high.upper, last.lower_closed, high.upper_closed)
        else:
            merged.append(interval)
    return tuple(merged)


class VersionSet:
    """An immutable, normalized union of version intervals.

    Supports the set operations used by the resolver (``|`` union, ``&``
    intersection, ``-`` difference, ``~`` complement) plus membership tests.
    Two sets compare equal exactly when they contain the same versions.
    """

    __slots__ = ("_intervals",)

    def __init__(self, intervals: Iterable[Interval] = ()) -> None:
        self._intervals = _normalize(intervals)

    @classmethod
    def any(cls) -> "VersionSet":
        """The set of all versions."""
        return cls([Interval()])

    @classmethod
    def empty(cls) -> "VersionSet":
        """The set containing no version."""
        return cls()

    @classmethod
    def exact(cls, version: Version) -> "VersionSet":
        """The set containing only ``version``."""
        return cls([Interval(version, version, True, True)])

    @classmethod
    def at_least(cls, version: Version) -> "VersionSet":
        """All versions ``>= version``."""
        return cls([Interval(version, None, True)])

    @classmethod
    def greater_than(cls, version: Version) -> "VersionSet":
        """All versions ``> version``."""
        return cls([Interval(version, None, False)])

    @classmethod
    def at_most(cls, version: Version) -> "VersionSet":
        """All versions ``<= version``."""
        return cls([Interval(None, version, upper_closed=True)])

    @classmethod
    def less_than(cls, version: Version) -> "VersionSet":
        """All versions ``< version``."""
        return cls([Interval(None, version, upper_closed=False)])

    @classmethod
    def between(cls, lower: Version, upper: Version) -> "VersionSet":
        """The half-open range ``>= lower, < upper`` (empty if ``upper <= lower``)."""
        return cls([Interval(lower, upper, True, False)])

    @property
    def intervals(self) -> tuple[Interval, ...]:
        """The normalized intervals, sorted by lower bound."""
        return self._intervals

    def is_empty(self) -> bool:
        """True when the set contains no version."""
        return not self._intervals

    def is_any(self) -> bool:
        """True when the set contains every version."""
        return len(self._intervals) == 1 and self._intervals[0].lower is None and self._intervals[0].upper is None

    def contains(self, version: Version) -> bool:
        """True when ``version`` is a member of the set."""
        return any(interval.contains(version) for interval in self._intervals)

    def __contains__(self, version: object) -> bool:
        """``version in versions``; non-Version objects are never members."""
        return isinstance(version, Version) and self.contains(version)

    def single_version(self) -> Version | None:
        """Return the only member if the set is exactly one version, else ``None``."""
        if len(self._intervals) == 1:
            return self._intervals[0].single_version()
        return None

    def union(self, *others: "VersionSet") -> "VersionSet":
        """Return the set of versions contained in this set or any of ``others``."""
        intervals = list(self._intervals)
        for other in others:
            intervals.extend(other._intervals)
        return VersionSet(intervals)

    def intersection(self, other: "VersionSet") -> "VersionSet":
        """Return the versions contained in both sets.

        Uses a linear sweep over the two sorted interval lists, always
        advancing the interval that ends first.
        """
        result: list[Interval] = []
        mine, theirs = self._intervals, other._intervals
        i = j = 0
        while i < len(mine) and j < len(theirs):
            piece = mine[i].intersect(theirs[j])
            if not piece.is_empty():
                result.append(piece)
            mine_end, their_end = mine[i].upper_key(), theirs[j].upper_key()
            if mine_end <= their_end:
                i += 1
            if their_end <= mine_end:
                j += 1
        return VersionSet(result)

    def complement(self) -> "VersionSet":
        """Return every version that is *not* in this set."""
        result: list[Interval] = []
        cursor: Version | None = None
        cursor_closed = False
        for interval in self._intervals:
            if interval.lower is not None:
                result.append(Interval(cursor, interval.lower, cursor_closed, not interval.lower_closed))
            if interval.upper is None:
                return VersionSet(result)
            cursor = interval.upper
            cursor_closed = not interval.upper_closed
        result.append(Interval(cursor, None, cursor_closed))
        return VersionSet(result)

    def difference(self, other: "VersionSet") -> "VersionSet":
        """Return the versions in this set that are not in ``other``."""
        return self.intersection(other.complement())

    def is_subset(self, other: "VersionSet") -> bool:
        """True when every version of this set is also in ``other``."""
        return self.difference(other).is_empty()

    def allows_any(self, other: "VersionSet") -> bool:
        """True when the two sets share at least one version."""
        return not self.intersection(other).is_empty()

    def filter(self, versions: Iterable[Version]) -> list[Version]:
        """Return the members of ``versions`` contained in the set, sorted ascending."""
        return sorted(version for version in versions if self.contains(version))

    def __and__(self, other: "VersionSet") -> "VersionSet":
        """``a & b`` is :meth:`intersection`."""
        return self.intersection(other)

    def __or__(self, other: "VersionSet") -> "VersionSet":
        """``a | b`` is :meth:`union`."""
        return self.union(other)

    def __sub__(self, other: "VersionSet") -> "VersionSet":
        """``a - b`` is :meth:`difference`."""
        return self.difference(other)

    def __invert__(self) -> "VersionSet":
        """``~a`` is :meth:`complement`."""
        return self.complement()

    def __eq__(self, other: object) -> bool:
        """Sets are equal when they contain exactly the same versions."""
        if not isinstance(other, VersionSet):
            return NotImplemented
        return self._intervals == other._intervals

    def __hash__(self) -> int:
        """Hash consistent with ``__eq__``."""
        return hash(self._intervals)

    def __repr__(self) -> str:
        """``VersionSet('<constraint text>')``."""
        return f"VersionSet('{self}')"

    def __str__(self) -> str:
        """Render the set in constraint syntax.

        ``*`` for all versions, ``<none>`` for the empty set, ``!=V`` when the
        set is everything but one version, otherwise ``||``-separated
        intervals such as ``>=1.0.0, <2.0.0 || ==3.0.0``.
        """
        if self.is_empty():
            return "<none>"
        if self.is_any():
            return "*"
        excluded = self.complement().single_version()
        if excluded is not None:
            return f"!={excluded}"
        return " || ".join(_render_interval(interval) for interval in self._intervals)


def _render_interval(interval: Interval) -> str:
    """Render one non-empty interval in constraint syntax."""
    single = interval.single_version()
    if single is not None:
        return f"=={single}"
    parts = []
    if interval.lower is not None:
        parts.append((">=" if interval.lower_closed else ">") + str(interval.lower))
    if interval.upper is not None:
        parts.append(("<=" if interval.upper_closed else "<") + str(interval.upper))
    return ", ".join(parts)
