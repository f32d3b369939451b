import pytest

from depsolve import DepsolveError, Version
from depsolve.solution import PartialSolution
from depsolve.specifiers import parse_specifier
from depsolve.terms import DEPENDENCY, Incompatibility, Relation, Term


def T(package, spec, positive=True):
    return Term(package, parse_specifier(spec), positive)


CAUSE = Incompatibility([T("x", "*"), T("a", "*", False)], DEPENDENCY)


def test_decide_records_decision_at_new_level():
    solution = PartialSolution()
    assignment = solution.decide("a", Version(1, 0, 0))
    assert assignment.is_decision
    assert (assignment.decision_level, assignment.index) == (1, 0)
    assert solution.decisions == {"a": Version(1, 0, 0)}
    assert solution.decision_level == 1


def test_derive_records_cause_and_current_level():
    solution = PartialSolution()
    solution.decide("root", Version(0, 0, 0))
    derived = solution.derive(T("a", ">=1.0"), CAUSE)
    assert not derived.is_decision
    assert derived.cause is CAUSE
    assert (derived.decision_level, derived.index) == (1, 1)


def test_relation_uses_accumulated_terms():
    solution = PartialSolution()
    assert solution.relation(T("a", "*")) is Relation.OVERLAPPING
    solution.derive(T("a", ">=1.0"), CAUSE)
    solution.derive(T("a", ">=2.0", False), CAUSE)
    assert solution.relation(T("a", "<2.0")) is Relation.SUBSET
    assert solution.relation(T("a", ">=2.0")) is Relation.DISJOINT
    assert solution.satisfies(T("a", ">=1.0, <3.0"))


def test_negative_assignments_accumulate_until_a_positive_arrives():
    solution = PartialSolution()
    solution.derive(T("a", "<1.0", False), CAUSE)
    solution.derive(T("a", ">=3.0", False), CAUSE)
    assert solution.relation(T("a", "==0.5.0")) is Relation.DISJOINT
    assert solution.relation(T("a", "*")) is Relation.OVERLAPPING
    assert solution.unsatisfied() == []
    solution.derive(T("a", "*"), CAUSE)
    assert [str(t) for t in solution.unsatisfied()] == ["a >=1.0.0, <3.0.0"]


def test_unsatisfied_lists_positive_terms_without_decisions():
    solution = PartialSolution()
    solution.derive(T("a", "^1.0"), CAUSE)
    solution.derive(T("b", "^2.0"), CAUSE)
    solution.decide("a", Version(1, 2, 0))
    assert [t.package for t in solution.unsatisfied()] == ["b"]


def test_backtrack_removes_assignments_above_level_and_rebuilds_state():
    solution = PartialSolution()
    solution.decide("root", Version(0, 0, 0))
    solution.derive(T("a", "^1.0"), CAUSE)
    solution.decide("a", Version(1, 5, 0))
    solution.derive(T("b", ">=2.0"), CAUSE)
    solution.backtrack(1)
    assert [a.package for a in solution.assignments] == ["root", "a"]
    assert solution.decisions == {"root": Version(0, 0, 0)}
    assert solution.relation(T("a", "==1.5.0")) is Relation.OVERLAPPING
    assert solution.relation(T("b", "*")) is Relation.OVERLAPPING


def test_satisfier_returns_first_assignment_that_completes_the_term():
    solution = PartialSolution()
    first = solution.derive(T("a", ">=1.0"), CAUSE)
    solution.derive(T("b", "*"), CAUSE)
    second = solution.derive(T("a", "<2.0"), CAUSE)
    assert solution.satisfier(T("a", ">=0.5")) is first
    assert solution.satisfier(T("a", ">=1.0, <3.0")) is second


def test_satisfier_raises_when_never_satisfied():
    solution = PartialSolution()
    solution.derive(T("a", ">=1.0"), CAUSE)
    with pytest.raises(DepsolveError, match="no assignment satisfies"):
        solution.satisfier(T("a", "<1.0"))
