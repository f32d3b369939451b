"""The original runs select exactly what the project's own configuration selects.

The `configured` fixture seed is set up the way real projects set theirs up: addopts with
`-m 'not slow'`, `-x`, `-n 2` (pytest-xdist) and `-p` of its own plugin, strict markers,
warnings as errors, and a conftest that ignores files (`collect_ignore`,
`pytest_ignore_collect`), deselects, skips and reorders at collection, and a test that writes
into its own folder (read-only in every run). Plain `python -m pytest`
in the same environment is the reference (`tests.plain`). The `stuck` seed has a test that no
per-test limit can stop: only its run's own limit ends it. The `oldhooks` seed was written
for pytest 8 and breaks on pytest 9 itself.
"""

from __future__ import annotations

import dataclasses
import importlib.metadata

import pytest
from packaging.version import Version

from taskmint.acquire import acquire
from taskmint.config import Limits
from taskmint.consumer import verify
from taskmint.envs import venv
from taskmint.excise import excise
from taskmint.index import index_seed
from taskmint.languages import build_environment
from taskmint.pipeline import fallback_manifest, mint_candidate
from taskmint.records import RunReport, TestResult
from taskmint.validate import run_baseline, validate_candidate
from taskmint.verify.canary import Canaries, canary_verdict
from tests.conftest import LIMITS, SEEDS
from tests.plain import plain_pytest

CORE = "tests/test_core.py::"


@pytest.fixture(scope="module")
def configured(cache_dir, sandbox):
    seed = acquire(SEEDS / "configured", cache_dir=cache_dir)
    env = build_environment(seed.manifest, cache_dir=cache_dir)
    baseline = run_baseline(seed, env, sandbox, runs=3, limits=LIMITS, workers=2)
    return seed, env, baseline


def test_the_original_runs_select_what_plain_pytest_selects(configured):
    seed, env, baseline = configured
    plain = plain_pytest(seed, env)
    assert plain.counts.get("deselected") == 2  # -m 'not slow', and the conftest's hook
    taken = {*baseline.stable_passed, *baseline.failing, *baseline.flaky}
    assert taken == set(plain.ids)
    assert baseline.collected == len(plain.ids) == 8
    assert baseline.deselected == 2
    assert "tests/test_ignored.py" not in {t.split("::")[0] for t in taken}


def test_every_test_not_kept_is_named_with_its_reason(configured):
    _, _, baseline = configured
    assert baseline.usable, baseline.reason
    # the project's -p plugin gave `answer`, pytest-mock gave `mocker`, and -n 2 was turned
    # off: the tests ran in one process (none of them saw an xdist worker)
    assert set(baseline.stable_passed) == {
        CORE + "test_add",
        CORE + "test_mul",
        CORE + "test_uses_mocker",
        CORE + "test_answer_from_the_project_plugin",
    }
    reasons = dict(baseline.excluded)
    writes = "tests/test_writes.py::test_writes_beside_itself"
    assert set(reasons) == {
        CORE + "test_fails_first",
        CORE + "test_skip_me",
        CORE + "test_zz_runs_past_the_limit",
        writes,
    }
    # a test that writes into its own folder fails as it would when a task is graded
    assert reasons[writes].startswith("failed: PermissionError")
    assert reasons[CORE + "test_fails_first"].startswith("failed: assert 2 == 3")
    assert reasons[CORE + "test_skip_me"] == "skipped: skipped by the project's conftest"
    assert reasons[CORE + "test_zz_runs_past_the_limit"].startswith("slow: ")
    assert "limit of 2 s" in reasons[CORE + "test_zz_runs_past_the_limit"]
    # -x in the project's addopts did not stop the runs at the first failure (which the
    # conftest's reordering puts third), and the slow test is never run again
    assert baseline.hung == (CORE + "test_zz_runs_past_the_limit",)
    assert baseline.full_request is not None
    assert CORE + "test_zz_runs_past_the_limit" not in baseline.full_request
    assert baseline.plugin_errors == ()


def test_candidates_run_under_the_projects_configuration(configured, sandbox):
    seed, env, baseline = configured
    excised = excise(seed, index_seed(seed), max_candidates=20, strategies=("stub_body",))
    (cand,) = [c for c in excised.candidates if c.units == ("cfgpkg/__init__.py::add",)]
    verdict = validate_candidate(cand, seed, env, baseline, sandbox, runs=2, limits=LIMITS)
    assert verdict.status == "accepted", verdict.reason
    assert set(verdict.fail_to_pass) == set(baseline.stable_passed)
    # the full-suite runs left the slow test out: they took far less than its limit
    assert verdict.wall_time < 2 * 2.0 + 10


