"""Guessing a Python project's layout when it arrives without a `taskmint.toml`.

A real-world tree (an sdist, a git checkout) says what it is in several places: the package
folders (flat or `src/` layout), the test folders (top-level `tests/`, or inside the package),
its dependencies (pyproject.toml, setup.cfg, setup.py, requirements files) and those of its test
runs: test and dev extras and dependency groups, test requirement files, the tox `[testenv]` and
the nox test sessions. Its tests may also need pytest plugins nobody declared, which its pytest
configuration, conftests and tests give away (an `asyncio_mode` key, a `mocker` fixture). And a
project can be a pytest plugin itself (`pytest11` entry points), which the run must register.

`detect_manifest` reads all of that without running any of the project's code (setup.py and
noxfile.py are parsed, never executed) and `render_manifest` writes the result as a
`taskmint.toml` the user can edit and pin next to the seeds manifest.
"""

from __future__ import annotations

import ast
import configparser
import contextlib
import importlib.metadata
import re
import shlex
import tomllib
from collections.abc import Iterable, Iterator
from dataclasses import dataclass, field
from pathlib import Path, PurePosixPath
from typing import Any

from packaging.requirements import InvalidRequirement, Requirement  # pytest's own dependency
from packaging.specifiers import SpecifierSet

from taskmint import pyast
from taskmint.errors import ManifestError
from taskmint.records import SeedManifest

__all__ = ["DetectError", "detect_manifest", "normalize_name", "render_manifest"]


class DetectError(ManifestError):
    """The layout of a project could not be worked out; write its taskmint.toml by hand."""


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
# Extras and dependency groups (normalized names) that a project's own test runs install.
_TEST_EXTRAS = frozenset({"test", "tests", "testing", "dev"})
# Never dependencies. pytest, coverage and pytest's own dependencies: taskmint installs them at
# pinned versions, and another version would fight the pinned runner (exceptiongroup and tomli
# are not among them: on Python 3.11+ pytest needs neither, and a test importing the
# exceptiongroup backport needs it). The rest are linters, formatters, type checkers, docs
# builders, release and task-runner tools, which dev extras and requirement files list and no
# test imports. pytest plugins are kept: the run loads the plugins installed in the venv, and a
# suite that uses one fails without it.
_DROPPED = re.compile(
    r"^(pytest|pytest-runner|coverage|covdefaults|iniconfig|pluggy|"
    r"tox|tox-.*|nox|pre-commit|flake8.*|pylint|mypy|pyright|black|ruff|isort|codespell|"
    r"pycodestyle|pyflakes|pydocstyle|autopep8|yapf|bandit|types-.*|"
    r".*sphinx.*|furo|myst-parser|mkdocs.*|towncrier|"
    r"check-manifest|codecov|twine|wheel|setuptools|setuptools-scm|build|pip|pip-.*|uv)$"
)
# Requirement files of a project's tests (or of its development, which includes them), relative
# to the root, without their suffix: `.in` (the hand-written input of pip-compile) is read when
# it exists, else `.txt`. `requirements.txt` itself is the runtime's.
_TEST_REQUIREMENTS = (
    "requirements-test*",
    "requirements_test*",
    "test-requirements*",
    "test_requirements*",
    "tests-requirements*",
    "tests_requirements*",
    "requirements/test*",
    "tests/requirements*",
    "test/requirements*",
    "requirements-dev*",
    "requirements_dev*",
    "dev-requirements*",
    "dev_requirements*",
    "requirements/dev*",
)
# tox factors a plain `tox -e py3` run of the tests has: a Python 3 one, or a generic test one.
# A line conditional on any other factor (a Django version, lint, docs, pypy) is not for us.
_PY3_FACTOR = re.compile(r"^(py|py3|py3\d+|py3\.\d+|python3(\.\d+)?)$")
_TEST_FACTORS = frozenset({"test", "tests", "testing", "unit", "unittests", "pytest", "cov"})
_MAX_BYTES = 1_000_000  # files bigger than this are not read (generated data, vendored code)
_MAX_SCANNED = 5000  # test files read for the plugins they use

# --- pytest plugins a project uses without saying so -------------------------------------------
# Each maps a sign of use to the distribution that provides the plugin. A suite that needs one
# and runs without it fails (an unknown ini key or option is an error under --strict-config, an
# `async def` test without its plugin fails, a missing fixture errors), so the plugin is added to
# the dependencies, unversioned, when the project does not declare it.

