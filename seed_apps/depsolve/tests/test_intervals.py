import pytest

from depsolve import Interval, Version, VersionSet
from depsolve.specifiers import parse_specifier


def V(text):
    return Version.parse(text)


def S(text):
    return parse_specifier(text)


def test_interval_unbounded_sides_are_always_open():
    interval = Interval(None, None, True, True)
    assert (interval.lower_closed, interval.upper_closed) == (False, False)
    assert repr(interval) == "Interval((-inf, +inf))"


@pytest.mark.parametrize(
    "interval, empty",
    [
        (Interval(V("1.0.0"), V("1.0.0"), True, True), False),
        (Interval(V("1.0.0"), V("1.0.0"), True, False), True),
        (Interval(V("2.0.0"), V("1.0.0"), True, True), True),
        (Interval(V("1.0.0"), V("2.0.0"), False, False), False),
        (Interval(None, V("1.0.0")), False),
    ],
)
def test_interval_is_empty(interval, empty):
    assert interval.is_empty() is empty


def test_interval_contains_respects_open_and_closed_bounds():
    interval = Interval(V("1.0.0"), V("2.0.0"), False, True)
    assert [interval.contains(V(t)) for t in ("1.0.0", "1.0.1", "2.0.0", "2.0.1")] == [False, True, True, False]


def test_interval_intersect_takes_tightest_bounds():
    first = Interval(V("1.0.0"), V("3.0.0"), True, True)
    second = Interval(V("1.0.0"), V("3.0.0"), False, False)
    assert repr(first.intersect(second)) == "Interval((1.0.0, 3.0.0))"
    assert first.intersect(Interval(V("4.0.0"), None)).is_empty()


def test_interval_equality_and_hash_follow_bounds():
    assert Interval(V("1.0.0"), None) == Interval(V("1.0.0"), None, True, True)
    assert hash(Interval(V("1.0.0"), None)) == hash(Interval(V("1.0.0"), None, True, True))
    assert Interval(V("1.0.0"), None) != Interval(V("1.0.0"), None, False)


def test_set_normalization_merges_overlapping_and_touching_intervals():
    merged = VersionSet(
        [
            Interval(V("3.0.0"), V("4.0.0")),
            Interval(V("1.0.0"), V("2.0.0")),
            Interval(V("2.0.0"), V("2.5.0")),
            Interval(V("1.5.0"), V("1.8.0")),
        ]
    )
    assert str(merged) == ">=1.0.0, <2.5.0 || >=3.0.0, <4.0.0"
    assert len(merged.intervals) == 2


def test_set_normalization_keeps_open_touching_intervals_apart():
    split = VersionSet([Interval(V("1.0.0"), V("2.0.0"), True, False), Interval(V("2.0.0"), V("3.0.0"), False, False)])
    assert str(split) == ">=1.0.0, <2.0.0 || >2.0.0, <3.0.0"
    assert split.contains(V("2.0.0")) is False


def test_set_normalization_drops_empty_intervals():
    assert VersionSet([Interval(V("2.0.0"), V("1.0.0"))]).is_empty()


def test_any_and_empty_sets():
    assert VersionSet.any().is_any() and not VersionSet.any().is_empty()
    assert VersionSet.empty().is_empty() and not VersionSet.empty().is_any()
    assert str(VersionSet.any()) == "*"
    assert str(VersionSet.empty()) == "<none>"


def test_union_of_several_sets():
    combined = S("<1.0.0").union(S(">=2.0.0"), S("==1.5.0"))
    assert str(combined) == "<1.0.0 || ==1.5.0 || >=2.0.0"


def test_intersection_sweeps_multiple_intervals():
    left = S("<1.0.0 || >=2.0.0, <3.0.0 || >=4.0.0")
    right = S(">=0.5.0, <2.5.0 || >=3.5.0")
    assert str(left & right) == ">=0.5.0, <1.0.0 || >=2.0.0, <2.5.0 || >=4.0.0"


def test_intersection_of_disjoint_sets_is_empty():
    assert (S("<1.0.0") & S(">=1.0.0")).is_empty()


def test_complement_of_bounded_range():
    assert str(~S(">=1.0.0, <2.0.0")) == "<1.0.0 || >=2.0.0"


def test_complement_of_union_with_unbounded_ends():
    assert str(~S("<1.0.0 || >2.0.0")) == ">=1.0.0, <=2.0.0"


def test_complement_of_any_and_empty():
    assert (~VersionSet.any()).is_empty()
    assert (~VersionSet.empty()).is_any()


def test_complement_is_an_involution():
    original = S(">=1.0.0, <1.5.0 || ==2.0.0 || >3.0.0")
    assert ~~original == original


def test_difference_removes_versions():
    assert str(S(">=1.0.0, <3.0.0") - S("==2.0.0")) == ">=1.0.0, <2.0.0 || >2.0.0, <3.0.0"


def test_subset_and_allows_any():
    assert S("==1.5.0").is_subset(S(">=1.0.0, <2.0.0"))
    assert not S(">=1.0.0").is_subset(S(">=1.0.0, <2.0.0"))
    assert S(">=1.0.0").allows_any(S("<1.0.1"))
    assert not S(">=1.0.0").allows_any(S("<1.0.0"))


def test_single_version_detection():
    assert VersionSet.exact(V("1.2.3")).single_version() == V("1.2.3")
    assert S(">=1.0.0, <=1.0.0").single_version() == V("1.0.0")
    assert S("==1.0.0 || ==2.0.0").single_version() is None
    assert S(">=1.0.0").single_version() is None


def test_membership_operator_requires_a_version():
    versions = S(">=1.0.0")
    assert V("1.2.0") in versions
    assert "1.2.0" not in versions


def test_filter_returns_sorted_members():
    versions = [V("3.0.0"), V("1.0.0"), V("2.0.0"), V("1.5.0")]
    assert S(">=1.5.0, <3.0.0").filter(versions) == [V("1.5.0"), V("2.0.0")]


def test_string_rendering_of_everything_but_one_version():
    assert str(~VersionSet.exact(V("1.5.0"))) == "!=1.5.0"


def test_string_rendering_of_half_bounded_sets():
    assert str(VersionSet.greater_than(V("1.0.0"))) == ">1.0.0"
    assert str(VersionSet.at_most(V("1.0.0"))) == "<=1.0.0"
    assert repr(VersionSet.at_least(V("1.0.0"))) == "VersionSet('>=1.0.0')"


def test_set_equality_and_hash_depend_on_members_only():
    assert S(">=1.0.0, <2.0.0 || >=2.0.0") == S(">=1.0.0")
    assert hash(S(">=1.0.0, <2.0.0 || >=2.0.0")) == hash(S(">=1.0.0"))
    assert (S(">=1.0.0") == ">=1.0.0") is False


def test_union_absorbs_intervals_inside_unbounded_ones():
    assert str(S(">=1.0.0") | S(">=2.0.0, <3.0.0")) == ">=1.0.0"
    assert str(S("<1.0.0") | S("<2.0.0")) == "<2.0.0"


def test_interval_equality_with_other_types_is_false():
    assert (Interval() == "interval") is False
