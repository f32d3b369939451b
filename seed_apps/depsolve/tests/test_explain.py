import pytest

from depsolve import Registry, ResolutionError, resolve
from depsolve.explain import Explainer, conjoin, explain_failure
from depsolve.specifiers import parse_specifier
from depsolve.terms import CONFLICT, DEPENDENCY, NO_VERSIONS, NOT_FOUND, ROOT, Incompatibility, Term


def T(package, spec, positive=True):
    return Term(package, parse_specifier(spec), positive)


@pytest.fixture
def tree():
    """A hand-built derivation graph where X is shared by Y and the failure F."""
    e1 = Incompatibility([T("a", "*"), T("b", "<2", False)], DEPENDENCY)
    e2 = Incompatibility([T("b", "*"), T("c", "<2", False)], DEPENDENCY)
    e3 = Incompatibility([T("c", "<2")], NO_VERSIONS)
    x = Incompatibility([T("a", "*"), T("c", "<2", False)], CONFLICT, e1, e2)
    y = Incompatibility([T("a", "*")], CONFLICT, x, e3)
    failure = Incompatibility([], CONFLICT, y, x)
    return {"e3": e3, "x": x, "y": y, "failure": failure}


def failure_of(packages, requirements):
    with pytest.raises(ResolutionError) as info:
        resolve(requirements, Registry.from_dict({"packages": packages}))
    return info.value.explanation


def test_external_failure_is_a_single_capitalized_sentence():
    assert explain_failure(Incompatibility([T("ghost", "*")], NOT_FOUND)) == "Ghost does not exist in the registry."


def test_reference_counting_counts_each_parent(tree):
    explainer = Explainer(tree["failure"])
    assert explainer.references[id(tree["x"])] == 2
    assert explainer.references[id(tree["y"])] == 1
    assert explainer.references[id(tree["e3"])] == 0


def test_shared_derivation_is_numbered_and_cited_instead_of_repeated(tree):
    assert explain_failure(tree["failure"]).splitlines() == [
        "(1) Because every version of a depends on b <2.0.0 and every version of b depends on c <2.0.0, "
        "every version of a requires c <2.0.0.",
        "(2) So, because no versions of c match <2.0.0, every version of a is forbidden.",
        "(3) So, because every version of a is forbidden (2) and every version of a requires c <2.0.0 (1), "
        "version solving failed.",
    ]


def test_both_causes_already_numbered_are_cited_together(tree):
    again = Incompatibility([T("a", "*")], CONFLICT, tree["x"], tree["y"])
    top = Incompatibility([], CONFLICT, tree["failure"], again)
    lines = explain_failure(top).splitlines()
    assert lines[3] == ""
    assert lines[4] == "    Because every version of a requires c <2.0.0 (1) and every version of a is forbidden (2), every version of a is forbidden."
    assert lines[5] == "(4) So, because version solving failed (3), version solving failed."


def test_linear_failure_explanation():
    explanation = failure_of(
        {"foo": {"1.0.0": ["bar ^2.0.0"]}, "bar": {"2.0.0": ["baz ^3.0.0"]}, "baz": {"1.0.0": [], "3.0.0": []}},
        ["foo ^1.0.0", "baz ^1.0.0"],
    )
    assert explanation.splitlines() == [
        "Because every version of foo depends on bar >=2.0.0, <3.0.0-0 and every version of bar depends on "
        "baz >=3.0.0, <4.0.0-0, every version of foo requires baz >=3.0.0, <4.0.0-0.",
        "So, because the project requires both foo >=1.0.0, <2.0.0-0 and baz >=1.0.0, <2.0.0-0, version solving failed.",
    ]


