"""A Python project's metadata, read once and never run: the lowest layer of detection.

`read_project` reads pyproject.toml, setup.cfg, the literal keywords of setup.py's `setup()`
calls (parsed, never executed) and PKG-INFO into a `Project` record: the project's own
distribution names and its extras, which `dependencies` and `plugins` read again and again.
`pytest_ini` finds the pytest configuration pytest itself would read. The small readers of
TOML, ini, literal and list values are shared by the modules above (`dependencies`, `plugins`,
`detect`); this one imports none of them.
"""

from __future__ import annotations

import ast
import configparser
import re
import tomllib
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from packaging.version import InvalidVersion, Version

from taskmint import pyast

__all__ = [
    "NOTHING",
    "Project",
    "config_lines",
    "ini_words",
    "last_name",
    "literal_value",
    "normalize_name",
    "own_distribution",
    "pytest_ini",
    "read_ini",
    "read_project",
    "read_text",
    "read_toml",
    "string_list",
    "toml_table",
    "with_marker",
]


_MAX_BYTES = 1_000_000  # files bigger than this are not read (generated data, vendored code)


def normalize_name(name: str) -> str:
    """A distribution name in its canonical form (PEP 503)."""
    return re.sub(r"[-_.]+", "-", name).lower()


# --- the project's metadata files, parsed once -------------------------------------------------


@dataclass
class Project:
    """What the tree's metadata files say (read, never executed)."""

    root: Path
    pyproject: dict[str, Any]
    setup_cfg: configparser.ConfigParser
    setup_py: dict[str, Any]  # literal keywords of setup() calls
    names: set[str]  # the project's own distribution names, normalized
    extras: dict[str, list[str]] = field(default_factory=dict)  # normalized name -> requirements


def read_project(root: Path, name: str) -> Project:
    """The metadata files of the tree at `root`; `name`, the seed's, counts among its own."""
    pyproject = read_toml(root / "pyproject.toml") or {}
    setup_cfg = read_ini(root / "setup.cfg")
    setup_cfg = setup_cfg if setup_cfg is not None else _new_ini()
    setup_py = _setup_py(root / "setup.py")
    project = toml_table(pyproject, "project")
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
        {k: config_lines(v) for k, v in setup_cfg.items("options.extras_require")}
        if setup_cfg.has_section("options.extras_require")
        else {}
    )
    for table in (optional, cfg_extras, setup_py.get("extras_require")):
        _merge_extras(extras, table)
    return Project(root, pyproject, setup_cfg, setup_py, names, extras)


_VERSION_LINE = re.compile(
    r"""^(?:__version__|version|VERSION)\s*(?::\s*str\s*)?=\s*(?:version\s*=\s*)?"""
    r"""['"]([^'"]+)['"]""",
    re.MULTILINE,
)
_VERSION_MODULES = ("__init__.py", "__about__.py", "_version.py", "version.py", "__version__.py")


def own_distribution(project: Project, base: Path, packages: list[str]) -> str:
    """The project's own distribution as "name==version", read as its build would find them
    (never run): PKG-INFO (an sdist's), pyproject's `[project]`, setup.cfg's `[metadata]`,
    setup.py's literal keywords; a dynamic version from the version module the package holds
    (`__version__ = "1.2.0"`, or the one a git seed's fetch wrote from the tags). "" when the
    name or a valid version cannot be found."""
    pkg_info = read_text(project.root / "PKG-INFO") or ""
    table = toml_table(project.pyproject, "project")
    cfg = project.setup_cfg
    names = [
        _header(pkg_info, "Name"),
        table.get("name"),
        cfg.get("metadata", "name", fallback=None),
        project.setup_py.get("name"),
    ]
    versions = [
        _header(pkg_info, "Version"),
        table.get("version"),
        cfg.get("metadata", "version", fallback=None),
        project.setup_py.get("version"),
    ]
    for package in packages:
        folder = base / package
        for module in _VERSION_MODULES if folder.is_dir() else ():
            m = _VERSION_LINE.search(read_text(folder / module) or "")
            versions.append(m.group(1) if m else None)
        if not folder.is_dir():
            m = _VERSION_LINE.search(read_text(folder) or "")
            versions.append(m.group(1) if m else None)
    name = next((n.strip() for n in names if isinstance(n, str) and n.strip()), "")
    if not re.fullmatch(r"[A-Za-z0-9]([A-Za-z0-9._-]*[A-Za-z0-9])?", name):
        return ""
    for version in versions:
        if isinstance(version, str):
            try:
                return f"{name}=={Version(version.strip())}"
            except InvalidVersion:
                continue  # "attr: pkg.__version__", "file: VERSION", a template
    return ""


def _header(text: str, key: str) -> str | None:
    head = text.split("\n\n", 1)[0]
    m = re.search(rf"^{key}:\s*(\S+)", head, re.MULTILINE)
    return m.group(1) if m else None


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
            reqs = [with_marker(r, marker.strip()) for r in reqs]
        extras.setdefault(normalize_name(extra.strip()), []).extend(reqs)


def with_marker(req: str, marker: str) -> str:
    """`req` installed only where `marker` holds too."""
    head, sep, own = req.partition(";")
    if sep and own.strip():
        return f"{head.strip()}; ({own.strip()}) and ({marker})"
    return f"{head.strip()}; {marker}"


# --- files, and the values in them -------------------------------------------------------------


