import json

import pytest

from depsolve import PackageNotFoundError, Registry, RegistryError, Requirement, Version, make_environment
from depsolve.specifiers import parse_specifier


def V(text):
    return Version.parse(text)


def test_from_dict_loads_packages_and_releases(web_registry):
    assert web_registry.package_names() == ["crypto", "http", "json", "speedups", "web", "winapi"]
    assert web_registry.versions("web") == [V("1.0.0"), V("1.1.0"), V("1.2.0-rc.1")]
    release = web_registry.release("web", "1.1.0")
    assert [str(dep) for dep in release.dependencies] == ["http ^2.0", "json", 'winapi ; sys_platform == "win32"']
    assert sorted(release.extras) == ["fast", "tls"]
    assert repr(web_registry.release("http", "2.1.0")) == "<Release http 2.1.0 yanked>"


def test_add_release_canonicalizes_name_and_parses_strings():
    registry = Registry()
    release = registry.add_release("My_Pkg", "1.0.0", ["Dep >=1"], {"Extra_One": ["other"]})
    assert (release.name, release.version) == ("my-pkg", V("1.0.0"))
    assert release.dependencies == (Requirement.parse("dep >=1"),)
    assert list(release.extras) == ["extra-one"]
    assert "MY.PKG" in registry
    assert 42 not in registry
    assert "bad name!" not in registry


def test_add_release_rejects_duplicates_ignoring_build_metadata():
    registry = Registry()
    registry.add_release("a", "1.0.0+build1")
    with pytest.raises(RegistryError, match="already registered"):
        registry.add_release("a", "1.0.0+build2")


@pytest.mark.parametrize(
    "args, message",
    [
        (("bad name", "1.0.0"), "invalid package name"),
        (("a", "1.0"), "MAJOR.MINOR.PATCH"),
        (("a", "1.0.0", ["b >=>1"]), "a 1.0.0 dependency"),
        (("a", "1.0.0", [42]), "requirement must be a string"),
        (("a", "1.0.0", [], {"bad extra!": []}), "invalid package name"),
    ],
)
def test_add_release_validation_errors(args, message):
    registry = Registry()
    with pytest.raises(RegistryError, match=message):
        registry.add_release(*args)
    assert registry.package_names() == []


def test_yank_replaces_release_with_yanked_copy(web_registry):
    yanked = web_registry.yank("json", "2.5.0", "bad metadata")
    assert (yanked.yanked, yanked.yank_reason) == (True, "bad metadata")
    assert web_registry.release("json", "2.5.0").yanked is True


def test_lookup_errors_name_the_package():
    registry = Registry()
    registry.add_release("a", "1.0.0")
    with pytest.raises(PackageNotFoundError, match="package 'missing' is not in the registry"):
        registry.releases("missing")
    with pytest.raises(PackageNotFoundError, match="release a 2.0.0 is not in the registry") as info:
        registry.release("a", "2.0.0")
    assert info.value.package == "a"
    with pytest.raises(RegistryError, match="MAJOR.MINOR.PATCH"):
        registry.release("a", "2")


def test_candidates_are_newest_first_and_skip_yanked_and_prereleases(web_registry):
    assert web_registry.candidates("http", parse_specifier("*")) == [V("2.0.0"), V("1.4.0"), V("1.0.0")]
    assert web_registry.candidates("web", parse_specifier(">=1.0")) == [V("1.1.0"), V("1.0.0")]


def test_candidates_include_prereleases_when_allowed(web_registry):
    found = web_registry.candidates("web", parse_specifier("*"), allow_prereleases=True)
    assert found == [V("1.2.0-rc.1"), V("1.1.0"), V("1.0.0")]


def test_candidates_allow_exact_pins_of_yanked_and_prerelease_versions(web_registry):
    assert web_registry.candidates("http", parse_specifier("==2.1.0")) == [V("2.1.0")]
    assert web_registry.candidates("web", parse_specifier("==1.2.0-rc.1")) == [V("1.2.0-rc.1")]


def test_base_requirements_filter_markers_by_environment(web_registry):
    release = web_registry.release("web", "1.1.0")
    linux = [str(r) for r in release.base_requirements(make_environment(sys_platform="linux"))]
    windows = [str(r) for r in release.base_requirements(make_environment(sys_platform="win32"))]
    assert linux == ["http ^2.0", "json"]
    assert windows == ["http ^2.0", "json", 'winapi ; sys_platform == "win32"']
    assert len(release.base_requirements(None)) == 3


def test_extra_requirements_evaluate_markers_with_the_extra_name(web_registry):
    release = web_registry.release("web", "1.1.0")
    env = make_environment()
    assert [r.name for r in release.extra_requirements("fast", env)] == ["speedups"]
    assert release.extra_requirements("unknown", env) == []


def test_requirements_for_appends_extras_in_sorted_order(web_registry):
    release = web_registry.release("web", "1.1.0")
    names = [r.name for r in release.requirements_for(["tls", "fast", "tls"], make_environment())]
    assert names == ["http", "json", "speedups", "crypto"]


@pytest.mark.parametrize(
    "data, message",
    [
        ([], "must be a mapping with a 'packages' mapping"),
        ({"packages": []}, "must be a mapping with a 'packages' mapping"),
        ({"packages": {"a": ["1.0.0"]}}, "packages.a: expected a mapping of versions"),
        ({"packages": {"a": {"1.0.0": "b"}}}, "packages.a.1.0.0: expected a list or mapping"),
        ({"packages": {"a": {"1.0.0": {"deps": []}}}}, "unknown keys \\['deps'\\]"),
        ({"packages": {"a": {"1.0.0": {"extras": []}}}}, "'extras' a mapping"),
        ({"packages": {"a": {"1.0.0": {"dependencies": "b"}}}}, "'dependencies' must be a list"),
        ({"packages": {"a": {"1.0.0": ["b ==="]}}}, "packages.a.1.0.0.dependencies"),
        ({"packages": {"a": {"1.0.0": {"extras": {"x": ["!"]}}}}}, "packages.a.1.0.0.extras.x"),
    ],
)
def test_from_dict_reports_location_of_structural_errors(data, message):
    with pytest.raises(RegistryError, match=message):
        Registry.from_dict(data)


def test_to_dict_uses_list_shorthand_only_for_plain_releases(web_registry):
    data = web_registry.to_dict()
    assert data["packages"]["json"] == {"1.0.0": [], "2.0.0": [], "2.5.0": []}
    assert data["packages"]["http"]["2.1.0"] == {"dependencies": [], "yanked": True}
    assert data["packages"]["web"]["1.1.0"]["extras"] == {
        "fast": ['speedups ; extra == "fast"'],
        "tls": ["crypto >=3"],
    }


def test_to_dict_keeps_yank_reason():
    registry = Registry()
    registry.add_release("a", "1.0.0", yanked=True, yank_reason="oops")
    assert registry.to_dict() == {"packages": {"a": {"1.0.0": {"dependencies": [], "yanked": True, "yank_reason": "oops"}}}}


def test_json_round_trip_preserves_registry(web_registry):
    text = web_registry.to_json()
    assert json.loads(text) == web_registry.to_dict()
    assert Registry.from_json(text).to_dict() == web_registry.to_dict()


def test_from_json_reports_invalid_json():
    with pytest.raises(RegistryError, match="invalid registry JSON: .* \\(line 1\\)"):
        Registry.from_json("{not json")
