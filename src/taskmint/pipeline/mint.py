"""Minting one seed's candidates, in one fixed order: validate all of them (together where
exact), scan the accepted ones for leaks, measure the survivors' test strength (their mutants
graded together), then describe each survivor, run the reference solvers on it and apply the
test-strength gate. Every result is stored by content hash (`taskmint.cache`), so a rerun after
a crash redoes no finished work; every per-candidate failure comes back as a verdict.
"""

from __future__ import annotations

import concurrent.futures
import dataclasses
import datetime as dt
import functools
import os
import threading
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

from taskmint.cache import ResultStore, config_fingerprint, content_key
from taskmint.calibrate import calibrate_reference
from taskmint.config import PipelineConfig, StrengthConfig
from taskmint.describe import Rewriter, describe, load_rewriter
from taskmint.describe.leak import RULES_VERSION as DESCRIBE_RULES_VERSION
from taskmint.errors import SandboxError, TaskmintError
from taskmint.excise.feature import MAX_FAILING_SHARE
from taskmint.index.coverage import CoverageMap
from taskmint.languages import profile_for_seed
from taskmint.pipeline.failures import INFRA_RETRIES, failure_verdict
from taskmint.pipeline.progress import current
from taskmint.pipeline.seed import PreparedSeed, test_command
from taskmint.pipeline.slots import slot
from taskmint.pipeline.steps import step
from taskmint.records import Candidate, Environment, Features, SeedApp, Task, Verdict
from taskmint.sandbox import open_sandbox
from taskmint.sandbox.base import Sandbox
from taskmint.strength import GENERATOR_VERSION, GateItem, Strength, measure_strength, weak_reason
from taskmint.validate import Baseline, validate_batch, validate_candidate
from taskmint.validate.leak import RULES_VERSION as LEAK_RULES_VERSION
from taskmint.validate.leak import scan_for_leaks
from taskmint.verify import Grader

__all__ = [
    "MintResult",
    "apply_gate",
    "describe_and_reference",
    "gate_candidates",
    "leaks_in",
    "mint_candidate",
    "mint_validated",
    "result_store",
    "scan_leaks",
    "too_broad",
    "validate_candidates",
]


@dataclass(frozen=True, slots=True, kw_only=True)
class MintResult:
    """A candidate's verdict and, when accepted, its task."""

    verdict: Verdict
    task: Task | None = None


def result_store(config: PipelineConfig) -> ResultStore:
    """The run's persisted, content-addressed results (see `taskmint.cache`)."""
    return ResultStore(config.cache_dir / "results")


def _key(kind: str, prepared: PreparedSeed, config: PipelineConfig, *ids: str) -> str:
    return content_key(kind, prepared.seed.snapshot_id, *ids, config_fingerprint(config))


@functools.lru_cache(maxsize=4096)
def _read_text(root: str, rel: str) -> str | None:
    """A snapshot file's text, None if it is missing or not UTF-8 (cached: a snapshot is
    content-addressed, so its files never change)."""
    try:
        return (Path(root) / rel).read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError):
        return None


def _task_features(features: Features | None, fail_to_pass: int) -> Features | None:
    """A candidate's features with the task's FAIL_TO_PASS count (None: not measured)."""
    if features is None:
        return None
    return dataclasses.replace(features, fail_to_pass=fail_to_pass)


def _validate_one(candidate: Candidate, prepared: PreparedSeed, config: PipelineConfig) -> Verdict:
    """One candidate validated alone, again while the sandbox fails (`INFRA_RETRIES`)."""
    verdict = Verdict(candidate_id=candidate.candidate_id, status="sandbox_error", reason="")
    for _ in range(INFRA_RETRIES + 1):
        try:
            with slot("sandbox", config.workers), open_sandbox(config.sandbox) as sandbox:
                verdict = validate_candidate(
                    candidate,
                    prepared.seed,
                    prepared.env,
                    prepared.baseline,
                    sandbox,
                    runs=config.broken_runs,
                    limits=config.sandbox.limits.with_wall(prepared.seed.manifest.timeout),
                    coverage=prepared.coverage,
                )
        except Exception as exc:  # one candidate's failure is its own
            verdict = failure_verdict(candidate.candidate_id, exc)
        if verdict.status != "sandbox_error":
            break
    return verdict


