import pytest

from depsolve import Registry, Requirement, ResolutionError, Version, make_environment
from depsolve.resolver import DependencyProvider, Solver, expand_requirement, split_virtual
from depsolve.specifiers import parse_specifier
from depsolve.terms import ROOT, ROOT_VERSION, Term


def V(text):
    return Version.parse(text)


def R(packages):
    return Registry.from_dict({"packages": packages})


def solve(registry, requirements, environment=None, **options):
    provider = DependencyProvider(registry, [Requirement.parse(r) for r in requirements], environment, **options)
    decisions = Solver(provider).solve()
    return {name: str(version) for name, version in decisions.items() if name != ROOT}


def test_split_virtual_names():
    assert split_virtual("web[tls]") == ("web", "tls")
    assert split_virtual("web") == ("web", None)
    assert split_virtual("odd]") == ("odd]", None)


def test_expand_requirement_adds_virtual_package_per_extra():
    deps = expand_requirement(Requirement.parse("web[tls,fast] >=1"))
    assert [(name, str(allowed)) for name, allowed in deps] == [
        ("web", ">=1.0.0"),
        ("web[fast]", ">=1.0.0"),
        ("web[tls]", ">=1.0.0"),
    ]


def test_provider_root_candidates_and_dependencies(web_registry):
    provider = DependencyProvider(web_registry, [Requirement.parse("web[tls] ^1.0")])
    assert provider.candidates(ROOT, parse_specifier("*")) == [ROOT_VERSION]
    assert provider.candidates(ROOT, parse_specifier(">=1.0")) == []
    assert [name for name, _ in provider.dependencies(ROOT, ROOT_VERSION)] == ["web", "web[tls]"]


def test_provider_skips_root_requirements_whose_marker_does_not_apply(web_registry):
    requirements = [Requirement.parse('web ; os_name == "nt"'), Requirement.parse("json")]
    provider = DependencyProvider(web_registry, requirements, make_environment())
    assert [name for name, _ in provider.root_dependencies] == ["json"]


def test_provider_virtual_package_depends_on_exact_base_version(web_registry):
    provider = DependencyProvider(web_registry, [], make_environment())
    deps = provider.dependencies("web[tls]", V("1.1.0"))
    assert [(name, str(allowed)) for name, allowed in deps] == [("web", "==1.1.0"), ("crypto", ">=3.0.0")]


def test_provider_exists_covers_root_virtual_and_registry_packages(web_registry):
    provider = DependencyProvider(web_registry, [])
    assert provider.exists(ROOT)
    assert provider.exists("web[anything]")
    assert not provider.exists("ghost")


def test_provider_moves_preferred_version_to_front(web_registry):
    provider = DependencyProvider(web_registry, [], preferred={"json": V("1.0.0"), "http": V("9.9.9")})
    assert provider.candidates("json", parse_specifier("*")) == [V("1.0.0"), V("2.5.0"), V("2.0.0")]
    assert provider.candidates("http", parse_specifier("*")) == [V("2.0.0"), V("1.4.0"), V("1.0.0")]


def test_provider_enables_prereleases_for_packages_whose_requirement_mentions_one(web_registry):
    provider = DependencyProvider(web_registry, [Requirement.parse("web >=1.2.0-rc.1")])
    assert provider.candidates("web", parse_specifier("*"))[0] == V("1.2.0-rc.1")
    assert provider.candidates("web[tls]", parse_specifier("*"))[0] == V("1.2.0-rc.1")
    assert provider.candidates("crypto", parse_specifier("*"))[0] == V("3.1.0")


def test_dependency_range_spans_neighbouring_releases_with_same_dependency():
    registry = R(
        {
            "a": {"1.0.0": ["b ^1"], "1.1.0": ["b ^2"], "1.2.0": ["b ^2"], "1.3.0": ["b ^2"], "2.0.0": ["b ^3"]},
            "b": {"1.0.0": [], "2.0.0": [], "3.0.0": []},
        }
    )
    provider = DependencyProvider(registry, [])
    dependency = ("b", parse_specifier("^2"))
    assert str(provider.dependency_range("a", V("1.2.0"), dependency)) == ">=1.1.0, <2.0.0"
    assert str(provider.dependency_range("a", V("1.0.0"), ("b", parse_specifier("^1")))) == "<1.1.0"
    assert str(provider.dependency_range("a", V("2.0.0"), ("b", parse_specifier("^3")))) == ">=2.0.0"
    assert str(provider.dependency_range("a[x]", V("1.2.0"), dependency)) == "==1.2.0"


def test_dependency_range_is_everything_when_all_releases_agree():
    registry = R({"a": {"1.0.0": ["b"], "2.0.0": ["b"]}, "b": {"1.0.0": []}})
    assert DependencyProvider(registry, []).dependency_range("a", V("2.0.0"), ("b", parse_specifier("*"))).is_any()


def test_solver_picks_newest_compatible_versions():
    registry = R({"foo": {"1.0.0": ["bar ^1.0.0"], "2.0.0": []}, "bar": {"1.0.0": [], "2.0.0": []}})
    assert solve(registry, ["foo ^1.0.0"]) == {"foo": "1.0.0", "bar": "1.0.0"}


