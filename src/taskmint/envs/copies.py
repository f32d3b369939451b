"""Copies of a seed's own code in its environment: found, removed, or refused.

A seed never runs from an installed copy: its code is the workspace's, on the run's import path.
Yet the environment can still hold the original, where the policy could read it:

- **the seed's own distribution**, pulled in by something that needs it (pytest requires
  pluggy, iniconfig, packaging and pygments; virtualenv requires filelock; python-dateutil
  six). It is removed, and a metadata-only `.dist-info` (name, version, requirements; no
  code, no description) takes its place, so the dependents' requirements still hold and
  `importlib.metadata.version(seed)` still answers. The dependent then imports the seed from
  the workspace, through the seed's import paths, exactly as the tests do. A seed that no
  dependency pulls in gets the same metadata-only folder from its manifest's `distribution`
  (`add_own_metadata`): its tests may read their own version, as an installed copy answers.
- **a vendored copy** inside another distribution (`pip/_vendor/tenacity`,
  `setuptools/_vendor/more_itertools`, a wheel that virtualenv embeds). The distribution
  imports it at run time, so it cannot be taken away: the environment is refused, naming the
  distribution, the copy and what to do.

The interpreter itself bundles wheels (`ensurepip/_bundled`: pip and, before Python 3.12,
setuptools, which vendor a dozen projects each): `wheel_folders` names the folders the sandbox
covers with an empty one.

A copy is recognised by the seed's module paths (`module_roots`: `pluggy`, `six.py`,
`jaraco/functools`), never by a list of known packages: at the top of site-packages or of an
archive, or under a vendoring folder (`_vendor`, `vendor`, `extern`, `third_party`, ...)
anywhere in the environment, archives included.
"""

from __future__ import annotations

import functools
import importlib.metadata
import os
import re
import tarfile
import zipfile
from dataclasses import dataclass
from pathlib import Path, PurePosixPath

from packaging.utils import canonicalize_name

from taskmint.records import SeedManifest

__all__ = [
    "PLACEHOLDER_INSTALLER",
    "Copy",
    "add_own_metadata",
    "is_placeholder",
    "module_roots",
    "placeholders",
    "remove_installed_copies",
    "vendored_copies",
    "wheel_folders",
]

# The INSTALLER of the metadata-only `.dist-info` that stands for the seed's distribution.
PLACEHOLDER_INSTALLER = "taskmint-workspace"

# Folders distributions keep other projects' code in.
_VENDOR_DIRS = frozenset(
    {
        "_vendor",
        "vendor",
        "_vendored",
        "vendored",
        "extern",
        "_extern",
        "externals",
        "third_party",
        "_third_party",
        "thirdparty",
        "_bundled",
        "bundled",
    }
)
_ARCHIVES = (".whl", ".zip", ".egg", ".pyz", ".tar.gz", ".tgz", ".tar")
# The lines of a distribution's METADATA the placeholder keeps: what dependents and resolvers
# read. The description (a README, often with code in it) and everything else goes.
_KEPT_METADATA = ("Name", "Version", "Requires-Python", "Requires-Dist", "Provides-Extra")


@dataclass(frozen=True, slots=True, kw_only=True)
class Copy:
    """One copy of the seed's code: where it is, and which distribution holds it."""

    path: str  # relative to the environment; "archive!member" inside an archive
    holder: str  # the distribution that holds it ("" when no distribution claims it)

    def describe(self) -> str:
        """`path` (in `holder`)."""
        return f"{self.path} (in {self.holder})" if self.holder else self.path


def module_roots(manifest: SeedManifest) -> tuple[str, ...]:
    """The seed's importable code as paths relative to its import paths: `pluggy`, `six.py`,
    `jaraco/functools`. What an installed or vendored copy of the seed would be called."""
    roots: set[str] = set()
    for path in manifest.source_paths:
        parts = PurePosixPath(path).parts
        for base in manifest.pythonpath:
            prefix = PurePosixPath(base).parts if base not in (".", "") else ()
            if parts[: len(prefix)] == prefix and len(parts) > len(prefix):
                roots.add(PurePosixPath(*parts[len(prefix) :]).as_posix())
                break
        else:
            if parts:
                roots.add(parts[-1])
    return tuple(sorted(roots))


def _matches(parts: tuple[str, ...], roots: list[tuple[str, ...]]) -> tuple[str, ...] | None:
    """The root `parts` (a path's components) starts with, or None."""
    for root in roots:
        if parts[: len(root)] == root:
            return root
    return None