@step("validate", infra=True, tags=("sandbox",))
def validate_candidates(
    candidates: Sequence[Candidate], prepared: PreparedSeed, config: PipelineConfig
) -> dict[str, Verdict]:
    """Every candidate's verdict: a stored one, else from `validate_batch` (the seed's
    candidates together, forked runs where exact); a candidate the batch could not judge (or
    judged `sandbox_error`) is validated alone, in parallel. Verdicts are stored as they come,
    except `sandbox_error`, which a rerun tries again."""
    store = result_store(config)
    verdicts: dict[str, Verdict] = {}
    todo = []
    heard: set[str] = set()
    lock = threading.Lock()

    def hear(c: Candidate, verdict: Verdict) -> None:  # a rejection is the candidate's end
        with lock:
            if c.candidate_id in heard or verdict.status == "sandbox_error":
                return
            heard.add(c.candidate_id)
        if not too_broad(c, verdict).accepted:
            current().candidate_finished(prepared.seed.name, False)

    for c in candidates:
        found, verdict = store.get(_key("verdict", prepared, config, c.candidate_id))
        if found:
            verdicts[c.candidate_id] = verdict
            hear(c, verdict)
        else:
            todo.append(c)
    if todo:
        try:
            with slot("sandbox", config.workers), open_sandbox(config.sandbox) as sandbox:
                batch = validate_batch(
                    todo,
                    prepared.seed,
                    prepared.env,
                    prepared.baseline,
                    sandbox,
                    runs=config.broken_runs,
                    limits=config.sandbox.limits.with_wall(prepared.seed.manifest.timeout),
                    coverage=prepared.coverage,
                    workers=config.workers,
                    on_verdict=hear,
                )
        except Exception:  # each candidate is then validated alone
            batch = []
        fresh = {v.candidate_id: v for v in batch if v.status != "sandbox_error"}
        alone = [c for c in todo if c.candidate_id not in fresh]
        if alone:
            with concurrent.futures.ThreadPoolExecutor(max(1, config.workers)) as pool:
                for c, verdict in zip(
                    alone,
                    pool.map(lambda c: _validate_one(c, prepared, config), alone),
                    strict=True,
                ):
                    fresh[c.candidate_id] = verdict
                    hear(c, verdict)
        for c in todo:
            verdict = fresh[c.candidate_id]
            if verdict.status not in ("sandbox_error", "internal_error"):
                store.put(_key("verdict", prepared, config, c.candidate_id), verdict)
            verdicts[c.candidate_id] = verdict
    return {c.candidate_id: too_broad(c, verdicts[c.candidate_id]) for c in candidates}


def too_broad(candidate: Candidate, verdict: Verdict) -> Verdict:
    """A `feature` candidate's verdict, rejected as `too_broad` when its removal fails more
    than `MAX_FAILING_SHARE` of the stable tests: the rest of the suite must be the larger part
    (the strategy estimates this from the coverage map; import-time and indirect failures are
    only seen here)."""
    if candidate.strategy != "feature" or not verdict.accepted:
        return verdict
    failing, total = (
        len(verdict.fail_to_pass),
        len(verdict.fail_to_pass) + len(verdict.pass_to_pass),
    )
    if failing <= MAX_FAILING_SHARE * total:
        return verdict
    return dataclasses.replace(
        verdict,
        status="too_broad",
        reason=f"removing the feature fails {failing} of {total} tests: more than "
        f"{MAX_FAILING_SHARE:.0%} of the suite, not a feature",
    )


def leaks_in(
    candidates: Sequence[Candidate],
    seed: SeedApp,
    env: Environment,
    sandbox: Sandbox,
    config: PipelineConfig,
) -> dict[str, str]:
    """Candidate id -> the first place its removed code is visible from inside `sandbox`."""
    hits = scan_for_leaks(
        seed, env, list(candidates), sandbox, limits=config.sandbox.limits.with_wall(600)
    )
    return {cid: where[0] for cid, where in hits.items() if where}


@step("leak-scan", infra=True, tags=("sandbox",))
def scan_leaks(
    candidates: Sequence[Candidate], prepared: PreparedSeed, config: PipelineConfig
) -> dict[str, str]:
    """Candidate id -> where its removed code is visible from inside the sandbox, for the
    accepted candidates whose code leaks (stored, keyed by the candidates scanned)."""
    if not candidates:
        return {}
    ids = sorted(c.candidate_id for c in candidates)

    def scan() -> dict[str, str]:
        with slot("sandbox", config.workers), open_sandbox(config.sandbox) as sandbox:
            return leaks_in(candidates, prepared.seed, prepared.env, sandbox, config)

    key = _key("leak", prepared, config, LEAK_RULES_VERSION, *ids)
    found: dict[str, str] = result_store(config).cached(key, scan)
    return found


