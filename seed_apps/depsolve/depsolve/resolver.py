"""Conflict-driven version solving in the spirit of PubGrub.

The :class:`Solver` alternates two phases until every selected package has
a decided version:

* **unit propagation** looks at incompatibilities mentioning a recently
  changed package; when all but one of an incompatibility's terms are
  satisfied, the negation of the remaining term is derived. When all terms
  are satisfied there is a conflict, which **conflict resolution** turns
  into a new learned incompatibility and a backjump.
* **decision making** picks the undecided package with the fewest
  candidate versions (ties broken by name) and tries its newest candidate,
  adding one dependency incompatibility per dependency.

Extras are modelled as virtual packages named ``name[extra]`` whose
version ``v`` depends on ``name ==v`` plus the extra's requirements.

The :class:`DependencyProvider` is the only component that talks to the
registry: it applies environment markers, the yanked and pre-release
policies and preferences for previously locked versions.
"""

from __future__ import annotations

from typing import Iterable, Mapping

from .errors import ResolutionError
from .explain import explain_failure
from .intervals import Interval, VersionSet
from .registry import Registry
from .requirements import Requirement
from .solution import PartialSolution
from .terms import (
    CONFLICT,
    DEPENDENCY,
    NO_VERSIONS,
    NOT_FOUND,
    ROOT,
    ROOT_CAUSE,
    ROOT_VERSION,
    Incompatibility,
    Relation,
    Term,
)
from .version import Version

Dependency = tuple[str, VersionSet]


def split_virtual(package: str) -> tuple[str, str | None]:
    """Split a virtual extra package name: ``"web[tls]"`` -> ``("web", "tls")``.

    Plain names are returned with ``None`` as the extra.
    """
    if package.endswith("]") and "[" in package:
        base, _, extra = package[:-1].partition("[")
        return base, extra
    return package, None


def expand_requirement(requirement: Requirement) -> list[Dependency]:
    """Turn a requirement into solver dependencies.

    The base package comes first, followed by one virtual ``name[extra]``
    dependency per requested extra in sorted order, all with the
    requirement's version set.
    """
    allowed = requirement.allowed
    deps = [(requirement.name, allowed)]
    deps.extend((f"{requirement.name}[{extra}]", allowed) for extra in sorted(requirement.extras))
    return deps