def _vendored_root(parts: tuple[str, ...], roots: list[tuple[str, ...]]) -> int:
    """The length of `parts` up to and including a seed root under a vendoring folder, or 0."""
    for i, part in enumerate(parts[:-1]):
        if part in _VENDOR_DIRS:
            root = _matches(parts[i + 1 :], roots)
            if root is not None:
                return i + 1 + len(root)
    return 0


def _site_packages(prefix: Path) -> list[Path]:
    return sorted(prefix.glob("lib/python*/site-packages"))


def is_placeholder(dist: importlib.metadata.Distribution) -> bool:
    """Whether `dist` is the metadata-only stand-in for a seed (see the module docstring)."""
    return (dist.read_text("INSTALLER") or "").strip() == PLACEHOLDER_INSTALLER


def placeholders(prefix: Path) -> list[Path]:
    """The metadata-only `.dist-info` folders that stand for the seed in the venv at `prefix`
    (what a copy of the venv elsewhere, such as a docker image, carries over as it is)."""
    return [
        info
        for site in _site_packages(prefix)
        for info in sorted(site.glob("*.dist-info"))
        if _read(info / "INSTALLER").strip() == PLACEHOLDER_INSTALLER
    ]


def _read(path: Path) -> str:
    try:
        return path.read_text("utf-8")
    except OSError:
        return ""


def remove_installed_copies(prefix: Path, manifest: SeedManifest) -> list[str]:
    """Remove every distribution of the venv at `prefix` that installs the seed's modules,
    leaving a metadata-only `.dist-info` in its place. Returns their `name==version`."""
    roots = [PurePosixPath(r).parts for r in module_roots(manifest)]
    removed = []
    for site in _site_packages(prefix):
        for dist in list(importlib.metadata.distributions(path=[str(site)])):
            files = [PurePosixPath(str(f)) for f in dist.files or ()]
            if is_placeholder(dist) or not any(_matches(f.parts, roots) for f in files):
                continue
            name, version = dist.metadata["Name"], dist.version
            metadata = _kept_metadata(dist.read_text("METADATA") or "")
            for rel in files:
                path = Path(os.path.normpath(site / rel))
                if path.is_relative_to(prefix) and (path.is_file() or path.is_symlink()):
                    path.unlink()
            _prune_empty(site, files)
            _write_placeholder(site, name, version, metadata)
            removed.append(f"{name}=={version}")
    return removed


def add_own_metadata(prefix: Path, manifest: SeedManifest) -> str:
    """The seed's own distribution (`manifest.distribution`, "name==version") as a
    metadata-only `.dist-info` in the venv at `prefix`, unless a distribution of that name is
    there already (a placeholder `remove_installed_copies` left). Returns what it added ("" for
    nothing): a project's tests read their own version (`importlib.metadata.version`), which
    an installed copy answers and a workspace alone does not."""
    if not manifest.distribution:
        return ""
    name, _, version = manifest.distribution.partition("==")
    wanted = canonicalize_name(name)
    sites = _site_packages(prefix)
    for site in sites:
        for dist in importlib.metadata.distributions(path=[str(site)]):
            if canonicalize_name(dist.metadata["Name"] or "") == wanted:
                return ""
    if not sites:
        return ""
    _write_placeholder(sites[0], name, version, f"Name: {name}\nVersion: {version}\n")
    return manifest.distribution


def _kept_metadata(text: str) -> str:
    """The header lines of METADATA that `_KEPT_METADATA` names, the body dropped."""
    head = text.split("\n\n", 1)[0]
    lines = []
    for line in head.splitlines():
        key = line.split(":", 1)[0].strip()
        if key in _KEPT_METADATA and not line.startswith((" ", "\t")):
            lines.append(line)
    return "".join(line + "\n" for line in lines)


def _prune_empty(site: Path, files: list[PurePosixPath]) -> None:
    """Remove the folders the removed files leave empty (and their emptied `__pycache__`)."""
    folders = {
        Path(os.path.normpath(site / rel)).parent
        for rel in files
        if Path(os.path.normpath(site / rel)).is_relative_to(site)
    }
    for folder in sorted(folders, key=lambda p: len(p.parts), reverse=True):
        current = folder
        while current != site and current.is_dir():
            cache = current / "__pycache__"
            if cache.is_dir() and not any(p.suffix != ".pyc" for p in cache.iterdir()):
                for pyc in cache.iterdir():
                    pyc.unlink()
                cache.rmdir()
            if any(current.iterdir()):
                break
            current.rmdir()
            current = current.parent