def test_solver_avoids_conflict_during_decision_making():
    registry = R({"foo": {"1.0.0": [], "1.1.0": ["bar ^2.0.0"]}, "bar": {"1.0.0": [], "1.1.0": [], "2.0.0": []}})
    assert solve(registry, ["foo ^1.0.0", "bar ^1.0.0"]) == {"foo": "1.0.0", "bar": "1.1.0"}


def test_solver_performs_conflict_resolution_and_backjumps():
    registry = R({"foo": {"1.0.0": [], "2.0.0": ["bar ^1.0.0"]}, "bar": {"1.0.0": ["foo ^1.0.0"]}})
    assert solve(registry, ["foo >=1.0.0"]) == {"foo": "1.0.0"}


def test_solver_handles_partial_satisfier_conflicts():
    registry = R(
        {
            "foo": {"1.0.0": [], "1.1.0": ["left ^1.0.0", "right ^1.0.0"]},
            "left": {"1.0.0": ["shared >=1.0.0"]},
            "right": {"1.0.0": ["shared <2.0.0"]},
            "shared": {"2.0.0": [], "1.0.0": ["target ^1.0.0"]},
            "target": {"2.0.0": [], "1.0.0": []},
        }
    )
    assert solve(registry, ["foo ^1.0.0", "target ^2.0.0"]) == {"foo": "1.0.0", "target": "2.0.0"}


def test_solver_backtracks_through_several_versions():
    registry = R(
        {
            "a": {f"{n}.0.0": [f"b =={n}.0.0"] for n in range(1, 6)},
            "b": {f"{n}.0.0": (["c <1"] if n > 2 else []) for n in range(1, 6)},
            "c": {"0.5.0": [], "1.0.0": []},
        }
    )
    assert solve(registry, ["a", "c >=1"]) == {"a": "2.0.0", "b": "2.0.0", "c": "1.0.0"}


def test_solver_selects_extras_as_virtual_packages(web_registry):
    result = solve(web_registry, ["web[tls]"], make_environment())
    assert result == {"web": "1.1.0", "web[tls]": "1.1.0", "http": "2.0.0", "json": "2.5.0", "crypto": "3.1.0"}


def test_solver_applies_dependency_markers(web_registry):
    result = solve(web_registry, ["web"], make_environment(sys_platform="win32"))
    assert result["winapi"] == "1.0.0"
    assert "winapi" not in solve(web_registry, ["web"], make_environment(sys_platform="linux"))


def test_solver_uses_yanked_release_only_when_pinned(web_registry):
    assert solve(web_registry, ["http"])["http"] == "2.0.0"
    assert solve(web_registry, ["http ==2.1.0"])["http"] == "2.1.0"


def test_solver_allow_prereleases_option(web_registry):
    assert solve(web_registry, ["web"], make_environment())["web"] == "1.1.0"
    assert solve(web_registry, ["web"], make_environment(), allow_prereleases=True)["web"] == "1.2.0-rc.1"


def test_solver_prefers_locked_versions_when_allowed(web_registry):
    result = solve(web_registry, ["web"], make_environment(), preferred={"json": V("2.0.0"), "web": V("1.0.0")})
    assert result == {"web": "1.0.0", "http": "1.4.0", "json": "2.0.0"}


def test_solver_reports_missing_package():
    registry = R({"app": {"1.0.0": ["ghost >=1"], "0.9.0": ["ghost >=1"]}})
    with pytest.raises(ResolutionError) as info:
        solve(registry, ["app"])
    assert str(info.value) == (
        "Because every version of app depends on ghost >=1.0.0 and ghost does not exist in the registry, "
        "every version of app is forbidden.\n"
        "So, because the project requires app, version solving failed."
    )
    assert info.value.incompatibility.is_failure()


def test_solver_reports_missing_versions():
    registry = R({"app": {"1.0.0": []}})
    with pytest.raises(ResolutionError) as info:
        solve(registry, ["app >=2"])
    assert info.value.explanation == (
        "Because no versions of app match >=2.0.0 and the project requires app >=2.0.0, version solving failed."
    )


def test_solver_gives_up_after_max_steps():
    registry = R({"a": {"1.0.0": ["b"]}, "b": {"1.0.0": []}})
    provider = DependencyProvider(registry, [Requirement.parse("a")])
    with pytest.raises(ResolutionError, match="gave up after 2 steps"):
        Solver(provider, max_steps=2).solve()
    assert Solver(DependencyProvider(registry, [Requirement.parse("a")]), max_steps=3).solve()["b"] == V("1.0.0")


def test_solver_learns_incompatibilities_on_conflict():
    registry = R({"foo": {"1.0.0": [], "2.0.0": ["bar ^1.0.0"]}, "bar": {"1.0.0": ["foo ^1.0.0"]}})
    solver = Solver(DependencyProvider(registry, [Requirement.parse("foo >=1.0.0")]))
    solver.solve()
    learned = {str(i) for i in solver.incompatibilities["foo"] if i.is_derived}
    assert "foo >=2.0.0 is forbidden" in learned


def test_solver_decides_packages_with_fewest_candidates_first():
    registry = R({"many": {"1.0.0": [], "2.0.0": [], "3.0.0": []}, "few": {"1.0.0": []}})
    solver = Solver(DependencyProvider(registry, [Requirement.parse("many"), Requirement.parse("few")]))
    solver.solve()
    decided = [a.package for a in solver.solution.assignments if a.is_decision]
    assert decided == [ROOT, "few", "many"]
    assert solver._priority(Term("ghost", parse_specifier("*"))) == (-1, "ghost")
