"""Preparing one seed: acquire -> environment -> index -> the original runs (with the coverage
run beside them) -> candidates. Every entry point that needs a seed ready (the refresh, the
harder batch, benchmarks) goes through `prepare_seed`."""

from __future__ import annotations

import contextlib
import dataclasses
import importlib.metadata
import logging
import re
from dataclasses import dataclass

from packaging.version import Version

from taskmint.acquire.sources import SeedSource, acquire_source
from taskmint.config import MIN_PYTEST, Knobs, PipelineConfig
from taskmint.envs import build_environment
from taskmint.excise import ExciseResult, excise
from taskmint.index import index_seed
from taskmint.index.coverage import CoverageMap, coverage_map
from taskmint.pipeline.slots import slot
from taskmint.pipeline.steps import Executor, step
from taskmint.records import CodeIndex, Environment, SeedApp, SeedManifest
from taskmint.sandbox import open_sandbox
from taskmint.validate import Baseline, run_baseline
from taskmint.validate.baseline import seed_report

__all__ = [
    "PreparedSeed",
    "acquire_seed",
    "build_seed_environment",
    "coverage_run",
    "excise_seed",
    "index_code",
    "older_pytest",
    "original_runs",
    "prepare_seed",
    "test_command",
]

log = logging.getLogger("taskmint.pipeline")


@dataclass(frozen=True, slots=True, kw_only=True)
class PreparedSeed:
    """A seed ready for candidates: its snapshot, environment, index, the original suite's
    runs (`baseline.usable` says whether tasks can be built on it) and its coverage map."""

    seed: SeedApp
    env: Environment
    index: CodeIndex
    baseline: Baseline
    coverage: CoverageMap | None

    @property
    def seed_ref(self) -> tuple[SeedApp, str, str]:
        """What `publish` needs of the seed: the snapshot, its environment id and Python."""
        return self.seed, self.env.env_id, self.env.python_version


@step("acquire")
def acquire_seed(source: SeedSource, config: PipelineConfig) -> SeedApp:
    """Fetch (folder, git commit, sdist or image) and snapshot one seed."""
    return acquire_source(source, cache_dir=config.cache_dir)


@step("envs", infra=True, retry_delay=5)
def build_seed_environment(seed: SeedApp, config: PipelineConfig) -> Environment:
    """Build or reuse the seed's environment (retried: a failed download is infrastructure)."""
    return build_environment(seed.manifest, cache_dir=config.cache_dir)


@step("index")
def index_code(seed: SeedApp) -> CodeIndex:
    """Index the seed's functions and methods."""
    return index_seed(seed)


@step("baseline", infra=True, tags=("sandbox",))
def original_runs(seed: SeedApp, env: Environment, config: PipelineConfig) -> Baseline:
    """Run the original suite several times to find its stable tests."""
    with slot("sandbox", config.workers), open_sandbox(config.sandbox) as sandbox:
        return run_baseline(
            seed,
            env,
            sandbox,
            runs=config.original_runs,
            limits=config.sandbox.limits.with_wall(seed.manifest.timeout),
            cache_dir=config.cache_dir,
            workers=config.workers,
            min_tests=config.min_tests,
            max_tests=config.max_tests,
        )


@step("coverage-map", infra=True, tags=("sandbox",))
def coverage_run(
    seed: SeedApp,
    env: Environment,
    config: PipelineConfig,
    tests: tuple[str, ...] | None = None,
) -> CoverageMap | None:
    """Record which tests execute which lines (once per snapshot, cached), over `tests`
    (None: the whole suite)."""
    with slot("sandbox", config.workers), open_sandbox(config.sandbox) as sandbox:
        return coverage_map(
            seed,
            env,
            sandbox,
            limits=config.sandbox.limits.with_wall(4 * seed.manifest.timeout),
            cache_dir=config.cache_dir,
            tests=tests,
        )


@step("excise")
def excise_seed(
    prepared: PreparedSeed, config: PipelineConfig, knobs: Knobs | None = None, round_no: int = 0
) -> ExciseResult:
    """Choose and make candidates (`knobs` and a random stream per round for a harder batch;
    by default the run's)."""
    return excise(
        prepared.seed,
        prepared.index,
        max_candidates=config.max_candidates_per_seed,
        min_body_lines=config.min_body_lines,
        random_seed=config.random_seed + round_no,
        strategies=config.strategies,
        knobs=knobs if knobs is not None else config.knobs,
        coverage=prepared.coverage,
        feature_size=config.feature,
    )


