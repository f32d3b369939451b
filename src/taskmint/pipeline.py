"""The per-seed and per-candidate steps that the flows wrap, as plain functions.

Everything here runs and tests without Prefect; `flows/` only adds orchestration (tasks,
retries, concurrency, logging). Every per-item failure comes back as a value.
"""

from __future__ import annotations

import dataclasses
import datetime as dt
import functools
import importlib.metadata
import re
import time
from collections import Counter
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path

from packaging.version import Version

from taskmint.calibrate import (
    AttemptStore,
    calibrate_models,
    calibrate_reference,
    load_calibration_config,
    overall_band,
)
from taskmint.config import MIN_PYTEST, PipelineConfig
from taskmint.describe import Rewriter, describe
from taskmint.index.coverage import CoverageMap
from taskmint.publish.dataset import FEATURE_NAMES
from taskmint.records import (
    Candidate,
    Environment,
    Reward,
    SeedApp,
    SeedManifest,
    Task,
    Verdict,
)
from taskmint.sandbox.base import Sandbox
from taskmint.validate import Baseline, validate_candidate
from taskmint.validate.leak import scan_for_leaks
from taskmint.verify import verify
from taskmint.verify.hidden import choose_hidden

__all__ = [
    "MintResult",
    "SeedSummary",
    "apply_leak_scan",
    "mint_candidate",
    "older_pytest",
    "summarize_seed",
    "test_command",
]


@dataclass(frozen=True, slots=True, kw_only=True)
class MintResult:
    """A candidate's verdict and, when accepted, its task."""

    verdict: Verdict
    task: Task | None = None


@dataclass(frozen=True, slots=True, kw_only=True)
class SeedSummary:
    """What one seed produced in a refresh."""

    seed: str
    candidates: int = 0
    accepted: int = 0
    rejected: dict[str, int] = field(default_factory=dict)
    # strategy -> (candidates, accepted)
    by_strategy: dict[str, tuple[int, int]] = field(default_factory=dict)
    wall_time: float = 0.0
    error: str | None = None
    tests_kept: int = 0  # stable tests of the original suite the tasks are built on
    tests_excluded: int = 0  # failing, skipped, hung, flaky or cut from a long suite
    # what the project's own configuration selects (plain pytest's run) and deselects
    tests_selected: int = 0
    tests_deselected: int = 0
    # what to know and do about the seed's suite, a line each (`validate.seed_report`)
    report: tuple[str, ...] = ()


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
        step
        for step in (f"<{current.major}.{current.minor}", f"<{current.major}")
        if Version(step[1:]) > Version(MIN_PYTEST)
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


@functools.lru_cache(maxsize=4096)
def _read_text(root: str, rel: str) -> str | None:
    """A snapshot file's text, None if it is missing or not UTF-8 (cached: a snapshot is
    content-addressed, so its files never change)."""
    try:
        return (Path(root) / rel).read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError):
        return None


def _ordered(features: tuple[tuple[str, float], ...]) -> tuple[tuple[str, float], ...]:
    """Features in the dataset's column order (the order they come back in when loaded)."""
    rank = {name: i for i, name in enumerate(FEATURE_NAMES)}
    return tuple(sorted(features, key=lambda kv: (rank.get(kv[0], len(rank)), kv[0])))


def mint_candidate(
    candidate: Candidate,
    seed: SeedApp,
    env: Environment,
    baseline: Baseline,
    sandbox: Sandbox,
    config: PipelineConfig,
    coverage: CoverageMap | None = None,
    rewriter: Rewriter | None = None,
    verdict: Verdict | None = None,
) -> MintResult:
    """validate -> describe -> calibrate (reference solvers) for one candidate.

    `rewriter` (see `taskmint.describe.load_rewriter`) rewords statements with a model; without
    it, or when it fails, the template statement is used. `verdict`, when given, is this
    candidate's verdict from `validate_batch` (the seed's candidates validated together), and
    validation is not repeated.
    """
    limits = config.sandbox.limits.with_wall(seed.manifest.timeout)
    if verdict is None or verdict.candidate_id != candidate.candidate_id:
        verdict = validate_candidate(
            candidate,
            seed,
            env,
            baseline,
            sandbox,
            runs=config.broken_runs,
            limits=limits,
            coverage=coverage,
        )
    if not verdict.accepted:
        return MintResult(verdict=verdict)
    description = describe(
        candidate,
        verdict,
        seed.manifest.source_paths,
        seed=seed,
        style=config.statement_style,
        rewriter=rewriter,
    )
    if not description.ok:
        return MintResult(
            verdict=dataclasses.replace(
                verdict, status="leaky_description", reason=description.reason
            )
        )
    task = Task(
        instance_id=f"{seed.name}__{candidate.strategy}__{candidate.candidate_id}",
        seed=seed.name,
        snapshot_id=seed.snapshot_id,
        env_id=env.env_id,
        language=candidate.language,
        strategy=candidate.strategy,
        units=candidate.units,
        files=candidate.files,
        problem_statement=description.statement,
        hints=description.hints,
        breaking_patch=candidate.breaking_patch,
        patch=candidate.gold_patch,
        FAIL_TO_PASS=verdict.fail_to_pass,
        PASS_TO_PASS=verdict.pass_to_pass,
        test_paths=seed.manifest.test_paths,
        source_paths=seed.manifest.source_paths,
        test_command=test_command(seed),
        removed_code=candidate.removed_code,
        features=_ordered(
            (*candidate.features, ("fail_to_pass", float(len(verdict.fail_to_pass))))
        ),
        flaky_tests=verdict.flaky_tests,
        validation_runs=verdict.original_runs + verdict.broken_runs,
        validation_wall_time=verdict.wall_time,
        created=dt.date.today().isoformat(),
        original_runs=verdict.original_runs,
        broken_runs=verdict.broken_runs,
        dropped_tests=verdict.dropped_tests,
        statement_style=description.style,
        statement_spec=description.statement_spec,
        statement_issue=description.statement_issue,
        statement_source=description.source,
        hidden_tests=choose_hidden(
            verdict.fail_to_pass,
            verdict.pass_to_pass,
            seed=f"{config.random_seed}|{candidate.candidate_id}",
            fraction=config.verify.hidden_fraction,
            pass_fraction=config.verify.hidden_pass_fraction,
            source_of=lambda rel: _read_text(seed.root, rel),
        ),
    )

    def reward(t: Task, patch: str, fail_fast: bool) -> Reward:
        return verify(
            t,
            patch,
            seed=seed,
            env=env,
            sandbox=sandbox,
            limits=limits,
            fail_fast=fail_fast,
            config=config.verify,
        )

    calibration, failure = calibrate_reference(task, reward, solvers=config.reference_solvers)
    if failure is not None:
        return MintResult(
            verdict=dataclasses.replace(verdict, status="reference_failed", reason=failure)
        )
    return MintResult(verdict=verdict, task=dataclasses.replace(task, calibration=calibration))


