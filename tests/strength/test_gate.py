"""The test-strength gate on real seeds in the real sandbox: strong tests kill the gold code's
mutants, a barely-tested function is rejected as `weak_tests` with its surviving mutants named,
JavaScript is measured too, the coverage-selected (forked) grading agrees with the full suite,
and the refresh's steps store and count what the gate decided."""

from __future__ import annotations

from pathlib import Path

import pytest

from taskmint.acquire.sources import SeedSource
from taskmint.config import PipelineConfig, StrengthConfig
from taskmint.errors import SandboxError
from taskmint.excise import excise
from taskmint.index import index_seed
from taskmint.pipeline import mint_candidate
from taskmint.pipeline.mint import MintResult, apply_gate, result_store
from taskmint.pipeline.refresh import mint_seed
from taskmint.pipeline.steps import LocalExecutor
from taskmint.records import Candidate, Environment, SeedApp, Task, Verdict
from taskmint.sandbox import LocalSandbox
from taskmint.sandbox.base import RunResult, RunSpec
from taskmint.strength import GateItem, Strength, gate_mutants, grade_mutants, measure_strength
from taskmint.strength.gate import MutantResult
from taskmint.validate import Baseline, validate_candidate
from tests.conftest import LIMITS, SEEDS, with_coverage


@pytest.fixture(scope="module")
def weak(cache_dir: Path, sandbox: LocalSandbox):  # type: ignore[no-untyped-def]
    return with_coverage("weak", cache_dir, sandbox, runs=3)


def _stub_of(seed: SeedApp, unit: str) -> Candidate:
    found = excise(seed, index_seed(seed), max_candidates=60).candidates
    return next(c for c in found if c.strategy == "stub_body" and c.units[0].endswith(unit))


def test_strong_tests_kill_the_gold_codes_mutants(tiny_tasks: list[Task]) -> None:
    measured = [t for t in tiny_tasks if t.mutation_score is not None]
    assert len(measured) >= len(tiny_tasks) - 1
    floor = StrengthConfig().min_mutation_score
    assert all(t.mutation_score >= floor for t in measured)  # type: ignore[operator]
    assert sum(t.mutants for t in measured) >= 2 * len(measured)
    for t in measured:
        assert 0 < t.mutants <= StrengthConfig().mutants
        assert t.mutation_score == round(t.mutants_killed / t.mutants, 4)


def test_a_barely_tested_function_is_rejected_as_weak_tests(
    weak: tuple[SeedApp, Environment, Baseline, object],
    sandbox: LocalSandbox,
    pipeline_config: PipelineConfig,
) -> None:
    seed, env, baseline, cmap = weak
    strong = mint_candidate(
        _stub_of(seed, "clamp"), seed, env, baseline, sandbox, pipeline_config, cmap
    )  # type: ignore[arg-type]
    assert strong.task is not None, strong.verdict
    assert strong.task.mutation_score == 1.0 and strong.task.mutants >= 3

    weak_one = mint_candidate(
        _stub_of(seed, "word_score"), seed, env, baseline, sandbox, pipeline_config, cmap
    )  # type: ignore[arg-type]
    assert weak_one.task is None
    assert weak_one.verdict.status == "weak_tests"
    reason = weak_one.verdict.reason
    assert reason.startswith("mutation score 0.")
    assert f"is under {StrengthConfig().min_mutation_score:.2f}" in reason
    assert "weaklib/calc.py:19 `>` -> `<=`" in reason or "weaklib/calc.py:" in reason
    assert "and " in reason and "more" in reason  # more survivors than it names
    # the verdict keeps what validation found: the task was valid, only its tests are weak
    assert weak_one.verdict.fail_to_pass

    lenient = PipelineConfig(
        output_root=pipeline_config.output_root,
        strength=StrengthConfig(mutants=12, min_mutation_score=0.0),
    )
    kept = mint_candidate(_stub_of(seed, "word_score"), seed, env, baseline, sandbox, lenient, cmap)  # type: ignore[arg-type]
    assert kept.task is not None
    assert kept.task.mutation_score is not None and kept.task.mutation_score < 0.5
    assert kept.task.mutants_killed < kept.task.mutants

    off = PipelineConfig(
        output_root=pipeline_config.output_root, strength=StrengthConfig(mutants=0)
    )
    ungated = mint_candidate(_stub_of(seed, "word_score"), seed, env, baseline, sandbox, off, cmap)  # type: ignore[arg-type]
    assert ungated.task is not None
    assert (ungated.task.mutation_score, ungated.task.mutants) == (None, 0)


