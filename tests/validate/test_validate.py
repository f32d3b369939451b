"""Validation against the real sandbox, including the bad inputs the pipeline must survive."""

from __future__ import annotations

import dataclasses

from taskmint.acquire import acquire
from taskmint.config import Limits
from taskmint.excise import excise
from taskmint.index import index_seed
from taskmint.languages import build_environment
from taskmint.records import RunReport, TestResult
from taskmint.validate import run_baseline, validate_candidate
from taskmint.validate.baseline import summarize
from tests.conftest import LIMITS, SEEDS


def _candidate(seed, qualname):
    result = excise(seed, index_seed(seed), max_candidates=100, strategies=("stub_body",))
    return next(c for c in result.candidates if c.units[0].endswith("::" + qualname))


def test_baseline_of_the_tiny_seed(tiny_baseline):
    assert tiny_baseline.usable
    assert tiny_baseline.runs == 3
    assert len(tiny_baseline.stable_passed) == 10
    assert tiny_baseline.flaky == () and tiny_baseline.failing == ()


def test_accepted_candidate_has_exact_fail_to_pass(tiny_seed, tiny_env, tiny_baseline, sandbox):
    cand = _candidate(tiny_seed, "top_words")
    verdict = validate_candidate(
        cand, tiny_seed, tiny_env, tiny_baseline, sandbox, runs=2, limits=LIMITS
    )
    assert verdict.status == "accepted", verdict.reason
    assert verdict.fail_to_pass == (
        "tests/test_text.py::test_top_words_breaks_ties_alphabetically",
    )
    assert len(verdict.pass_to_pass) == 9
    assert verdict.broken_runs == 2 and verdict.original_runs == 3


def test_a_seed_whose_tests_fail_on_the_original_is_refused(cache_dir, sandbox):
    seed = acquire(SEEDS / "redseed", cache_dir=cache_dir)
    env = build_environment(seed.manifest, cache_dir=cache_dir)
    baseline = run_baseline(seed, env, sandbox, runs=2, limits=LIMITS)
    assert not baseline.usable
    assert "no test passes" in baseline.reason
    cand = excise(seed, index_seed(seed), max_candidates=5).candidates[0]
    verdict = validate_candidate(cand, seed, env, baseline, sandbox, runs=2, limits=LIMITS)
    assert verdict.status == "original_failed"


def test_a_candidate_whose_tests_hang_times_out_quickly(cache_dir, sandbox):
    seed = acquire(SEEDS / "messy", cache_dir=cache_dir)
    env = build_environment(seed.manifest, cache_dir=cache_dir)
    baseline = run_baseline(seed, env, sandbox, runs=2, limits=LIMITS)
    assert baseline.usable, baseline.reason
    hang = _candidate(seed, "parse_payload")
    verdict = validate_candidate(
        hang, seed, env, baseline, sandbox, runs=2, limits=Limits(wall_seconds=60)
    )
    assert verdict.status == "timeout"
    assert "did not finish" in verdict.reason
    assert verdict.wall_time < 30
    ok = _candidate(seed, "merge_payloads")
    assert (
        validate_candidate(ok, seed, env, baseline, sandbox, runs=2, limits=LIMITS).status
        == "accepted"
    )


def test_a_candidate_that_breaks_nothing_is_rejected(tiny_seed, tiny_env, tiny_baseline, sandbox):
    cand = _candidate(tiny_seed, "top_words")
    harmless = dataclasses.replace(cand, breaking_patch="")  # the tree stays intact
    verdict = validate_candidate(
        harmless, tiny_seed, tiny_env, tiny_baseline, sandbox, runs=1, limits=LIMITS
    )
    assert verdict.status == "no_failing_tests"


def _report(**outcomes: str) -> RunReport:
    return RunReport(
        results=tuple(TestResult(test_id=k, outcome=v) for k, v in outcomes.items()),  # type: ignore[arg-type]
        complete=True,
    )


def test_flaky_tests_are_excluded(tiny_seed, tiny_env):
    reports = [
        _report(a="passed", b="passed", c="failed"),
        _report(a="passed", b="failed", c="failed"),
    ]
    baseline = summarize(tiny_seed, tiny_env, reports, runs=2)
    assert baseline.stable_passed == ("a",)
    assert baseline.flaky == ("b",)
    assert baseline.failing == ("c",)