# pytest ini keys that only a plugin defines
_INI_PLUGINS = {
    "asyncio_mode": "pytest-asyncio",
    "asyncio_default_fixture_loop_scope": "pytest-asyncio",
    "asyncio_default_test_loop_scope": "pytest-asyncio",
    "timeout": "pytest-timeout",
    "timeout_method": "pytest-timeout",
    "timeout_func_only": "pytest-timeout",
    "session_timeout": "pytest-timeout",
    "env": "pytest-env",
    "mock_use_standalone_module": "pytest-mock",
    "mock_traceback_monkeypatch": "pytest-mock",
    "trio_mode": "pytest-trio",
    "trio_run": "pytest-trio",
    "reruns": "pytest-rerunfailures",
    "reruns_delay": "pytest-rerunfailures",
    "doctest_plus": "pytest-doctestplus",
    "doctest_rst": "pytest-doctestplus",
    "text_file_format": "pytest-doctestplus",
    "DJANGO_SETTINGS_MODULE": "pytest-django",
    "rsyncdirs": "pytest-xdist",
    "rsyncignore": "pytest-xdist",
    "looponfailroots": "pytest-xdist",
}
# command-line options only a plugin defines, as found in `addopts`; each also stands for the
# options that extend it with "-" or "_" (`--cov` for `--cov-report`, `--benchmark` for
# `--benchmark-skip`). `-n` (xdist's short `--numprocesses`) is matched on its own.
_OPTION_PLUGINS = {
    "--numprocesses": "pytest-xdist",
    "--maxprocesses": "pytest-xdist",
    "--dist": "pytest-xdist",
    "--tx": "pytest-xdist",
    "--max-worker-restart": "pytest-xdist",
    "--cov": "pytest-cov",
    "--no-cov": "pytest-cov",
    "--timeout": "pytest-timeout",
    "--reruns": "pytest-rerunfailures",
    "--only-rerun": "pytest-rerunfailures",
    "--benchmark": "pytest-benchmark",
    "--doctest-plus": "pytest-doctestplus",
    "--doctest-rst": "pytest-doctestplus",
    "--randomly": "pytest-randomly",
    "--asyncio-mode": "pytest-asyncio",
    "--hypothesis": "hypothesis",
    "--snapshot": "syrupy",
    "--force-regen": "pytest-regressions",
    "--regen-all": "pytest-regressions",
    "--mypy": "pytest-mypy",
    "--flake8": "pytest-flake8",
    "--ruff": "pytest-ruff",
    "--black": "pytest-black",
    "--isort": "pytest-isort",
    "--html": "pytest-html",
    "--json-report": "pytest-json-report",
    "--mpl": "pytest-mpl",
    "--remote-data": "pytest-remotedata",
    "--reuse-db": "pytest-django",
    "--ds": "pytest-django",
    "--forked": "pytest-forked",
    "--instafail": "pytest-instafail",
    "--count": "pytest-repeat",
    "--record-mode": "pytest-recording",
    "--block-network": "pytest-recording",
    "--nbval": "nbval",
    "--xdoctest": "xdoctest",
}
# Plugins named by `-p NAME` or `pytest_plugins = [...]`, where the name is a module or an
# entry-point name, when it is not a `pytest_foo` module of distribution `pytest-foo`. Looked up
# by the whole name, then by its top-level module.
_PLUGIN_MODULES = {
    "xdist": "pytest-xdist",
    "asyncio": "pytest-asyncio",
    "trio": "pytest-trio",
    "timeout": "pytest-timeout",
    "randomly": "pytest-randomly",
    "rerunfailures": "pytest-rerunfailures",
    "benchmark": "pytest-benchmark",
    "django": "pytest-django",
    "env": "pytest-env",
    "regressions": "pytest-regressions",
    "datadir": "pytest-datadir",
    "freezer": "pytest-freezer",
    "hypothesispytest": "hypothesis",
    "_hypothesis_pytestplugin": "hypothesis",
    "anyio": "anyio",
    "faker": "Faker",
    "pyfakefs": "pyfakefs",
    "typeguard": "typeguard",
    "time_machine": "time-machine",
}
# Imports in test files that mean a test-only distribution (an import of `pytest_foo` means
# `pytest-foo`). Deliberately short: an import of a library the tests merely use (trio, django)
# says nothing about plugins, and the project's declared dependencies cover those.
_IMPORT_DISTS = {
    "hypothesis": "hypothesis",
    "syrupy": "syrupy",
    "requests_mock": "requests-mock",
    "xdist": "pytest-xdist",
    "pytest_lazyfixture": "pytest-lazy-fixture",
    "pytest_jsonreport": "pytest-json-report",
}
# Markers (`pytest.mark.NAME`) that only a plugin defines.
_MARKER_PLUGINS = {
    "asyncio": "pytest-asyncio",
    "trio": "pytest-trio",
    "anyio": "anyio",
    "timeout": "pytest-timeout",
    "benchmark": "pytest-benchmark",
    "django_db": "pytest-django",
    "freeze_time": "pytest-freezer",
    "httpx_mock": "pytest-httpx",
    "order": "pytest-order",
    "dependency": "pytest-dependency",
    "repeat": "pytest-repeat",
    "forked": "pytest-forked",
    "xdist_group": "pytest-xdist",
    "mpl_image_compare": "pytest-mpl",
    "datafiles": "pytest-datafiles",
    "respx": "respx",
    "remote_data": "pytest-remotedata",
    "no_cover": "pytest-cov",
    "block_network": "pytest-recording",
    "default_cassette": "pytest-recording",
}
# Fixtures only a plugin defines: fixture -> (distribution, a word some test file must also
# contain when the fixture's name alone is too common to be sure: `snapshot`, `fs`). A fixture
# the project defines itself, or a parametrized argument of the same name, does not count.
_FIXTURE_PLUGINS = {
    "event_loop": ("pytest-asyncio", ""),
    "event_loop_policy": ("pytest-asyncio", ""),
    "unused_tcp_port": ("pytest-asyncio", ""),
    "unused_tcp_port_factory": ("pytest-asyncio", ""),
    "unused_udp_port": ("pytest-asyncio", ""),
    "unused_udp_port_factory": ("pytest-asyncio", ""),
    "mocker": ("pytest-mock", ""),
    "class_mocker": ("pytest-mock", ""),
    "module_mocker": ("pytest-mock", ""),
    "package_mocker": ("pytest-mock", ""),
    "session_mocker": ("pytest-mock", ""),
    "benchmark": ("pytest-benchmark", ""),
    "httpserver": ("pytest-httpserver", ""),
    "httpserver_ipv4": ("pytest-httpserver", ""),
    "make_httpserver": ("pytest-httpserver", ""),
    "httpx_mock": ("pytest-httpx", ""),
    "requests_mock": ("requests-mock", ""),
    "freezer": ("pytest-freezer", ""),
    "datadir": ("pytest-datadir", ""),
    "shared_datadir": ("pytest-datadir", ""),
    "original_datadir": ("pytest-datadir", ""),
    "data_regression": ("pytest-regressions", ""),
    "file_regression": ("pytest-regressions", ""),
    "num_regression": ("pytest-regressions", ""),
    "dataframe_regression": ("pytest-regressions", ""),
    "ndarrays_regression": ("pytest-regressions", ""),
    "image_regression": ("pytest-regressions", ""),
    "snapshot": ("syrupy", "syrupy"),
    "fs": ("pyfakefs", "pyfakefs"),
    "respx_mock": ("respx", ""),
    "time_machine": ("time-machine", ""),
    "aiohttp_client": ("pytest-aiohttp", ""),
    "aiohttp_server": ("pytest-aiohttp", ""),
    "aiohttp_raw_server": ("pytest-aiohttp", ""),
    "nursery": ("pytest-trio", ""),
    "autojump_clock": ("pytest-trio", ""),
    "mock_clock": ("pytest-trio", ""),
    "anyio_backend": ("anyio", ""),
    "xprocess": ("pytest-xprocess", ""),
    "httpbin": ("pytest-httpbin", ""),
}
_MENTIONS = frozenset(word for _, word in _FIXTURE_PLUGINS.values() if word)


