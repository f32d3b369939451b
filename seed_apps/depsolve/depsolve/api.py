"""The programmatic facade: resolve requirements into a :class:`Resolution`.

Typical use::

    registry = Registry.from_json(text)
    resolution = resolve(["web[tls] ^1.0"], registry, make_environment("3.11.2"))
    print(resolution.to_lockfile().dumps())
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Iterable, Mapping

from .errors import DepsolveError, PackageNotFoundError, RequirementError
from .graph import DependencyGraph
from .lockfile import LockedPackage, Lockfile
from .registry import Registry
from .requirements import Requirement
from .resolver import DependencyProvider, Solver, split_virtual
from .terms import ROOT
from .version import Version


@dataclass(frozen=True)
class ResolvedPackage:
    """A package selected by the resolver.

    Attributes:
        name: canonical package name.
        version: the selected version.
        extras: the extras that were activated for it.
        dependencies: names of the selected packages it depends on, sorted.
    """

    name: str
    version: Version
    extras: frozenset[str]
    dependencies: tuple[str, ...]


def coerce_requirements(requirements: Iterable[Requirement | str]) -> list[Requirement]:
    """Parse strings into requirements, keeping Requirement objects as they are.

    Raises:
        RequirementError: for an unparsable requirement string or an item
            of another type.
    """
    result = []
    for item in requirements:
        if isinstance(item, Requirement):
            result.append(item)
        elif isinstance(item, str):
            result.append(Requirement.parse(item))
        else:
            raise RequirementError(f"expected a requirement string, got {type(item).__name__}")
    return result


class Resolution:
    """The outcome of a successful resolution.

    Args:
        requirements: the root requirements that were resolved.
        packages: the selected packages keyed by name.
        environment: the marker environment used.
    """

    def __init__(
        self,
        requirements: list[Requirement],
        packages: Mapping[str, ResolvedPackage],
        environment: Mapping[str, str] | None,
    ) -> None:
        self.requirements = requirements
        self.packages = dict(sorted(packages.items()))
        self.environment = dict(environment or {})

    def __contains__(self, name: object) -> bool:
        """True when ``name`` is a selected package."""
        return name in self.packages

    def __len__(self) -> int:
        """Number of selected packages (virtual extra packages excluded)."""
        return len(self.packages)

    def version_of(self, name: str) -> Version:
        """Return the selected version of ``name``.

        Raises:
            DepsolveError: if ``name`` was not selected.
        """
        if name not in self.packages:
            raise DepsolveError(f"package {name!r} is not part of the resolution")
        return self.packages[name].version

    def pins(self) -> dict[str, str]:
        """Return ``{name: version string}`` for every selected package, sorted by name."""
        return {name: str(package.version) for name, package in self.packages.items()}

    def graph(self) -> DependencyGraph:
        """Return the dependency graph; roots are the directly required packages."""
        graph = DependencyGraph(
            {name: package.dependencies for name, package in self.packages.items()},
        )
        for requirement in self.requirements:
            if requirement.name in self.packages:
                graph.add_root(requirement.name)
        return graph

    def install_order(self) -> list[str]:
        """Return package names with dependencies before dependents.

        Raises:
            CycleError: if the selected packages depend on each other cyclically.
        """
        return self.graph().install_order()

    def to_lockfile(self) -> Lockfile:
        """Return the lockfile pinning this resolution."""
        locked = [
            LockedPackage(package.name, package.version, package.dependencies, tuple(sorted(package.extras)))
            for package in self.packages.values()
        ]
        return Lockfile(locked, [str(req) for req in self.requirements], self.environment)


def resolve(
    requirements: Iterable[Requirement | str],
    registry: Registry,
    environment: Mapping[str, str] | None = None,
    *,
    allow_prereleases: bool = False,
    locked: Lockfile | None = None,
    upgrade: Iterable[str] = (),
    max_steps: int = 10_000,
) -> Resolution:
    """Resolve ``requirements`` against ``registry``.

    Args:
        requirements: requirement strings or objects; those whose markers do
            not apply in ``environment`` are ignored.
        registry: the package index.
        environment: marker environment (``None`` disables marker filtering).
        allow_prereleases: consider pre-releases of every package.
        locked: a previous lockfile whose versions are preferred when still
            allowed, so re-resolving changes as little as possible.
        upgrade: names exempt from the ``locked`` preference.
        max_steps: safety limit passed to the solver.

    Returns:
        The resolution, with extras folded back into their packages.

    Raises:
        RequirementError: for invalid requirement strings.
        ResolutionError: if no solution exists.
    """
    parsed = coerce_requirements(requirements)
    upgrades = set(upgrade)
    preferred = {}
    if locked is not None:
        preferred = {p.name: p.version for p in locked.packages if p.name not in upgrades}
    provider = DependencyProvider(registry, parsed, environment, allow_prereleases, preferred)
    decisions = Solver(provider, max_steps=max_steps).solve()
    extras: dict[str, set[str]] = {}
    for package in decisions:
        base, extra = split_virtual(package)
        if package != ROOT and extra is not None:
            extras.setdefault(base, set()).add(extra)
    packages = {}
    for package, version in decisions.items():
        if package == ROOT or split_virtual(package)[1] is not None:
            continue
        activated = extras.get(package, set())
        release = registry.release(package, version)
        names = {req.name for req in release.requirements_for(activated, environment)}
        packages[package] = ResolvedPackage(package, version, frozenset(activated), tuple(sorted(names)))
    active = [req for req in parsed if req.applies(environment)]
    return Resolution(active, packages, environment)


def verify_lockfile(
    lockfile: Lockfile,
    requirements: Iterable[Requirement | str],
    registry: Registry,
    environment: Mapping[str, str] | None = None,
) -> list[str]:
    """Check that ``lockfile`` still satisfies ``requirements`` with ``registry``.

    Returns a sorted list of problems (empty when the lockfile is valid):

    * ``"missing: NAME"`` - a required or depended-on package is not locked;
    * ``"unsatisfied: NAME VERSION does not match SPEC"`` - a locked version
      violates a requirement (root or dependency);
    * ``"unknown: NAME VERSION"`` - the locked release is not in the registry;
    * ``"yanked: NAME VERSION"`` - the locked release was yanked.

    Dependencies of each locked package are checked using its locked extras.
    """
    problems: set[str] = set()
    versions = lockfile.versions()

    def check(requirement: Requirement) -> None:
        """Record a problem if ``requirement`` is not met by the locked versions."""
        if requirement.name not in versions:
            problems.add(f"missing: {requirement.name}")
        elif not requirement.allowed.contains(versions[requirement.name]):
            version = versions[requirement.name]
            problems.add(f"unsatisfied: {requirement.name} {version} does not match {requirement.allowed}")

    for requirement in coerce_requirements(requirements):
        if requirement.applies(environment):
            check(requirement)
    for package in lockfile.packages:
        try:
            release = registry.release(package.name, package.version)
        except PackageNotFoundError:
            problems.add(f"unknown: {package.name} {package.version}")
            continue
        if release.yanked:
            problems.add(f"yanked: {package.name} {package.version}")
        for requirement in release.requirements_for(package.extras, environment):
            check(requirement)
    return sorted(problems)
