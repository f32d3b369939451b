import pytest

from depsolve import (
    CycleError,
    DepsolveError,
    Lockfile,
    Registry,
    Requirement,
    RequirementError,
    ResolutionError,
    ResolvedPackage,
    Version,
    make_environment,
    resolve,
    verify_lockfile,
)
from depsolve.api import coerce_requirements

LINUX = make_environment("3.11.4", "linux")


def V(text):
    return Version.parse(text)


def test_coerce_requirements_accepts_strings_and_objects():
    parsed = Requirement.parse("b")
    assert coerce_requirements(["a >=1", parsed]) == [Requirement.parse("a >=1"), parsed]
    with pytest.raises(RequirementError, match="expected a requirement string, got int"):
        coerce_requirements([3])


def test_resolve_folds_extras_into_packages(web_registry):
    resolution = resolve(["web[tls]"], web_registry, LINUX)
    assert resolution.pins() == {"crypto": "3.1.0", "http": "2.0.0", "json": "2.5.0", "web": "1.1.0"}
    assert resolution.packages["web"] == ResolvedPackage("web", V("1.1.0"), frozenset({"tls"}), ("crypto", "http", "json"))
    assert resolution.packages["http"].dependencies == ("json",)
    assert len(resolution) == 4 and "web" in resolution and "web[tls]" not in resolution


def test_resolve_ignores_requirements_for_other_platforms(web_registry):
    resolution = resolve(["json", 'web ; sys_platform == "win32"'], web_registry, LINUX)
    assert resolution.pins() == {"json": "2.5.0"}
    assert [str(r) for r in resolution.requirements] == ["json"]


def test_version_of_and_missing_package(web_registry):
    resolution = resolve(["json <2"], web_registry, LINUX)
    assert resolution.version_of("json") == V("1.0.0")
    with pytest.raises(DepsolveError, match="'web' is not part of the resolution"):
        resolution.version_of("web")


def test_graph_roots_are_direct_requirements(web_registry):
    graph = resolve(["web", "json"], web_registry, LINUX).graph()
    assert graph.roots == {"web", "json"}
    assert graph.dependencies("web") == ["http", "json"]
    assert graph.why("json") == [["json"], ["web", "json"]]


def test_install_order_of_resolution(web_registry):
    assert resolve(["web[tls]"], web_registry, LINUX).install_order() == ["crypto", "json", "http", "web"]


def test_install_order_reports_cyclic_dependencies():
    registry = Registry.from_dict({"packages": {"a": {"1.0.0": ["b"]}, "b": {"1.0.0": ["a"]}}})
    resolution = resolve(["a"], registry)
    assert resolution.pins() == {"a": "1.0.0", "b": "1.0.0"}
    with pytest.raises(CycleError):
        resolution.install_order()


def test_to_lockfile_records_inputs_and_round_trips(web_registry):
    lock = resolve(["web[tls] ^1.0"], web_registry, LINUX).to_lockfile()
    assert lock.requirements == ["web[tls] ^1.0"]
    assert lock.environment["sys_platform"] == "linux"
    assert lock.get("web").extras == ("tls",)
    assert Lockfile.loads(lock.dumps()) == lock


def test_resolution_is_deterministic(web_registry):
    first = resolve(["web[tls,fast]", "http"], web_registry, LINUX).to_lockfile().dumps()
    second = resolve(["http", "web[fast,tls]"], web_registry, LINUX).to_lockfile().dumps()
    assert first.split("\n")[5:] == second.split("\n")[5:]


def test_locked_versions_are_kept_when_re_resolving(web_registry):
    old = resolve(["web", "json <2.5"], web_registry, LINUX).to_lockfile()
    relaxed = resolve(["web", "json"], web_registry, LINUX, locked=old)
    assert relaxed.pins()["json"] == "2.0.0"
    upgraded = resolve(["web", "json"], web_registry, LINUX, locked=old, upgrade=["json"])
    assert upgraded.pins()["json"] == "2.5.0"
    assert old.diff(upgraded.to_lockfile()).summary() == ["^ json 2.0.0 -> 2.5.0"]


def test_allow_prereleases_flag(web_registry):
    assert resolve(["web"], web_registry, LINUX, allow_prereleases=True).pins()["web"] == "1.2.0-rc.1"


def test_resolve_raises_with_explanation(web_registry):
    with pytest.raises(ResolutionError, match="version solving failed"):
        resolve(["web >=1.1", "http <2"], web_registry, LINUX)


def test_resolve_passes_max_steps_to_solver(web_registry):
    with pytest.raises(ResolutionError, match="gave up after 1 steps"):
        resolve(["web"], web_registry, LINUX, max_steps=1)


def test_verify_lockfile_accepts_fresh_lockfile(web_registry):
    lock = resolve(["web[tls]"], web_registry, LINUX).to_lockfile()
    assert verify_lockfile(lock, ["web[tls]"], web_registry, LINUX) == []


def test_verify_lockfile_reports_every_kind_of_problem(web_registry):
    lock = resolve(["web[tls]"], web_registry, LINUX).to_lockfile()
    registry = Registry.from_dict(web_registry.to_dict())
    registry.yank("crypto", "3.1.0")
    stale = Lockfile(
        [p for p in lock.packages if p.name != "json"] + [type(lock.packages[0])("ghost", V("1.0.0"))],
        lock.requirements,
    )
    problems = verify_lockfile(stale, ["web[tls] >=2", "extra-pkg", 'winapi ; os_name == "nt"'], registry, LINUX)
    assert problems == [
        "missing: extra-pkg",
        "missing: json",
        "unknown: ghost 1.0.0",
        "unsatisfied: web 1.1.0 does not match >=2.0.0",
        "yanked: crypto 3.1.0",
    ]