def normalize_name(name: str) -> str:
    """A distribution name in its canonical form (PEP 503)."""
    return re.sub(r"[-_.]+", "-", name).lower()


DETECTED_TIMEOUT = 600.0  # [run] timeout of a detected manifest, in seconds


def detect_manifest(root: Path, *, name: str, description: str = "") -> SeedManifest:
    """Work out source paths, test paths, pythonpath, dependencies and the project's own pytest
    plugins of the tree at `root`."""
    root = Path(root)
    base = root / "src" if _packages(root / "src") else root
    packages = _packages(base)
    if not packages:
        raise DetectError(
            f"{name}: no Python package or module found at the top of the tree or under src/; "
            "write a taskmint.toml with [seed] source_paths by hand"
        )
    prefix = "src/" if base != root else ""
    project = _read_project(root, name)
    tests = _test_paths(project, base, packages, prefix)
    if not tests:
        raise DetectError(
            f"{name}: no tests found (tests/, test/, test_*.py, or <package>/tests); "
            "only projects that ship their tests can be seeds"
        )
    own = project.names | {normalize_name(p.removesuffix(".py")) for p in packages}
    local = _local_modules(root, base, tests)
    wanted = _dependencies(project) + _used_plugins(project, tests, local)
    return SeedManifest(
        name=name,
        language="python",
        description=description,
        source_paths=tuple(prefix + p for p in packages),
        test_paths=tuple(tests),
        runner="pytest",
        dependencies=_select(wanted, own),
        pythonpath=("src",) if prefix else (".",),
        # a real suite's size is unknown until it runs: a generous limit for the original
        # runs (a broken tree's runs are limited by the original's measured time instead)
        timeout=DETECTED_TIMEOUT,
        plugins=_own_plugins(project, base, packages),
        pytest=_pytest_constraint(wanted),
    )


def _pytest_constraint(requirements: list[str]) -> str:
    """The project's own constraint on pytest, when it rules out the version taskmint runs
    (`pytest<9` in a test group): the suite then runs under the newest pytest it allows.
    "" when it allows taskmint's version (or says nothing)."""
    spec = SpecifierSet()
    for req in requirements:
        if _name_of(req) != "pytest" or not _applies(req):
            continue
        with contextlib.suppress(InvalidRequirement):
            spec &= Requirement(req).specifier
    # taskmint's environments get the pytest it runs itself (`envs.test_tools`)
    if not str(spec) or spec.contains(importlib.metadata.version("pytest"), prereleases=True):
        return ""
    return str(spec)


def _select(requirements: list[str], own: set[str]) -> tuple[str, ...]:
    """One requirement per distribution, the first one, minus the project itself and the tools.
    A requirement whose environment marker is false on this interpreter (pip skips it) does not
    stand for its distribution: a later one of the same name is kept too."""
    out: list[str] = []
    claimed: set[str] = set()
    idle: set[str] = set()
    for req in requirements:
        name = _name_of(req)
        if not name or name in own or name in claimed or _DROPPED.match(name):
            continue
        if _applies(req):
            claimed.add(name)
        elif name in idle:
            continue
        else:
            idle.add(name)
        out.append(req)
    return tuple(out)


def _applies(req: str) -> bool:
    """Whether pip installs `req` on this interpreter: it has no marker, or its marker holds."""
    try:
        marker = Requirement(req).marker
        return marker is None or marker.evaluate()
    except ValueError:  # an invalid requirement or marker: pip decides
        return True


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


def _test_paths(project: _Project, base: Path, packages: list[str], prefix: str) -> list[str]:
    """The project's pytest `testpaths`, else the usual folders and files at the top, else the
    test folders inside the packages."""
    root = project.root
    tests = [t for t in _configured_testpaths(project) if _has_tests_at(root / t)]
    if not tests:
        tests = [d for d in _TEST_DIRS if _has_tests(root / d)]
        tests += sorted(p.name for p in root.glob("test_*.py") if p.is_file()) + sorted(
            p.name for p in root.glob("*_test.py") if p.is_file()
        )
    if not tests:
        for pkg in packages:
            if (base / pkg).is_dir():
                tests += _package_test_dirs(base / pkg, f"{prefix}{pkg}", depth=3)
    if not tests:  # test modules beside the code (`iso8601/test_iso8601.py`)
        for pkg in packages:
            if (base / pkg).is_dir():
                tests += [
                    f"{prefix}{pkg}/{p.name}"
                    for p in sorted((base / pkg).iterdir())
                    if p.is_file() and _is_test_file(p.name)
                ]
    return tests


def _is_test_file(name: str) -> bool:
    return name.endswith(".py") and (name.startswith("test_") or name.endswith("_test.py"))


def _package_test_dirs(folder: Path, rel: str, *, depth: int) -> list[str]:
    """Test folders inside a package, outermost first, `depth` levels of subpackages down."""
    found = []
    for sub in sorted(p for p in folder.iterdir() if p.is_dir() and not p.is_symlink()):
        if sub.name in _PACKAGE_TEST_DIRS and _has_tests(sub):
            found.append(f"{rel}/{sub.name}")
        elif depth > 1 and (sub / "__init__.py").is_file():
            found += _package_test_dirs(sub, f"{rel}/{sub.name}", depth=depth - 1)
    return found


def _configured_testpaths(project: _Project) -> list[str]:
    """`testpaths` of the project's pytest configuration, those that stay inside the tree."""
    out = []
    for v in _ini_words(_pytest_ini(project).get("testpaths")):
        p = PurePosixPath(v)
        if not p.is_absolute() and ".." not in p.parts and "*" not in v:
            out.append(p.as_posix())
    return out


def _has_tests_at(path: Path) -> bool:
    return _has_tests(path) or (path.is_file() and path.suffix == ".py")


def _has_tests(folder: Path) -> bool:
    # a private module (`_trio_test.py`) is a helper, not a test file
    return folder.is_dir() and any(
        p.name.startswith("test_") or (p.name.endswith("_test.py") and p.name[0] != "_")
        for p in folder.rglob("*.py")
    )