class DependencyProvider:
    """Answers the solver's questions about candidate versions and dependencies.

    Args:
        registry: the package index.
        requirements: the root requirements of the project.
        environment: marker environment; ``None`` disables marker filtering.
        allow_prereleases: allow pre-release candidates for every package.
            Independently, a package whose root requirement mentions a
            pre-release version admits pre-releases.
        preferred: versions to try first (e.g. from a lockfile) when they are
            candidates.
    """

    def __init__(
        self,
        registry: Registry,
        requirements: Iterable[Requirement],
        environment: Mapping[str, str] | None = None,
        allow_prereleases: bool = False,
        preferred: Mapping[str, Version] | None = None,
    ) -> None:
        self.registry = registry
        self.environment = environment
        self.allow_prereleases = allow_prereleases
        self.preferred = dict(preferred or {})
        active = [req for req in requirements if req.applies(environment)]
        self.prerelease_packages = {req.name for req in active if req.specifier.mentions_prerelease}
        self.root_dependencies: list[Dependency] = []
        for requirement in active:
            self.root_dependencies.extend(expand_requirement(requirement))

    def exists(self, package: str) -> bool:
        """True for the root package and for (virtual packages of) registry packages."""
        return package == ROOT or split_virtual(package)[0] in self.registry

    def candidates(self, package: str, allowed: VersionSet) -> list[Version]:
        """Return the versions worth trying for ``package`` within ``allowed``, best first.

        Newest versions come first, except that a preferred version that is a
        candidate is moved to the front. The root package's only candidate
        is :data:`ROOT_VERSION`.
        """
        if package == ROOT:
            return [ROOT_VERSION] if allowed.contains(ROOT_VERSION) else []
        base, _ = split_virtual(package)
        prereleases = self.allow_prereleases or base in self.prerelease_packages
        versions = self.registry.candidates(base, allowed, allow_prereleases=prereleases)
        preferred = self.preferred.get(base)
        if preferred is not None and preferred in versions:
            versions.remove(preferred)
            versions.insert(0, preferred)
        return versions

    def dependencies(self, package: str, version: Version) -> list[Dependency]:
        """Return the solver dependencies of ``package`` at ``version``.

        The root yields the expanded root requirements; a virtual
        ``name[extra]`` package yields ``name ==version`` followed by the
        extra's expanded requirements; a plain package yields its expanded
        base requirements active in the environment.
        """
        if package == ROOT:
            return list(self.root_dependencies)
        base, extra = split_virtual(package)
        release = self.registry.release(base, version)
        if extra is None:
            requirements = release.base_requirements(self.environment)
            deps: list[Dependency] = []
        else:
            requirements = release.extra_requirements(extra, self.environment)
            deps = [(base, VersionSet.exact(version))]
        for requirement in requirements:
            deps.extend(expand_requirement(requirement))
        return deps

    def dependency_range(self, package: str, version: Version, dependency: Dependency) -> VersionSet:
        """Return the widest range of ``package`` versions around ``version`` sharing ``dependency``.

        Walks the registry's versions of a plain package outwards from
        ``version`` while neighbouring releases have exactly the same
        dependency (name and version set). The result is
        ``>=lowest_shared, <first_differing_above``, with a side left
        unbounded when the run reaches the oldest or newest release. The
        root and virtual packages always use the exact version.
        """
        if package == ROOT or split_virtual(package)[1] is not None:
            return VersionSet.exact(version)
        versions = self.registry.versions(package)
        index = versions.index(version)
        low = high = index
        while low > 0 and dependency in self.dependencies(package, versions[low - 1]):
            low -= 1
        while high < len(versions) - 1 and dependency in self.dependencies(package, versions[high + 1]):
            high += 1
        lower = None if low == 0 else versions[low]
        upper = None if high == len(versions) - 1 else versions[high + 1]
        return VersionSet([Interval(lower, upper, True, False)])


_CONFLICT = object()


