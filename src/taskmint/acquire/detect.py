"""Guessing a Python project's layout when it arrives without a `taskmint.toml`.

A real-world tree (an sdist, a git checkout) says what it is in several places: the package
folders (flat or `src/` layout), the test folders (top-level `tests/`, or inside the package),
and its dependencies in pyproject.toml, setup.cfg, setup.py or requirements files, plus a test
extra. `detect_manifest` reads them all without running any of the project's code (setup.py is
parsed, never executed) and `render_manifest` writes the result as a `taskmint.toml` the user
can edit and pin next to the seeds manifest.
"""

from __future__ import annotations

import ast
import configparser
import re
import tomllib
from pathlib import Path, PurePosixPath

from taskmint import pyast
from taskmint.errors import ManifestError
from taskmint.records import SeedManifest

__all__ = ["DetectError", "detect_manifest", "normalize_name", "render_manifest"]


class DetectError(ManifestError):
    """The layout of a project could not be worked out; write its taskmint.toml by hand."""


_TEST_DIRS = ("tests", "test", "testing", "t")
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
_TEST_EXTRAS = ("test", "tests", "testing")
# Provided by taskmint itself at pinned versions (or useless inside the sandbox: plugins are not
# autoloaded there). Installing another version would fight the pinned runner.
_DROPPED = re.compile(
    r"^(pytest([-_].*)?|coverage|tox|nox|flake8.*|pylint|mypy|black|ruff|"
    r"sphinx.*|check-manifest|codecov|pre-commit|isort|twine|wheel|setuptools|"
    r"iniconfig|pluggy|exceptiongroup|tomli)$"
)


def normalize_name(name: str) -> str:
    """A distribution name in its canonical form (PEP 503)."""
    return re.sub(r"[-_.]+", "-", name).lower()


def _req_name(req: str) -> str:
    m = re.match(r"\s*([A-Za-z0-9][A-Za-z0-9._-]*)", req)
    return normalize_name(m.group(1)) if m else ""


def detect_manifest(root: Path, *, name: str, description: str = "") -> SeedManifest:
    """Work out source paths, test paths, pythonpath and dependencies of the tree at `root`."""
    root = Path(root)
    base = root / "src" if _packages(root / "src") else root
    packages = _packages(base)
    if not packages:
        raise DetectError(
            f"{name}: no Python package or module found at the top of the tree or under src/; "
            "write a taskmint.toml with [seed] source_paths by hand"
        )
    prefix = "src/" if base != root else ""
    # the project's own pytest configuration (testpaths) first, then the usual names
    tests: list[str] = [t for t in _configured_testpaths(root) if _has_tests_at(root / t)]
    if not tests:
        tests = [d for d in _TEST_DIRS if _has_tests(root / d)]
        tests += sorted(p.name for p in root.glob("test_*.py") if p.is_file()) + sorted(
            p.name for p in root.glob("*_test.py") if p.is_file()
        )
    if not tests:
        for pkg in packages:
            for d in _TEST_DIRS:
                if (base / pkg).is_dir() and _has_tests(base / pkg / d):
                    tests.append(f"{prefix}{pkg}/{d}")
    if not tests:
        raise DetectError(
            f"{name}: no tests found (tests/, test/, test_*.py, or <package>/tests); "
            "only projects that ship their tests can be seeds"
        )
    own = {normalize_name(name)} | {normalize_name(p.removesuffix(".py")) for p in packages}
    deps = [d for d in _dependencies(root) if _req_name(d) and _req_name(d) not in own]
    deps = [d for d in deps if not _DROPPED.match(_req_name(d))]
    return SeedManifest(
        name=name,
        language="python",
        description=description,
        source_paths=tuple(prefix + p for p in packages),
        test_paths=tuple(tests),
        runner="pytest",
        dependencies=tuple(dict.fromkeys(deps)),
        pythonpath=("src",) if prefix else (".",),
    )


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


def _configured_testpaths(root: Path) -> list[str]:
    """`testpaths` from pytest.ini, pyproject.toml, tox.ini or setup.cfg (pytest's own order)."""
    for name, section in (
        ("pytest.ini", "pytest"),
        ("pyproject.toml", ""),
        ("tox.ini", "pytest"),
        ("setup.cfg", "tool:pytest"),
    ):
        path = root / name
        if not path.is_file():
            continue
        try:
            text = path.read_text(encoding="utf-8")
        except (OSError, UnicodeDecodeError):
            continue
        value: object = None
        if not section:
            try:
                tool = tomllib.loads(text).get("tool", {})
            except tomllib.TOMLDecodeError:
                continue
            ini = tool.get("pytest", {}).get("ini_options") if isinstance(tool, dict) else None
            if not isinstance(ini, dict):
                continue
            value = ini.get("testpaths")
        else:
            cfg = configparser.ConfigParser(interpolation=None)
            try:
                cfg.read_string(text)
            except configparser.Error:
                continue
            if not cfg.has_section(section):
                continue
            value = cfg.get(section, "testpaths", fallback=None)
        if isinstance(value, str):
            value = value.split()
        if isinstance(value, list):
            out = []
            for v in value:
                p = PurePosixPath(str(v))
                if v and not p.is_absolute() and ".." not in p.parts and "*" not in str(v):
                    out.append(p.as_posix())
            return out
    return []