def _local_modules(root: Path, base: Path, tests: list[str]) -> set[str]:
    """Top-level names importable from the tree itself: the root, src/ and the test folders."""
    names: set[str] = set()
    for folder in {root, base, *(root / t for t in tests)}:
        if folder.is_dir():
            names |= {p.stem if p.suffix == ".py" else p.name for p in folder.iterdir()}
    return names


# --- the project's metadata files, parsed once -------------------------------------------------


@dataclass
class _Project:
    """What the tree's metadata files say (read, never executed)."""

    root: Path
    pyproject: dict[str, Any]
    setup_cfg: configparser.ConfigParser
    setup_py: dict[str, Any]  # literal keywords of setup() calls
    names: set[str]  # the project's own distribution names, normalized
    extras: dict[str, list[str]] = field(default_factory=dict)  # normalized name -> requirements


def _read_project(root: Path, name: str) -> _Project:
    pyproject = _toml(root / "pyproject.toml") or {}
    setup_cfg = _ini(root / "setup.cfg")
    setup_cfg = setup_cfg if setup_cfg is not None else _new_ini()
    setup_py = _setup_py(root / "setup.py")
    project = _table(pyproject, "project")
    names = {
        normalize_name(n)
        for n in (
            name,
            project.get("name"),
            setup_cfg.get("metadata", "name", fallback=None),
            setup_py.get("name"),
            _pkg_info_name(root / "PKG-INFO"),
        )
        if isinstance(n, str) and n.strip()
    }
    extras: dict[str, list[str]] = {}
    optional = project.get("optional-dependencies")
    cfg_extras = (
        {k: _lines(v) for k, v in setup_cfg.items("options.extras_require")}
        if setup_cfg.has_section("options.extras_require")
        else {}
    )
    for table in (optional, cfg_extras, setup_py.get("extras_require")):
        _merge_extras(extras, table)
    return _Project(root, pyproject, setup_cfg, setup_py, names, extras)


def _merge_extras(extras: dict[str, list[str]], table: object) -> None:
    """Add an extras table; setuptools' `"name:marker"` keys put the marker on each entry."""
    if not isinstance(table, dict):
        return
    for key, value in table.items():
        extra, _, marker = str(key).partition(":")
        values = [value] if isinstance(value, str) else value
        if not isinstance(values, list | tuple):
            continue
        reqs = [v for v in values if isinstance(v, str)]
        if marker.strip():
            reqs = [_with_marker(r, marker.strip()) for r in reqs]
        extras.setdefault(normalize_name(extra.strip()), []).extend(reqs)


def _toml(path: Path) -> dict[str, Any] | None:
    text = _read(path)
    if text is None:
        return None
    try:
        return tomllib.loads(text)
    except tomllib.TOMLDecodeError:
        return {}


def _new_ini() -> configparser.ConfigParser:
    cfg = configparser.ConfigParser(interpolation=None, strict=False)
    cfg.optionxform = str  # type: ignore[assignment,method-assign]  # keys keep their case
    return cfg


def _ini(path: Path, text: str | None = None) -> configparser.ConfigParser | None:
    text = _read(path) if text is None else text
    if text is None:
        return None
    cfg = _new_ini()
    try:
        cfg.read_string(text)
    except configparser.Error:
        return _new_ini()
    return cfg


def _read(path: Path) -> str | None:
    """A small text file's content, or None (missing, unreadable, binary, over the limit)."""
    try:
        if not path.is_file() or path.stat().st_size > _MAX_BYTES:
            return None
        return path.read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError):
        return None


def _table(data: dict[str, Any], *keys: str) -> dict[str, Any]:
    for key in keys:
        value = data.get(key)
        data = value if isinstance(value, dict) else {}
    return data


def _pkg_info_name(path: Path) -> str | None:
    m = re.search(r"^Name:\s*(\S+)", _read(path) or "", re.MULTILINE)
    return m.group(1) if m else None


def _setup_py(path: Path) -> dict[str, Any]:
    """The keywords of setup() calls that are literals, or module-level names bound to
    literals (`tests_require=TESTS`)."""
    text = _read(path)
    try:
        tree = pyast.parse(text or "")
    except (SyntaxError, ValueError, RecursionError):
        return {}
    names: dict[str, object] = {}
    for stmt in tree.body:
        if isinstance(stmt, ast.Assign) and len(stmt.targets) == 1:
            target, value = stmt.targets[0], stmt.value
        elif isinstance(stmt, ast.AnnAssign) and stmt.value is not None:
            target, value = stmt.target, stmt.value
        else:
            continue
        if isinstance(target, ast.Name):
            literal = _literal(value, names)
            if literal is not _NOTHING:
                names[target.id] = literal
    calls = [n for n in ast.walk(tree) if isinstance(n, ast.Call)]
    out: dict[str, Any] = {}
    for node in sorted(calls, key=lambda c: _last_name(c.func) != "setup"):  # setup() first
        for kw in node.keywords:
            literal = _literal(kw.value, names)
            if kw.arg and literal is not _NOTHING:
                out.setdefault(kw.arg, literal)
    return out


_NOTHING = object()


def _literal(node: ast.expr, names: dict[str, object]) -> object:
    """A literal's value, following names bound to literals and `+` of lists or strings;
    `_NOTHING` for anything else (nothing is ever evaluated)."""
    if isinstance(node, ast.Name):
        return names.get(node.id, _NOTHING)
    if isinstance(node, ast.List | ast.Tuple):
        items = [_literal(e, names) for e in node.elts]
        return _NOTHING if _NOTHING in items else items
    if isinstance(node, ast.Dict):
        keys = [_literal(k, names) if k is not None else _NOTHING for k in node.keys]
        values = [_literal(v, names) for v in node.values]
        if _NOTHING in keys or _NOTHING in values:
            return _NOTHING
        try:
            return dict(zip(keys, values, strict=True))
        except TypeError:  # an unhashable key
            return _NOTHING
    if isinstance(node, ast.BinOp) and isinstance(node.op, ast.Add):
        left, right = _literal(node.left, names), _literal(node.right, names)
        if isinstance(left, list) and isinstance(right, list):
            return left + right
        if isinstance(left, str) and isinstance(right, str):
            return left + right
        return _NOTHING
    try:
        return ast.literal_eval(node)
    except (ValueError, TypeError, SyntaxError, RecursionError):
        return _NOTHING


