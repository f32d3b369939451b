"""The partial solution: an ordered log of decisions and derivations.

Every assignment is a :class:`~depsolve.terms.Term` stamped with the
decision level it was made at and its position in the log. Decisions pick
one concrete version; derivations record terms implied by an
incompatibility. For each package the solution keeps the intersection of
all its assignments so that relations to new terms can be answered in
constant time.
"""

from __future__ import annotations

from .errors import DepsolveError
from .intervals import VersionSet
from .terms import Incompatibility, Relation, Term
from .version import Version


class Assignment(Term):
    """A term recorded in the partial solution.

    Attributes:
        decision_level: number of decisions made when this was assigned.
        index: position of the assignment in the log.
        cause: the incompatibility a derivation was implied by; ``None``
            for decisions.
    """

    __slots__ = ("decision_level", "index", "cause")

    def __init__(
        self,
        package: str,
        allowed: VersionSet,
        positive: bool,
        decision_level: int,
        index: int,
        cause: Incompatibility | None,
    ) -> None:
        super().__init__(package, allowed, positive)
        self.decision_level = decision_level
        self.index = index
        self.cause = cause

    @property
    def is_decision(self) -> bool:
        """True when the assignment is a decision rather than a derivation."""
        return self.cause is None


class PartialSolution:
    """Decisions and derivations made so far by the resolver."""

    def __init__(self) -> None:
        self.assignments: list[Assignment] = []
        self.decisions: dict[str, Version] = {}
        self._positive: dict[str, Term] = {}
        self._negative: dict[str, Term] = {}

    @property
    def decision_level(self) -> int:
        """The number of decisions currently in the solution."""
        return len(self.decisions)

    def decide(self, package: str, version: Version) -> Assignment:
        """Record the decision to select ``package`` at ``version``.

        The decision's level counts the decision itself.
        """
        self.decisions[package] = version
        assignment = Assignment(
            package, VersionSet.exact(version), True, self.decision_level, len(self.assignments), None
        )
        self._assign(assignment)
        return assignment

    def derive(self, term: Term, cause: Incompatibility) -> Assignment:
        """Record ``term`` as implied by ``cause`` at the current decision level."""
        assignment = Assignment(
            term.package, term.allowed, term.positive, self.decision_level, len(self.assignments), cause
        )
        self._assign(assignment)
        return assignment

    def _assign(self, assignment: Assignment) -> None:
        self.assignments.append(assignment)
        self._register(assignment)

    def _register(self, assignment: Term) -> None:
        """Fold an assignment into the per-package accumulated terms."""
        package = assignment.package
        positive = self._positive.get(package)
        if positive is not None:
            self._positive[package] = positive.intersect(assignment)
            return
        negative = self._negative.get(package)
        term = assignment if negative is None else negative.intersect(assignment)
        if term.positive:
            self._negative.pop(package, None)
            self._positive[package] = term
        else:
            self._negative[package] = term

    def backtrack(self, level: int) -> None:
        """Remove every assignment made above decision ``level``."""
        while self.assignments and self.assignments[-1].decision_level > level:
            removed = self.assignments.pop()
            if removed.is_decision:
                del self.decisions[removed.package]
        self._positive.clear()
        self._negative.clear()
        for assignment in self.assignments:
            self._register(assignment)

    def relation(self, term: Term) -> Relation:
        """Relate the accumulated assignments for ``term.package`` to ``term``.

        Packages without assignments overlap every term.
        """
        accumulated = self._positive.get(term.package) or self._negative.get(term.package)
        if accumulated is None:
            return Relation.OVERLAPPING
        return accumulated.relation(term)

    def satisfies(self, term: Term) -> bool:
        """True when the current assignments imply ``term``."""
        return self.relation(term) is Relation.SUBSET

    def satisfier(self, term: Term) -> Assignment:
        """Return the earliest assignment after which ``term`` is satisfied.

        Raises:
            DepsolveError: if the assignments never satisfy ``term`` (an
                internal invariant violation).
        """
        accumulated: Term | None = None
        for assignment in self.assignments:
            if assignment.package != term.package:
                continue
            accumulated = assignment if accumulated is None else accumulated.intersect(assignment)
            if accumulated.satisfies(term):
                return assignment
        raise DepsolveError(f"no assignment satisfies {term!r}")

    def unsatisfied(self) -> list[Term]:
        """Return accumulated positive terms of packages without a decision, in first-derived order."""
        return [term for package, term in self._positive.items() if package not in self.decisions]
