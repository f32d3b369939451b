"""The pytest plugins a project's tests need, and the ones the project provides itself.

The third layer of detection, on top of `project` (the metadata and pytest configuration read
once) and `dependencies` (`index_requirement`). `used_plugins` finds the plugins the pytest
configuration, conftests and test files use without declaring them (an ini key or `addopts`
option only a plugin defines, `-p NAME`, `pytest_plugins`, an import, a marker, a fixture); the
test files are parsed, never imported. `own_plugins` finds the project's `pytest11` entry
points, which the run must register. Much of the module is the tables mapping those signs of
use to distributions, kept next to the scan that reads them: hence its length.
"""

from __future__ import annotations

import ast
import re
import shlex
from dataclasses import dataclass, field
from pathlib import Path, PurePosixPath

from taskmint import pyast
from taskmint.languages.python.dependencies import index_requirement
from taskmint.languages.python.project import (
    NOTHING,
    Project,
    config_lines,
    ini_words,
    last_name,
    literal_value,
    normalize_name,
    pytest_ini,
    read_ini,
    read_text,
    string_list,
    toml_table,
)

__all__ = ["own_plugins", "used_plugins"]


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


# --- pytest plugins the tests use --------------------------------------------------------------


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


def used_plugins(project: Project, tests: list[str], local: set[str]) -> list[str]:
    """Distributions of the pytest plugins the configuration, conftests and tests use."""
    ini = pytest_ini(project)
    found = [_INI_PLUGINS[k] for k in ini if k in _INI_PLUGINS]
    found += [r for r in ini_words(ini.get("required_plugins")) if index_requirement(r)]
    found += _option_plugins(_ini_args(ini.get("addopts")), local)
    if toml_table(project.pyproject, "tool", "pytest_env"):
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
        text = read_text(path)
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
            use.plugins += string_list(literal_value(node.value, {}))
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
        if last_name(target) in ("fixture", "yield_fixture"):
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
    name = last_name(call.func)
    first = call.args[0] if call.args else None
    if name == "parametrize":
        for kw in call.keywords:
            if kw.arg == "argnames":
                first = kw.value
        value = literal_value(first, {}) if first is not None else NOTHING
        names = value.split(",") if isinstance(value, str) else string_list(value)
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


# --- the project's own pytest plugins ----------------------------------------------------------


def own_plugins(project: Project, base: Path, packages: list[str]) -> tuple[tuple[str, str], ...]:
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


def _pytest11(project: Project) -> list[tuple[str, str]]:
    """(name, value) of the `pytest11` entry points in pyproject, setup.cfg and setup.py."""
    out: list[tuple[str, str]] = []
    for table in (
        toml_table(project.pyproject, "project", "entry-points", "pytest11"),
        toml_table(project.pyproject, "tool", "poetry", "plugins", "pytest11"),
    ):
        out += [(k, v) for k, v in table.items() if isinstance(v, str)]
    cfg = project.setup_cfg.get("options.entry_points", "pytest11", fallback="")
    out += _entry_point_lines(config_lines(cfg))
    eps = project.setup_py.get("entry_points")
    if isinstance(eps, dict):
        out += _entry_point_lines(string_list(eps.get("pytest11")))
    elif isinstance(eps, str):  # the ini form
        ini = read_ini(Path("setup.py"), eps)
        if ini is not None and ini.has_section("pytest11"):
            out += list(ini["pytest11"].items())
    return out


def _entry_point_lines(lines: list[str]) -> list[tuple[str, str]]:
    pairs = (line.partition("=") for line in lines)
    return [(n.strip(), v.strip()) for n, sep, v in pairs if sep and n.strip() and v.strip()]
