"""Detecting a project's layout and dependencies, and writing them as a taskmint.toml."""

from __future__ import annotations

from pathlib import Path

import pytest

from taskmint.acquire.manifest import parse_manifest, render_manifest
from taskmint.errors import ManifestError
from taskmint.languages.python.detect import DetectError, detect_manifest


def _tree(root: Path, files: dict[str, str]) -> Path:
    for rel, text in files.items():
        (root / rel).parent.mkdir(parents=True, exist_ok=True)
        (root / rel).write_text(text)
    return root


def test_src_layout_with_pyproject_dependencies_and_test_extra(tmp_path):
    root = _tree(
        tmp_path,
        {
            "src/wid/__init__.py": "",
            "src/wid/core.py": "",
            "tests/test_core.py": "",
            "docs/conf.py": "",
            "pyproject.toml": """
[project]
name = "wid"
dependencies = ["attrs>=22", "wid-extras; python_version<'3'"]
[project.optional-dependencies]
test = ["pytest>=7", "pytest-cov", "hypothesis==6.100.0", "wid"]
docs = ["sphinx"]
""",
        },
    )
    m = detect_manifest(root, name="wid")
    assert m.source_paths == ("src/wid",)
    assert m.pythonpath == ("src",)
    assert m.test_paths == ("tests",)
    # the runner's own tools and the project itself are never dependencies; plugins are
    assert m.dependencies == (
        "attrs>=22",
        "wid-extras; python_version<'3'",
        "pytest-cov",
        "hypothesis==6.100.0",
    )


def test_flat_module_with_setup_cfg_setup_py_and_requirements(tmp_path):
    root = _tree(
        tmp_path,
        {
            "fmt.py": "",
            "setup.py": "",
            "versioneer.py": "",
            "test_fmt.py": "",
            "setup.cfg": "[options]\ninstall_requires =\n    six>=1.0  # compat\n"
            "[options.extras_require]\ntesting =\n    freezegun\n",
            "requirements-test.txt": "-r requirements.txt\nmock==5.1\n--hash x\n",
        },
    )
    (root / "setup.py").write_text(
        "from setuptools import setup\n"
        "setup(name='fmt', install_requires=['idna'], tests_require=['pluggy==1.0', 'toml'],\n"
        "      extras_require={'tests': ['tox', 'mock']}, version=get_version())\n"
    )
    m = detect_manifest(root, name="fmt")
    assert m.source_paths == ("fmt.py",)
    assert m.test_paths == ("test_fmt.py",)
    # what it needs to run first, then its test extras, tests_require and test requirements;
    # one requirement per distribution (the first: mock, not mock==5.1)
    assert m.dependencies == ("six>=1.0", "idna", "freezegun", "mock", "toml")


def test_tests_inside_the_package(tmp_path):
    root = _tree(tmp_path, {"tz/__init__.py": "", "tz/tests/test_a.py": "", "setup.py": "x("})
    m = detect_manifest(root, name="tz")
    assert m.source_paths == ("tz",) and m.test_paths == ("tz/tests",)
    assert m.dependencies == ()  # a setup.py that does not parse is read as no dependencies


def test_test_folders_deeper_inside_the_package(tmp_path):
    root = _tree(
        tmp_path,
        {
            "src/pkg/__init__.py": "",
            "src/pkg/_core/__init__.py": "",
            "src/pkg/_core/_tests/test_a.py": "",
            "src/pkg/_tests/test_b.py": "",
            "src/pkg/testing/__init__.py": "",
            "src/pkg/testing/_pkg_test.py": "",  # a private helper, not a test file
        },
    )
    m = detect_manifest(root, name="pkg")
    assert m.test_paths == ("src/pkg/_core/_tests", "src/pkg/_tests")


def test_no_tests_or_no_package_is_a_clear_error(tmp_path):
    _tree(tmp_path / "a", {"pkg/__init__.py": "", "README": ""})
    with pytest.raises(DetectError, match="no tests found"):
        detect_manifest(tmp_path / "a", name="a")
    _tree(tmp_path / "b", {"tests/test_x.py": "", "setup.py": ""})
    with pytest.raises(DetectError, match="no Python package"):
        detect_manifest(tmp_path / "b", name="b")


def test_the_rendered_manifest_reads_back_the_same(tmp_path):
    root = _tree(
        tmp_path,
        {"q/__init__.py": "", "test/test_q.py": "", "requirements.txt": 'x"y>=1\n'},
    )
    m = detect_manifest(root, name="q", description='say "hi"')
    text = render_manifest(m, origin="q==1.0")
    assert text.startswith("# Detected by taskmint from q==1.0")
    assert parse_manifest(text) == m


