"""Per-seed environments: built once, cached by the hash of their inputs."""

from __future__ import annotations

import dataclasses
import time
from pathlib import Path

import pytest

from taskmint.envs import build_environment, environment_id
from taskmint.envs.venv import _dependencies
from taskmint.errors import EnvironmentBuildError
from taskmint.records import SeedManifest


def test_environment_is_reused(tiny_seed, tiny_env, cache_dir):
    start = time.monotonic()
    again = build_environment(tiny_seed.manifest, cache_dir=cache_dir)
    assert again == tiny_env
    assert time.monotonic() - start < 2
    assert (Path(tiny_env.prefix) / "READY").exists()
    site = next(Path(tiny_env.prefix).glob("lib/python*/site-packages"))
    assert (site / "pytest").is_dir()
    assert not (site / "tinylib").exists()  # never an installed copy of the seed


def test_environment_id_depends_on_dependencies(tiny_seed):
    other = dataclasses.replace(tiny_seed.manifest, dependencies=("six==1.16.0",))
    assert environment_id(other) != environment_id(tiny_seed.manifest)
    assert environment_id(tiny_seed.manifest) == environment_id(tiny_seed.manifest)


def test_the_seed_itself_is_never_installed(tmp_path):
    manifest = SeedManifest(
        name="six",
        language="python",
        source_paths=("six.py",),
        test_paths=("test_six.py",),
        runner="pytest",
        dependencies=("Six==1.16.0", "python-dateutil==2.9.0.post0"),
    )
    # listed by name: dropped before anything is installed
    assert _dependencies(manifest) == ["python-dateutil==2.9.0.post0"]
    # pulled in by a dependency (python-dateutil requires six): the environment is refused
    with pytest.raises(EnvironmentBuildError, match="installed copy of the seed"):
        build_environment(manifest, cache_dir=tmp_path)
    assert not list((tmp_path / "envs").glob("py-*/READY"))
    assert list((tmp_path / "wheelhouse").glob("six-*.whl"))  # it came from the wheelhouse


def test_a_dependency_of_pytest_as_a_seed_is_refused_saying_so(tmp_path):
    """pluggy (or packaging, pygments) as a seed: pytest, which runs the tests, pulls it in."""
    manifest = SeedManifest(
        name="iniconfig",
        language="python",
        source_paths=("src/iniconfig",),
        test_paths=("testing",),
        runner="pytest",
        pythonpath=("src",),
    )
    with pytest.raises(EnvironmentBuildError, match="pytest itself depends on iniconfig"):
        build_environment(manifest, cache_dir=tmp_path)
