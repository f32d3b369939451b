"""An in-memory package index.

The registry stores every release of every package together with its
dependencies, optional extras and yank status. It can be built
programmatically or loaded from a JSON-compatible description::

    {"packages": {
        "web": {
            "1.0.0": ["http >=2", "json"],
            "1.1.0": {"dependencies": ["http ^2.1"],
                      "extras": {"tls": ["crypto >=3"]},
                      "yanked": true, "yank_reason": "broken wheel"}
        }
    }}

A release given as a list is shorthand for ``{"dependencies": [...]}``.
"""

from __future__ import annotations

import json
from typing import Any, Iterable, Mapping

from .errors import PackageNotFoundError, RegistryError, RequirementError, VersionError
from .intervals import VersionSet
from .requirements import Requirement, canonical_name
from .version import Version

_RELEASE_KEYS = frozenset({"dependencies", "extras", "yanked", "yank_reason"})


class Release:
    """One published version of a package.

    Attributes:
        name: canonical package name.
        version: the release version.
        dependencies: requirements always considered for this release.
        extras: mapping of canonical extra name to its extra requirements.
        yanked: whether the release was withdrawn.
        yank_reason: optional explanation for the yank.
    """

    __slots__ = ("name", "version", "dependencies", "extras", "yanked", "yank_reason")

    def __init__(
        self,
        name: str,
        version: Version,
        dependencies: Iterable[Requirement] = (),
        extras: Mapping[str, Iterable[Requirement]] | None = None,
        yanked: bool = False,
        yank_reason: str | None = None,
    ) -> None:
        self.name = name
        self.version = version
        self.dependencies = tuple(dependencies)
        self.extras = {extra: tuple(reqs) for extra, reqs in sorted((extras or {}).items())}
        self.yanked = yanked
        self.yank_reason = yank_reason

    def base_requirements(self, environment: Mapping[str, str] | None = None) -> list[Requirement]:
        """Return the plain dependencies active in ``environment``.

        Markers are evaluated with ``extra`` set to ``""``; a ``None``
        environment disables marker filtering.
        """
        env = None if environment is None else {**environment, "extra": ""}
        return [req for req in self.dependencies if req.applies(env)]

    def extra_requirements(self, extra: str, environment: Mapping[str, str] | None = None) -> list[Requirement]:
        """Return the requirements added by ``extra`` that are active in ``environment``.

        Markers are evaluated with ``extra`` set to the extra's name. Unknown
        extras contribute nothing.
        """
        env = None if environment is None else {**environment, "extra": extra}
        return [req for req in self.extras.get(extra, ()) if req.applies(env)]

    def requirements_for(
        self, extras: Iterable[str] = (), environment: Mapping[str, str] | None = None
    ) -> list[Requirement]:
        """Return base requirements followed by those of each extra (sorted by extra name)."""
        result = self.base_requirements(environment)
        for extra in sorted(set(extras)):
            result.extend(self.extra_requirements(extra, environment))
        return result

    def __repr__(self) -> str:
        """``<Release name version>`` with a `` yanked`` suffix for yanked releases."""
        flag = " yanked" if self.yanked else ""
        return f"<Release {self.name} {self.version}{flag}>"


def _as_requirement(value: Any, where: str) -> Requirement:
    """Coerce a string (or Requirement) into a Requirement, naming ``where`` on error."""
    if isinstance(value, Requirement):
        return value
    if not isinstance(value, str):
        raise RegistryError(f"{where}: requirement must be a string, got {type(value).__name__}")
    try:
        return Requirement.parse(value)
    except RequirementError as exc:
        raise RegistryError(f"{where}: {exc}") from exc


