"""Shared fixtures: the tiny fixture seed, its environment, the real sandbox, a published dataset.

Everything here is real: the seed runs in bubblewrap, the dataset is real parquet. Session-scoped
so the environment is built once and the tiny dataset is minted once per test session.
"""

from __future__ import annotations

import dataclasses
import os
from pathlib import Path

import pytest

from taskmint.acquire import acquire
from taskmint.config import Limits, PipelineConfig
from taskmint.excise import excise
from taskmint.index import index_seed
from taskmint.index.coverage import CoverageMap, coverage_map
from taskmint.languages import build_environment
from taskmint.pipeline import mint_candidate
from taskmint.publish import load_tasks, publish
from taskmint.records import Candidate, Environment, SeedApp, Task, Verdict
from taskmint.sandbox import LocalSandbox
from taskmint.validate import Baseline, run_baseline, validate_candidate

FIXTURES = Path(__file__).parent / "fixtures"
SEEDS = FIXTURES / "seeds"
LIMITS = Limits(wall_seconds=60)


@pytest.fixture(scope="session")
def work_dir(tmp_path_factory: pytest.TempPathFactory) -> Path:
    path = tmp_path_factory.mktemp("taskmint")
    os.chmod(path, 0o755)
    return path


@pytest.fixture(scope="session")
def cache_dir(work_dir: Path) -> Path:
    return work_dir / "cache"


@pytest.fixture(scope="session")
def sandbox() -> LocalSandbox:
    return LocalSandbox()


@pytest.fixture(scope="session")
def tiny_seed(cache_dir: Path) -> SeedApp:
    return acquire(SEEDS / "tiny", cache_dir=cache_dir)


@pytest.fixture(scope="session")
def tiny_env(tiny_seed: SeedApp, cache_dir: Path) -> Environment:
    return build_environment(tiny_seed.manifest, cache_dir=cache_dir)


@pytest.fixture(scope="session")
def tiny_baseline(tiny_seed: SeedApp, tiny_env: Environment, sandbox: LocalSandbox) -> Baseline:
    return run_baseline(tiny_seed, tiny_env, sandbox, runs=3, limits=LIMITS)


@pytest.fixture(scope="session")
def pipeline_config(work_dir: Path) -> PipelineConfig:
    return PipelineConfig(output_root=work_dir / "output", seeds_manifest=SEEDS / "seeds.toml")


@pytest.fixture(scope="session")
def tiny_tasks(
    tiny_seed: SeedApp,
    tiny_env: Environment,
    tiny_baseline: Baseline,
    sandbox: LocalSandbox,
    pipeline_config: PipelineConfig,
) -> list[Task]:
    excised = excise(tiny_seed, index_seed(tiny_seed), max_candidates=60)
    results = [
        mint_candidate(c, tiny_seed, tiny_env, tiny_baseline, sandbox, pipeline_config)
        for c in excised.candidates
    ]
    tasks = [r.task for r in results if r.task is not None]
    assert tasks, [r.verdict for r in results]
    return tasks


@pytest.fixture(scope="session")
def tiny_dataset(
    tiny_tasks: list[Task], tiny_seed: SeedApp, tiny_env: Environment, work_dir: Path
) -> Path:
    version = publish(
        tiny_tasks,
        [(tiny_seed, tiny_env.env_id, tiny_env.python_version)],
        root=work_dir / "datasets",
        name="tiny",
    )
    return Path(version.path)


@pytest.fixture(scope="session")
def published_tasks(tiny_dataset: Path) -> list[Task]:
    return load_tasks(tiny_dataset, streaming=False)


@pytest.fixture(scope="session")
def tinyjs(
    cache_dir: Path, sandbox: LocalSandbox, pipeline_config: PipelineConfig
) -> tuple[SeedApp, Environment, list[Task]]:
    """The tinyjs fixture seed, its node environment and its tasks, minted as the pipeline
    mints them (once per session: the OpenEnv, Harbor and benchmark tests share them)."""
    seed = acquire(SEEDS / "tinyjs", cache_dir=cache_dir)
    env = build_environment(seed.manifest, cache_dir=cache_dir)
    baseline = run_baseline(seed, env, sandbox, runs=3, limits=LIMITS)
    assert baseline.usable, baseline.reason
    excised = excise(seed, index_seed(seed), max_candidates=20)
    results = [
        mint_candidate(c, seed, env, baseline, sandbox, pipeline_config) for c in excised.candidates
    ]
    tasks = [r.task for r in results if r.task is not None]
    assert tasks, [r.verdict for r in results]
    return seed, env, tasks


@pytest.fixture(scope="session")
def mixed_dataset(
    tiny_tasks: list[Task],
    tiny_seed: SeedApp,
    tiny_env: Environment,
    tinyjs: tuple[SeedApp, Environment, list[Task]],
    work_dir: Path,
) -> Path:
    """One published version holding the tiny seed's Python tasks and tinyjs's JavaScript ones."""
    runs = [(tiny_seed, tiny_env, tiny_tasks), tinyjs]
    version = publish(
        [task for _, _, tasks in runs for task in tasks],
        [(seed, env.env_id, env.python_version) for seed, env, _ in runs],
        root=work_dir / "mixed",
        name="mixed",
    )
    return Path(version.path)


def replace(record, **changes):  # type: ignore[no-untyped-def]
    return dataclasses.replace(record, **changes)


def with_coverage(
    name: str, cache_dir: Path, sandbox: LocalSandbox, runs: int = 2
) -> tuple[SeedApp, Environment, Baseline, CoverageMap]:
    """The fixture seed `name` acquired, its environment, a usable baseline and its coverage map."""
    seed = acquire(SEEDS / name, cache_dir=cache_dir)
    env = build_environment(seed.manifest, cache_dir=cache_dir)
    baseline = run_baseline(seed, env, sandbox, runs=runs, limits=LIMITS)
    assert baseline.usable, baseline.reason
    cmap = coverage_map(seed, env, sandbox, limits=LIMITS, cache_dir=cache_dir)
    assert cmap is not None
    return seed, env, baseline, cmap


def assert_selection_exact(
    cand: Candidate,
    seed: SeedApp,
    env: Environment,
    baseline: Baseline,
    sandbox: LocalSandbox,
    cmap: CoverageMap,
    runs: int = 1,
) -> Verdict:
    """Validate `cand` with the coverage map and with the full suite: fewer tests run, and the
    same status, FAIL_TO_PASS and PASS_TO_PASS. Returns the selected run's verdict."""
    fast = validate_candidate(
        cand, seed, env, baseline, sandbox, runs=runs, limits=LIMITS, coverage=cmap
    )
    full = validate_candidate(cand, seed, env, baseline, sandbox, runs=runs, limits=LIMITS)
    assert fast.tests_run < full.tests_run, cand.units
    assert (fast.status, fast.fail_to_pass, fast.pass_to_pass) == (
        full.status,
        full.fail_to_pass,
        full.pass_to_pass,
    ), cand.units
    return fast


CRONPLAN = Path(__file__).resolve().parents[1] / "seed_apps" / "cronplan"


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
