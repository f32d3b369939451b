"""The bundled seed applications: big enough, and green and deterministic in the sandbox."""

from __future__ import annotations

from pathlib import Path

import pytest

from taskmint.acquire import acquire, load_manifest, load_seed_list
from taskmint.languages import build_environment, profile
from taskmint.validate import run_baseline
from tests.conftest import LIMITS

SEED_LIST = Path(__file__).resolve().parents[1] / "seed_apps" / "seeds.toml"
SEED_DIRS = load_seed_list(SEED_LIST)


def test_the_library_has_four_python_seeds_a_javascript_and_a_rust_one():
    languages = sorted(load_manifest(d).language for d in SEED_DIRS)
    assert languages.count("python") >= 4
    assert languages.count("javascript") >= 1
    assert languages.count("rust") >= 1


@pytest.mark.parametrize("seed_dir", SEED_DIRS, ids=[d.name for d in SEED_DIRS])
def test_seed_is_large_and_layered(seed_dir: Path):
    manifest = load_manifest(seed_dir)
    suffixes = profile(manifest.language).extensions
    modules = [
        p
        for src in manifest.source_paths
        for p in (seed_dir / src).rglob("*")
        if p.name.endswith(suffixes) and p.name != "__init__.py"
    ]
    lines = sum(len(p.read_text().splitlines()) for p in modules)
    assert len(modules) >= 8, modules
    assert lines >= 2000, lines


@pytest.mark.parametrize("seed_dir", SEED_DIRS, ids=[d.name for d in SEED_DIRS])
def test_seed_suite_is_green_and_deterministic_in_the_sandbox(seed_dir, cache_dir, sandbox):
    seed = acquire(seed_dir, cache_dir=cache_dir)
    env = build_environment(seed, cache_dir=cache_dir)
    baseline = run_baseline(seed, env, sandbox, runs=3, limits=LIMITS)
    assert baseline.usable, baseline.reason
    # the only tests left out are the ones the seed marks skipped (Rust's `#[ignore]`)
    assert baseline.flaky == ()
    assert all(why.startswith("skipped") for tid, why in baseline.excluded), baseline.excluded
    assert baseline.collection_errors == ()
    assert len(baseline.stable_passed) >= 150
    assert baseline.max_wall_time < 30
