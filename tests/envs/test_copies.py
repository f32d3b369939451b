"""No copy of the seed in what its sandbox sees: no pip or setuptools in the venv, no wheels of
the interpreter's, the seed's own distribution replaced by its metadata when a dependency pulls
it in (even pytest's own), and a vendored copy refused, naming it.

The seeds are built here from real code: iniconfig's (a dependency of pytest itself), and the
copy of a project pip vendors inside the wheel CPython's `ensurepip` bundles (tenacity's on
3.11: the copy that cost the tenacity seed most of its candidates).
"""

from __future__ import annotations

import dataclasses
import ensurepip
import importlib.util
import shutil
import subprocess
import zipfile
from pathlib import Path

import pytest

from taskmint.acquire import acquire
from taskmint.acquire.manifest import render_manifest
from taskmint.envs.copies import module_roots, vendored_copies
from taskmint.envs.venv import _dependencies
from taskmint.errors import EnvironmentBuildError
from taskmint.excise import excise
from taskmint.index import index_seed
from taskmint.languages import adapter_for, build_environment
from taskmint.languages.python.detect import detect_manifest
from taskmint.records import Environment, SeedApp, SeedManifest
from taskmint.sandbox import LocalSandbox
from taskmint.sandbox.base import RunSpec
from taskmint.validate import run_baseline
from taskmint.validate.leak import scan_for_leaks
from tests.conftest import LIMITS


def _site(env: Environment) -> Path:
    return next(Path(env.prefix).glob("lib/python*/site-packages"))


def test_an_environment_holds_neither_pip_nor_setuptools(tiny_env):
    """Both vendor a dozen projects each (pip: tenacity, rich, urllib3, idna, packaging, ...;
    setuptools: more_itertools, jaraco, zipp, tomli, ...), and no test needs them unless it
    says so."""
    names = {p.name.split("-")[0].lower() for p in _site(tiny_env).iterdir()}
    assert not names & {"pip", "setuptools", "pkg_resources", "_distutils_hack"}, names
    assert not [p for p in Path(tiny_env.prefix).rglob("*") if p.name.endswith((".whl", ".egg"))]


def test_the_sandbox_shows_no_wheel_of_the_interpreter(tiny_seed, tiny_env, sandbox, tmp_path):
    """CPython bundles pip's wheel (and setuptools' before 3.12) in `ensurepip/_bundled`; the
    sandbox covers every folder of the interpreter that holds wheels with an empty one."""
    mounts = adapter_for(tiny_seed.manifest).mounts(tiny_env)
    if list((Path(ensurepip.__file__).parent / "_bundled").glob("*.whl")):
        assert any(m.target.endswith("/ensurepip/_bundled") for m in mounts)
    result = sandbox.run(
        RunSpec(
            argv=(
                "/usr/bin/find",
                "/",
                "(",
                "-path",
                "/proc",
                "-o",
                "-path",
                "/sys",
                "-o",
                "-path",
                "/dev",
                ")",
                "-prune",
                "-o",
                "(",
                "-name",
                "*.whl",
                "-o",
                "-name",
                "*.egg",
                ")",
                "-print",
            ),
            workspace=str(tmp_path),
            mounts=tuple(mounts),
            env=(("PATH", "/usr/bin:/bin"),),
            limits=LIMITS,
            cwd="/",
        )
    )
    assert not result.timed_out
    assert result.output.strip() == "", result.output


def _bundled_pip() -> Path:
    wheels = sorted((Path(ensurepip.__file__).parent / "_bundled").glob("pip-*.whl"))
    if not wheels:
        pytest.skip("this interpreter bundles no pip wheel")
    return wheels[0]


