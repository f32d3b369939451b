"""Exception hierarchy shared by every depsolve module.

All errors raised on purpose by the library derive from :class:`DepsolveError`,
so callers can catch one class to handle any input or resolution problem.
Parsing errors additionally derive from :class:`ValueError`.
"""

from __future__ import annotations


class DepsolveError(Exception):
    """Base class for every error deliberately raised by depsolve."""


class VersionError(DepsolveError, ValueError):
    """Raised when a version string or version component is malformed."""


class SpecifierError(DepsolveError, ValueError):
    """Raised when a version constraint string cannot be parsed."""


class MarkerError(DepsolveError, ValueError):
    """Raised when an environment marker cannot be parsed or evaluated."""


class RequirementError(DepsolveError, ValueError):
    """Raised when a requirement string (``name[extras] spec ; marker``) is invalid."""


class RegistryError(DepsolveError):
    """Raised for inconsistent registry contents or malformed registry data."""


class PackageNotFoundError(RegistryError):
    """Raised when a package (or one release of it) is not in the registry.

    Attributes:
        package: canonical name of the package that was looked up.
    """

    def __init__(self, package: str, message: str | None = None) -> None:
        self.package = package
        super().__init__(message or f"package {package!r} is not in the registry")


class ResolutionError(DepsolveError):
    """Raised when no set of package versions satisfies the requirements.

    Attributes:
        incompatibility: the root incompatibility proving the failure.
        explanation: multi-line human readable derivation of the failure
            (also used as the exception message).
    """

    def __init__(self, incompatibility: object, explanation: str) -> None:
        self.incompatibility = incompatibility
        self.explanation = explanation
        super().__init__(explanation)


class LockfileError(DepsolveError, ValueError):
    """Raised when lockfile text cannot be parsed or is internally inconsistent.

    Attributes:
        line: 1-based line number the problem was found on, or ``None``.
    """

    def __init__(self, message: str, line: int | None = None) -> None:
        self.line = line
        super().__init__(f"line {line}: {message}" if line is not None else message)


class GraphError(DepsolveError):
    """Raised for invalid dependency graph queries (e.g. unknown nodes)."""


class CycleError(GraphError):
    """Raised when an operation needs an acyclic graph but a cycle exists.

    Attributes:
        cycle: the offending cycle as a list of node names, first node repeated
            at the end (``["a", "b", "a"]``).
    """

    def __init__(self, cycle: list[str]) -> None:
        self.cycle = list(cycle)
        super().__init__("dependency cycle: " + " -> ".join(self.cycle))
