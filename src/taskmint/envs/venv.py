"""Building and caching a Python seed's environment: a venv (the Python profile's)."""

from __future__ import annotations

import fcntl
import importlib.metadata
import os
import platform
import re
import shutil
import subprocess
import sys
from pathlib import Path, PurePosixPath

from taskmint.config import MIN_PYTEST
from taskmint.envs.copies import (
    add_own_metadata,
    module_roots,
    remove_installed_copies,
    vendored_copies,
)
from taskmint.errors import EnvironmentBuildError
from taskmint.records import Environment, SeedManifest, stable_id
from taskmint.scratch import make_staging

__all__ = ["base_interpreter", "build_venv", "test_tools", "venv_id"]


# Bumped whenever the way a venv is built changes, so that cached venvs are rebuilt.
# 3: dependencies from a cached wheelhouse, the seed itself never installed
# 4: no pip or setuptools (a venv without pip, filled by taskmint's own pip); the seed's
#    distribution, when a dependency pulls it in, replaced by its metadata alone
_RECIPE = 4


def base_interpreter() -> tuple[str, str]:
    """The real interpreter behind this process (not a venv shim) and its installation prefix."""
    exe = getattr(sys, "_base_executable", sys.executable)
    return os.path.realpath(exe), os.path.realpath(sys.base_prefix)


def test_tools(manifest: SeedManifest | None = None) -> tuple[str, ...]:
    """The test tools every Python seed environment gets: coverage pinned to the version
    taskmint runs, and pytest too unless the manifest asks for another (`[run] pytest`, a
    specifier: the newest release it allows, no older than `MIN_PYTEST`)."""
    coverage = f"coverage=={importlib.metadata.version('coverage')}"
    if manifest is not None and manifest.pytest:
        return (f"pytest{manifest.pytest},>={MIN_PYTEST}", coverage)
    return (f"pytest=={importlib.metadata.version('pytest')}", coverage)


def venv_id(manifest: SeedManifest) -> str:
    """The cache key of a seed's venv: interpreter, dependencies, tool versions, the seed's own
    modules (what must not be installed, even when a dependency asks for it) and, when the
    manifest names it, the seed's distribution (its metadata is in the venv)."""
    interpreter, _ = base_interpreter()
    return "py-" + stable_id(
        _RECIPE,
        interpreter,
        platform.python_version(),
        sorted(manifest.dependencies),
        test_tools(manifest),
        module_roots(manifest),
        *([manifest.distribution] if manifest.distribution else []),
    )


