"""Calibrating tasks against every configured model and hint level (`calibrate_models`).

Each (task, model, hint level) key is sampled sequentially (`sequential.run_sequential`) with
attempts of the attempt loop (`rollout.run_attempt`), `model.concurrency` at a time per model.
Everything after a missing API key is a value: an attempt that raises is recorded as an
infrastructure error of its own key, and a key with too many of them in a row stops with an
error while the others go on. One attempt (or model) never takes the others' results with it.
"""

from __future__ import annotations

import datetime as dt
import traceback
from collections.abc import Callable, Mapping, Sequence
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

from taskmint.calibrate.bands import is_retired
from taskmint.calibrate.endpoint import make_client
from taskmint.calibrate.models import CalibrationConfig, resolve_api_key
from taskmint.calibrate.policy import SequentialPolicy
from taskmint.calibrate.results import Attempt, AttemptStore, TaskCalibration, attempt_key
from taskmint.calibrate.rollout import run_attempt
from taskmint.calibrate.sequential import run_sequential
from taskmint.config import Limits, VerifyConfig
from taskmint.records import Calibration, Environment, SeedApp, Task
from taskmint.sandbox.base import Sandbox

__all__ = ["calibrate_models"]


def _failed_attempt(key: tuple[str, str, int], exc: Exception) -> Attempt:
    """The record of an attempt that raised: an infrastructure error saying what and where."""
    where = ""
    frames = traceback.extract_tb(exc.__traceback__)
    if frames:
        last = frames[-1]
        where = f" (at {Path(last.filename).name}:{last.lineno} in {last.name})"
    return Attempt(
        task_id=key[0],
        model=key[1],
        model_id="",
        hint_level=key[2],
        reward=0.0,
        stop="api_error",
        reason=f"the attempt failed: {type(exc).__name__}: {exc}{where}",
        infra_error=True,
    )


def calibrate_models(
    tasks: Sequence[Task],
    *,
    config: CalibrationConfig,
    seed_for: Callable[[Task], SeedApp],
    env_for: Callable[[Task], Environment],
    sandbox: Sandbox,
    limits: Limits,
    environ: Mapping[str, str],
    today: str | None = None,
    workdir: Path | None = None,
    policy: SequentialPolicy | None = None,
    verify_config: VerifyConfig | None = None,
    store: AttemptStore | None = None,
) -> list[TaskCalibration]:
    """Calibrate every task against every configured model (and hint level) sequentially.

    Attempts of one model run `model.concurrency` at a time. A missing API key raises
    `MissingApiKeyError` before any attempt; everything after that is a value: an attempt that
    raises is an infrastructure error of its own key, and a key with `max_infra_errors` of them
    in a row stops with an error in `TaskCalibration.errors` while the other keys go on.
    `verify_config` is how attempts are graded (the run's `[verify]` config). With a `store`,
    each graded attempt is kept as it finishes and a rerun takes it from there (`attempt_key`)
    instead of asking the model again: a calibration stopped part way loses no finished
    attempt. Infrastructure errors are not kept: a rerun tries those again.
    """
    date = today or dt.date.today().isoformat()
    policy = policy or SequentialPolicy.from_config(config)
    keys = [
        (t.instance_id, m.name, h) for t in tasks for m in config.models for h in config.hint_levels
    ]
    by_id = {t.instance_id: t for t in tasks}
    clients = {m.name: make_client(m, resolve_api_key(m, environ)) for m in config.models}
    spent: dict[tuple[str, str, int], list[Attempt]] = {k: [] for k in keys}

    def one(key: tuple[str, str, int], index: int) -> Attempt:
        task = by_id[key[0]]
        stored = None
        if store is not None:
            stored = attempt_key(task, config.model(key[1]), key[2], index, verify_config)
            found, value = store.get(stored)
            if found and isinstance(value, Attempt):
                return value
        try:
            attempt = run_attempt(
                task,
                seed=seed_for(task),
                env=env_for(task),
                sandbox=sandbox,
                limits=limits,
                model=config.model(key[1]),
                client=clients[key[1]],
                hint_level=key[2],
                attempt_index=index,
                workdir=workdir,
                verify_config=verify_config,
            )
        except Exception as exc:  # never lose the other attempts' results to one attempt
            return _failed_attempt(key, exc)
        if store is not None and stored is not None and not attempt.infra_error:
            store.put(stored, attempt)
        return attempt

    def sample(batch: list[tuple[str, str, int]]) -> list[bool | None]:
        results: dict[tuple[str, str, int], Attempt] = {}
        for model in config.models:
            mine = [k for k in batch if k[1] == model.name]
            with ThreadPoolExecutor(max_workers=model.concurrency) as pool:
                futures = {k: pool.submit(one, k, len(spent[k])) for k in mine}
                results.update({k: f.result() for k, f in futures.items()})
        out: list[bool | None] = []
        for k in batch:
            spent[k].append(results[k])
            out.append(None if results[k].infra_error else results[k].solved)
        return out

    try:
        # a (model, hint level) is a group; the keys of one task share its difficulty
        estimates = run_sequential(
            keys, sample, policy, group=lambda k: (k[1], k[2]), task=lambda k: k[0]
        )
    finally:
        for client in clients.values():
            client.close()
    out = []
    for task in tasks:
        rows, bands, ladder, ids, errors = [], [], [], {}, []
        for m in config.models:
            solved_at: int | None = None
            for h in config.hint_levels:
                key = (task.instance_id, m.name, h)
                est, attempts = estimates[key], spent[key]
                graded = [a for a in attempts if not a.infra_error]
                for a in graded:
                    if a.model_id:
                        ids[m.name] = a.model_id
                if est.error:
                    last = attempts[-1].reason if attempts else ""
                    label = Calibration.format_label("model", m.name, h)
                    errors.append(f"{label}: {est.error}: {last}")
                if est.attempts == 0:
                    continue
                rows.append(
                    Calibration(
                        solver_kind="model",
                        solver_name=m.name,
                        hint_level=h,
                        attempts=est.attempts,
                        solves=est.solves,
                        rate=est.rate,
                        interval_low=est.interval_low,
                        interval_high=est.interval_high,
                        date=date,
                        tokens=sum(a.tokens for a in attempts),
                        cost=round(sum(a.cost for a in attempts), 6),
                    )
                )
                if h == 0 and est.band is not None:
                    bands.append((m.name, est.band))
                if est.solves and (solved_at is None or h < solved_at):
                    solved_at = h
            ladder.append((m.name, solved_at))
        made = tuple(
            a
            for m in config.models
            for h in config.hint_levels
            for a in spent[(task.instance_id, m.name, h)]
        )
        out.append(
            TaskCalibration(
                instance_id=task.instance_id,
                calibrations=tuple(rows),
                bands=tuple(bands),
                min_hint_level=tuple(ladder),
                retired=is_retired(
                    rows, [m.name for m in config.models], retire_at=config.retire_at
                ),
                model_ids=tuple(sorted(ids.items())),
                wall_time=round(sum(a.wall_time for a in made), 3),
                errors=tuple(errors),
                attempts=made,
            )
        )
    return out