def test_the_projects_pytest_testpaths_come_first(tmp_path):
    root = _tree(
        tmp_path,
        {
            "pkg/__init__.py": "",
            "tests/test_a.py": "",
            "checks/unit/test_b.py": "",
            "tox.ini": "[tox]\nenvlist = py\n[pytest]\ntestpaths = checks/unit ../out /abs\n",
        },
    )
    assert detect_manifest(root, name="pkg").test_paths == ("checks/unit",)
    (root / "pyproject.toml").write_text('[tool.pytest.ini_options]\ntestpaths = ["tests"]\n')
    assert detect_manifest(root, name="pkg").test_paths == ("tests",)


def test_test_modules_beside_the_code_inside_the_package(tmp_path):
    root = _tree(
        tmp_path,
        {
            "iso/__init__.py": "",
            "iso/parse.py": "",
            "iso/test_parse.py": "def test_x():\n    pass\n",
            "iso/helpers_test.py": "",
        },
    )
    m = detect_manifest(root, name="iso")
    assert m.source_paths == ("iso",)
    assert m.test_paths == ("iso/helpers_test.py", "iso/test_parse.py")


def test_the_package_folder_the_build_configuration_names(tmp_path):
    setup = "from setuptools import setup\nsetup(name='yml', package_dir={'': 'lib'})\n"
    root = _tree(
        tmp_path / "a",
        {"setup.py": setup, "lib/yml/__init__.py": "", "tests/test_yml.py": ""},
    )
    m = detect_manifest(root, name="yml")
    assert (m.source_paths, m.pythonpath) == (("lib/yml",), ("lib",))
    cfg = "[options]\npackage_dir =\n    =code\n"
    root = _tree(
        tmp_path / "b",
        {"setup.cfg": cfg, "code/yml/__init__.py": "", "tests/test_yml.py": ""},
    )
    assert detect_manifest(root, name="yml").source_paths == ("code/yml",)


def test_test_files_named_by_the_projects_python_files(tmp_path):
    root = _tree(
        tmp_path,
        {
            "pyproject.toml": '[tool.pytest.ini_options]\npython_files = "tests.py"\n',
            "vol/__init__.py": "",
            "vol/tests/__init__.py": "",
            "vol/tests/tests.py": "def test_x():\n    pass\n",
        },
    )
    assert detect_manifest(root, name="vol").test_paths == ("vol/tests",)


def test_the_projects_own_distribution_is_read_never_run(tmp_path):
    """Name and version as the build would find them: an sdist's PKG-INFO, pyproject's
    `[project]`, setup.cfg's `[metadata]`, setup.py's literals, else the version module the
    package holds; "" when either is missing or the version is not a version."""
    base = {"pkg/__init__.py": "", "tests/test_p.py": ""}
    cases = {
        "sdist": (
            {"PKG-INFO": "Metadata-Version: 2.1\nName: Pkg.Tool\nVersion: 8.4.2\n"},
            "Pkg.Tool==8.4.2",
        ),
        "pyproject": ({"pyproject.toml": '[project]\nname = "pkg"\nversion = "1.0"\n'}, "pkg==1.0"),
        "setup.cfg": ({"setup.cfg": "[metadata]\nname = pkg\nversion = 2.0.1\n"}, "pkg==2.0.1"),
        "setup.py": (
            {"setup.py": 'from setuptools import setup\nsetup(name="pkg", version="3")\n'},
            "pkg==3",
        ),
        "dynamic": (
            {
                "pyproject.toml": '[project]\nname = "pkg"\ndynamic = ["version"]\n',
                "pkg/__init__.py": '"""Doc."""\n\n__version__ = "0.9.0rc1"\n',
            },
            "pkg==0.9.0rc1",
        ),
        "attr": (
            {
                "setup.cfg": "[metadata]\nname = pkg\nversion = attr: pkg.__about__.VERSION\n",
                "pkg/__about__.py": "VERSION = '4.5'\n",
            },
            "pkg==4.5",
        ),
        "scm file": (
            {
                "pyproject.toml": '[project]\nname = "pkg"\ndynamic = ["version"]\n',
                "pkg/_version.py": "__version__ = version = '1.4.1.dev1+gabc1234'\n",
            },
            "pkg==1.4.1.dev1+gabc1234",
        ),
        "no version": ({"pyproject.toml": '[project]\nname = "pkg"\n'}, ""),
        "not a version": ({"setup.cfg": "[metadata]\nname = pkg\nversion = file: VERSION\n"}, ""),
        "no name": ({"pkg/__init__.py": "__version__ = '1.0'\n"}, ""),
    }
    for label, (files, expected) in cases.items():
        root = _tree(tmp_path / label.replace(" ", "-"), {**base, **files})
        m = detect_manifest(root, name="p")
        assert m.distribution == expected, label
        assert parse_manifest(render_manifest(m)) == m, label
    text = render_manifest(detect_manifest(tmp_path / "sdist", name="p"))
    assert 'distribution = "Pkg.Tool==8.4.2"' in text
    for bad in ("pkg", "pkg==", "pkg==not.a.version!", "==1.0", "p kg==1.0"):
        with pytest.raises(ManifestError, match=r"seed\.distribution"):
            parse_manifest(text.replace("Pkg.Tool==8.4.2", bad))
