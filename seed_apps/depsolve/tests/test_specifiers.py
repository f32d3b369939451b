import pytest

from depsolve import Specifier, SpecifierError, Version
from depsolve.specifiers import constraint_set, hyphen_range, parse_specifier, tokenize


def V(text):
    return Version.parse(text)


def test_tokenize_classifies_tokens_and_drops_whitespace():
    tokens = tokenize(">=1.0, <2 || ^3.1 || 1.0 - 2.0")
    assert [(t.kind, t.text) for t in tokens] == [
        ("op", ">="),
        ("version", "1.0"),
        ("comma", ","),
        ("op", "<"),
        ("version", "2"),
        ("or", "||"),
        ("op", "^"),
        ("version", "3.1"),
        ("or", "||"),
        ("version", "1.0"),
        ("hyphen", "-"),
        ("version", "2.0"),
    ]
    assert tokens[3].position == 7


def test_tokenize_reports_unexpected_character_position():
    with pytest.raises(SpecifierError, match="'@' at position 3"):
        tokenize(">= @1")


@pytest.mark.parametrize(
    "spec, expected",
    [
        ("", "*"),
        ("*", "*"),
        ("1.2.3", "==1.2.3"),
        ("=1.2.3", "==1.2.3"),
        ("==1.2", ">=1.2.0, <1.3.0-0"),
        ("==1", ">=1.0.0, <2.0.0-0"),
        ("!=1.2.3", "!=1.2.3"),
        ("!=1.2", "<1.2.0 || >=1.3.0-0"),
        (">=1.2", ">=1.2.0"),
        (">1.2.3", ">1.2.3"),
        (">1.2", ">=1.3.0"),
        ("<1.2", "<1.2.0"),
        ("<=1.2.3", "<=1.2.3"),
        ("<=1.2", "<1.3.0-0"),
        ("~=1.4.2", ">=1.4.2, <1.5.0-0"),
        ("~=1.4", ">=1.4.0, <2.0.0-0"),
        ("^1.2.3", ">=1.2.3, <2.0.0-0"),
        ("^0.2.3", ">=0.2.3, <0.3.0-0"),
        ("^0.0.3", ">=0.0.3, <0.0.4-0"),
        ("^0.0", ">=0.0.0, <0.1.0-0"),
        ("^0", ">=0.0.0, <1.0.0-0"),
        ("^1.2.3-beta.2", ">=1.2.3-beta.2, <2.0.0-0"),
        ("~1.2.3", ">=1.2.3, <1.3.0-0"),
        ("~1.2", ">=1.2.0, <1.3.0-0"),
        ("~1", ">=1.0.0, <2.0.0-0"),
        ("1.2.*", ">=1.2.0, <1.3.0-0"),
        ("1.x", ">=1.0.0, <2.0.0-0"),
        ("==1.*.*", ">=1.0.0, <2.0.0-0"),
        ("!=1.2.*", "<1.2.0 || >=1.3.0-0"),
        ("v1.2.3", "==1.2.3"),
    ],
)
def test_single_clause_translation(spec, expected):
    assert str(parse_specifier(spec)) == expected


def test_comma_and_whitespace_both_mean_and():
    assert parse_specifier(">=1.0, <2.0") == parse_specifier(">=1.0 <2.0")
    assert str(parse_specifier(">=1.0 <2.0 !=1.5.0")) == ">=1.0.0, <1.5.0 || >1.5.0, <2.0.0"


def test_or_has_lower_precedence_than_and():
    assert str(parse_specifier(">=1.0, <1.5 || >=2.0, <2.5")) == ">=1.0.0, <1.5.0 || >=2.0.0, <2.5.0"


def test_contradictory_conjunction_is_empty():
    assert parse_specifier(">=2.0, <1.0").is_empty()


def test_hyphen_range_with_full_upper_bound_is_inclusive():
    assert str(parse_specifier("1.2 - 2.3.4")) == ">=1.2.0, <=2.3.4"


def test_hyphen_range_with_partial_upper_bound_covers_the_prefix():
    assert str(hyphen_range("1.0", "2.3")) == ">=1.0.0, <2.4.0-0"


def test_hyphen_range_rejects_wildcards():
    with pytest.raises(SpecifierError, match="cannot use wildcards"):
        parse_specifier("1.* - 2.0")


def test_wildcard_cannot_be_used_with_ordering_operators():
    with pytest.raises(SpecifierError, match="cannot be used with wildcard"):
        constraint_set(">=", "1.*")


@pytest.mark.parametrize("spec", ["1.*.3", "1.2.3.*", "1.a.*", "1.2.3-rc*"])
def test_malformed_wildcards_are_rejected(spec):
    with pytest.raises(SpecifierError):
        parse_specifier(spec)


def test_prerelease_identifier_named_x_is_not_a_wildcard():
    assert str(parse_specifier("1.2.3-rc.x")) == "==1.2.3-rc.x"


def test_compatible_release_needs_two_components():
    with pytest.raises(SpecifierError, match="at least two components"):
        parse_specifier("~=1")


def test_unknown_operator_is_rejected_by_constraint_set():
    with pytest.raises(SpecifierError, match="unknown operator"):
        constraint_set("<>", "1.0.0")


@pytest.mark.parametrize(
    "spec, message",
    [
        (">=", "expected a version but found end of input"),
        (">=1.0,", "expected a version"),
        ("1.0 ||", "expected a version"),
        ("1.0 - ", "expected the upper end of a hyphen range"),
        (">=1.0 - 2.0", "unexpected '-' at position 6"),
        (">=1.0.0-01", "leading zero"),
    ],
)
def test_syntax_errors_are_reported(spec, message):
    with pytest.raises(SpecifierError, match=message):
        parse_specifier(spec)


def test_specifier_keeps_normalized_text_and_allowed_set():
    spec = Specifier("  >=1.0,   <2  ")
    assert spec.text == ">=1.0, <2"
    assert str(spec) == ">=1.0, <2"
    assert repr(spec) == "Specifier('>=1.0, <2')"
    assert str(spec.allowed) == ">=1.0.0, <2.0.0"


def test_specifier_contains_accepts_versions_and_strings():
    spec = Specifier("^1.2")
    assert spec.contains("1.9.0") is True
    assert spec.contains(V("2.0.0")) is False
    assert "1.5.0" in spec
    assert 1.5 not in spec


def test_specifier_detects_prerelease_mentions():
    assert Specifier(">=1.0.0-rc.1").mentions_prerelease is True
    assert Specifier("1.0.0-beta - 2.0.0").mentions_prerelease is True
    assert Specifier(">=1.0.0+build-5").mentions_prerelease is False
    assert Specifier(">=1.0, <2").mentions_prerelease is False


def test_specifier_filter_and_best_match():
    versions = [V("1.0.0"), V("1.4.0"), V("2.0.0"), V("1.9.9")]
    spec = Specifier("~=1.4")
    assert spec.filter(versions) == [V("1.4.0"), V("1.9.9")]
    assert spec.best_match(versions) == V("1.9.9")
    assert Specifier(">5").best_match(versions) is None


def test_specifier_equality_compares_allowed_versions():
    assert Specifier("^1.2") == Specifier(">=1.2.0, <2.0.0-0")
    assert hash(Specifier("~1")) == hash(Specifier("1.*"))
    assert Specifier("^1.2") != Specifier("^1.3")
    assert (Specifier("1.0.0") == "1.0.0") is False


def test_star_glued_to_a_number_is_malformed():
    with pytest.raises(SpecifierError, match="malformed wildcard version '1.2\\*'"):
        parse_specifier("1.2*")
