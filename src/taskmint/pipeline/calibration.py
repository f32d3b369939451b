"""Calibration: the configured models' attempts on a seed's tasks (bands, retirement), the
reference solvers again on a published version's tasks, and what a run spent on both."""

from __future__ import annotations

import dataclasses
import logging
import os
import sys
from collections.abc import Callable, Collection, Mapping
from dataclasses import dataclass
from pathlib import Path

from taskmint.cache import config_fingerprint, content_key
from taskmint.calibrate import (
    AttemptStore,
    calibrate_models,
    calibrate_reference,
    load_calibration_config,
    overall_band,
)
from taskmint.config import PipelineConfig
from taskmint.errors import TaskmintError
from taskmint.languages import build_environment
from taskmint.pipeline.mint import result_store
from taskmint.pipeline.progress import current
from taskmint.pipeline.seed import PreparedSeed
from taskmint.pipeline.slots import slot
from taskmint.pipeline.steps import step
from taskmint.publish import PublishedVersion, load_seed, load_tasks, publish
from taskmint.records import Environment, SeedApp, Task
from taskmint.sandbox import open_sandbox
from taskmint.sandbox.base import Sandbox
from taskmint.verify import Grader

__all__ = [
    "CalibrationOutcome",
    "calibrate_seed",
    "calibrate_version",
    "calibrate_with_models",
    "model_attempts",
    "spend_of",
]

log = logging.getLogger("taskmint.pipeline")


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


@dataclass(frozen=True, slots=True, kw_only=True)
class CalibrationOutcome:
    """A seed's tasks after model calibration, the attempts made (graded ones and those lost
    to infrastructure) and the infrastructure errors."""

    tasks: tuple[Task, ...]
    attempts: int
    errors: tuple[str, ...]


def model_attempts(tasks: Collection[Task]) -> int:
    """The model attempts the tasks' calibration rows record (reference solvers left out)."""
    return sum(c.attempts for t in tasks for c in t.calibration if c.solver_kind == "model")


@step("calibrate-models", infra=True, tags=("model",))
def calibrate_seed(
    tasks: list[Task], prepared: PreparedSeed, config: PipelineConfig
) -> CalibrationOutcome:
    """Calibrate a seed's accepted tasks against the configured models (stored like a
    candidate's result, keyed by its tasks; each graded attempt is stored as it finishes)."""
    key = content_key(
        "calibrate",
        prepared.seed.snapshot_id,
        *sorted(t.instance_id for t in tasks),
        config_fingerprint(config),
    )

    def run() -> tuple[list[Task], list[str]]:
        with slot("model"), open_sandbox(config.sandbox) as sandbox:
            return calibrate_with_models(
                tasks,
                prepared.seed,
                prepared.env,
                sandbox,
                config,
                environ=os.environ,
                store=result_store(config),
            )

    calibrated, errors = result_store(config).cached(key, run)
    return CalibrationOutcome(
        tasks=tuple(calibrated),
        attempts=model_attempts(calibrated) + len(errors),
        errors=tuple(errors),
    )


def spend_of(tasks: Collection[Task]) -> dict[str, float | int]:
    """Rollouts, tokens and dollars the tasks' calibration rows record."""
    rows = [c for t in tasks for c in t.calibration]
    return {
        "rollouts": sum(c.attempts for c in rows),
        "model_rollouts": model_attempts(tasks),
        "tokens": sum(c.tokens for c in rows),
        "cost_usd": round(sum(c.cost for c in rows), 4),
    }


def _references_again(task: Task, grade: Grader, config: PipelineConfig) -> Task:
    """The task with its reference rows made again (its model rows kept)."""
    rows, failure = calibrate_reference(task, grade, solvers=config.reference_solvers)
    if failure is not None:
        print(f"{task.instance_id}: {failure}", file=sys.stderr)
    kept = tuple(c for c in task.calibration if c.solver_kind != "reference")
    return dataclasses.replace(task, calibration=(*rows, *kept))


def calibrate_version(
    version: Path,
    task_ids: Collection[str],
    config: PipelineConfig,
    on_task: Callable[[Task], None] = lambda task: None,
) -> PublishedVersion:
    """Calibrate a published version's tasks again (`task_ids`, or all) and publish the result
    as a new version: against the configured models when there are any, else the reference
    solvers. Each graded model attempt is kept in the result store, so a stopped run loses
    none. `on_task` sees each task as it is done."""
    store = result_store(config)
    tasks = load_tasks(version)
    wanted = set(task_ids) or {t.instance_id for t in tasks}
    unknown = wanted - {t.instance_id for t in tasks}
    if unknown:
        raise TaskmintError(f"no task {sorted(unknown)[0]!r} in {version}")
    by_snapshot: dict[str, list[Task]] = {}
    for task in tasks:
        by_snapshot.setdefault(task.snapshot_id, []).append(task)
    out: list[Task] = []
    seeds = []
    progress = current()
    with open_sandbox(config.sandbox) as sandbox:
        for i, group in enumerate(by_snapshot.values()):
            progress.seed_started(group[0].seed, i, len(by_snapshot))
            seed = load_seed(version, group[0].snapshot_id, cache_dir=config.cache_dir)
            env = build_environment(seed, cache_dir=config.cache_dir, sandbox=config.sandbox)
            seeds.append((seed, env.env_id, env.python_version))
            chosen = [t for t in group if t.instance_id in wanted]
            rest = [t for t in group if t.instance_id not in wanted]
            if config.models is not None:
                chosen, errors = calibrate_with_models(
                    chosen, seed, env, sandbox, config, environ=os.environ, store=store
                )
                for error in errors[:20]:
                    print(f"calibration: {error}", file=sys.stderr)
            else:
                grade = Grader(
                    seed=seed,
                    env=env,
                    sandbox=sandbox,
                    limits=config.sandbox.limits.with_wall(seed.manifest.timeout),
                    config=config.verify,
                )
                chosen = [_references_again(t, grade, config) for t in chosen]
            for task in chosen:
                on_task(task)
            banded = sum(bool(t.band) for t in chosen)
            progress.candidates_done(group[0].seed, len(chosen), len(chosen), banded)
            progress.seed_finished(group[0].seed, banded, len(chosen), None)
            out.extend(chosen + rest)
    return publish(
        out, seeds, root=config.datasets_dir, name=config.dataset_name, shard_rows=config.shard_rows
    )