# What pytest says when a suite breaks on its newer versions rather than on the code: a
# deprecation that the project's `filterwarnings = error` turns into an error (click 8.4.2 and
# packaging 26.2 on pytest 9.1+), a hook argument pytest removed (docopt-ng's `path` on 9.0).
_PYTEST_TROUBLE = re.compile(
    r"PytestRemovedIn\d+Warning|PytestDeprecationWarning|PluginValidationError"
    r"|unknown hook|has no argument|argument '\w+' cannot be found"
)


def older_pytest(manifest: SeedManifest, baseline: Baseline) -> SeedManifest | None:
    """The manifest with an older pytest to run the suite under, when the original runs broke
    on pytest itself (`_PYTEST_TROUBLE` in a collection error, an exclusion, a plugin error or
    the refusal), else None. The steps: taskmint's own version, then the newest release of
    the previous minor (`<9.2` for 9.2.0), then of the previous major (`<9`), never older than
    `MIN_PYTEST`. A pytest constraint the project declares itself is kept as it is."""
    texts = [baseline.reason, *baseline.collection_errors, *baseline.plugin_errors]
    texts += [why for _, why in baseline.excluded]
    if not any(_PYTEST_TROUBLE.search(t) for t in texts):
        return None
    current = Version(importlib.metadata.version("pytest"))
    steps = [
        s
        for s in (f"<{current.major}.{current.minor}", f"<{current.major}")
        if Version(s[1:]) > Version(MIN_PYTEST)
    ]
    if manifest.pytest and manifest.pytest not in steps:
        return None  # the project's own constraint
    later = steps[steps.index(manifest.pytest) + 1 :] if manifest.pytest else steps
    return dataclasses.replace(manifest, pytest=later[0]) if later else None


def test_command(seed: SeedApp) -> str:
    """The command a person would type to run the seed's tests."""
    if seed.manifest.runner == "node":
        return "node --test " + " ".join(seed.manifest.test_paths)
    return "python -m pytest -p no:cacheprovider " + " ".join(seed.manifest.test_paths)


def _original(
    ex: Executor, seed: SeedApp, config: PipelineConfig
) -> tuple[SeedApp, Environment, Baseline, CoverageMap | None]:
    """The environment, the original runs and the coverage run beside them: it takes the
    worker the odd original run and the bytecode build leave idle. It is waited for either
    way, and its result (or error) only counts when the original suite is usable."""
    env = ex.call(build_seed_environment, seed, config)
    cmap_future = ex.submit(coverage_run, seed, env, config)
    try:
        baseline = ex.call(original_runs, seed, env, config)
    finally:
        with contextlib.suppress(Exception):  # waited for; its error is raised below if it counts
            cmap_future.result()
    return seed, env, baseline, cmap_future.result() if baseline.usable else None


def prepare_seed(
    source: SeedSource,
    config: PipelineConfig,
    ex: Executor,
    *,
    languages: frozenset[str] = frozenset(),
) -> PreparedSeed | None:
    """Acquire, build, index and run one seed's original suite (see the module docstring).

    A suite that breaks on pytest itself runs again under older pytests (`older_pytest`); the
    run that keeps the most tests is kept. A suite whose coverage run waited for a test that
    hangs gets a coverage run without it. With `languages`, a seed in another language gives
    None. Raises what a step raised (the caller records it as the seed's error).
    """
    seed = ex.call(acquire_seed, source, config)
    if languages and seed.manifest.language not in languages:
        return None
    index = ex.call(index_code, seed)
    best = _original(ex, seed, config)
    tried = best
    while (older := older_pytest(tried[0].manifest, tried[2])) is not None:
        log.warning(
            "[%s] the suite breaks on pytest itself; again under pytest%s", seed.name, older.pytest
        )
        tried = _original(ex, dataclasses.replace(seed, manifest=older), config)
        if tried[2].tests_kept > best[2].tests_kept:
            best = tried
    seed, env, baseline, cmap = best
    if cmap is None and baseline.usable and baseline.hung:
        cmap = ex.call(coverage_run, seed, env, config, baseline.full_request)
    return PreparedSeed(seed=seed, env=env, index=index, baseline=baseline, coverage=cmap)


def describe_prepared(prepared: PreparedSeed, candidates: int) -> list[str]:
    """The log lines of a prepared seed: its units, candidates and what the original runs
    gave, then the seed's report (`seed_report`)."""
    b = prepared.baseline
    lines = [
        f"[{prepared.seed.name}] {len(prepared.index.units)} units, "
        f"{len(prepared.index.skipped)} files skipped, {candidates} candidates; original: "
        f"{b.collected} tests selected by the project ({b.deselected} deselected): "
        f"{len(b.stable_passed)} stable, {len(b.flaky)} flaky, {len(b.failing)} failing "
        f"({len(b.hung)} hung), {len(b.cut)} cut"
    ]
    return lines + [f"[{prepared.seed.name}] {line}" for line in seed_report(b)]