def _write_placeholder(site: Path, name: str, version: str, metadata: str) -> None:
    info = site / f"{re.sub(r'[-_.]+', '_', name)}-{version}.dist-info"
    info.mkdir()
    if "Metadata-Version" not in metadata:
        metadata = "Metadata-Version: 2.1\n" + metadata
    (info / "METADATA").write_text(metadata, "utf-8")
    (info / "INSTALLER").write_text(PLACEHOLDER_INSTALLER + "\n", "utf-8")
    record = "".join(f"{info.name}/{n},,\n" for n in ("METADATA", "INSTALLER", "RECORD"))
    (info / "RECORD").write_text(record, "utf-8")


def vendored_copies(prefix: Path, manifest: SeedManifest) -> list[Copy]:
    """Every copy of the seed left in the venv at `prefix` once its own distribution is gone:
    modules at the top of site-packages, under a vendoring folder, or inside an archive."""
    roots = [PurePosixPath(r).parts for r in module_roots(manifest)]
    if not roots:
        return []
    sites = [site.relative_to(prefix).parts for site in _site_packages(prefix)]
    owners = _owners(prefix)

    def holder(parts: tuple[str, ...]) -> str:
        for site in sites:
            if parts[: len(site)] == site and len(parts) > len(site):
                return owners.get(parts[len(site)], "")
        return ""

    found: list[Copy] = []
    for dirpath, dirnames, filenames in os.walk(prefix):
        here = Path(dirpath).relative_to(prefix).parts
        # a distribution's metadata holds licence texts (`licenses/src/pip/_vendor/...`), no code
        dirnames[:] = sorted(d for d in dirnames if not d.endswith((".dist-info", ".egg-info")))
        for name in [*dirnames, *sorted(filenames)]:
            parts = (*here, name)
            rel = PurePosixPath(*parts).as_posix()
            installed = any(parts[len(s) :] in roots for s in sites if parts[: len(s)] == s)
            if installed or _vendored_root(parts, roots) == len(parts):
                found.append(Copy(path=rel, holder=holder(parts)))
            elif name in filenames and name.endswith(_ARCHIVES):
                found += [
                    Copy(path=f"{rel}!{member}", holder=holder(parts))
                    for member in _archive_copies(Path(dirpath) / name, roots)
                ]
    return found


def _owners(prefix: Path) -> dict[str, str]:
    """Top-level name in site-packages -> the distribution that installed it."""
    out: dict[str, str] = {}
    for site in _site_packages(prefix):
        for dist in importlib.metadata.distributions(path=[str(site)]):
            for f in dist.files or ():
                parts = PurePosixPath(str(f)).parts
                if parts and parts[0] != "..":
                    out.setdefault(parts[0], str(dist.metadata["Name"]))
    return out


def _archive_copies(path: Path, roots: list[tuple[str, ...]]) -> list[str]:
    """The seed's roots inside one archive: at its top (a wheel of the seed), one folder down
    in an sdist or zip (`pkg-1.0/`, or its `pkg-1.0/src/`), or under a vendoring folder."""
    try:
        if path.name.endswith((".tar.gz", ".tgz", ".tar")):
            with tarfile.open(path) as tar:
                names = tar.getnames()
        else:
            with zipfile.ZipFile(path) as zf:
                names = zf.namelist()
    except (OSError, zipfile.BadZipFile, tarfile.TarError, EOFError):
        return []
    sdist = not path.name.endswith((".whl", ".egg", ".pyz"))
    found: set[str] = set()
    for name in names:
        parts = PurePosixPath(name).parts
        starts = [0]
        if sdist:
            starts += [1] + ([2] if len(parts) > 2 and parts[1] in ("src", "lib") else [])
        end = 0
        for start in starts:
            root = _matches(parts[start:], roots) if start < len(parts) else None
            if root is not None:
                end = start + len(root)
                break
        end = end or _vendored_root(parts, roots)
        if end:
            found.add(PurePosixPath(*parts[:end]).as_posix())
    return sorted(found)


# Distributions ready to install: what an interpreter bundles (ensurepip's wheels).
_DISTRIBUTION_SUFFIXES = (".whl", ".egg")
_STDLIB = re.compile(r"/lib/python\d+\.\d+t?$")


@functools.cache
def wheel_folders(prefix: str) -> tuple[str, ...]:
    """The folders under an interpreter's `prefix` that hold wheels or eggs (its site-packages
    aside, which is hidden whole): `lib/python3.11/ensurepip/_bundled`, and CPython's test
    data. Found once per prefix."""
    found = []
    for dirpath, dirnames, filenames in os.walk(prefix):
        hidden = {"__pycache__"} | ({"site-packages"} if _STDLIB.search(dirpath) else set())
        dirnames[:] = sorted(d for d in dirnames if d not in hidden)
        if any(f.endswith(_DISTRIBUTION_SUFFIXES) for f in filenames):
            found.append(dirpath)
    return tuple(found)