def test_branching_failure_explanation_numbers_the_first_branch():
    explanation = failure_of(
        {
            "foo": {"1.0.0": ["a ^1.0.0", "b ^1.0.0"], "1.1.0": ["x ^1.0.0", "y ^1.0.0"]},
            "a": {"1.0.0": ["b ^2.0.0"]},
            "b": {"1.0.0": [], "2.0.0": []},
            "x": {"1.0.0": ["y ^2.0.0"]},
            "y": {"1.0.0": [], "2.0.0": []},
        },
        ["foo ^1.0.0"],
    )
    lines = explanation.splitlines()
    assert len(lines) == 7
    assert lines[1] == "(1) So, because foo <1.1.0 depends on b >=1.0.0, <2.0.0-0, foo <1.1.0 is forbidden."
    assert lines[2] == ""
    assert lines[5] == "    And because foo <1.1.0 is forbidden (1), every version of foo is forbidden."
    assert lines[6] == "(2) So, because the project requires foo >=1.0.0, <2.0.0-0, version solving failed."


def test_conflict_between_two_requirements_on_shared_dependency():
    explanation = failure_of(
        {
            "foo": {"1.0.0": ["shared >=2,<3"], "1.1.0": ["shared >=2,<3"]},
            "bar": {"1.0.0": ["shared >=1,<2"], "2.0.0": ["shared >=1,<2"]},
            "shared": {"1.0.0": [], "1.5.0": [], "2.0.0": []},
        },
        ["foo", "bar"],
    )
    assert explanation.splitlines() == [
        "Because every version of bar depends on shared >=1.0.0, <2.0.0 and every version of foo depends on "
        "shared >=2.0.0, <3.0.0, every version of bar is incompatible with every version of foo.",
        "So, because the project requires both foo and bar, version solving failed.",
    ]


def test_root_term_rendering_in_explanations():
    requirement = Incompatibility([T(ROOT, "*"), T("a", "*", False)], DEPENDENCY)
    missing = Incompatibility([T("a", "*")], NOT_FOUND)
    failure = Incompatibility([T(ROOT, "*")], CONFLICT, requirement, missing)
    assert explain_failure(failure) == "Because the project requires a and a does not exist in the registry, version solving failed."


def test_sibling_citing_an_already_numbered_derivation(tree):
    sibling = Incompatibility([T("a", "*")], CONFLICT, tree["x"], tree["e3"])
    top = Incompatibility([], CONFLICT, tree["failure"], sibling)
    lines = explain_failure(top).splitlines()
    assert lines[3:] == [
        "",
        "    Because no versions of c match <2.0.0 and every version of a requires c <2.0.0 (1), every version of a is forbidden.",
        "(4) So, because version solving failed (3), version solving failed.",
    ]


def test_derivation_with_one_cited_and_one_fresh_derived_cause(tree):
    e1 = Incompatibility([T("d", "*"), T("e", "*", False)], DEPENDENCY)
    e2 = Incompatibility([T("e", "*")], NOT_FOUND)
    fresh = Incompatibility([T("d", "*")], CONFLICT, e1, e2)
    mixed = Incompatibility([T("d", "*")], CONFLICT, tree["x"], fresh)
    top = Incompatibility([], CONFLICT, tree["failure"], mixed)
    lines = explain_failure(top).splitlines()
    assert lines[3:] == [
        "",
        "    Because every version of d depends on e and e does not exist in the registry, every version of d is forbidden.",
        "    And because every version of a requires c <2.0.0 (1), every version of d is forbidden.",
        "(4) So, because version solving failed (3), version solving failed.",
    ]


def test_conjoin_merges_dependencies_of_the_same_depender():
    first = Incompatibility([T("app", "<2"), T("a", ">=1", False)], DEPENDENCY)
    second = Incompatibility([T("app", "<2"), T("b", "*", False)], DEPENDENCY)
    other = Incompatibility([T("app", ">=2"), T("b", "*", False)], DEPENDENCY)
    assert conjoin(first, second) == "app <2.0.0 depends on both a >=1.0.0 and b"
    assert conjoin(first, other) == "app <2.0.0 depends on a >=1.0.0 and app >=2.0.0 depends on b"


def test_collapsible_requires_single_reference_and_one_unnumbered_derived_cause(tree):
    explainer = Explainer(tree["failure"])
    assert explainer._collapsible(tree["y"]) is True
    assert explainer._collapsible(tree["x"]) is False
    explainer.references[id(tree["y"])] = 2
    assert explainer._collapsible(tree["y"]) is False
