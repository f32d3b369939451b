"""Guessing a Python project's layout when it arrives without a `taskmint.toml`.

A real-world tree (an sdist, a git checkout) says what it is in several places: the package
folders (flat or `src/` layout), the test folders (top-level `tests/`, or inside the package),
its dependencies (pyproject.toml, setup.cfg, setup.py, requirements files) and those of its test
runs: test and dev extras and dependency groups, test requirement files, the tox `[testenv]` and
the nox test sessions. Its tests may also need pytest plugins nobody declared, which its pytest
configuration, conftests and tests give away (an `asyncio_mode` key, a `mocker` fixture). And a
project can be a pytest plugin itself (`pytest11` entry points), which the run must register.

`detect_manifest` reads all of that without running any of the project's code (setup.py and
noxfile.py are parsed, never executed); `acquire.manifest.render_manifest` writes the result
as a `taskmint.toml` the user can edit and pin next to the seeds manifest. It is the Python
profile's `detect_manifest`.

This module is the top of detection: the entry point and the layout (package and test
folders). It builds on three layers, each importing only those below it: `project` reads the
metadata files and the pytest configuration once, `dependencies` gathers the dependencies the
project declares, and `plugins` finds the pytest plugins its tests use and the ones it
provides.
"""

from __future__ import annotations

import fnmatch
from pathlib import Path, PurePosixPath

from taskmint.languages.base import DetectError
from taskmint.languages.python.dependencies import (
    declared_dependencies,
    pytest_constraint,
    select_requirements,
)
from taskmint.languages.python.plugins import own_plugins, used_plugins
from taskmint.languages.python.project import (
    Project,
    config_lines,
    ini_words,
    normalize_name,
    own_distribution,
    pytest_ini,
    read_project,
    toml_table,
)
from taskmint.records import SeedManifest

__all__ = ["DetectError", "detect_manifest", "looks_like_python", "normalize_name"]


_TEST_DIRS = ("tests", "test", "testing", "t")
# test folders inside a package (`_tests` is a private test package: trio's)
_PACKAGE_TEST_DIRS = frozenset({*_TEST_DIRS, "_tests"})
_NOT_PACKAGES = frozenset(
    {
        "tests",
        "test",
        "testing",
        "docs",
        "doc",
        "examples",
        "example",
        "benchmarks",
        "bench",
        "scripts",
        "tools",
        "build",
        "dist",
        "site",
        "conftest",
    }
)
# build and project tooling found at the top of trees, never part of the package
_NOT_MODULES = frozenset(
    {
        "setup.py",
        "conftest.py",
        "noxfile.py",
        "fabfile.py",
        "versioneer.py",
        "tasks.py",
        "docs_conf.py",
        "release.py",
        "_version.py",
        "runtests.py",
        "run_tests.py",
    }
)


DETECTED_TIMEOUT = 600.0  # [run] timeout of a detected manifest, in seconds


def detect_manifest(root: Path, *, name: str, description: str = "") -> SeedManifest:
    """Work out source paths, test paths, pythonpath, dependencies and the project's own pytest
    plugins of the tree at `root`."""
    root = Path(root)
    project = read_project(root, name)
    folder = next((f for f in (_package_dir(project), "src") if f and _packages(root / f)), "")
    base = root / folder if folder else root
    packages = _packages(base)
    if not packages:
        raise DetectError(
            f"{name}: no Python package or module found at the top of the tree, under src/ or "
            "in the package folder its build configuration names; write a taskmint.toml with "
            "[seed] source_paths by hand"
        )
    prefix = f"{folder}/" if folder else ""
    tests = _test_paths(project, base, packages, prefix)
    if not tests:
        raise DetectError(
            f"{name}: no tests found (tests/, test/, test_*.py, <package>/tests, or files "
            "matching its pytest python_files); only projects that ship their tests can be "
            "seeds"
        )
    own = project.names | {normalize_name(p.removesuffix(".py")) for p in packages}
    local = _local_modules(root, base, tests)
    wanted = declared_dependencies(project) + used_plugins(project, tests, local)
    return SeedManifest(
        name=name,
        language="python",
        description=description,
        source_paths=tuple(prefix + p for p in packages),
        test_paths=tuple(tests),
        runner="pytest",
        dependencies=select_requirements(wanted, own),
        pythonpath=(folder,) if folder else (".",),
        # a real suite's size is unknown until it runs: a generous limit for the original
        # runs (a broken tree's runs are limited by the original's measured time instead)
        timeout=DETECTED_TIMEOUT,
        plugins=own_plugins(project, base, packages),
        pytest=pytest_constraint(wanted),
        distribution=own_distribution(project, base, packages),
    )


def looks_like_python(root: Path) -> bool:
    """Whether the tree at `root` has Python in it: build metadata (pyproject.toml, setup.py,
    setup.cfg) or a `.py` file at the top, under src/ or one folder down."""
    root = Path(root)
    if any((root / f).is_file() for f in ("pyproject.toml", "setup.py", "setup.cfg")):
        return True
    for folder in (root, root / "src"):
        if folder.is_dir() and (any(folder.glob("*.py")) or any(folder.glob("*/*.py"))):
            return True
    return False


# --- layout ------------------------------------------------------------------------------------