def apply_leak_scan(
    results: list[MintResult],
    candidates: dict[str, Candidate],
    seed: SeedApp,
    env: Environment,
    sandbox: Sandbox,
    config: PipelineConfig,
) -> list[MintResult]:
    """Reject every accepted task whose removed code is visible from inside the sandbox."""
    accepted = [r for r in results if r.task is not None]
    if not accepted:
        return results
    hits = scan_for_leaks(
        seed,
        env,
        [candidates[r.verdict.candidate_id] for r in accepted],
        sandbox,
        limits=config.sandbox.limits.with_wall(600),
    )
    out = []
    for r in results:
        found = hits.get(r.verdict.candidate_id)
        if r.task is not None and found:
            verdict = dataclasses.replace(
                r.verdict, status="leak", reason=f"removed code visible at {found[0]}"
            )
            out.append(MintResult(verdict=verdict))
        else:
            out.append(r)
    return out


def calibrate_with_models(
    tasks: list[Task],
    seed: SeedApp,
    env: Environment,
    sandbox: Sandbox,
    config: PipelineConfig,
    environ: Mapping[str, str],
    store: AttemptStore | None = None,
) -> tuple[list[Task], list[str]]:
    """Calibrate `tasks` (all of one seed) against the models in `config.models` (each
    graded attempt kept in `store` as it finishes, and taken from there by a rerun).

    Returns the tasks with their model calibration rows, band and retirement added, and the
    per-attempt errors (infrastructure failures, which never count as a model's failure).
    With no models configured the tasks come back unchanged: the reference solvers, which
    already ran in `mint_candidate`, are the whole calibration.
    """
    if config.models is None or not tasks:
        return tasks, []
    models = load_calibration_config(config.models)
    if config.bands is not None:  # the run's bands override the models file's
        models = dataclasses.replace(models, bands=config.bands)
    if not models.models:
        return tasks, []
    workdir = config.cache_dir / "attempts"
    workdir.mkdir(parents=True, exist_ok=True)
    results = calibrate_models(
        tasks,
        config=models,
        seed_for=lambda t: seed,
        env_for=lambda t: env,
        sandbox=sandbox,
        limits=config.sandbox.limits.with_wall(seed.manifest.timeout),
        environ=environ,
        workdir=workdir,
        verify_config=config.verify,
        store=store,
    )
    by_id = {r.instance_id: r for r in results}
    merged = []
    for task in tasks:
        r = by_id.get(task.instance_id)
        if r is None:
            merged.append(task)
            continue
        merged.append(
            dataclasses.replace(
                task,
                calibration=(*task.calibration, *r.calibrations),
                band=overall_band(r.calibrations, [m.name for m in models.models], models.bands)
                or "",
                retired=r.retired,
            )
        )
    return merged, [e for r in results for e in r.errors]


def summarize_seed(
    seed_name: str,
    results: list[MintResult],
    started: float,
    error: str | None = None,
    strategies: Mapping[str, str] | None = None,
) -> SeedSummary:
    """Counts per verdict status (and per strategy, given candidate id -> strategy)."""
    statuses = Counter(r.verdict.status for r in results)
    by_strategy: dict[str, tuple[int, int]] = {}
    for r in results:
        name = (strategies or {}).get(r.verdict.candidate_id)
        if name is not None:
            made, ok = by_strategy.get(name, (0, 0))
            by_strategy[name] = (made + 1, ok + int(r.task is not None))
    accepted = statuses.pop("accepted", 0)
    return SeedSummary(
        seed=seed_name,
        candidates=len(results),
        accepted=accepted,
        rejected=dict(sorted(statuses.items())),
        by_strategy=dict(sorted(by_strategy.items())),
        wall_time=round(time.monotonic() - started, 1),
        error=error,
    )
