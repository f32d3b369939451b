"""Terms and incompatibilities, the vocabulary of the conflict-driven resolver.

A :class:`Term` is a statement about one package: a *positive* term
``foo >=1.0`` says "foo is selected at a version in the set"; a *negative*
term ``not foo >=1.0`` says "foo is not selected at a version in the set"
(which includes foo not being selected at all).

An :class:`Incompatibility` is a set of terms that must never all be true at
once. External incompatibilities come from the problem (dependencies,
missing versions); derived ones are learned from conflicts and remember the
two incompatibilities they were derived from so failures can be explained.
"""

from __future__ import annotations

import enum
from typing import Iterable

from .intervals import VersionSet
from .version import Version

ROOT = "<root>"
"""Name of the virtual package standing for the project being resolved."""

ROOT_VERSION = Version(0, 0, 0)

ROOT_CAUSE = "root"
DEPENDENCY = "dependency"
NO_VERSIONS = "no_versions"
NOT_FOUND = "not_found"
CONFLICT = "conflict"


class Relation(enum.Enum):
    """How the solutions of one term relate to those of another."""

    SUBSET = "subset"
    DISJOINT = "disjoint"
    OVERLAPPING = "overlapping"


class Term:
    """A positive or negative statement about the version of one package.

    Args:
        package: package name (may be :data:`ROOT` or an ``name[extra]`` virtual name).
        allowed: the version set the statement is about.
        positive: ``True`` for "selected within allowed", ``False`` for its negation.
    """

    __slots__ = ("package", "allowed", "positive")

    def __init__(self, package: str, allowed: VersionSet, positive: bool = True) -> None:
        self.package = package
        self.allowed = allowed
        self.positive = positive

    def inverse(self) -> "Term":
        """Return the term that is true exactly when this one is false."""
        return Term(self.package, self.allowed, not self.positive)

    def is_empty(self) -> bool:
        """True for a positive term that no selection can satisfy."""
        return self.positive and self.allowed.is_empty()

    def relation(self, other: "Term") -> Relation:
        """Relate this term to ``other`` (which must be about the same package).

        Returns SUBSET when every selection satisfying this term satisfies
        ``other``, DISJOINT when no selection satisfies both, and
        OVERLAPPING otherwise. Remember that a negative term is also
        satisfied when the package is not selected at all.
        """
        mine, theirs = self.allowed, other.allowed
        if self.positive and other.positive:
            if mine.is_subset(theirs):
                return Relation.SUBSET
            if not mine.allows_any(theirs):
                return Relation.DISJOINT
            return Relation.OVERLAPPING
        if self.positive:
            if not mine.allows_any(theirs):
                return Relation.SUBSET
            if mine.is_subset(theirs):
                return Relation.DISJOINT
            return Relation.OVERLAPPING
        if other.positive:
            if theirs.is_subset(mine):
                return Relation.DISJOINT
            return Relation.OVERLAPPING
        if theirs.is_subset(mine):
            return Relation.SUBSET
        return Relation.OVERLAPPING

    def satisfies(self, other: "Term") -> bool:
        """True when ``other`` is about the same package and implied by this term."""
        return self.package == other.package and self.relation(other) is Relation.SUBSET

    def intersect(self, other: "Term") -> "Term":
        """Return the term true exactly when both terms are true.

        Positive with positive intersects the sets, positive with negative
        subtracts the negative set, negative with negative unions the sets
        (staying negative). The result may be an empty positive term.
        """
        if self.positive and other.positive:
            return Term(self.package, self.allowed.intersection(other.allowed), True)
        if self.positive:
            return Term(self.package, self.allowed.difference(other.allowed), True)
        if other.positive:
            return Term(self.package, other.allowed.difference(self.allowed), True)
        return Term(self.package, self.allowed.union(other.allowed), False)

    def difference(self, other: "Term") -> "Term":
        """Return the term true when this term is true and ``other`` is false."""
        return self.intersect(other.inverse())

    def __eq__(self, other: object) -> bool:
        """Terms are equal when package, version set and polarity match."""
        if not isinstance(other, Term):
            return NotImplemented
        return (self.package, self.allowed, self.positive) == (other.package, other.allowed, other.positive)

    def __hash__(self) -> int:
        """Hash consistent with ``__eq__``."""
        return hash((self.package, self.allowed, self.positive))

    def __repr__(self) -> str:
        """``Term(foo >=1.0.0)`` or ``Term(not foo >=1.0.0)``."""
        return f"Term({'' if self.positive else 'not '}{describe_package(self.package, self.allowed)})"

    def __str__(self) -> str:
        """The package and version set, without polarity."""
        return describe_package(self.package, self.allowed)