def _lines(text: str) -> list[str]:
    return [ln.split("#", 1)[0].strip() for ln in text.splitlines() if ln.split("#", 1)[0].strip()]


# --- requirement strings -----------------------------------------------------------------------


def _requirement(text: str) -> str | None:
    """`text` as a requirement pip installs from an index, or None (URLs, paths, options,
    variables). The text is kept (markers too: pip evaluates them), except a marker that does
    not parse, which is dropped."""
    text = " ".join(text.split())
    if not text or text[0] in "-./{" or "://" in text or "${" in text:
        return None
    for candidate in (text, text.split(";", 1)[0].strip()):
        try:
            req = Requirement(candidate)
        except InvalidRequirement:
            continue
        return candidate if req.url is None else None
    return None


def _name_of(req: str) -> str:
    try:
        return normalize_name(Requirement(req).name)
    except InvalidRequirement:
        return ""


def _with_marker(req: str, marker: str) -> str:
    """`req` installed only where `marker` holds too."""
    head, sep, own = req.partition(";")
    if sep and own.strip():
        return f"{head.strip()}; ({own.strip()}) and ({marker})"
    return f"{head.strip()}; {marker}"


class _Requirements:
    """Requirement strings gathered in order. A requirement of the project itself stands for
    the extras it names; requirement files and extras are each followed once."""

    def __init__(self, project: _Project) -> None:
        self.project = project
        self.out: list[str] = []
        self._root = project.root.resolve()
        self._files: set[Path] = set()
        self._extras: set[str] = set()

    def add(self, text: str, marker: str = "") -> None:
        req = _requirement(_with_marker(text, marker) if marker else text)
        if req is None:
            return
        parsed = Requirement(req)
        if normalize_name(parsed.name) in self.project.names:
            self.extras(sorted(parsed.extras), str(parsed.marker or ""))
        else:
            self.out.append(req)

    def extras(self, names: Iterable[str], marker: str = "") -> None:
        for name in map(normalize_name, names):
            if name in self.project.extras and name not in self._extras:
                self._extras.add(name)
                for req in self.project.extras[name]:
                    self.add(req, marker)

    def file(self, path: Path) -> None:
        """A requirements file inside the tree, with the files it includes."""
        real = path.resolve()
        if real in self._files or not real.is_relative_to(self._root):
            return
        self._files.add(real)
        text = _read(real)
        if text is not None:
            self.lines(_requirement_lines(text), real.parent)

    def lines(self, lines: Iterable[str], here: Path) -> None:
        """Lines in requirements-file syntax; `-r` files are relative to `here`."""
        for line in lines:
            m = re.match(
                r"(--requirement|--constraint|--editable|-r|-c|-e)(?:\s*=\s*|\s*)(.+)", line
            )
            if m:
                value = m.group(2).strip().strip("'\"")
                if m.group(1) in ("-r", "--requirement"):
                    self.file(here / value)
                elif m.group(1) in ("-e", "--editable"):
                    self.own_extras(value)
                continue  # a constraint only pins what something else asks for
            if line.startswith("-") or self.own_extras(line):
                continue
            self.add(re.split(r"\s+--?[A-Za-z]", line)[0])  # per-requirement options (--hash)

    def own_extras(self, spec: str) -> bool:
        """`.` or `.[a,b]`: the project itself (never installed), with those extras."""
        m = re.fullmatch(r"\./?\s*(?:\[([^\]]*)\])?", spec.strip().strip("'\""))
        if m is None:
            return False
        self.extras(e.strip() for e in (m.group(1) or "").split(",") if e.strip())
        return True


def _requirement_lines(text: str) -> list[str]:
    """The logical lines of a requirements file: continuations joined, comments dropped. Of a
    lock file compiled by pip-compile or uv (`# via` annotations), the project's direct
    requirements only (`# via -r file.in`): the others are pinned dependencies of those, many of
    them of tools the tests never use, and pip resolves them anyway."""
    text = re.sub(r"\\\r?\n", " ", text)
    compiled = re.search(r"^\s*# via\b", text, re.MULTILINE) is not None
    lines: list[str] = []
    direct: list[bool] = []
    for raw in text.splitlines():
        stripped = raw.strip()
        if stripped.startswith("#"):
            if compiled and lines and re.match(r"#\s*(via\s+)?-r\s", stripped):
                direct[-1] = True
            continue
        line = re.sub(r"\s#.*$", "", stripped).strip()
        if line:
            lines.append(line)
            direct.append(not compiled or line.startswith("-"))
    return [line for line, keep in zip(lines, direct, strict=True) if keep]


# --- declared dependencies ---------------------------------------------------------------------


def _dependencies(project: _Project) -> list[str]:
    """What the project needs to run, then what its own test runs install, in that order."""
    reqs = _Requirements(project)
    runtime = _table(project.pyproject, "project").get("dependencies")
    for values in (
        runtime,
        project.setup_cfg.get("options", "install_requires", fallback=""),
        project.setup_py.get("install_requires"),
    ):
        for text in _strings(values):
            reqs.add(text)
    reqs.file(project.root / "requirements.txt")
    poetry = _table(project.pyproject, "tool", "poetry")
    for text in _poetry(poetry.get("dependencies")):
        reqs.add(text)
    _dependency_groups(project, reqs)
    _tool_groups(project, poetry, reqs)
    reqs.extras(e for e in project.extras if e in _TEST_EXTRAS)
    for text in _strings(project.setup_py.get("tests_require")):
        reqs.add(text)
    for path in _test_requirement_files(project.root):
        reqs.file(path)
    _tox(project, reqs)
    _nox(project, reqs)
    return reqs.out


def _strings(values: object) -> list[str]:
    """Requirement strings from a list, or from the lines of a string (setup.cfg)."""
    if isinstance(values, str):
        return _lines(values)
    if isinstance(values, list | tuple):
        return [v for v in values if isinstance(v, str)]
    return []


