"""Preparing one seed: acquire -> environment -> index -> the original runs (with the coverage
run beside them) -> candidates. Every entry point that needs a seed ready (the refresh, the
harder batch, benchmarks) goes through `prepare_seed`."""

from __future__ import annotations

import contextlib
import dataclasses
import functools
import hashlib
import logging
import pickle
from dataclasses import dataclass
from pathlib import Path

from taskmint.acquire.sources import SeedSource, acquire_source
from taskmint.cache import ResultStore, content_key
from taskmint.config import Knobs, PipelineConfig
from taskmint.excise import ExciseResult, excise
from taskmint.index import index_seed
from taskmint.index.coverage import CoverageMap, coverage_map
from taskmint.languages import build_environment, profile_for_seed
from taskmint.lifecycle import stopping
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
    "fallback_manifest",
    "index_code",
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
    return build_environment(seed, cache_dir=config.cache_dir, sandbox=config.sandbox)


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
    by default the run's). Stored in the result store: a resumed run, or a harder batch's
    round that asks again, reads them back (the excision of a large seed is minutes of CPU).
    """
    knobs = knobs if knobs is not None else config.knobs
    key = _excise_key(prepared, config, knobs, round_no)
    store = ResultStore(config.cache_dir / "results")
    found, value = store.get(key)
    if found and isinstance(value, ExciseResult):
        return value
    result = excise(
        prepared.seed,
        prepared.index,
        max_candidates=config.max_candidates_per_seed,
        min_body_lines=config.min_body_lines,
        random_seed=config.random_seed + round_no,
        strategies=config.strategies,
        knobs=knobs,
        coverage=prepared.coverage,
        feature_size=config.feature,
    )
    if not stopping():
        store.put(key, result)
    return result


def _excise_key(
    prepared: PreparedSeed, config: PipelineConfig, knobs: Knobs | None, round_no: int
) -> str:
    """What decides a seed's candidates: the snapshot, its index and coverage map, the
    excision's settings, and taskmint's own code (any change to it makes a new key)."""
    coverage = b"" if prepared.coverage is None else pickle.dumps(prepared.coverage, protocol=5)
    index = pickle.dumps(prepared.index, protocol=5)
    settings = repr(
        (
            config.max_candidates_per_seed,
            config.min_body_lines,
            config.random_seed + round_no,
            config.strategies,
            knobs,
            config.feature,
        )
    )
    return content_key(
        "excise",
        prepared.seed.snapshot_id,
        hashlib.sha256(index).hexdigest(),
        hashlib.sha256(coverage).hexdigest(),
        settings,
        _code_digest(),
    )


@functools.cache
def _code_digest() -> str:
    """SHA-256 of taskmint's source files: stored excisions are only as good as the code."""
    root = Path(__file__).resolve().parents[1]
    h = hashlib.sha256()
    for path in sorted(root.rglob("*.py")):
        h.update(str(path.relative_to(root)).encode())
        h.update(path.read_bytes())
    return h.hexdigest()


def fallback_manifest(manifest: SeedManifest, baseline: Baseline) -> SeedManifest | None:
    """Another manifest to run the suite under when the original runs broke on the test tool
    itself, as the seed's language's profile has it (Python: an older pytest, see
    `PythonProfile.fallback_manifest`), else None. What it reads: the baseline's reason, its
    collection and plugin errors, and why tests were excluded."""
    problems = [baseline.reason, *baseline.collection_errors, *baseline.plugin_errors]
    problems += [why for _, why in baseline.excluded]
    return profile_for_seed(manifest).fallback_manifest(manifest, problems)


def test_command(seed: SeedApp) -> str:
    """The command a person would type to run the seed's tests."""
    return profile_for_seed(seed).test_command(seed.manifest)


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

    A suite that breaks on its test tool itself runs again under the manifest its profile
    falls back to (`fallback_manifest`: older pytests); the run that keeps the most tests is
    kept. A suite whose coverage run waited for a test that
    hangs gets a coverage run without it. With `languages`, a seed in another language gives
    None. Raises what a step raised (the caller records it as the seed's error).
    """
    seed = ex.call(acquire_seed, source, config)
    if languages and seed.manifest.language not in languages:
        return None
    index = ex.call(index_code, seed)
    best = _original(ex, seed, config)
    tried = best
    while (older := fallback_manifest(tried[0].manifest, tried[2])) is not None:
        runner = older.runner
        log.warning(
            "[%s] the suite breaks on %s itself; again under %s%s",
            seed.name,
            runner,
            runner,
            older.pytest,
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
