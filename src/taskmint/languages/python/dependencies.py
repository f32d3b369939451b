"""The dependencies a project declares, for its code and for its own test runs.

The second layer of detection, on top of `project` (the metadata read once): what the project
needs to run (pyproject's `dependencies`, `install_requires`, requirements.txt, Poetry's
dependencies), then what its test runs install: test and dev extras, PEP 735 dependency groups,
the test and dev tables of Poetry, PDM and Hatch, `tests_require`, test requirement files, the
tox `[testenv]` and the nox test sessions (noxfile.py is parsed, never executed).
`select_requirements` keeps one requirement per distribution, minus the project itself and the
tools taskmint installs or no test needs (`_DROPPED`), and `pytest_constraint` the project's own
limit on pytest. `plugins` reads `index_requirement` from here; `detect` the rest.

It is longer than most modules because a project can declare its dependencies in that many
places, each in its own syntax; the readers stay together because they all feed one collector,
`_Requirements`, which follows requirement files, `-r` includes and the project's own extras.
"""

from __future__ import annotations

import ast
import contextlib
import importlib.metadata
import re
from collections.abc import Iterable, Iterator
from pathlib import Path
from typing import Any

from packaging.requirements import InvalidRequirement, Requirement  # pytest's own dependency
from packaging.specifiers import SpecifierSet
from packaging.version import InvalidVersion, Version

from taskmint import pyast
from taskmint.config import MIN_PYTEST
from taskmint.languages.python.project import (
    Project,
    config_lines,
    normalize_name,
    read_ini,
    read_text,
    read_toml,
    string_list,
    toml_table,
    with_marker,
)

__all__ = ["declared_dependencies", "index_requirement", "pytest_constraint", "select_requirements"]


# --- declared dependencies ---------------------------------------------------------------------


# Extras and dependency groups (normalized names) that a project's own test runs install.
_TEST_EXTRAS = frozenset({"test", "tests", "testing", "dev"})


def declared_dependencies(project: Project) -> list[str]:
    """What the project needs to run, then what its own test runs install, in that order."""
    reqs = _Requirements(project)
    runtime = toml_table(project.pyproject, "project").get("dependencies")
    for values in (
        runtime,
        project.setup_cfg.get("options", "install_requires", fallback=""),
        project.setup_py.get("install_requires"),
    ):
        for text in string_list(values):
            reqs.add(text)
    reqs.file(project.root / "requirements.txt")
    poetry = toml_table(project.pyproject, "tool", "poetry")
    for text in _poetry(poetry.get("dependencies")):
        reqs.add(text)
    _dependency_groups(project, reqs)
    _tool_groups(project, poetry, reqs)
    reqs.extras(e for e in project.extras if e in _TEST_EXTRAS)
    for text in string_list(project.setup_py.get("tests_require")):
        reqs.add(text)
    for path in _test_requirement_files(project.root):
        reqs.file(path)
    _tox(project, reqs)
    _nox(project, reqs)
    return reqs.out


def _dependency_groups(project: Project, reqs: _Requirements) -> None:
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


def _tool_groups(project: Project, poetry: dict[str, Any], reqs: _Requirements) -> None:
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
    pdm = toml_table(project.pyproject, "tool", "pdm", "dev-dependencies")
    for name, values in sorted(pdm.items()):
        if normalize_name(str(name)) in _TEST_EXTRAS:
            for text in string_list(values):
                reqs.add(text)
    envs = toml_table(project.pyproject, "tool", "hatch", "envs")
    for name, env in sorted(envs.items()):
        wanted = normalize_name(str(name))
        if isinstance(env, dict) and (wanted in _TEST_EXTRAS or wanted in _HATCH_ENVS):
            for key in ("dependencies", "extra-dependencies"):
                for text in string_list(env.get(key)):
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


def _tox(project: Project, reqs: _Requirements) -> None:
    """`deps` and `extras` of tox's base `[testenv]`, the lines that hold without evaluating
    anything: no substitutions but `{toxinidir}`, factors a Python 3 test run has."""
    deps, extras = _tox_testenv(project)
    reqs.extras(_tox_lines(extras))
    reqs.lines(_tox_lines(deps), project.root)


def _tox_testenv(project: Project) -> tuple[list[str], list[str]]:
    """(deps, extras) of the base test environment of the tox configuration tox would read."""
    root, tool = project.root, toml_table(project.pyproject, "tool", "tox")
    legacy = tool.get("legacy_tox_ini")
    for cfg in (
        read_ini(root / "tox.ini"),
        project.setup_cfg if project.setup_cfg.has_section("tox:tox") else None,
        read_ini(root / "pyproject.toml", legacy) if isinstance(legacy, str) else None,
    ):
        if cfg is not None:
            deps = cfg.get("testenv", "deps", fallback="")
            return config_lines(deps), config_lines(cfg.get("testenv", "extras", fallback=""))
    for base in (
        toml_table(tool, "env_run_base"),
        toml_table(read_toml(root / "tox.toml") or {}, "env_run_base"),
    ):
        if base:
            return string_list(base.get("deps")), string_list(base.get("extras"))
    return [], []


# tox factors a plain `tox -e py3` run of the tests has: a Python 3 one, or a generic test one.
# A line conditional on any other factor (a Django version, lint, docs, pypy) is not for us.
_PY3_FACTOR = re.compile(r"^(py|py3|py3\d+|py3\.\d+|python3(\.\d+)?)$")
_TEST_FACTORS = frozenset({"test", "tests", "testing", "unit", "unittests", "pytest", "cov"})


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


def _nox(project: Project, reqs: _Requirements) -> None:
    """String arguments of `session.install(...)` in the test sessions of noxfile.py."""
    try:
        tree = pyast.parse(read_text(project.root / "noxfile.py") or "")
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


# --- requirement strings -----------------------------------------------------------------------


def index_requirement(text: str) -> str | None:
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


class _Requirements:
    """Requirement strings gathered in order. A requirement of the project itself stands for
    the extras it names; requirement files and extras are each followed once."""

    def __init__(self, project: Project) -> None:
        self.project = project
        self.out: list[str] = []
        self._root = project.root.resolve()
        self._files: set[Path] = set()
        self._extras: set[str] = set()

    def add(self, text: str, marker: str = "") -> None:
        req = index_requirement(with_marker(text, marker) if marker else text)
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
        text = read_text(real)
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


# --- what the manifest keeps -------------------------------------------------------------------


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


def select_requirements(requirements: list[str], own: set[str]) -> tuple[str, ...]:
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


def pytest_constraint(requirements: list[str]) -> str:
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
    # A constraint that allows no pytest taskmint's plugin supports (pyrsistent 0.20.0:
    # `pytest<7`) is an old pin, not a need: the suite runs under taskmint's pytest, and if it
    # breaks there the older pytests are tried (`pipeline.fallback_manifest`).
    named = []
    for one in spec:
        with contextlib.suppress(InvalidVersion):
            if Version(one.version.rstrip(".*")) >= Version(MIN_PYTEST):
                named.append(one.version)
    if not any(spec.contains(v, prereleases=True) for v in (*_SUPPORTED_PYTESTS, *named)):
        return ""
    return str(spec)


# Versions from the oldest pytest taskmint's plugin supports (`config.MIN_PYTEST`) on: a
# constraint allowing none of them (nor a supported version it names) allows no pytest
# taskmint can run.
_OLDEST = int(MIN_PYTEST.split(".")[0])
_SUPPORTED_PYTESTS = tuple(
    f"{a}.{b}.{c}" for a in range(_OLDEST, _OLDEST + 3) for b in range(10) for c in (0, 9)
)