def test_a_seed_pip_vendors_leaks_nothing_from_the_interpreter(cache_dir, sandbox, tmp_path):
    """The tenacity hole: a seed whose code is in pip's vendored copy, inside the wheel of
    ensurepip. The leak scan searches everything the sandbox shows: it must find nothing."""
    with zipfile.ZipFile(_bundled_pip()) as zf:
        vendored = sorted(
            {n.split("/")[2] for n in zf.namelist() if n.count("/") >= 3 and "/_vendor/" in n}
        )
        preferred = [n for n in ("tenacity", "resolvelib", "pyproject_hooks") if n in vendored]
        if not preferred:
            pytest.skip(f"the bundled pip vendors none of the packages tried ({vendored})")
        name = preferred[0]
        root = tmp_path / "seed"
        for member in zf.namelist():
            if member.startswith(f"pip/_vendor/{name}/") and member.endswith(".py"):
                target = root / member.removeprefix("pip/_vendor/")
                target.parent.mkdir(parents=True, exist_ok=True)
                target.write_bytes(zf.read(member))
    (root / "tests").mkdir()
    (root / "tests" / "test_it.py").write_text(f"import {name}\n\ndef test_it():\n    pass\n")
    (root / "taskmint.toml").write_text(
        f'[seed]\nname = "{name}"\nlanguage = "python"\nsource_paths = ["{name}"]\n'
        'test_paths = ["tests"]\n\n[run]\nrunner = "pytest"\n'
    )
    seed = acquire(root, cache_dir=cache_dir)
    env = build_environment(seed.manifest, cache_dir=cache_dir)
    candidates = excise(seed, index_seed(seed), max_candidates=6).candidates
    assert candidates
    hits = scan_for_leaks(seed, env, candidates, sandbox, limits=LIMITS)
    assert hits == {}, hits


def _iniconfig_seed(root: Path) -> Path:
    """iniconfig (pytest requires it) as a seed: its real code, taken from taskmint's own
    environment, and tests that check where the run imported it from."""
    spec = importlib.util.find_spec("iniconfig")
    assert spec is not None and spec.origin is not None
    shutil.copytree(
        Path(spec.origin).parent,
        root / "src" / "iniconfig",
        ignore=shutil.ignore_patterns("__pycache__", "*.pyc"),
    )
    (root / "tests").mkdir()
    (root / "tests" / "test_iniconfig.py").write_text(
        "import sys\n\nimport iniconfig\n\n\n"
        "def test_the_run_imports_the_workspace_copy():\n"
        '    assert iniconfig.__file__.startswith("/workspace/src/iniconfig/")\n\n\n'
        "def test_pytest_itself_runs_on_it():\n"
        '    assert sys.modules["_pytest.config.findpaths"].iniconfig is iniconfig\n\n\n'
        "def test_sections():\n"
        '    ini = iniconfig.IniConfig("x.ini", data="[a]\\nb = 1\\n")\n'
        '    assert ini["a"]["b"] == "1"\n'
    )
    # read by pytest through iniconfig
    (root / "pytest.ini").write_text("[pytest]\nmarkers =\n    slow: slow tests\n")
    (root / "taskmint.toml").write_text(
        '[seed]\nname = "iniconfig"\nlanguage = "python"\nsource_paths = ["src/iniconfig"]\n'
        'test_paths = ["tests"]\n\n[run]\nrunner = "pytest"\npythonpath = ["src"]\n'
    )
    return root


@pytest.fixture(scope="module")
def iniconfig_seed(cache_dir: Path, tmp_path_factory: pytest.TempPathFactory) -> SeedApp:
    return acquire(_iniconfig_seed(tmp_path_factory.mktemp("iniconfig")), cache_dir=cache_dir)


def test_a_seed_pytest_depends_on_gets_an_environment_without_it(iniconfig_seed, cache_dir):
    """pytest requires iniconfig: its distribution is replaced by its metadata alone, so
    pytest's requirement still holds and its version still reads, with no code to read."""
    env = build_environment(iniconfig_seed.manifest, cache_dir=cache_dir)
    site = _site(env)
    assert not (site / "iniconfig").exists()
    [info] = site.glob("iniconfig-*.dist-info")
    assert sorted(p.name for p in info.iterdir()) == ["INSTALLER", "METADATA", "RECORD"]
    assert "Description" not in (info / "METADATA").read_text()
    version = subprocess.run(
        [
            f"{env.prefix}/bin/python",
            "-I",
            "-c",
            "import importlib.metadata as m;print(m.version('iniconfig'))",
        ],
        capture_output=True,
        text=True,
        check=True,
    ).stdout.strip()
    assert version == info.name.removesuffix(".dist-info").split("-")[1]
    assert vendored_copies(Path(env.prefix), iniconfig_seed.manifest) == []


@pytest.mark.slow
def test_pytest_runs_on_the_workspace_copy_of_a_seed_it_depends_on(iniconfig_seed, cache_dir):
    """The suite runs (original runs in the real sandbox), pytest importing iniconfig from the
    workspace as the tests do, cold and warm (a fork server cannot preload pytest here: it
    needs the workspace, and the runs fall back to cold ones)."""
    env = build_environment(iniconfig_seed.manifest, cache_dir=cache_dir)
    baseline = run_baseline(iniconfig_seed, env, LocalSandbox(), runs=3, limits=LIMITS)
    assert baseline.usable, baseline.reason
    assert {t.rsplit("::", 1)[1] for t in baseline.stable_passed} == {
        "test_the_run_imports_the_workspace_copy",
        "test_pytest_itself_runs_on_it",
        "test_sections",
    }