def _gate_item(candidate: Candidate, verdict: Verdict) -> GateItem:
    """What the gate needs of an accepted candidate: its id, gold patch and graded tests."""
    return GateItem(
        key=candidate.candidate_id,
        gold_patch=candidate.gold_patch,
        graded=(*verdict.fail_to_pass, *verdict.pass_to_pass),
    )


def _strength_key(prepared: PreparedSeed, config: PipelineConfig, candidate_id: str) -> str:
    return _key("strength", prepared, config, candidate_id, GENERATOR_VERSION)


def _measure(
    validated: Sequence[tuple[Candidate, Verdict]],
    prepared: PreparedSeed,
    config: PipelineConfig,
    sandbox: Sandbox,
) -> dict[str, Strength]:
    """The candidates' strength, measured together in `sandbox`; stored unless no mutant
    could be graded (a rerun measures those again)."""
    found = measure_strength(
        [_gate_item(c, v) for c, v in validated],
        prepared.seed,
        prepared.env,
        prepared.baseline,
        sandbox,
        mutants=config.strength.mutants,
        limits=config.sandbox.limits.with_wall(prepared.seed.manifest.timeout),
        coverage=prepared.coverage,
        workers=config.workers,
    )
    store = result_store(config)
    for cid, strength in found.items():
        if not strength.error:
            store.put(_strength_key(prepared, config, cid), strength)
    return found


@step("strength", infra=True, tags=("sandbox",))
def gate_candidates(
    validated: Sequence[tuple[Candidate, Verdict]], prepared: PreparedSeed, config: PipelineConfig
) -> dict[str, Strength]:
    """Candidate id -> the test strength of each accepted, leak-free candidate (stored, or
    measured for all of them together: one `validate_batch` over every mutant of the seed's
    tasks, so they share collections). Nothing when the gate is off (`strength.mutants = 0`).
    `mint_validated` applies the gate with these after the reference solvers; a candidate
    missing here (a batch that failed) is measured alone there."""
    if config.strength.mutants == 0 or not validated:
        return {}
    store = result_store(config)
    out: dict[str, Strength] = {}
    todo = []
    for cand, verdict in validated:
        hit, stored = store.get(_strength_key(prepared, config, cand.candidate_id))
        if hit:
            out[cand.candidate_id] = stored
        else:
            todo.append((cand, verdict))
    if todo:
        with slot("sandbox", config.workers), open_sandbox(config.sandbox) as sandbox:
            out.update(_measure(todo, prepared, config, sandbox))
    return out


def apply_gate(result: MintResult, strength: Strength | None, config: StrengthConfig) -> MintResult:
    """The minted result with the gate applied: the task's row gets the mutation score and
    counts, and a task under `config.min_mutation_score` becomes a `weak_tests` verdict naming
    surviving mutants. A task with no mutant to grade (`strength` None or empty) keeps a null
    score."""
    if result.task is None or strength is None or strength.score is None:
        return result
    score = strength.score
    if score < config.min_mutation_score:
        reason = weak_reason(strength, config.min_mutation_score)
        return MintResult(
            verdict=dataclasses.replace(result.verdict, status="weak_tests", reason=reason)
        )
    task = dataclasses.replace(
        result.task, mutation_score=score, mutants=strength.graded, mutants_killed=strength.killed
    )
    return MintResult(verdict=result.verdict, task=task)


def _strength_of(
    candidate: Candidate,
    verdict: Verdict,
    prepared: PreparedSeed,
    config: PipelineConfig,
    sandbox: Sandbox,
) -> Strength | None:
    """The candidate's stored strength, else measured alone. Raises `SandboxError` when no
    mutant could be graded (the step's retries, then a `sandbox_error` verdict, never
    stored)."""
    if config.strength.mutants == 0:
        return None
    hit, stored = result_store(config).get(_strength_key(prepared, config, candidate.candidate_id))
    if hit:
        found: Strength = stored
        return found
    strength = _measure([(candidate, verdict)], prepared, config, sandbox)[candidate.candidate_id]
    if strength.error:
        raise SandboxError(f"test-strength gate: {strength.error}")
    return strength


def _rewriter(config: PipelineConfig) -> Rewriter | None:
    """The statement rewriter the config names, or None (rewriting is optional: a config that
    names an unusable one keeps the template statements)."""
    try:
        return load_rewriter(config.models, config.describe_model, os.environ)
    except TaskmintError:
        return None


