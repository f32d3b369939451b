"""The tiny fixture crate, acquired and given its environment once per session."""

from __future__ import annotations

from pathlib import Path

import pytest

from taskmint.acquire.rust import acquire_folder
from taskmint.languages.rust import build_environment
from taskmint.records import Environment, SeedApp
from taskmint.sandbox import LocalSandbox
from tests.conftest import FIXTURES

TINYRS = FIXTURES / "rust" / "tinyrs"


@pytest.fixture(scope="session")
def rust_seed(cache_dir: Path) -> SeedApp:
    return acquire_folder(TINYRS, cache_dir=cache_dir)


@pytest.fixture(scope="session")
def rust_env(rust_seed: SeedApp, cache_dir: Path, sandbox: LocalSandbox) -> Environment:
    return build_environment(rust_seed, cache_dir=cache_dir, sandbox=sandbox)