def _dependency_groups(project: _Project, reqs: _Requirements) -> None:
    """PEP 735 `[dependency-groups]` named like test ones, with the groups they include."""
    groups = project.pyproject.get("dependency-groups")
    if not isinstance(groups, dict):
        return
    table = {normalize_name(str(k)): v for k, v in groups.items()}
    seen: set[str] = set()

    def visit(name: str) -> None:
        if name in seen or not isinstance(table.get(name), list):
            return
        seen.add(name)
        for item in table[name]:
            if isinstance(item, str):
                reqs.add(item)
            elif isinstance(item, dict) and isinstance(item.get("include-group"), str):
                visit(normalize_name(item["include-group"]))

    for name in table:
        if name in _TEST_EXTRAS:
            visit(name)


def _tool_groups(project: _Project, poetry: dict[str, Any], reqs: _Requirements) -> None:
    """Test and dev dependencies in the tables of the tools that manage them: Poetry's
    `dev-dependencies` and `group.<name>.dependencies`, PDM's `dev-dependencies`, Hatch's
    `envs.default` and test-named environments (`dependencies`, `extra-dependencies`)."""
    for text in _poetry(poetry.get("dev-dependencies")):
        reqs.add(text)
    groups = poetry.get("group")
    for name, group in sorted(groups.items()) if isinstance(groups, dict) else ():
        if normalize_name(str(name)) in _TEST_EXTRAS and isinstance(group, dict):
            for text in _poetry(group.get("dependencies")):
                reqs.add(text)
    pdm = _table(project.pyproject, "tool", "pdm", "dev-dependencies")
    for name, values in sorted(pdm.items()):
        if normalize_name(str(name)) in _TEST_EXTRAS:
            for text in _strings(values):
                reqs.add(text)
    envs = _table(project.pyproject, "tool", "hatch", "envs")
    for name, env in sorted(envs.items()):
        wanted = normalize_name(str(name))
        if isinstance(env, dict) and (wanted in _TEST_EXTRAS or wanted in _HATCH_ENVS):
            for key in ("dependencies", "extra-dependencies"):
                for text in _strings(env.get(key)):
                    reqs.add(text)


_HATCH_ENVS = frozenset({"default", "hatch-test"})  # Hatch's environments that run tests
# Poetry version constraints that PEP 440 has no spelling for (`^1.2`, `~1.2`): the name alone.
_POETRY_ONLY_NAME = re.compile(r"^\s*[~^]")


def _poetry(table: object) -> list[str]:
    """Poetry's `name = "constraint"` (or a table with `version`, `extras`, `markers`,
    `optional`) as requirements; Python itself and optional ones (extras) left out."""
    if not isinstance(table, dict):
        return []
    out = []
    for name, spec in table.items():
        if normalize_name(str(name)) == "python":
            continue
        version, extras, marker = spec, [], ""
        if isinstance(spec, dict):
            if spec.get("optional") is True:
                continue
            version = spec.get("version", "*")
            extras = [e for e in spec.get("extras", []) if isinstance(e, str)]
            marker = spec.get("markers", "") if isinstance(spec.get("markers"), str) else ""
        elif isinstance(spec, list):  # several constraints by platform or Python: name alone
            version = "*"
        text = str(name) + (f"[{','.join(extras)}]" if extras else "")
        constraint = version.strip() if isinstance(version, str) else "*"
        if constraint not in ("", "*") and not _POETRY_ONLY_NAME.match(constraint):
            text += constraint if constraint[0] in "<>=!~" else f"=={constraint}"
        out.append(text + (f"; {marker}" if marker else ""))
    return out


def _test_requirement_files(root: Path) -> list[Path]:
    found: list[Path] = []
    for pattern in _TEST_REQUIREMENTS:
        for path in sorted(root.glob(pattern + ".in")) + sorted(root.glob(pattern + ".txt")):
            compiled_from = path.with_suffix(".in")
            if path.suffix == ".txt" and compiled_from.is_file():
                continue  # the lock file of an .in read instead
            if path.is_file() and path not in found:
                found.append(path)
    return found


def _tox(project: _Project, reqs: _Requirements) -> None:
    """`deps` and `extras` of tox's base `[testenv]`, the lines that hold without evaluating
    anything: no substitutions but `{toxinidir}`, factors a Python 3 test run has."""
    deps, extras = _tox_testenv(project)
    reqs.extras(_tox_lines(extras))
    reqs.lines(_tox_lines(deps), project.root)


def _tox_testenv(project: _Project) -> tuple[list[str], list[str]]:
    """(deps, extras) of the base test environment of the tox configuration tox would read."""
    root, tool = project.root, _table(project.pyproject, "tool", "tox")
    legacy = tool.get("legacy_tox_ini")
    for cfg in (
        _ini(root / "tox.ini"),
        project.setup_cfg if project.setup_cfg.has_section("tox:tox") else None,
        _ini(root / "pyproject.toml", legacy) if isinstance(legacy, str) else None,
    ):
        if cfg is not None:
            deps = cfg.get("testenv", "deps", fallback="")
            return _lines(deps), _lines(cfg.get("testenv", "extras", fallback=""))
    for base in (
        _table(tool, "env_run_base"),
        _table(_toml(root / "tox.toml") or {}, "env_run_base"),
    ):
        if base:
            return _strings(base.get("deps")), _strings(base.get("extras"))
    return [], []


def _tox_lines(lines: list[str]) -> Iterator[str]:
    for line in lines:
        m = re.match(r"([\w.!,-]+):(?!//)\s*(.*)", line)
        if m:
            if not _factors_hold(m.group(1)):
                continue
            line = m.group(2)
        line = line.replace("{toxinidir}", ".")
        if line and "{" not in line:
            yield line


def _factors_hold(expr: str) -> bool:
    """`py3,py311-tests`: any alternative (`,`) whose factors (`-`) all hold."""
    return any(all(_factor_holds(f) for f in alt.split("-")) for alt in expr.split(","))


def _factor_holds(factor: str) -> bool:
    name = factor.lstrip("!").lower()
    holds = bool(_PY3_FACTOR.match(name)) or name in _TEST_FACTORS
    return holds != factor.startswith("!")


def _nox(project: _Project, reqs: _Requirements) -> None:
    """String arguments of `session.install(...)` in the test sessions of noxfile.py."""
    try:
        tree = pyast.parse(_read(project.root / "noxfile.py") or "")
    except (SyntaxError, ValueError, RecursionError):
        return
    for fn in ast.walk(tree):
        if isinstance(fn, ast.FunctionDef | ast.AsyncFunctionDef) and _is_test_session(fn):
            for call in ast.walk(fn):
                if (
                    isinstance(call, ast.Call)
                    and isinstance(call.func, ast.Attribute)
                    and call.func.attr == "install"
                ):
                    reqs.lines(_install_lines(call.args), project.root)


