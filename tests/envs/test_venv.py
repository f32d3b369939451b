"""Per-seed environments: built once, cached by the hash of their inputs."""

from __future__ import annotations

import dataclasses
import time
from pathlib import Path

from taskmint.languages import build_environment, environment_id


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