def _packages(base: Path) -> list[str]:
    if not base.is_dir():
        return []
    found = []
    for p in sorted(base.iterdir()):
        if p.name.startswith((".", "_")) or p.name in _NOT_PACKAGES or p.is_symlink():
            continue
        if (p.is_dir() and (p / "__init__.py").is_file() and p.name.isidentifier()) or (
            p.is_file()
            and p.suffix == ".py"
            and p.stem.isidentifier()
            and p.name not in _NOT_MODULES
            and not p.stem.startswith("bench")
            and not p.name.startswith("test_")
            and not p.stem.endswith("_test")
        ):
            found.append(p.name)
    return found


def _package_dir(project: Project) -> str:
    """The folder the build configuration puts the packages in (setuptools' `package_dir`
    {"": "lib"} in setup.py or setup.cfg, `[tool.setuptools.package-dir]`, or
    `[tool.setuptools.packages.find] where`), "" when it names none inside the tree."""
    tool = toml_table(project.pyproject, "tool", "setuptools")
    setup_py = project.setup_py.get("package_dir")
    where = toml_table(tool, "packages", "find").get("where")
    candidates: list[object] = [
        setup_py.get("") if isinstance(setup_py, dict) else None,
        toml_table(tool, "package-dir").get(""),
        where[0] if isinstance(where, list) and where else where,
    ]
    for line in config_lines(project.setup_cfg.get("options", "package_dir", fallback="")):
        key, _, folder = line.partition("=")
        if not key.strip():
            candidates.append(folder.strip())
    for candidate in candidates:
        if isinstance(candidate, str) and candidate not in ("", "."):
            p = PurePosixPath(candidate)
            if not p.is_absolute() and ".." not in p.parts:
                return p.as_posix()
    return ""


def _test_paths(project: Project, base: Path, packages: list[str], prefix: str) -> list[str]:
    """The project's pytest `testpaths`, else the usual folders and files at the top, else the
    test folders inside the packages, else test modules beside the code; a test file is one
    its pytest `python_files` patterns match (`test_*.py` and `*_test.py` by default)."""
    root = project.root
    patterns = _python_files(project)
    tests = [t for t in _configured_testpaths(project) if _has_tests_at(root / t, patterns)]
    if not tests:
        tests = [d for d in _TEST_DIRS if _has_tests(root / d, patterns)]
        tests += sorted(
            p.name for p in root.glob("*.py") if p.is_file() and _is_test_file(p.name, patterns)
        )
    if not tests:
        for pkg in packages:
            if (base / pkg).is_dir():
                tests += _package_test_dirs(base / pkg, f"{prefix}{pkg}", patterns, depth=3)
    if not tests:  # test modules beside the code (`iso8601/test_iso8601.py`)
        for pkg in packages:
            if (base / pkg).is_dir():
                tests += [
                    f"{prefix}{pkg}/{p.name}"
                    for p in sorted((base / pkg).iterdir())
                    if p.is_file() and _is_test_file(p.name, patterns)
                ]
    return tests


_PYTHON_FILES = ("test_*.py", "*_test.py")  # pytest's default `python_files`


def _python_files(project: Project) -> tuple[str, ...]:
    """The file name patterns of test modules in the project's pytest configuration."""
    return tuple(ini_words(pytest_ini(project).get("python_files"))) or _PYTHON_FILES


def _is_test_file(name: str, patterns: tuple[str, ...] = _PYTHON_FILES) -> bool:
    # a private module (`_trio_test.py`) is a helper, not a test file
    return (
        name.endswith(".py")
        and name[0] != "_"
        and any(fnmatch.fnmatchcase(name, pattern) for pattern in patterns)
    )


def _package_test_dirs(
    folder: Path, rel: str, patterns: tuple[str, ...], *, depth: int
) -> list[str]:
    """Test folders inside a package, outermost first, `depth` levels of subpackages down."""
    found = []
    for sub in sorted(p for p in folder.iterdir() if p.is_dir() and not p.is_symlink()):
        if sub.name in _PACKAGE_TEST_DIRS and _has_tests(sub, patterns):
            found.append(f"{rel}/{sub.name}")
        elif depth > 1 and (sub / "__init__.py").is_file():
            found += _package_test_dirs(sub, f"{rel}/{sub.name}", patterns, depth=depth - 1)
    return found


def _configured_testpaths(project: Project) -> list[str]:
    """`testpaths` of the project's pytest configuration, those that stay inside the tree."""
    out = []
    for v in ini_words(pytest_ini(project).get("testpaths")):
        p = PurePosixPath(v)
        if not p.is_absolute() and ".." not in p.parts and "*" not in v:
            out.append(p.as_posix())
    return out


def _has_tests_at(path: Path, patterns: tuple[str, ...] = _PYTHON_FILES) -> bool:
    return _has_tests(path, patterns) or (path.is_file() and path.suffix == ".py")


def _has_tests(folder: Path, patterns: tuple[str, ...] = _PYTHON_FILES) -> bool:
    return folder.is_dir() and any(_is_test_file(p.name, patterns) for p in folder.rglob("*.py"))


def _local_modules(root: Path, base: Path, tests: list[str]) -> set[str]:
    """Top-level names importable from the tree itself: the root, src/ and the test folders."""
    names: set[str] = set()
    for folder in {root, base, *(root / t for t in tests)}:
        if folder.is_dir():
            names |= {p.stem if p.suffix == ".py" else p.name for p in folder.iterdir()}
    return names