def _is_test_session(fn: ast.FunctionDef | ast.AsyncFunctionDef) -> bool:
    names = [fn.name] + [
        kw.value.value
        for dec in fn.decorator_list
        if isinstance(dec, ast.Call)
        for kw in dec.keywords
        if kw.arg == "name" and isinstance(kw.value, ast.Constant)
    ]
    return any(isinstance(n, str) and "test" in n.lower() for n in names)


def _install_lines(args: list[ast.expr]) -> list[str]:
    """`install("-r", "req.txt", "pytest")` as requirement-file lines; an option whose value is
    not a literal is skipped with it."""
    tokens = [
        a.value if isinstance(a, ast.Constant) and isinstance(a.value, str) else None for a in args
    ]
    lines = []
    i = 0
    while i < len(tokens):
        token = tokens[i]
        if token in ("-r", "--requirement", "-c", "--constraint", "-e", "--editable"):
            value = tokens[i + 1] if i + 1 < len(tokens) else None
            if value is not None:
                lines.append(f"{token} {value}")
            i += 2
            continue
        if token is not None:
            lines.append(token)
        i += 1
    return lines


# --- pytest plugins the tests use --------------------------------------------------------------


def _pytest_ini(project: _Project) -> dict[str, Any]:
    """The ini options of the configuration file pytest would read, in pytest's order."""
    root = project.root
    for name in ("pytest.toml", ".pytest.toml"):
        data = _toml(root / name)
        if data is not None:  # even an empty one is the configuration
            return _table(data, "pytest")
    for name in ("pytest.ini", ".pytest.ini"):
        cfg = _ini(root / name)
        if cfg is not None:
            return dict(cfg["pytest"]) if cfg.has_section("pytest") else {}
    tool = _table(project.pyproject, "tool", "pytest")
    if tool:  # [tool.pytest.ini_options], or pytest 9's native [tool.pytest]
        return _table(tool, "ini_options") or tool
    for name, section in (("tox.ini", "pytest"), ("setup.cfg", "tool:pytest")):
        cfg = _ini(root / name)
        if cfg is not None and cfg.has_section(section):
            return dict(cfg[section])
    return {}


def _ini_words(value: object) -> list[str]:
    """An ini value as a list: a TOML list, or a string split on whitespace."""
    if isinstance(value, str):
        return value.split()
    if isinstance(value, list):
        return [str(v) for v in value]
    return []


def _ini_args(value: object) -> list[str]:
    """`addopts` as arguments (each element of a TOML list split too: `"-p mod"` happens)."""
    parts = [value] if isinstance(value, str) else value if isinstance(value, list) else []
    out: list[str] = []
    for part in parts:
        try:
            out += shlex.split(str(part))
        except ValueError:
            out += str(part).split()
    return out


def _used_plugins(project: _Project, tests: list[str], local: set[str]) -> list[str]:
    """Distributions of the pytest plugins the configuration, conftests and tests use."""
    ini = _pytest_ini(project)
    found = [_INI_PLUGINS[k] for k in ini if k in _INI_PLUGINS]
    found += [r for r in _ini_words(ini.get("required_plugins")) if _requirement(r)]
    found += _option_plugins(_ini_args(ini.get("addopts")), local)
    if _table(project.pyproject, "tool", "pytest_env"):
        found.append("pytest-env")
    use = _scan_tests(project.root, tests)
    found += [d for spec in use.plugins if (d := _plugin_dist(spec, local))]
    found += [d for m in sorted(use.imports - local) if (d := _import_dist(m))]
    found += [_MARKER_PLUGINS[m] for m in sorted(use.markers) if m in _MARKER_PLUGINS]
    for fixture in sorted(use.requested - use.defined):
        dist, word = _FIXTURE_PLUGINS.get(fixture, ("", ""))
        if dist and (not word or word in use.mentions):
            found.append(dist)
    return found


def _option_plugins(args: list[str], local: set[str]) -> list[str]:
    found = []
    for i, arg in enumerate(args):
        if arg == "-p" and i + 1 < len(args):
            dist = _plugin_dist(args[i + 1], local)
        elif arg.startswith("-p") and not arg.startswith("--"):
            dist = _plugin_dist(arg[2:], local)
        else:
            dist = _option_dist(arg.split("=", 1)[0])
        if dist:
            found.append(dist)
    return found


def _option_dist(option: str) -> str | None:
    if re.fullmatch(r"-n(\d+|auto|logical)?", option):
        return "pytest-xdist"
    for key, dist in _OPTION_PLUGINS.items():
        if option == key or option.startswith((key + "-", key + "_")):
            return dist
    return None


def _plugin_dist(spec: str, local: set[str]) -> str | None:
    """The distribution of a plugin named to `-p` or in `pytest_plugins`; None for pytest's
    own plugins, `no:NAME`, and modules of the tree itself."""
    spec = spec.strip()
    top = spec.split(".")[0]
    if not spec or spec.startswith("no:") or top in local or top == "_pytest":
        return None
    return _PLUGIN_MODULES.get(spec) or _PLUGIN_MODULES.get(top) or _import_dist(top)


def _import_dist(module: str) -> str | None:
    if module in _IMPORT_DISTS:
        return _IMPORT_DISTS[module]
    return normalize_name(module) if module.startswith("pytest_") else None


@dataclass
class _TestUse:
    """What the test files and conftests use and define."""

    imports: set[str] = field(default_factory=set)  # top-level modules
    markers: set[str] = field(default_factory=set)  # pytest.mark.NAME
    requested: set[str] = field(default_factory=set)  # fixtures asked for
    defined: set[str] = field(default_factory=set)  # fixtures the project defines
    plugins: list[str] = field(default_factory=list)  # pytest_plugins entries
    mentions: set[str] = field(default_factory=set)  # words of _MENTIONS found


def _scan_tests(root: Path, tests: list[str]) -> _TestUse:
    use = _TestUse()
    for path in _test_files(root, tests)[:_MAX_SCANNED]:
        text = _read(path)
        try:
            tree = pyast.parse(text or "", str(path))
        except (SyntaxError, ValueError, RecursionError):
            continue
        use.mentions |= {w for w in _MENTIONS if w in (text or "")}
        _scan_module(tree, use)
    return use