def test_a_dependency_that_pulls_the_seed_in_gets_the_workspace_copy(cache_dir):
    """six as a seed, python-dateutil (which requires six) as its dependency: dateutil stays,
    six's distribution becomes metadata only."""
    manifest = SeedManifest(
        name="six",
        language="python",
        source_paths=("six.py",),
        test_paths=("test_six.py",),
        runner="pytest",
        dependencies=("Six==1.16.0", "python-dateutil==2.9.0.post0"),
    )
    assert module_roots(manifest) == ("six.py",)
    assert _dependencies(manifest) == ["python-dateutil==2.9.0.post0"]  # dropped by name
    env = build_environment(manifest, cache_dir=cache_dir)
    site = _site(env)
    assert (site / "dateutil").is_dir()
    assert not (site / "six.py").exists()
    assert [p.name.split("-")[0] for p in site.glob("six-*.dist-info")] == ["six"]
    assert list((cache_dir / "wheelhouse").glob("six-*.whl"))  # it came from the wheelhouse


def test_a_dependency_that_vendors_the_seed_refuses_the_environment_naming_it(cache_dir):
    """pip vendors resolvelib and imports it at run time: it cannot be taken away, so a
    resolvelib seed whose tests need pip has no safe environment, and is told why."""
    manifest = SeedManifest(
        name="resolvelib",
        language="python",
        source_paths=("src/resolvelib",),
        test_paths=("tests",),
        runner="pytest",
        pythonpath=("src",),
        dependencies=("pip",),
    )
    with pytest.raises(EnvironmentBuildError, match=r"pip vendors.*pip/_vendor/resolvelib"):
        build_environment(manifest, cache_dir=cache_dir)
    assert not list((cache_dir / "envs").glob(".py-*"))  # nothing half-built is left


def test_a_seeds_tests_read_its_own_version_from_its_metadata(cache_dir, sandbox, tmp_path):
    """A project whose tests ask `importlib.metadata` for their own version (click,
    marshmallow, structlog do): the detected manifest names the distribution, the environment
    holds its metadata alone (no code), and the test passes in the sandbox's real run."""
    root = tmp_path / "ownver"
    (root / "ownver").mkdir(parents=True)
    (root / "tests").mkdir()
    (root / "pyproject.toml").write_text('[project]\nname = "own-ver"\nversion = "2.3.0"\n')
    (root / "ownver" / "__init__.py").write_text(
        "import importlib.metadata\n\n__version__ = importlib.metadata.version('own-ver')\n"
    )
    (root / "tests" / "test_version.py").write_text(
        "import importlib.metadata\n\nimport ownver\n\n\n"
        "def test_the_version_is_the_distributions():\n"
        "    assert ownver.__version__ == importlib.metadata.version('own_ver') == '2.3.0'\n"
    )
    detected = detect_manifest(root, name="ownver")
    (root / "taskmint.toml").write_text(render_manifest(detected))
    seed = acquire(root, cache_dir=cache_dir)
    assert seed.manifest.distribution == "own-ver==2.3.0"
    env = build_environment(seed.manifest, cache_dir=cache_dir)
    [info] = _site(env).glob("own_ver-2.3.0.dist-info")
    assert sorted(p.name for p in info.iterdir()) == ["INSTALLER", "METADATA", "RECORD"]
    assert not list(_site(env).glob("ownver*"))  # metadata only: none of the code
    baseline = run_baseline(seed, env, sandbox, runs=1, limits=LIMITS)
    assert baseline.usable, baseline.reason
    assert [t.rsplit("::", 1)[1] for t in baseline.stable_passed] == [
        "test_the_version_is_the_distributions"
    ]
    # without the distribution, the same suite fails at import: what the seed lost before
    bare = dataclasses.replace(seed, manifest=dataclasses.replace(seed.manifest, distribution=""))
    bare_env = build_environment(bare.manifest, cache_dir=cache_dir)
    assert bare_env.env_id != env.env_id
    assert not run_baseline(bare, bare_env, sandbox, runs=1, limits=LIMITS).usable