def test_selected_forked_grading_agrees_with_the_full_suite(
    weak: tuple[SeedApp, Environment, Baseline, object], sandbox: LocalSandbox
) -> None:
    """Each mutant is a body-level candidate over the original tree: graded from the coverage
    map's selection (forked from one collection), it gets the verdict the whole suite gives."""
    seed, env, baseline, cmap = weak
    mutants = []
    for unit in ("clamp", "word_score"):
        cand = _stub_of(seed, unit)
        item = GateItem(key=cand.candidate_id, gold_patch=cand.gold_patch, graded=())
        mutants += gate_mutants(item, seed, 50)
    assert len(mutants) >= 12
    fast = grade_mutants(
        mutants, seed, env, baseline, sandbox, limits=LIMITS, coverage=cmap, workers=2
    )  # type: ignore[arg-type]
    full = grade_mutants(mutants, seed, env, baseline, sandbox, limits=LIMITS, coverage=None)
    assert set(fast) == set(full)
    for key in fast:
        assert (fast[key].status, fast[key].fail_to_pass) == (
            full[key].status,
            full[key].fail_to_pass,
        ), key
        assert fast[key].tests_run <= full[key].tests_run
    assert sum(v.tests_run for v in fast.values()) < sum(v.tests_run for v in full.values())


def test_javascript_tasks_are_measured(
    tinyjs: tuple[SeedApp, Environment, list[Task]],
) -> None:
    _, _, tasks = tinyjs
    measured = [t for t in tasks if t.mutants]
    assert measured
    for t in measured:
        assert (
            t.mutation_score is not None and t.mutation_score >= StrengthConfig().min_mutation_score
        )


class Broken(LocalSandbox):
    """The real sandbox with its runs failing: infrastructure that is down."""

    def run(self, spec: RunSpec) -> RunResult:
        raise SandboxError("the sandbox is down")


def test_a_gate_that_cannot_run_is_a_sandbox_error_and_never_kills_the_batch(
    weak: tuple[SeedApp, Environment, Baseline, object],
    sandbox: LocalSandbox,
    pipeline_config: PipelineConfig,
) -> None:
    seed, env, baseline, cmap = weak
    cand = _stub_of(seed, "clamp")
    verdict = validate_candidate(
        cand, seed, env, baseline, sandbox, runs=2, limits=LIMITS, coverage=cmap
    )  # type: ignore[arg-type]
    item = GateItem(
        key=cand.candidate_id,
        gold_patch=cand.gold_patch,
        graded=(*verdict.fail_to_pass, *verdict.pass_to_pass),
    )
    with pytest.raises(SandboxError):
        measure_strength(
            [item], seed, env, baseline, Broken(), mutants=4, limits=LIMITS, coverage=cmap
        )  # type: ignore[arg-type]


def test_apply_gate_fills_the_row_or_rejects() -> None:
    task = Task(
        instance_id="s__stub_body__x",
        seed="s",
        snapshot_id="snap",
        env_id="env",
        language="python",
        strategy="stub_body",
        units=("a.py::f",),
        files=("a.py",),
        problem_statement="",
        hints=(),
        breaking_patch="",
        patch="",
        FAIL_TO_PASS=("t::a",),
        PASS_TO_PASS=(),
        test_paths=(),
        source_paths=(),
        test_command="",
        removed_code="",
    )
    verdict = Verdict(candidate_id="x", status="accepted", reason="ok", fail_to_pass=("t::a",))
    minted = MintResult(verdict=verdict, task=task)

    def strength(*statuses: str) -> Strength:
        return Strength(
            results=tuple(
                MutantResult(description=f"a.py:{i} `<` -> `>=`", operator="compare", status=s)  # type: ignore[arg-type]
                for i, s in enumerate(statuses, start=1)
            ),
            generated=len(statuses),
        )

    config = StrengthConfig(mutants=12, min_mutation_score=0.5)
    kept = apply_gate(minted, strength("killed", "survived", "not_graded"), config)
    assert kept.task is not None
    assert (kept.task.mutation_score, kept.task.mutants, kept.task.mutants_killed) == (0.5, 2, 1)
    weak = apply_gate(minted, strength("killed", "survived", "survived"), config)
    assert weak.task is None and weak.verdict.status == "weak_tests"
    assert "2 of 3 mutants" in weak.verdict.reason
    assert "a.py:2 `<` -> `>=`; a.py:3 `<` -> `>=`" in weak.verdict.reason
    assert apply_gate(minted, Strength(), config) == minted  # nothing to mutate: null score
    assert apply_gate(minted, None, config) == minted


@pytest.mark.slow
def test_the_refresh_gates_stores_and_counts_weak_tests(tmp_path: Path) -> None:
    config = PipelineConfig(output_root=tmp_path / "out", workers=2)
    source = SeedSource(kind="path", location=str(SEEDS / "weak"))
    with LocalExecutor(2) as ex:
        first = mint_seed(ex, source, config)
    summary = first.summary
    assert summary.rejected.get("weak_tests", 0) >= 1, summary
    assert first.tasks and all(t.mutation_score is not None for t in first.tasks)
    floor = config.strength.min_mutation_score
    assert all(t.mutation_score >= floor for t in first.tasks)  # type: ignore[operator]
    store = result_store(config)
    computed = len(store.journal())
    with LocalExecutor(2) as ex:
        again = mint_seed(ex, source, config)
    assert again.summary.rejected == summary.rejected
    assert [t.instance_id for t in again.tasks] == [t.instance_id for t in first.tasks]
    assert len(store.journal()) == computed  # everything came from the store