def describe_package(package: str, allowed: VersionSet) -> str:
    """Render ``package`` with its version set for explanations.

    The root package is "the project"; a set allowing any version is
    omitted (``"foo"``); otherwise ``"foo >=1.0.0"``.
    """
    if package == ROOT:
        return "the project"
    if allowed.is_any():
        return package
    return f"{package} {allowed}"


class Incompatibility:
    """A set of terms that cannot all hold, with the reason it is known.

    Args:
        terms: the terms; several terms about the same package are merged
            into their intersection (order of first appearance is kept).
        kind: one of ``root``, ``dependency``, ``no_versions``, ``not_found``
            (external facts) or ``conflict`` (derived).
        left, right: for ``conflict``, the two incompatibilities it was
            derived from.

    A derived incompatibility never mentions the positive root term when it
    has other terms, because the root is always selected.
    """

    __slots__ = ("terms", "kind", "left", "right")

    def __init__(
        self,
        terms: Iterable[Term],
        kind: str,
        left: "Incompatibility | None" = None,
        right: "Incompatibility | None" = None,
    ) -> None:
        terms = list(terms)
        if kind == CONFLICT and len(terms) > 1:
            without_root = [term for term in terms if not (term.positive and term.package == ROOT)]
            if without_root:
                terms = without_root
        merged: dict[str, Term] = {}
        for term in terms:
            existing = merged.get(term.package)
            merged[term.package] = term if existing is None else existing.intersect(term)
        self.terms = list(merged.values())
        self.kind = kind
        self.left = left
        self.right = right

    @property
    def is_derived(self) -> bool:
        """True for incompatibilities learned from conflicts."""
        return self.kind == CONFLICT

    def is_failure(self) -> bool:
        """True when the incompatibility proves that resolution is impossible.

        That is the case when it has no terms or only the positive root term.
        """
        if not self.terms:
            return True
        return len(self.terms) == 1 and self.terms[0].positive and self.terms[0].package == ROOT

    def term_for(self, package: str) -> Term | None:
        """Return this incompatibility's term about ``package``, if any."""
        for term in self.terms:
            if term.package == package:
                return term
        return None

    def __str__(self) -> str:
        """Describe the incompatibility as an English clause (no final period)."""
        if self.is_failure():
            return "version solving failed"
        if self.kind == DEPENDENCY and len(self.terms) == 2:
            depender, target = self.terms
            if depender.package == ROOT:
                return f"the project requires {describe_package(target.package, target.allowed)}"
            return f"{describe_subject(depender)} depends on {describe_package(target.package, target.allowed)}"
        if self.kind == NO_VERSIONS:
            term = self.terms[0]
            return f"no versions of {term.package} match {term.allowed}"
        if self.kind == NOT_FOUND:
            return f"{self.terms[0].package} does not exist in the registry"
        if self.kind == ROOT_CAUSE:
            return "the project is being resolved"
        return self._describe_terms()

    def _describe_terms(self) -> str:
        """Generic rendering of derived incompatibilities by term polarity."""
        positive = [term for term in self.terms if term.positive]
        negative = [term for term in self.terms if not term.positive]
        if len(self.terms) == 1:
            term = self.terms[0]
            if term.positive:
                return f"{describe_subject(term)} is forbidden"
            return f"{describe_package(term.package, term.allowed)} is required"
        if not negative:
            if len(positive) == 2:
                return f"{describe_subject(positive[0])} is incompatible with {describe_subject(positive[1])}"
            return "one of " + ", ".join(describe_subject(term) for term in positive) + " must be false"
        if not positive:
            return "either " + " or ".join(describe_package(t.package, t.allowed) for t in negative)
        required = " and ".join(describe_package(t.package, t.allowed) for t in negative)
        if positive[0].package == ROOT and len(positive) == 1:
            return f"the project requires {required}"
        subject = " and ".join(describe_subject(term) for term in positive)
        verb = "requires" if len(positive) == 1 else "require"
        return f"{subject} {verb} {required}"

    def __repr__(self) -> str:
        """Debug form listing kind and terms."""
        return f"<Incompatibility {self.kind}: {self.terms!r}>"


def describe_subject(term: Term) -> str:
    """Render a positive term as the subject of a sentence ("every version of foo")."""
    if term.package == ROOT:
        return "the project"
    if term.allowed.is_any():
        return f"every version of {term.package}"
    return describe_package(term.package, term.allowed)
