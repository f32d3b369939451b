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


CRONPLAN = Path(__file__).resolve().parents[3] / "seed_apps" / "cronplan"


@pytest.fixture(scope="session")
def cronplan_tasks(cache_dir: Path, sandbox: LocalSandbox, work_dir: Path):  # type: ignore[no-untyped-def]
    """The bundled Rust seed, its environment, and a few of its tasks minted as the pipeline
    mints them (validation, statements, the reference solvers, the test-strength gate),
    published as a dataset version: (seed, env, tasks, dataset folder)."""
    from taskmint.acquire import acquire
    from taskmint.config import PipelineConfig, StrengthConfig
    from taskmint.excise import excise
    from taskmint.index import index_seed
    from taskmint.languages import build_environment as build_any
    from taskmint.pipeline.mint import mint_candidate
    from taskmint.publish import publish
    from taskmint.validate import run_baseline
    from tests.conftest import LIMITS

    seed = acquire(CRONPLAN, cache_dir=cache_dir)
    env = build_any(seed, cache_dir=cache_dir)
    baseline = run_baseline(seed, env, sandbox, runs=3, limits=LIMITS.with_wall(600))
    assert baseline.usable, baseline.reason
    config = PipelineConfig(
        output_root=work_dir / "rust-output", strength=StrengthConfig(mutants=2)
    )
    # one of each strategy the profile has, the first that mints
    excised = excise(seed, index_seed(seed), max_candidates=40, random_seed=7).candidates
    tasks = []
    for strategy in ("stub_body", "remove_function"):
        for cand in [c for c in excised if c.strategy == strategy][:3]:
            result = mint_candidate(cand, seed, env, baseline, sandbox, config)
            if result.task is not None:
                tasks.append(result.task)
                break
    assert len(tasks) == 2, tasks
    version = publish(
        tasks, [(seed, env.env_id, env.python_version)], root=work_dir / "rust-datasets", name="rs"
    )
    return seed, env, tasks, Path(version.path)