class Solver:
    """Runs PubGrub-style version solving over a :class:`DependencyProvider`.

    Args:
        provider: source of candidates and dependencies.
        max_steps: upper bound on package choices before giving up.
    """

    def __init__(self, provider: DependencyProvider, max_steps: int = 10_000) -> None:
        self.provider = provider
        self.max_steps = max_steps
        self.solution = PartialSolution()
        self.incompatibilities: dict[str, list[Incompatibility]] = {}
        self.steps = 0

    def solve(self) -> dict[str, Version]:
        """Return the selected version of every package (root and virtual packages included).

        Raises:
            ResolutionError: if the requirements cannot be satisfied (the
                message explains why) or ``max_steps`` is exceeded.
        """
        self._add_incompatibility(Incompatibility([Term(ROOT, VersionSet.exact(ROOT_VERSION), False)], ROOT_CAUSE))
        package: str | None = ROOT
        while package is not None:
            self._propagate(package)
            package = self._choose_package_version()
        return dict(self.solution.decisions)

    def _add_incompatibility(self, incompatibility: Incompatibility) -> None:
        for term in incompatibility.terms:
            self.incompatibilities.setdefault(term.package, []).append(incompatibility)

    def _propagate(self, package: str) -> None:
        """Unit-propagate from ``package`` until nothing changes, resolving conflicts."""
        changed = [package]
        while changed:
            current = changed.pop()
            for incompatibility in reversed(list(self.incompatibilities.get(current, []))):
                result = self._propagate_incompatibility(incompatibility)
                if result is _CONFLICT:
                    learned = self._resolve_conflict(incompatibility)
                    derived = self._propagate_incompatibility(learned)
                    changed = [derived] if isinstance(derived, str) else []
                    break
                if isinstance(result, str) and result not in changed:
                    changed.append(result)

    def _propagate_incompatibility(self, incompatibility: Incompatibility) -> object:
        """Derive from ``incompatibility`` if exactly one of its terms is undetermined.

        Returns the package a term was derived for, :data:`_CONFLICT` when
        every term is satisfied, or ``None`` when nothing can be derived.
        """
        unsatisfied: Term | None = None
        for term in incompatibility.terms:
            relation = self.solution.relation(term)
            if relation is Relation.DISJOINT:
                return None
            if relation is Relation.OVERLAPPING:
                if unsatisfied is not None:
                    return None
                unsatisfied = term
        if unsatisfied is None:
            return _CONFLICT
        self.solution.derive(unsatisfied.inverse(), incompatibility)
        return unsatisfied.package

    def _resolve_conflict(self, incompatibility: Incompatibility) -> Incompatibility:
        """Learn from a conflict and backjump; return the incompatibility to propagate.

        Repeatedly finds the term whose satisfier was assigned last. If that
        satisfier is a decision, or the other terms were satisfied at an
        earlier decision level, the solver backjumps to that level and
        returns the (possibly new) incompatibility. Otherwise the
        incompatibility is resolved with the satisfier's cause, producing a
        new derived incompatibility, and the loop repeats.

        Raises:
            ResolutionError: when the learned incompatibility proves failure.
        """
        learned = False
        while not incompatibility.is_failure():
            recent_term: Term | None = None
            recent = None
            difference: Term | None = None
            previous_level = 1
            for term in incompatibility.terms:
                satisfier = self.solution.satisfier(term)
                if recent is None or recent.index < satisfier.index:
                    if recent is not None:
                        previous_level = max(previous_level, recent.decision_level)
                    recent_term, recent, difference = term, satisfier, None
                else:
                    previous_level = max(previous_level, satisfier.decision_level)
                if recent_term is term:
                    difference = recent.difference(term)
                    if difference.is_empty():
                        difference = None
                    else:
                        earlier = self.solution.satisfier(difference.inverse())
                        previous_level = max(previous_level, earlier.decision_level)
            assert recent is not None and recent_term is not None
            if previous_level < recent.decision_level or recent.cause is None:
                self.solution.backtrack(previous_level)
                if learned:
                    self._add_incompatibility(incompatibility)
                return incompatibility
            terms = [term for term in incompatibility.terms if term is not recent_term]
            terms.extend(term for term in recent.cause.terms if term.package != recent.package)
            if difference is not None:
                terms.append(difference.inverse())
            incompatibility = Incompatibility(terms, CONFLICT, incompatibility, recent.cause)
            learned = True
        raise ResolutionError(incompatibility, explain_failure(incompatibility))

    def _priority(self, term: Term) -> tuple[int, str]:
        """Sort key for choosing the next package: missing packages first, then fewest candidates, then name."""
        if not self.provider.exists(term.package):
            return (-1, term.package)
        return (len(self.provider.candidates(term.package, term.allowed)), term.package)

    def _choose_package_version(self) -> str | None:
        """Decide the next package version; return the package touched or ``None`` when done.

        Adds an incompatibility instead of deciding when the package does
        not exist or has no candidates. A decision is skipped if one of the
        new dependency incompatibilities would be immediately violated;
        propagation then takes care of it.

        Raises:
            ResolutionError: when more than ``max_steps`` choices were needed.
        """
        unsatisfied = self.solution.unsatisfied()
        if not unsatisfied:
            return None
        self.steps += 1
        if self.steps > self.max_steps:
            failure = Incompatibility([], CONFLICT)
            raise ResolutionError(failure, f"resolution gave up after {self.max_steps} steps")
        term = min(unsatisfied, key=self._priority)
        package = term.package
        if not self.provider.exists(package):
            self._add_incompatibility(Incompatibility([Term(package, VersionSet.any(), True)], NOT_FOUND))
            return package
        versions = self.provider.candidates(package, term.allowed)
        if not versions:
            self._add_incompatibility(Incompatibility([Term(package, term.allowed, True)], NO_VERSIONS))
            return package
        version = versions[0]
        conflict = False
        for dependency in self.provider.dependencies(package, version):
            depender = self.provider.dependency_range(package, version, dependency)
            incompatibility = Incompatibility(
                [Term(package, depender, True), Term(dependency[0], dependency[1], False)], DEPENDENCY
            )
            self._add_incompatibility(incompatibility)
            conflict = conflict or all(
                t.package == package or self.solution.satisfies(t) for t in incompatibility.terms
            )
        if not conflict:
            self.solution.decide(package, version)
        return package