def describe_and_reference(
    candidate: Candidate,
    verdict: Verdict,
    seed: SeedApp,
    env: Environment,
    config: PipelineConfig,
    grade: Grader,
    rewriter: Rewriter | None = None,
) -> MintResult:
    """describe -> the reference solvers, for one accepted candidate.

    `rewriter` (see `taskmint.describe.load_rewriter`) rewords statements with a model; without
    it, or when it fails, the template statement is used.
    """
    description = describe(
        candidate,
        verdict,
        seed.manifest.source_paths,
        seed=seed,
        style=config.statement_style,
        rewriter=rewriter,
        level=config.statement_level,
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
        features=_task_features(candidate.features, len(verdict.fail_to_pass)),
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
        statement_level=description.level,
        hidden_tests=profile_for_seed(seed).hidden_tests(
            verdict.fail_to_pass,
            verdict.pass_to_pass,
            seed=f"{config.random_seed}|{candidate.candidate_id}",
            fraction=config.verify.hidden_fraction,
            pass_fraction=config.verify.hidden_pass_fraction,
            source_of=lambda rel: _read_text(seed.root, rel),
        ),
    )

    calibration, failure = calibrate_reference(task, grade, solvers=config.reference_solvers)
    if failure is not None:
        return MintResult(
            verdict=dataclasses.replace(verdict, status="reference_failed", reason=failure)
        )
    return MintResult(verdict=verdict, task=dataclasses.replace(task, calibration=calibration))


@step("mint", infra=True, tags=("sandbox",))
def mint_validated(
    validated: tuple[Candidate, Verdict], prepared: PreparedSeed, config: PipelineConfig
) -> MintResult:
    """Describe one validated, leak-free candidate (with its verdict), run the reference
    solvers on it and apply the test-strength gate (`gate_candidates` measured it; measured
    here when it did not). A stored result is reused; a gate that could not grade any mutant
    raises `SandboxError` (retried, then a `sandbox_error` verdict that is not stored)."""
    candidate, verdict = validated
    store = result_store(config)
    key = _key(
        "mint", prepared, config, candidate.candidate_id, GENERATOR_VERSION, DESCRIBE_RULES_VERSION
    )
    found, cached = store.get(key)
    if found:
        stored: MintResult = cached
        current().candidate_finished(prepared.seed.name, stored.task is not None)
        return stored
    with slot("sandbox", config.workers), open_sandbox(config.sandbox) as sandbox:
        grade = Grader(
            seed=prepared.seed,
            env=prepared.env,
            sandbox=sandbox,
            limits=config.sandbox.limits.with_wall(prepared.seed.manifest.timeout),
            config=config.verify,
        )
        result = describe_and_reference(
            candidate, verdict, prepared.seed, prepared.env, config, grade, _rewriter(config)
        )
        if result.task is not None:
            strength = _strength_of(candidate, verdict, prepared, config, sandbox)
            result = apply_gate(result, strength, config.strength)
    store.put(key, result)
    current().candidate_finished(prepared.seed.name, result.task is not None)
    return result


def mint_candidate(
    candidate: Candidate,
    seed: SeedApp,
    env: Environment,
    baseline: Baseline,
    sandbox: Sandbox,
    config: PipelineConfig,
    coverage: CoverageMap | None = None,
    rewriter: Rewriter | None = None,
) -> MintResult:
    """validate -> describe -> the reference solvers -> the test-strength gate for one
    candidate, in `sandbox`, stored nowhere: the whole of minting for a script, a benchmark or
    a test (the leak scan, which looks at all of a seed's candidates at once, is `leaks_in`).
    A gate that fails (no mutant could be graded, an exception) gives the failure's verdict
    (`failure_verdict`)."""
    verdict = validate_candidate(
        candidate,
        seed,
        env,
        baseline,
        sandbox,
        runs=config.broken_runs,
        limits=config.sandbox.limits.with_wall(seed.manifest.timeout),
        coverage=coverage,
    )
    verdict = too_broad(candidate, verdict)
    if not verdict.accepted:
        return MintResult(verdict=verdict)
    grade = Grader(
        seed=seed,
        env=env,
        sandbox=sandbox,
        limits=config.sandbox.limits.with_wall(seed.manifest.timeout),
        config=config.verify,
    )
    result = describe_and_reference(candidate, verdict, seed, env, config, grade, rewriter)
    if result.task is None or config.strength.mutants == 0:
        return result
    try:
        strength = measure_strength(
            [_gate_item(candidate, verdict)],
            seed,
            env,
            baseline,
            sandbox,
            mutants=config.strength.mutants,
            limits=config.sandbox.limits.with_wall(seed.manifest.timeout),
            coverage=coverage,
        )[candidate.candidate_id]
        if strength.error:
            raise SandboxError(f"test-strength gate: {strength.error}")
    except Exception as exc:  # one task's gate failure is its own
        return MintResult(verdict=failure_verdict(candidate.candidate_id, exc))
    return apply_gate(result, strength, config.strength)