def test_a_test_no_signal_can_stop_is_excluded_and_the_seed_kept(cache_dir, sandbox):
    seed = acquire(SEEDS / "stuck", cache_dir=cache_dir)
    env = build_environment(seed.manifest, cache_dir=cache_dir)
    limits = Limits(wall_seconds=seed.manifest.timeout)
    baseline = run_baseline(seed, env, sandbox, runs=3, limits=limits)
    assert baseline.usable, baseline.reason
    stuck = "tests/test_stuck.py::test_blocks_the_alarm_and_sleeps"
    assert baseline.stable_passed == (
        "tests/test_stuck.py::test_double",
        "tests/test_stuck.py::test_double_again",
    )
    assert baseline.hung == (stuck,)
    assert dict(baseline.excluded)[stuck].startswith("hung: still running after")
    assert baseline.collected == 3


def test_a_suite_that_breaks_on_pytest_itself_runs_under_an_fallback_manifest(cache_dir, sandbox):
    seed = acquire(SEEDS / "oldhooks", cache_dir=cache_dir)
    env = build_environment(seed.manifest, cache_dir=cache_dir)
    baseline = run_baseline(seed, env, sandbox, runs=3, limits=LIMITS)
    assert not baseline.usable
    assert "PluginValidationError" in baseline.reason
    newest = Version(importlib.metadata.version("pytest"))
    tried = []
    # the refresh flow's steps: older pytests while the suite breaks on pytest itself
    while (older := fallback_manifest(seed.manifest, baseline)) is not None:
        tried.append(older.pytest)
        seed = dataclasses.replace(seed, manifest=older)
        env = build_environment(seed.manifest, cache_dir=cache_dir)
        baseline = run_baseline(seed, env, sandbox, runs=3, limits=LIMITS)
    assert tried == [f"<{newest.major}.{newest.minor}", f"<{newest.major}"]
    assert baseline.usable, baseline.reason
    assert len(baseline.stable_passed) == 2
    # the environment holds the newest pytest of the previous major
    assert f"pytest{seed.manifest.pytest}" in " ".join(venv.test_tools(seed.manifest))
    assert fallback_manifest(seed.manifest, baseline) is None


def test_tasks_of_a_suite_whose_conftest_parametrizes_every_test_verify(
    cache_dir, sandbox, pipeline_config
):
    """markupsafe's conftest has an autouse fixture with params: the verifier's canary tests
    are parametrized too, so they are selected and judged over their variants (20 of 24
    markupsafe candidates failed their reference check as "tampered" before)."""
    seed = acquire(SEEDS / "autoparam", cache_dir=cache_dir)
    env = build_environment(seed.manifest, cache_dir=cache_dir)
    baseline = run_baseline(seed, env, sandbox, runs=2, limits=LIMITS)
    assert baseline.usable, baseline.reason
    assert "tests/test_apkg.py::test_shout[native]" in baseline.stable_passed
    made = excise(seed, index_seed(seed), max_candidates=6).candidates
    assert made
    results = [mint_candidate(c, seed, env, baseline, sandbox, pipeline_config) for c in made]
    assert all("tampered" not in r.verdict.reason for r in results), [
        r.verdict.reason for r in results
    ]
    tasks = [r.task for r in results if r.task is not None]
    assert tasks, [r.verdict.reason for r in results]
    # a wrong fix still gets 0
    task = tasks[0]
    assert verify(task, "", seed=seed, env=env, sandbox=sandbox).reward == 0.0
    assert verify(task, task.patch, seed=seed, env=env, sandbox=sandbox).reward == 1.0


@pytest.mark.parametrize(
    ("fail_variants", "verdict"),
    [
        ({"[native]": "failed", "[speedups]": "skipped"}, None),
        ({"[native]": "skipped", "[speedups]": "skipped"}, "must-fail canary came out skipped"),
        ({"[native]": "passed", "[speedups]": "skipped"}, "must-fail canary came out passed"),
        ({"[native]": "failed", "[speedups]": "passed"}, "must-fail canary came out passed"),
        ({}, "must-fail canary came out missing"),
    ],
)
def test_parametrized_canaries_are_judged_over_their_variants(fail_variants, verdict):
    canaries = Canaries(
        path="tests/test_c.py",
        must_pass="tests/test_c.py::test_p",
        must_fail="tests/test_c.py::test_f",
    )
    results = [TestResult(test_id="tests/test_c.py::test_p[native]", outcome="passed")]
    results += [
        TestResult(test_id=f"tests/test_c.py::test_f{v}", outcome=o)  # type: ignore[arg-type]
        for v, o in fail_variants.items()
    ]
    report = RunReport(results=tuple(results), complete=True)
    got = canary_verdict(report, canaries)
    assert (got is None) if verdict is None else (verdict in (got or ""))