def _test_files(root: Path, tests: list[str]) -> list[Path]:
    """The Python files of the test paths, and the conftests above them up to the root."""
    files: dict[Path, None] = {}
    for rel in tests:
        for parent in reversed(PurePosixPath(rel).parents):
            files.setdefault(root / parent / "conftest.py")
        path = root / rel
        found = [path] if path.is_file() else sorted(path.rglob("*.py")) if path.is_dir() else []
        for p in found:
            if "__pycache__" not in p.parts and not p.is_symlink():
                files.setdefault(p)
    return [p for p in files if p.is_file()]


def _scan_module(tree: ast.Module, use: _TestUse) -> None:
    parametrized: set[str] = set()
    requested: set[str] = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            use.imports |= {a.name.split(".")[0] for a in node.names}
        elif isinstance(node, ast.ImportFrom) and node.module and not node.level:
            use.imports.add(node.module.split(".")[0])
        elif isinstance(node, ast.Attribute) and (marker := _marker(node)):
            use.markers.add(marker)
        elif isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef):
            _scan_function(node, use, requested)
        elif isinstance(node, ast.Call):
            _scan_call(node, parametrized, requested)
        elif isinstance(node, ast.Assign) and any(
            isinstance(t, ast.Name) and t.id == "pytest_plugins" for t in node.targets
        ):
            use.plugins += _strings(_literal(node.value, {}))
    use.requested |= requested - parametrized


def _marker(node: ast.Attribute) -> str | None:
    """NAME of `pytest.mark.NAME` (or `mark.NAME` after `from pytest import mark`)."""
    inner = node.value
    if isinstance(inner, ast.Name) and inner.id == "mark":
        return node.attr
    if (
        isinstance(inner, ast.Attribute)
        and inner.attr == "mark"
        and isinstance(inner.value, ast.Name)
        and inner.value.id == "pytest"
    ):
        return node.attr
    return None


def _scan_function(
    fn: ast.FunctionDef | ast.AsyncFunctionDef, use: _TestUse, requested: set[str]
) -> None:
    """A fixture (defined under its name) or a test function: their parameters are fixtures."""
    fixture = None
    for dec in fn.decorator_list:
        call = dec if isinstance(dec, ast.Call) else None
        target = call.func if call else dec
        if _last_name(target) in ("fixture", "yield_fixture"):
            fixture = fn.name
            for kw in call.keywords if call else []:
                if kw.arg == "name" and isinstance(kw.value, ast.Constant):
                    fixture = str(kw.value.value)
    if fixture is None and not fn.name.startswith("test"):
        return
    if fixture is not None:
        use.defined.add(fixture)
    params = fn.args.posonlyargs + fn.args.args + fn.args.kwonlyargs
    requested |= {a.arg for a in params if a.arg not in ("self", "cls")}


def _scan_call(call: ast.Call, parametrized: set[str], requested: set[str]) -> None:
    name = _last_name(call.func)
    first = call.args[0] if call.args else None
    if name == "parametrize":
        for kw in call.keywords:
            if kw.arg == "argnames":
                first = kw.value
        value = _literal(first, {}) if first is not None else _NOTHING
        names = value.split(",") if isinstance(value, str) else _strings(value)
        parametrized |= {n.strip() for n in names}
    elif name == "usefixtures":
        requested |= {
            a.value for a in call.args if isinstance(a, ast.Constant) and isinstance(a.value, str)
        }
    elif (
        name == "getfixturevalue"
        and isinstance(first, ast.Constant)
        and isinstance(first.value, str)
    ):
        requested.add(first.value)


def _last_name(node: ast.expr) -> str:
    if isinstance(node, ast.Attribute):
        return node.attr
    return node.id if isinstance(node, ast.Name) else ""


# --- the project's own pytest plugins ----------------------------------------------------------


def _own_plugins(project: _Project, base: Path, packages: list[str]) -> tuple[tuple[str, str], ...]:
    """The project's `pytest11` entry points whose module is in its sources, (name, module)."""
    found: dict[str, str] = {}
    tops = {p.removesuffix(".py") for p in packages}
    for name, value in _pytest11(project):
        module = value.split(":", 1)[0].strip()
        parts = module.split(".")
        if not all(p.isidentifier() for p in parts) or parts[0] not in tops:
            continue
        path = base.joinpath(*parts)
        if path.with_suffix(".py").is_file() or (path / "__init__.py").is_file():
            found.setdefault(name.strip(), module)
    return tuple(sorted(found.items()))


def _pytest11(project: _Project) -> list[tuple[str, str]]:
    """(name, value) of the `pytest11` entry points in pyproject, setup.cfg and setup.py."""
    out: list[tuple[str, str]] = []
    for table in (
        _table(project.pyproject, "project", "entry-points", "pytest11"),
        _table(project.pyproject, "tool", "poetry", "plugins", "pytest11"),
    ):
        out += [(k, v) for k, v in table.items() if isinstance(v, str)]
    cfg = project.setup_cfg.get("options.entry_points", "pytest11", fallback="")
    out += _entry_point_lines(_lines(cfg))
    eps = project.setup_py.get("entry_points")
    if isinstance(eps, dict):
        out += _entry_point_lines(_strings(eps.get("pytest11")))
    elif isinstance(eps, str):  # the ini form
        ini = _ini(Path("setup.py"), eps)
        if ini is not None and ini.has_section("pytest11"):
            out += list(ini["pytest11"].items())
    return out


def _entry_point_lines(lines: list[str]) -> list[tuple[str, str]]:
    pairs = (line.partition("=") for line in lines)
    return [(n.strip(), v.strip()) for n, sep, v in pairs if sep and n.strip() and v.strip()]


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
        + f"test_timeout = {manifest.test_timeout:g}\n"
        + (f"pytest = {_toml_str(manifest.pytest)}\n" if manifest.pytest else "")
        + "".join(
            ("\n[run.plugins]\n" if i == 0 else "") + f"{_toml_str(name)} = {_toml_str(module)}\n"
            for i, (name, module) in enumerate(manifest.plugins)
        )
    )
