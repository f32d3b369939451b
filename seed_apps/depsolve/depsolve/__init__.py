"""depsolve: a small package dependency resolver.

Layers, bottom to top: versions -> interval sets -> constraint specifiers and
environment markers -> requirements -> registry -> terms / partial solution
-> conflict-driven resolver (with failure explanations) -> dependency graph
and lockfiles -> the :func:`resolve` facade and the command line interface.
"""

from .api import Resolution, ResolvedPackage, resolve, verify_lockfile
from .errors import (
    CycleError,
    DepsolveError,
    GraphError,
    LockfileError,
    MarkerError,
    PackageNotFoundError,
    RegistryError,
    RequirementError,
    ResolutionError,
    SpecifierError,
    VersionError,
)
from .graph import DependencyGraph
from .intervals import Interval, VersionSet
from .lockfile import LockDiff, LockedPackage, Lockfile
from .markers import Marker, make_environment
from .registry import Registry, Release
from .requirements import Requirement, canonical_name, parse_requirements
from .specifiers import Specifier, parse_specifier
from .version import Version

__all__ = [
    "CycleError",
    "DependencyGraph",
    "DepsolveError",
    "GraphError",
    "Interval",
    "LockDiff",
    "LockedPackage",
    "Lockfile",
    "LockfileError",
    "Marker",
    "MarkerError",
    "PackageNotFoundError",
    "Registry",
    "RegistryError",
    "Release",
    "Requirement",
    "RequirementError",
    "Resolution",
    "ResolutionError",
    "ResolvedPackage",
    "Specifier",
    "SpecifierError",
    "Version",
    "VersionError",
    "VersionSet",
    "canonical_name",
    "make_environment",
    "parse_requirements",
    "parse_specifier",
    "resolve",
    "verify_lockfile",
]