class Registry:
    """A mutable collection of package releases keyed by canonical name and version."""

    def __init__(self) -> None:
        self._packages: dict[str, dict[Version, Release]] = {}

    def add_release(
        self,
        name: str,
        version: Version | str,
        dependencies: Iterable[Requirement | str] = (),
        extras: Mapping[str, Iterable[Requirement | str]] | None = None,
        yanked: bool = False,
        yank_reason: str | None = None,
    ) -> Release:
        """Add a release and return it.

        ``name`` is canonicalized, ``version`` may be a strict version string
        and requirements may be given as strings.

        Raises:
            RegistryError: if the release already exists (build metadata is
                ignored when comparing), or the name, version or a
                requirement is invalid.
        """
        try:
            package = canonical_name(name)
            parsed = version if isinstance(version, Version) else Version.parse(version)
        except (RequirementError, VersionError) as exc:
            raise RegistryError(str(exc)) from exc
        where = f"{package} {parsed}"
        if parsed in self._packages.get(package, {}):
            raise RegistryError(f"release {where} is already registered")
        deps = [_as_requirement(dep, f"{where} dependency") for dep in dependencies]
        extra_map = {}
        for extra, reqs in (extras or {}).items():
            try:
                key = canonical_name(extra)
            except RequirementError as exc:
                raise RegistryError(f"{where}: {exc}") from exc
            extra_map[key] = [_as_requirement(req, f"{where} extra {key!r}") for req in reqs]
        release = Release(package, parsed, deps, extra_map, yanked, yank_reason)
        self._packages.setdefault(package, {})[parsed] = release
        return release

    def yank(self, name: str, version: Version | str, reason: str | None = None) -> Release:
        """Mark an existing release as yanked and return the updated release.

        Raises:
            PackageNotFoundError: if the package or release does not exist.
        """
        old = self.release(name, version)
        new = Release(old.name, old.version, old.dependencies, old.extras, True, reason)
        self._packages[old.name][old.version] = new
        return new

    def __contains__(self, name: object) -> bool:
        """True when a package called ``name`` (any spelling) is registered."""
        if not isinstance(name, str):
            return False
        try:
            return canonical_name(name) in self._packages
        except RequirementError:
            return False

    def package_names(self) -> list[str]:
        """Return all canonical package names, sorted."""
        return sorted(self._packages)

    def releases(self, name: str) -> list[Release]:
        """Return every release of ``name`` sorted by ascending version.

        Raises:
            PackageNotFoundError: if the package is unknown.
        """
        package = canonical_name(name)
        if package not in self._packages:
            raise PackageNotFoundError(package)
        return [self._packages[package][v] for v in sorted(self._packages[package])]

    def versions(self, name: str) -> list[Version]:
        """Return every version of ``name`` (yanked included), ascending."""
        return [release.version for release in self.releases(name)]

    def release(self, name: str, version: Version | str) -> Release:
        """Return one release.

        Raises:
            PackageNotFoundError: if the package or that version is unknown.
            RegistryError: if ``version`` is an invalid version string.
        """
        package = canonical_name(name)
        try:
            parsed = version if isinstance(version, Version) else Version.parse(version)
        except VersionError as exc:
            raise RegistryError(str(exc)) from exc
        found = self._packages.get(package, {}).get(parsed)
        if found is None:
            raise PackageNotFoundError(package, f"release {package} {parsed} is not in the registry")
        return found

    def candidates(self, name: str, allowed: VersionSet, *, allow_prereleases: bool = False) -> list[Version]:
        """Return the selectable versions of ``name`` inside ``allowed``, newest first.

        Yanked releases are only selectable when ``allowed`` pins exactly that
        version. Pre-releases are only selectable when ``allow_prereleases``
        is true or ``allowed`` pins exactly that version.

        Raises:
            PackageNotFoundError: if the package is unknown.
        """
        pinned = allowed.single_version()
        result = []
        for release in reversed(self.releases(name)):
            version = release.version
            if not allowed.contains(version):
                continue
            if version != pinned and (release.yanked or (version.is_prerelease and not allow_prereleases)):
                continue
            result.append(version)
        return result

    @classmethod
    def from_dict(cls, data: Mapping[str, Any]) -> "Registry":
        """Build a registry from the JSON-compatible description in the module docstring.

        Raises:
            RegistryError: naming the offending location for any structural
                problem (wrong types, unknown keys, bad requirements).
        """
        if not isinstance(data, Mapping) or not isinstance(data.get("packages"), Mapping):
            raise RegistryError("registry data must be a mapping with a 'packages' mapping")
        registry = cls()
        for name, versions in data["packages"].items():
            if not isinstance(versions, Mapping):
                raise RegistryError(f"packages.{name}: expected a mapping of versions")
            for version, spec in versions.items():
                where = f"packages.{name}.{version}"
                if isinstance(spec, list):
                    spec = {"dependencies": spec}
                if not isinstance(spec, Mapping):
                    raise RegistryError(f"{where}: expected a list or mapping")
                unknown = sorted(set(spec) - _RELEASE_KEYS)
                if unknown:
                    raise RegistryError(f"{where}: unknown keys {unknown}")
                extras = spec.get("extras", {})
                if not isinstance(extras, Mapping) or not isinstance(spec.get("dependencies", []), list):
                    raise RegistryError(f"{where}: 'dependencies' must be a list and 'extras' a mapping")
                registry.add_release(
                    name,
                    version,
                    [_as_requirement(dep, f"{where}.dependencies") for dep in spec.get("dependencies", [])],
                    {extra: [_as_requirement(r, f"{where}.extras.{extra}") for r in reqs] for extra, reqs in extras.items()},
                    bool(spec.get("yanked", False)),
                    spec.get("yank_reason"),
                )
        return registry

    def to_dict(self) -> dict[str, Any]:
        """Return the description accepted by :meth:`from_dict`.

        Releases without extras and not yanked use the list shorthand.
        """
        packages: dict[str, Any] = {}
        for name in self.package_names():
            entries: dict[str, Any] = {}
            for release in self.releases(name):
                deps = [str(dep) for dep in release.dependencies]
                if not release.extras and not release.yanked:
                    entries[str(release.version)] = deps
                    continue
                entry: dict[str, Any] = {"dependencies": deps}
                if release.extras:
                    entry["extras"] = {k: [str(r) for r in v] for k, v in release.extras.items()}
                if release.yanked:
                    entry["yanked"] = True
                    if release.yank_reason:
                        entry["yank_reason"] = release.yank_reason
                entries[str(release.version)] = entry
            packages[name] = entries
        return {"packages": packages}

    @classmethod
    def from_json(cls, text: str) -> "Registry":
        """Parse JSON text with :meth:`from_dict`.

        Raises:
            RegistryError: if the text is not valid JSON or not a valid description.
        """
        try:
            data = json.loads(text)
        except json.JSONDecodeError as exc:
            raise RegistryError(f"invalid registry JSON: {exc.msg} (line {exc.lineno})") from exc
        return cls.from_dict(data)

    def to_json(self) -> str:
        """Serialize :meth:`to_dict` as indented JSON with a stable key order."""
        return json.dumps(self.to_dict(), indent=2, sort_keys=True)
