import pytest

from depsolve import Version, VersionError
from depsolve.version import parse_partial


def V(text):
    return Version.parse(text)


def test_parse_full_version_with_prerelease_and_build():
    version = V("1.2.3-rc.1+build.007")
    assert version.release == (1, 2, 3)
    assert version.prerelease == ("rc", 1)
    assert version.build == ("build", "007")
    assert str(version) == "1.2.3-rc.1+build.007"


def test_parse_prerelease_with_hyphenated_identifier():
    assert V("1.0.0-x-y.2").prerelease == ("x-y", 2)


@pytest.mark.parametrize(
    "text",
    ["1.2", "1.2.3.4", "01.2.3", "1.2.-3", "1.2.3-", "1.2.3-rc..1", "1.2.3-01", "1.2.3+", "1.2.3+a_b", "a.b.c", ""],
)
def test_parse_rejects_malformed_versions_in_strict_mode(text):
    with pytest.raises(VersionError):
        Version.parse(text)


def test_parse_rejects_non_string_input():
    with pytest.raises(VersionError, match="must be a string"):
        Version.parse(123)


def test_loose_parse_pads_missing_components_and_strips_v_prefix():
    assert Version.parse(" v1.2 ", loose=True) == Version(1, 2, 0)
    assert Version.parse("V3", loose=True) == Version(3, 0, 0)


def test_loose_parse_still_rejects_four_components():
    with pytest.raises(VersionError, match="MAJOR.MINOR.PATCH"):
        Version.parse("1.2.3.4", loose=True)


def test_constructor_accepts_dotted_strings_for_prerelease_and_build():
    version = Version(1, 0, 0, "alpha.1", "sha.5114f85")
    assert version.prerelease == ("alpha", 1)
    assert version.build == ("sha", "5114f85")


@pytest.mark.parametrize("bad", [-1, 1.5, True, "1"])
def test_constructor_rejects_invalid_components(bad):
    with pytest.raises(VersionError, match="non-negative integer"):
        Version(bad, 0, 0)


def test_semver_precedence_chain_from_specification():
    chain = [
        "1.0.0-alpha",
        "1.0.0-alpha.1",
        "1.0.0-alpha.beta",
        "1.0.0-beta",
        "1.0.0-beta.2",
        "1.0.0-beta.11",
        "1.0.0-rc.1",
        "1.0.0",
        "1.0.1",
        "1.1.0",
        "2.0.0",
    ]
    versions = [V(text) for text in chain]
    assert sorted(reversed(versions)) == versions
    for lower, higher in zip(versions, versions[1:]):
        assert lower < higher, f"expected {lower} < {higher}"


def test_numeric_identifiers_sort_numerically_not_lexically():
    assert V("1.0.0-2") < V("1.0.0-10")
    assert V("1.0.0-10") < V("1.0.0-a")


def test_build_metadata_is_ignored_for_equality_and_hash():
    assert V("1.0.0+a") == V("1.0.0+b")
    assert hash(V("1.0.0+a")) == hash(V("1.0.0"))
    assert len({V("1.0.0+a"), V("1.0.0+b")}) == 1


def test_comparison_with_other_types_is_not_supported():
    assert (V("1.0.0") == "1.0.0") is False
    with pytest.raises(TypeError):
        V("1.0.0") < "2.0.0"


def test_is_prerelease_flag():
    assert V("1.0.0-rc.1").is_prerelease is True
    assert V("1.0.0+build").is_prerelease is False


@pytest.mark.parametrize(
    "text, expected",
    [("1.2.3", "2.0.0"), ("1.2.3-rc", "2.0.0"), ("2.0.0-rc.1", "2.0.0"), ("2.1.0-rc.1", "3.0.0")],
)
def test_bump_major(text, expected):
    assert str(V(text).bump_major()) == expected


@pytest.mark.parametrize(
    "text, expected",
    [("1.2.3", "1.3.0"), ("1.3.0-beta", "1.3.0"), ("1.3.1-beta", "1.4.0")],
)
def test_bump_minor(text, expected):
    assert str(V(text).bump_minor()) == expected


@pytest.mark.parametrize("text, expected", [("1.2.3", "1.2.4"), ("1.2.3-rc.2+b", "1.2.3")])
def test_bump_patch(text, expected):
    assert str(V(text).bump_patch()) == expected


def test_lowest_prerelease_is_below_every_prerelease_of_the_release():
    floor = V("2.0.0").lowest_prerelease()
    assert str(floor) == "2.0.0-0"
    assert V("1.99.99") < floor < V("2.0.0-0.0") < V("2.0.0-alpha") < V("2.0.0")


def test_without_build_drops_only_build_metadata():
    assert str(V("1.2.3-rc.1+exp.sha").without_build()) == "1.2.3-rc.1"


def test_repr_shows_the_version_text():
    assert repr(V("0.1.0-dev")) == "Version('0.1.0-dev')"


@pytest.mark.parametrize(
    "text, expected, given",
    [("1", "1.0.0", 1), ("1.2", "1.2.0", 2), ("v1.2.3-rc.1", "1.2.3-rc.1", 3), ("0.0.0+b", "0.0.0+b", 3)],
)
def test_parse_partial_reports_number_of_written_components(text, expected, given):
    version, count = parse_partial(text)
    assert (str(version), count) == (expected, given)


def test_parse_partial_rejects_suffix_on_partial_version():
    with pytest.raises(VersionError, match="cannot carry"):
        parse_partial("1.2-rc.1")