def read_toml(path: Path) -> dict[str, Any] | None:
    """A TOML file's data: None when it cannot be read (`read_text`), {} when it does not parse."""
    text = read_text(path)
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


def read_ini(path: Path, text: str | None = None) -> configparser.ConfigParser | None:
    """An ini file, or `text` when given: None when the file cannot be read (`read_text`),
    empty when it does not parse. Keys keep their case; nothing is interpolated."""
    text = read_text(path) if text is None else text
    if text is None:
        return None
    cfg = _new_ini()
    try:
        cfg.read_string(text)
    except configparser.Error:
        return _new_ini()
    return cfg


def read_text(path: Path) -> str | None:
    """A small text file's content, or None (missing, unreadable, binary, over the limit)."""
    try:
        if not path.is_file() or path.stat().st_size > _MAX_BYTES:
            return None
        return path.read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError):
        return None


def toml_table(data: dict[str, Any], *keys: str) -> dict[str, Any]:
    """The table at `keys` (`"tool", "pytest"`), {} when it is missing or not a table."""
    for key in keys:
        value = data.get(key)
        data = value if isinstance(value, dict) else {}
    return data


def _pkg_info_name(path: Path) -> str | None:
    m = re.search(r"^Name:\s*(\S+)", read_text(path) or "", re.MULTILINE)
    return m.group(1) if m else None


def _setup_py(path: Path) -> dict[str, Any]:
    """The keywords of setup() calls that are literals, or module-level names bound to
    literals (`tests_require=TESTS`)."""
    text = read_text(path)
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
            literal = literal_value(value, names)
            if literal is not NOTHING:
                names[target.id] = literal
    calls = [n for n in ast.walk(tree) if isinstance(n, ast.Call)]
    out: dict[str, Any] = {}
    for node in sorted(calls, key=lambda c: last_name(c.func) != "setup"):  # setup() first
        for kw in node.keywords:
            literal = literal_value(kw.value, names)
            if kw.arg and literal is not NOTHING:
                out.setdefault(kw.arg, literal)
    return out


NOTHING = object()


def literal_value(node: ast.expr, names: dict[str, object]) -> object:
    """A literal's value, following names bound to literals and `+` of lists or strings;
    `NOTHING` for anything else (nothing is ever evaluated)."""
    if isinstance(node, ast.Name):
        return names.get(node.id, NOTHING)
    if isinstance(node, ast.List | ast.Tuple):
        items = [literal_value(e, names) for e in node.elts]
        return NOTHING if NOTHING in items else items
    if isinstance(node, ast.Dict):
        keys = [literal_value(k, names) if k is not None else NOTHING for k in node.keys]
        values = [literal_value(v, names) for v in node.values]
        if NOTHING in keys or NOTHING in values:
            return NOTHING
        try:
            return dict(zip(keys, values, strict=True))
        except TypeError:  # an unhashable key
            return NOTHING
    if isinstance(node, ast.BinOp) and isinstance(node.op, ast.Add):
        left, right = literal_value(node.left, names), literal_value(node.right, names)
        if isinstance(left, list) and isinstance(right, list):
            return left + right
        if isinstance(left, str) and isinstance(right, str):
            return left + right
        return NOTHING
    try:
        return ast.literal_eval(node)
    except (ValueError, TypeError, SyntaxError, RecursionError):
        return NOTHING


def config_lines(text: str) -> list[str]:
    """The lines of a multi-line ini value, comments and blank lines dropped."""
    return [ln.split("#", 1)[0].strip() for ln in text.splitlines() if ln.split("#", 1)[0].strip()]


def string_list(values: object) -> list[str]:
    """Requirement strings from a list, or from the lines of a string (setup.cfg)."""
    if isinstance(values, str):
        return config_lines(values)
    if isinstance(values, list | tuple):
        return [v for v in values if isinstance(v, str)]
    return []


def last_name(node: ast.expr) -> str:
    """NAME of `NAME` or `a.b.NAME` (what a call or decorator is called), else ""."""
    if isinstance(node, ast.Attribute):
        return node.attr
    return node.id if isinstance(node, ast.Name) else ""


# --- the pytest configuration ------------------------------------------------------------------


def pytest_ini(project: Project) -> dict[str, Any]:
    """The ini options of the configuration file pytest would read, in pytest's order."""
    root = project.root
    for name in ("pytest.toml", ".pytest.toml"):
        data = read_toml(root / name)
        if data is not None:  # even an empty one is the configuration
            return toml_table(data, "pytest")
    for name in ("pytest.ini", ".pytest.ini"):
        cfg = read_ini(root / name)
        if cfg is not None:
            return dict(cfg["pytest"]) if cfg.has_section("pytest") else {}
    tool = toml_table(project.pyproject, "tool", "pytest")
    if tool:  # [tool.pytest.ini_options], or pytest 9's native [tool.pytest]
        return toml_table(tool, "ini_options") or tool
    for name, section in (("tox.ini", "pytest"), ("setup.cfg", "tool:pytest")):
        cfg = read_ini(root / name)
        if cfg is not None and cfg.has_section(section):
            return dict(cfg[section])
    return {}


def ini_words(value: object) -> list[str]:
    """An ini value as a list: a TOML list, or a string split on whitespace."""
    if isinstance(value, str):
        return value.split()
    if isinstance(value, list):
        return [str(v) for v in value]
    return []
