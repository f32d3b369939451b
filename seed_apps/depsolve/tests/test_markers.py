import pytest

from depsolve import Marker, MarkerError, make_environment
from depsolve.markers import BoolOp, Comparison, Literal, Variable, compare_values, tokenize

LINUX = make_environment("3.11.4", "linux")
WINDOWS = make_environment("3.8.10", "win32")


def test_tokenize_strips_quotes_and_keeps_positions():
    tokens = tokenize("python_version >= '3.8' and (os_name == \"posix\")")
    assert [(t.kind, t.text) for t in tokens] == [
        ("word", "python_version"),
        ("op", ">="),
        ("string", "3.8"),
        ("word", "and"),
        ("lparen", "("),
        ("word", "os_name"),
        ("op", "=="),
        ("string", "posix"),
        ("rparen", ")"),
    ]
    assert tokens[2].position == 18


def test_tokenize_reports_unterminated_string():
    with pytest.raises(MarkerError, match="unterminated string starting at position 11"):
        tokenize('os_name == "posix')


def test_tokenize_reports_unexpected_character():
    with pytest.raises(MarkerError, match="unexpected character '!' at position 0"):
        tokenize("!os_name")


def test_parser_builds_flattened_boolean_tree():
    marker = Marker('os_name == "posix" and python_version >= "3.8" and extra == "tls"')
    assert isinstance(marker.tree, BoolOp)
    assert marker.tree.op == "and"
    assert marker.tree.operands[0] == Comparison(Variable("os_name"), "==", Literal("posix"))
    assert len(marker.tree.operands) == 3


def test_and_binds_tighter_than_or():
    marker = Marker('os_name == "nt" or os_name == "posix" and sys_platform == "darwin"')
    assert marker.tree.op == "or"
    assert marker.evaluate(LINUX) is False
    assert marker.evaluate(WINDOWS) is True


def test_parentheses_override_precedence():
    marker = Marker('(os_name == "nt" or os_name == "posix") and sys_platform == "darwin"')
    assert marker.tree.op == "and"
    assert marker.evaluate(WINDOWS) is False


@pytest.mark.parametrize(
    "text, linux, windows",
    [
        ('python_version >= "3.9"', True, False),
        ('python_version < "3.10"', False, True),
        ('"3.9" <= python_version', True, False),
        ('python_full_version == "3.8.10"', False, True),
        ('python_version ~= "3.8"', True, True),
        ('python_full_version ~= "3.8.1"', False, True),
        ('sys_platform != "win32"', True, False),
        ('platform_system == "Windows"', False, True),
        ('"linux" in sys_platform', True, False),
        ('sys_platform not in "win32 cygwin"', True, False),
        ('implementation_name === "cpython"', True, True),
    ],
)
def test_evaluate_against_two_environments(text, linux, windows):
    marker = Marker(text)
    assert (marker.evaluate(LINUX), marker.evaluate(WINDOWS)) == (linux, windows)


def test_missing_extra_counts_as_empty_string():
    assert Marker('extra == ""').evaluate({}) is True
    assert Marker('extra == "tls"').evaluate({"extra": "tls"}) is True


def test_missing_variable_raises():
    with pytest.raises(MarkerError, match="no value for marker variable 'os_name'"):
        Marker('os_name == "posix"').evaluate({})


def test_or_short_circuits_before_missing_variable():
    assert Marker('extra == "" or os_name == "posix"').evaluate({}) is True


def test_compare_values_versions_and_strings():
    assert compare_values("3.10", ">", "3.9") is True
    assert compare_values("3.10", "==", "3.10.0") is True
    assert compare_values("abc", "!=", "abd") is True
    assert compare_values("abc", "==", "abc") is True


def test_compare_values_rejects_ordering_of_non_versions():
    with pytest.raises(MarkerError, match="both sides must be versions"):
        compare_values("posix", "<", "zeta")


def test_compare_values_rejects_unknown_operator_on_versions():
    with pytest.raises(MarkerError, match="unknown marker operator"):
        compare_values("1.0", "<>", "2.0")


def test_compatible_release_with_single_component_is_an_error():
    with pytest.raises(MarkerError, match="at least two components"):
        Marker('python_version ~= "3"').evaluate(LINUX)


@pytest.mark.parametrize(
    "text, message",
    [
        ("", "empty marker"),
        ('os_name == "a" and', "expected a variable or quoted string but found end of input"),
        ('os_name "a"', "expected a comparison operator"),
        ('(os_name == "a"', "expected '\\)'"),
        ('os_name not "a"', "expected 'in' after 'not'"),
        ('python == "3"', "unknown marker variable 'python'"),
        ('os_name == "a" os_name == "b"', "expected 'and', 'or' or end of marker"),
        ('and == "a"', "expected a variable or quoted string"),
    ],
)
def test_parse_errors(text, message):
    with pytest.raises(MarkerError, match=message):
        Marker(text)


def test_canonical_rendering_normalizes_quotes_and_parentheses():
    marker = Marker("(os_name=='nt' or os_name=='posix') and python_version>='3.8'")
    assert str(marker) == '(os_name == "nt" or os_name == "posix") and python_version >= "3.8"'
    assert repr(Marker("os_name == 'x'")) == "Marker('os_name == \"x\"')"


def test_rendering_uses_single_quotes_for_values_containing_double_quotes():
    assert str(Marker("platform_release == 'a\"b'")) == "platform_release == 'a\"b'"


def test_variables_collects_names_from_both_sides():
    marker = Marker('"3.8" <= python_version and (os_name == "nt" or extra == "x")')
    assert marker.variables() == frozenset({"python_version", "os_name", "extra"})


def test_markers_combine_with_and_or_operators():
    left = Marker('os_name == "nt"')
    right = Marker('python_version >= "3.9"')
    assert str(left & right) == 'os_name == "nt" and python_version >= "3.9"'
    assert str((left | right) & left) == '(os_name == "nt" or python_version >= "3.9") and os_name == "nt"'
    assert (left | right).evaluate(LINUX) is True


def test_marker_equality_uses_canonical_form():
    assert Marker("os_name=='nt'") == Marker('os_name == "nt"')
    assert hash(Marker("os_name=='nt'")) == hash(Marker('os_name == "nt"'))
    assert (Marker("os_name=='nt'") == "os_name == 'nt'") is False


def test_make_environment_derives_values():
    env = make_environment("3.12.1", "darwin", platform_machine="arm64")
    assert env == {
        "python_version": "3.12",
        "python_full_version": "3.12.1",
        "sys_platform": "darwin",
        "platform_system": "Darwin",
        "platform_machine": "arm64",
        "platform_release": "",
        "os_name": "posix",
        "implementation_name": "cpython",
    }


def test_make_environment_windows_and_unknown_platform():
    assert WINDOWS["os_name"] == "nt"
    assert WINDOWS["platform_system"] == "Windows"
    assert make_environment(sys_platform="freebsd")["platform_system"] == "Freebsd"


def test_make_environment_overrides_and_validation():
    assert make_environment(platform_release="6.1")["platform_release"] == "6.1"
    with pytest.raises(MarkerError, match="unknown marker variable 'arch'"):
        make_environment(arch="x")
    with pytest.raises(MarkerError, match="invalid python version"):
        make_environment("three")