def build_venv(manifest: SeedManifest, *, cache_dir: Path) -> Environment:
    """Build (or reuse) the venv of a seed's manifest under `cache_dir/envs/<venv_id>`."""
    env_id = venv_id(manifest)
    interpreter, interp_prefix = base_interpreter()
    root = Path(cache_dir) / "envs"
    root.mkdir(parents=True, exist_ok=True)
    final = root / env_id
    with open(root / f"{env_id}.lock", "w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        if not (final / "READY").exists():
            requirements = [*test_tools(manifest), *_dependencies(manifest)]
            wheelhouse = Path(cache_dir) / "wheelhouse"
            _fill_wheelhouse(wheelhouse, requirements)
            _build_venv(final, interpreter, requirements, wheelhouse=wheelhouse, manifest=manifest)
    return Environment(
        env_id=env_id,
        kind="venv",
        prefix=str(final.resolve()),
        interpreter=interpreter,
        interpreter_prefix=interp_prefix,
        python_version=platform.python_version(),
        dependencies=manifest.dependencies,
    )


def _dependencies(manifest: SeedManifest) -> list[str]:
    """The manifest's dependencies minus the seed itself: an installed copy of the original
    would be the answer sitting in site-packages. The seed runs from its workspace only."""
    own = _own_names(manifest)
    return [d for d in manifest.dependencies if _requirement_name(d) not in own]


def _requirement_name(requirement: str) -> str:
    m = re.match(r"\s*([A-Za-z0-9][A-Za-z0-9._-]*)", requirement)
    return re.sub(r"[-_.]+", "-", m.group(1)).lower() if m else ""


def _own_names(manifest: SeedManifest) -> set[str]:
    """The seed's name and its top-level modules, as distribution names."""
    tops = {PurePosixPath(root).parts[0].removesuffix(".py") for root in module_roots(manifest)}
    return {re.sub(r"[-_.]+", "-", name).lower() for name in {manifest.name, *tops}}


def _fill_wheelhouse(wheelhouse: Path, requirements: list[str]) -> None:
    """Download or build a wheel of every requirement (and theirs) into the shared cache.

    The venv is then installed from the wheelhouse alone (`--no-index`), so a rebuild needs no
    network and installs exactly the files that were there before.
    """
    wheelhouse.mkdir(parents=True, exist_ok=True)
    with open(wheelhouse / ".lock", "w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        _run(
            [
                sys.executable,  # the same interpreter version as the venvs; it has pip
                "-m",
                "pip",
                "wheel",
                "--quiet",
                "--disable-pip-version-check",
                "--find-links",
                str(wheelhouse),
                "--wheel-dir",
                str(wheelhouse),
                *requirements,
            ],
            f"fill the wheelhouse with {requirements}",
        )


def _build_venv(
    final: Path,
    interpreter: str,
    requirements: list[str],
    *,
    wheelhouse: Path,
    manifest: SeedManifest,
) -> None:
    """A venv at `final` holding `requirements` and nothing of the seed.

    The venv is made without pip (and so, before Python 3.12, without setuptools): taskmint's
    own pip installs into it (`pip --python`). pip vendors a copy of a dozen projects
    (tenacity, rich, urllib3, packaging, platformdirs, ...) and setuptools another dozen, and
    a test needs neither unless it says so. Then the seed's own distribution, when a dependency
    pulled it in, is replaced by its metadata (else its manifest's `distribution` is written as
    metadata alone), and a vendored copy of the seed refuses the
    environment (`envs.copies`).
    """
    shutil.rmtree(final, ignore_errors=True)
    tmp = make_staging(f".{final.name}.", final.parent)
    try:
        os.chmod(tmp, 0o755)  # mkdtemp makes it 0700; the sandbox uid must read it
        _run([interpreter, "-m", "venv", "--without-pip", str(tmp)], "create the venv")
        _run(
            [
                sys.executable,  # the same interpreter version as the venv; it has pip
                "-m",
                "pip",
                "--python",
                str(tmp / "bin" / "python"),
                "install",
                "--quiet",
                "--disable-pip-version-check",
                "--no-index",
                "--find-links",
                str(wheelhouse),
                *requirements,
            ],
            f"install {requirements} from the wheelhouse",
        )
        remove_installed_copies(tmp, manifest)
        add_own_metadata(tmp, manifest)
        copies = vendored_copies(tmp, manifest)
        if copies:
            holders = sorted({c.holder for c in copies if c.holder})
            raise EnvironmentBuildError(
                f"the environment of {manifest.name} would hold a copy of the seed's code that "
                f"{' and '.join(holders) or 'a dependency'} vendors and needs at run time: "
                f"{', '.join(c.describe() for c in copies[:5])}"
                f"{' ...' if len(copies) > 5 else ''}. A policy could read the answer there; "
                "drop the dependency that brings it from the seed's `dependencies` in "
                "taskmint.toml (or pin a version of it that does not vendor the seed)"
            )
        os.rename(tmp, final)
        (final / "READY").write_text("ok\n")
    finally:
        shutil.rmtree(tmp, ignore_errors=True)


def _run(argv: list[str], what: str) -> None:
    try:
        proc = subprocess.run(argv, capture_output=True, text=True, timeout=900)
    except (OSError, subprocess.SubprocessError) as exc:
        raise EnvironmentBuildError(f"could not {what}: {exc}") from exc
    if proc.returncode != 0:
        raise EnvironmentBuildError(
            f"could not {what} (exit {proc.returncode}); check the seed's `dependencies` "
            f"in taskmint.toml.\n{proc.stderr[-2000:]}"
        )