def _has_tests_at(path: Path) -> bool:
    return _has_tests(path) or (path.is_file() and path.suffix == ".py")


def _has_tests(folder: Path) -> bool:
    return folder.is_dir() and any(
        p.name.startswith("test_") or p.name.endswith("_test.py") for p in folder.rglob("*.py")
    )


def _dependencies(root: Path) -> list[str]:
    deps: list[str] = []
    pyproject = root / "pyproject.toml"
    if pyproject.is_file():
        try:
            data = tomllib.loads(pyproject.read_text(encoding="utf-8"))
        except (tomllib.TOMLDecodeError, UnicodeDecodeError):
            data = {}
        project = data.get("project", {}) if isinstance(data.get("project"), dict) else {}
        deps += [d for d in project.get("dependencies", []) if isinstance(d, str)]
        extras = project.get("optional-dependencies", {})
        deps += _extras(extras if isinstance(extras, dict) else {})
        groups = data.get("dependency-groups", {})
        if isinstance(groups, dict):
            deps += _extras(groups)
    setup_cfg = root / "setup.cfg"
    if setup_cfg.is_file():
        cfg = configparser.ConfigParser(interpolation=None)
        try:
            cfg.read_string(setup_cfg.read_text(encoding="utf-8"))
        except (configparser.Error, UnicodeDecodeError):
            cfg = configparser.ConfigParser()
        if cfg.has_option("options", "install_requires"):
            deps += _lines(cfg.get("options", "install_requires"))
        if cfg.has_section("options.extras_require"):
            deps += _extras({k: _lines(v) for k, v in cfg.items("options.extras_require")})
    setup_py = root / "setup.py"
    if setup_py.is_file():
        deps += _setup_py(setup_py)
    for rel in (
        "requirements.txt",
        "requirements-test.txt",
        "requirements_test.txt",
        "test-requirements.txt",
        "test_requirements.txt",
        "requirements/test.txt",
        "requirements/tests.txt",
        "requirements/testing.txt",
        "requirements/tests.in",
    ):
        if (root / rel).is_file():
            deps += _requirements_file(root / rel)
    return [d.strip() for d in deps if d.strip()]


def _extras(table: dict[str, object]) -> list[str]:
    out: list[str] = []
    for key, value in table.items():
        if normalize_name(key) in _TEST_EXTRAS and isinstance(value, list):
            out += [v for v in value if isinstance(v, str)]
    return out


def _lines(text: str) -> list[str]:
    return [ln.split("#", 1)[0].strip() for ln in text.splitlines() if ln.split("#", 1)[0].strip()]


def _requirements_file(path: Path) -> list[str]:
    try:
        lines = _lines(path.read_text(encoding="utf-8"))
    except (OSError, UnicodeDecodeError):
        return []
    # options (-r, -e, --hash ...) and URLs are not plain requirements; leave them to the user
    return [ln for ln in lines if not ln.startswith("-") and "://" not in ln]


def _setup_py(path: Path) -> list[str]:
    """`install_requires`, `tests_require` and test extras from literal keywords of setup()."""
    try:
        tree = pyast.parse(path.read_text(encoding="utf-8"))
    except (SyntaxError, UnicodeDecodeError, ValueError, RecursionError):
        return []
    out: list[str] = []
    for node in ast.walk(tree):
        if not isinstance(node, ast.Call):
            continue
        for kw in node.keywords:
            try:
                value = ast.literal_eval(kw.value)
            except (ValueError, TypeError, SyntaxError, RecursionError):
                continue
            if kw.arg in ("install_requires", "tests_require") and isinstance(value, list | tuple):
                out += [v for v in value if isinstance(v, str)]
            elif kw.arg == "extras_require" and isinstance(value, dict):
                out += _extras({str(k): list(v) for k, v in value.items()})
    return out


def _toml_str(value: str) -> str:
    return '"' + value.replace("\\", "\\\\").replace('"', '\\"').replace("\n", " ") + '"'


def _toml_list(values: tuple[str, ...]) -> str:
    return "[" + ", ".join(_toml_str(v) for v in values) + "]"


def render_manifest(manifest: SeedManifest, *, origin: str = "") -> str:
    """The manifest as `taskmint.toml` text (what `parse_manifest` reads back)."""
    head = "# Detected by taskmint"
    head += f" from {origin}" if origin else ""
    head += "; edit and pin it with the seed's `manifest` key.\n"
    return (
        head
        + "[seed]\n"
        + f"name = {_toml_str(manifest.name)}\n"
        + f"language = {_toml_str(manifest.language)}\n"
        + f"description = {_toml_str(manifest.description)}\n"
        + f"source_paths = {_toml_list(manifest.source_paths)}\n"
        + f"test_paths = {_toml_list(manifest.test_paths)}\n"
        + f"dependencies = {_toml_list(manifest.dependencies)}\n"
        + "\n[run]\n"
        + f"runner = {_toml_str(manifest.runner)}\n"
        + f"pythonpath = {_toml_list(manifest.pythonpath)}\n"
        + f"timeout = {int(manifest.timeout)}\n"
    )
