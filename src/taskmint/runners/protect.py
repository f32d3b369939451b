"""What a test run may not change: the seed's tests and the files that configure the run.

The verifier grades a policy's patch with the tests and their configuration root-owned and
read-only (a test cannot rewrite what grades it, THREATS.md 11); every other run of the seed's
suite (the original runs, the coverage run, the broken tree's runs) has them read-only too, so
a test that writes into its own folder fails there as it would when graded, and is excluded
from the start instead of failing every reference check later.
"""

from __future__ import annotations

import os
from collections.abc import Iterable
from pathlib import Path, PurePosixPath

from taskmint.records import SeedManifest

__all__ = ["PROTECTED_NAMES", "readonly_paths", "workspace_readonly"]

# Files that configure the test run, the build, CI or the interpreter: never taken from a patch,
# read-only in every run.
PROTECTED_NAMES = frozenset(
    {
        "conftest.py",
        "pytest.ini",
        ".pytest.ini",
        "pytest.toml",
        ".pytest.toml",
        "tox.ini",
        "setup.cfg",
        "pyproject.toml",
        "setup.py",
        "noxfile.py",
        "taskmint.toml",
        "package.json",
        "package-lock.json",
        "Makefile",
        "makefile",
        "Dockerfile",
        ".coveragerc",
        "sitecustomize.py",
        "usercustomize.py",
        "MANIFEST.in",
        "requirements.txt",
        ".gitlab-ci.yml",
        ".travis.yml",
    }
)


def readonly_paths(manifest: SeedManifest, files: Iterable[str]) -> tuple[str, ...]:
    """The test paths, and every file of `files` (workspace-relative) that configures the run
    (`PROTECTED_NAMES`) outside them."""
    tests = tuple(t.rstrip("/") for t in manifest.test_paths)
    configs = [
        f
        for f in files
        if PurePosixPath(f).name in PROTECTED_NAMES
        and not any(f == t or f.startswith(t + "/") for t in tests)
    ]
    return tuple(dict.fromkeys([*tests, *sorted(configs)]))


def workspace_readonly(manifest: SeedManifest, workspace: Path) -> tuple[str, ...]:
    """`readonly_paths` of what the workspace holds (one walk, looking at names only)."""
    found: list[str] = []
    root = str(workspace)
    for dirpath, dirnames, filenames in os.walk(root):
        dirnames[:] = [d for d in dirnames if d not in ("__pycache__", ".git", "node_modules")]
        rel = os.path.relpath(dirpath, root)
        found += [
            name if rel == "." else f"{rel}/{name}" for name in filenames if name in PROTECTED_NAMES
        ]
    return readonly_paths(manifest, found)
