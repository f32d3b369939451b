"""Triage of a seed's original suite: failing and flaky tests excluded, too few stable tests
rejected with a reason, long suites cut down to a selection that validation then runs."""

from __future__ import annotations

from taskmint.excise import excise
from taskmint.index import index_seed
from taskmint.records import RunReport, TestResult
from taskmint.validate import candidate as candidate_module
from taskmint.validate import run_baseline, validate_candidate
from taskmint.validate.baseline import cut_suite, summarize
from tests.conftest import LIMITS


def _report(outcomes: dict[str, str], errors: tuple[str, ...] = ()) -> RunReport:
    return RunReport(
        results=tuple(TestResult(test_id=k, outcome=v) for k, v in outcomes.items()),  # type: ignore[arg-type]
        complete=True,
        collection_errors=errors,
    )


def test_a_mostly_red_suite_is_kept_on_its_green_tests(tiny_seed, tiny_env):
    outcomes = {f"t.py::f{i}": "failed" for i in range(8)} | {"t.py::ok1": "passed"}
    outcomes |= {"t.py::ok2": "passed"}
    reports = [_report(outcomes), _report(outcomes | {"t.py::ok2": "failed"})]
    kept = summarize(tiny_seed, tiny_env, reports, runs=2, min_tests=1)
    assert kept.usable and kept.stable_passed == ("t.py::ok1",)
    assert kept.tests_kept == 1 and kept.tests_excluded == 9  # 8 failing + 1 flaky
    refused = summarize(tiny_seed, tiny_env, reports, runs=2, min_tests=2)
    assert not refused.usable
    assert "only 1 tests pass reliably" in refused.reason and "min_tests=2" in refused.reason


def test_a_suite_that_does_not_collect_is_refused_with_the_error(tiny_seed, tiny_env):
    reports = [_report({}, errors=("tests/test_a.py: ImportError: no module named zz",))] * 2
    baseline = summarize(tiny_seed, tiny_env, reports, runs=2)
    assert not baseline.usable
    assert "failed to collect" in baseline.reason and "no module named zz" in baseline.reason


def test_cut_suite_keeps_every_file_and_is_deterministic():
    tests = [f"a.py::t{i:02d}" for i in range(10)] + ["b.py::x", "c.py::y", "c.py::z"]
    kept, cut = cut_suite(list(reversed(tests)), 5)
    assert kept == cut_suite(tests, 5)[0]
    assert len(kept) == 5 and {k.split("::")[0] for k in kept} == {"a.py", "b.py", "c.py"}
    assert sorted(kept + cut) == sorted(tests)


def test_a_long_suite_is_cut_and_validation_runs_only_the_selection(
    tiny_seed, tiny_env, sandbox, monkeypatch
):
    baseline = run_baseline(tiny_seed, tiny_env, sandbox, runs=3, limits=LIMITS, max_tests=4)
    assert baseline.usable and baseline.tests_kept == 4
    assert len(baseline.cut) == 6 and baseline.tests_excluded == 6
    files = {t.split("::")[0] for t in baseline.stable_passed}
    assert files == {"tests/test_intervals.py", "tests/test_text.py"}
    kept = set(baseline.stable_passed)
    asked: list[tuple[str, ...] | None] = []
    real = candidate_module.run_tests

    def spy(*args, test_ids=None, **kwargs):  # type: ignore[no-untyped-def]
        asked.append(test_ids)
        return real(*args, test_ids=test_ids, **kwargs)

    monkeypatch.setattr(candidate_module, "run_tests", spy)
    candidates = excise(tiny_seed, index_seed(tiny_seed), max_candidates=6).candidates
    verdicts = [
        validate_candidate(c, tiny_seed, tiny_env, baseline, sandbox, runs=2, limits=LIMITS)
        for c in candidates[:3]
    ]
    assert asked and all(ids is not None and set(ids) <= kept for ids in asked)
    for v in verdicts:
        assert v.tests_run <= 4
        assert set(v.fail_to_pass) | set(v.pass_to_pass) <= kept
