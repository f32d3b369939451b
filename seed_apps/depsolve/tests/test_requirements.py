import pytest

from depsolve import Marker, Requirement, RequirementError, Specifier, canonical_name, make_environment, parse_requirements


@pytest.mark.parametrize(
    "name, expected",
    [("Foo", "foo"), ("foo_bar", "foo-bar"), ("Foo__Bar.baz", "foo-bar-baz"), ("a-._b", "a-b"), ("x1", "x1")],
)
def test_canonical_name_normalizes_case_and_separators(name, expected):
    assert canonical_name(name) == expected


@pytest.mark.parametrize("name", ["", "-foo", "foo-", "foo bar", "f@o", None])
def test_canonical_name_rejects_invalid_names(name):
    with pytest.raises(RequirementError, match="invalid package name"):
        canonical_name(name)


def test_parse_bare_name():
    requirement = Requirement.parse("Requests")
    assert requirement.name == "requests"
    assert requirement.allowed.is_any()
    assert requirement.extras == frozenset()
    assert requirement.marker is None


def test_parse_full_requirement():
    requirement = Requirement.parse('Web_Kit [TLS, http2] >=1.0, <2 ; python_version >= "3.8"')
    assert requirement.name == "web-kit"
    assert requirement.extras == frozenset({"tls", "http2"})
    assert requirement.specifier == Specifier(">=1.0.0, <2.0.0")
    assert requirement.marker == Marker('python_version >= "3.8"')


def test_parse_specifier_in_parentheses():
    assert str(Requirement.parse("foo (>=1.2)").allowed) == ">=1.2.0"


def test_parse_specifier_directly_after_name():
    assert str(Requirement.parse("foo^1.2").allowed) == ">=1.2.0, <2.0.0-0"


def test_parse_empty_extras_list():
    assert Requirement.parse("foo[]").extras == frozenset()


@pytest.mark.parametrize(
    "text, message",
    [
        (">=1.0", "must start with a package name"),
        ("foo[bar", "unclosed extras list"),
        ("foo[a,,b]", "empty extra name"),
        ("foo[b@d]", "invalid package name"),
        ("foo (>=1.0", "unclosed parenthesis"),
        ("foo >=1.0 garbage", "invalid version specifier"),
        ("foo ; ", "empty marker"),
        ("foo ; os_name ==", "invalid marker"),
    ],
)
def test_parse_errors(text, message):
    with pytest.raises(RequirementError, match=message):
        Requirement.parse(text)


def test_str_renders_canonical_form():
    requirement = Requirement.parse("Foo[b,a]   >=1.0,<2;os_name=='nt'")
    assert str(requirement) == 'foo[a,b] >=1.0,<2 ; os_name == "nt"'
    assert str(Requirement.parse("bar")) == "bar"


def test_applies_evaluates_marker():
    requirement = Requirement.parse('foo ; sys_platform == "win32"')
    assert requirement.applies(make_environment(sys_platform="win32")) is True
    assert requirement.applies(make_environment(sys_platform="linux")) is False
    assert requirement.applies(None) is True
    assert Requirement.parse("foo").applies({}) is True


def test_requirements_are_hashable_values():
    assert Requirement.parse("foo >=1") == Requirement.parse("FOO >=1.0.0")
    assert len({Requirement.parse("foo >=1"), Requirement.parse("foo>=1.0")}) == 1


def test_parse_requirements_handles_comments_blank_lines_and_continuations():
    text = """
# the web stack
web[tls] >=1.0  # pinned for now
http \\
    ^2.1

json-lib ; os_name == "posix"
"""
    requirements = parse_requirements(text)
    assert [str(r) for r in requirements] == ["web[tls] >=1.0", "http ^2.1", 'json-lib ; os_name == "posix"']


def test_parse_requirements_reports_line_of_logical_line_start():
    text = "foo\nbar \\\n  >=1.0 junk\nbaz"
    with pytest.raises(RequirementError, match="^line 2: "):
        parse_requirements(text)


def test_parse_requirements_rejects_dangling_continuation():
    with pytest.raises(RequirementError, match="line 2: continuation at end of input"):
        parse_requirements("foo\nbar \\")
