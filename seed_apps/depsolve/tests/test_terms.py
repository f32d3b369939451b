import pytest

from depsolve.specifiers import parse_specifier
from depsolve.terms import (
    CONFLICT,
    DEPENDENCY,
    NO_VERSIONS,
    NOT_FOUND,
    ROOT,
    ROOT_CAUSE,
    Incompatibility,
    Relation,
    Term,
    describe_package,
)


def T(package, spec, positive=True):
    return Term(package, parse_specifier(spec), positive)


ROOT_ANY = T(ROOT, "*")


@pytest.mark.parametrize(
    "left, right, relation",
    [
        (T("a", "^1.2"), T("a", ">=1.0"), Relation.SUBSET),
        (T("a", ">=1.0"), T("a", "^1.2"), Relation.OVERLAPPING),
        (T("a", "<1.0"), T("a", ">=1.0"), Relation.DISJOINT),
        (T("a", "<1.0"), T("a", ">=1.0", False), Relation.SUBSET),
        (T("a", "^1.2"), T("a", ">=1.0", False), Relation.DISJOINT),
        (T("a", ">=0.5"), T("a", ">=1.0", False), Relation.OVERLAPPING),
        (T("a", ">=1.0", False), T("a", "^1.2"), Relation.DISJOINT),
        (T("a", "^1.2", False), T("a", ">=1.0"), Relation.OVERLAPPING),
        (T("a", ">=1.0", False), T("a", "^1.2", False), Relation.SUBSET),
        (T("a", "^1.2", False), T("a", ">=1.0", False), Relation.OVERLAPPING),
    ],
)
def test_relation_table(left, right, relation):
    assert left.relation(right) is relation


def test_satisfies_requires_same_package_and_subset():
    assert T("a", "==1.0.0").satisfies(T("a", "^1.0"))
    assert not T("a", "==1.0.0").satisfies(T("b", "^1.0"))
    assert not T("a", ">=1.0").satisfies(T("a", "^1.0"))


@pytest.mark.parametrize(
    "left, right, expected, positive",
    [
        (T("a", ">=1.0"), T("a", "<2.0"), ">=1.0.0, <2.0.0", True),
        (T("a", ">=1.0"), T("a", ">=2.0", False), ">=1.0.0, <2.0.0", True),
        (T("a", ">=2.0", False), T("a", ">=1.0"), ">=1.0.0, <2.0.0", True),
        (T("a", "<1.0", False), T("a", ">=2.0", False), "<1.0.0 || >=2.0.0", False),
    ],
)
def test_intersect_by_polarity(left, right, expected, positive):
    result = left.intersect(right)
    assert (str(result.allowed), result.positive) == (expected, positive)


def test_difference_and_emptiness():
    remaining = T("a", ">=1.0").difference(T("a", ">=2.0"))
    assert str(remaining.allowed) == ">=1.0.0, <2.0.0"
    assert T("a", "^1.0").difference(T("a", ">=1.0")).is_empty()
    assert not T("a", "*", False).is_empty()


def test_inverse_flips_polarity_only():
    term = T("a", "^1.0")
    assert term.inverse() == T("a", "^1.0", False)
    assert term.inverse().inverse() == term
    assert hash(term) == hash(T("a", ">=1.0.0, <2.0.0-0"))
    assert (term == "a") is False


def test_term_rendering():
    assert str(T("a", ">=1.0")) == "a >=1.0.0"
    assert repr(T("a", "*", False)) == "Term(not a)"
    assert describe_package(ROOT, parse_specifier("==0.0.0")) == "the project"


def test_incompatibility_merges_terms_about_the_same_package():
    incompatibility = Incompatibility([T("a", ">=1.0"), T("b", "*", False), T("a", "<2.0")], CONFLICT)
    assert [(t.package, str(t.allowed)) for t in incompatibility.terms] == [("a", ">=1.0.0, <2.0.0"), ("b", "*")]
    assert incompatibility.term_for("b") == T("b", "*", False)
    assert incompatibility.term_for("c") is None


def test_derived_incompatibility_drops_positive_root_term():
    derived = Incompatibility([ROOT_ANY, T("a", "^1.0", False)], CONFLICT)
    assert [t.package for t in derived.terms] == ["a"]
    external = Incompatibility([ROOT_ANY, T("a", "^1.0", False)], DEPENDENCY)
    assert [t.package for t in external.terms] == [ROOT, "a"]
    only_root = Incompatibility([ROOT_ANY], CONFLICT)
    assert only_root.is_failure()


def test_failure_detection():
    assert Incompatibility([], CONFLICT).is_failure()
    assert not Incompatibility([T(ROOT, "*", False)], ROOT_CAUSE).is_failure()
    assert not Incompatibility([T("a", "*")], CONFLICT).is_failure()
    assert Incompatibility([T("a", "*")], CONFLICT).is_derived
    assert not Incompatibility([T("a", "*")], NOT_FOUND).is_derived


@pytest.mark.parametrize(
    "incompatibility, text",
    [
        (Incompatibility([], CONFLICT), "version solving failed"),
        (Incompatibility([ROOT_ANY, T("a", "^1.0", False)], DEPENDENCY), "the project requires a >=1.0.0, <2.0.0-0"),
        (Incompatibility([T("a", "*"), T("b", ">=2", False)], DEPENDENCY), "every version of a depends on b >=2.0.0"),
        (Incompatibility([T("a", "<2"), T("b", "*", False)], DEPENDENCY), "a <2.0.0 depends on b"),
        (Incompatibility([T("a", ">=3")], NO_VERSIONS), "no versions of a match >=3.0.0"),
        (Incompatibility([T("ghost", "*")], NOT_FOUND), "ghost does not exist in the registry"),
        (Incompatibility([T(ROOT, "*", False)], ROOT_CAUSE), "the project is being resolved"),
        (Incompatibility([T("a", "<2")], CONFLICT), "a <2.0.0 is forbidden"),
        (Incompatibility([T("a", "*")], CONFLICT), "every version of a is forbidden"),
        (Incompatibility([T("a", ">=2", False)], CONFLICT), "a >=2.0.0 is required"),
        (Incompatibility([T("a", "*"), T("b", "<1")], CONFLICT), "every version of a is incompatible with b <1.0.0"),
        (Incompatibility([T("a", "*"), T("b", "*"), T("c", "*")], CONFLICT), "one of every version of a, every version of b, every version of c must be false"),
        (Incompatibility([T("a", "*", False), T("b", "<1", False)], CONFLICT), "either a or b <1.0.0"),
        (Incompatibility([T("a", ">=1"), T("b", "<1", False)], CONFLICT), "a >=1.0.0 requires b <1.0.0"),
        (Incompatibility([T("a", ">=1"), T("c", "*"), T("b", "<1", False)], CONFLICT), "a >=1.0.0 and every version of c require b <1.0.0"),
        (Incompatibility([ROOT_ANY, T("b", "<1", False), T("c", "*", False)], DEPENDENCY), "the project requires b <1.0.0 and c"),
    ],
)
def test_incompatibility_sentences(incompatibility, text):
    assert str(incompatibility) == text


def test_incompatibility_repr_mentions_kind_and_terms():
    assert repr(Incompatibility([T("a", "<2")], NO_VERSIONS)) == "<Incompatibility no_versions: [Term(a <2.0.0)]>"


def test_root_subject_in_generic_sentences():
    incompatibility = Incompatibility([ROOT_ANY, T("a", "*"), T("b", "<1", False)], DEPENDENCY)
    assert str(incompatibility) == "the project and every version of a require b <1.0.0"
