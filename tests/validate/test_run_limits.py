"""The broken tree's timeout: the whole suite's as before, a share of it for a run of part of it.

A hang is the most common reason a candidate is rejected, and it costs its whole timeout: a run
of three tests need not wait as long as a run of the suite.
"""

from __future__ import annotations

import dataclasses

from taskmint.acquire import acquire
from taskmint.config import Limits
from taskmint.excise import excise
from taskmint.index import index_seed
from taskmint.index.coverage import coverage_map
from taskmint.languages import build_environment
from taskmint.records import RunReport, TestResult
from taskmint.validate import run_baseline, validate_candidate
from taskmint.validate.baseline import summarize
from taskmint.validate.candidate import broken_run_limits
from taskmint.validate.selection import select_tests
from tests.conftest import LIMITS, SEEDS

WIDE = Limits(wall_seconds=600)


def _baseline(tiny_seed, tiny_env, wall: float = 2.0):
    """100 fast tests, 2 in each of 50 files, and one slow test (half the suite's test time)."""
    results = [
        TestResult(test_id=f"t{i % 50}.py::f{i}", outcome="passed", duration=0.01)
        for i in range(100)
    ]
    results.append(TestResult(test_id="slow.py::big", outcome="passed", duration=1.0))
    report = RunReport(results=tuple(results), complete=True, wall_time=wall)
    return summarize(tiny_seed, tiny_env, [report, report], runs=2)


def test_the_baseline_keeps_each_tests_longest_duration(tiny_seed, tiny_env):
    fast = RunReport(
        results=(TestResult(test_id="a.py::x", outcome="passed", duration=0.5),), complete=True
    )
    slow = dataclasses.replace(
        fast, results=(TestResult(test_id="a.py::x", outcome="passed", duration=2.0),)
    )
    assert summarize(tiny_seed, tiny_env, [fast, slow], runs=2).durations == (("a.py::x", 2.0),)


def test_the_whole_suite_keeps_the_old_rule(tiny_seed, tiny_env):
    baseline = _baseline(tiny_seed, tiny_env, wall=2.0)
    assert broken_run_limits(baseline, WIDE, 600).wall_seconds == 13.0  # 4 x 2 + 5
    assert broken_run_limits(baseline, WIDE, 8).wall_seconds == 8  # the manifest's cap
    quick = _baseline(tiny_seed, tiny_env, wall=0.5)
    assert broken_run_limits(quick, WIDE, 600).wall_seconds == 10.0  # at least 10 s


def test_a_part_of_the_suite_gets_its_share(tiny_seed, tiny_env):
    baseline = _baseline(tiny_seed, tiny_env, wall=10.0)
    few = ("t0.py::f0", "t0.py::f50")  # one file
    # 2 of 101 tests (more than 1 of 51 files, or 0.02 of 2.0 s)
    assert abs(broken_run_limits(baseline, WIDE, 600, few).wall_seconds - (40 * 2 / 101 + 3)) < 1e-9
    # the slow test is half of the suite's test time: half the time, whatever the count
    slow = broken_run_limits(baseline, WIDE, 600, ("slow.py::big",)).wall_seconds
    assert abs(slow - (40 * 0.5 + 3)) < 1e-9
    # one test in each of 10 files: the files' share (10 of 51) counts, not the tests' (10/101)
    spread = tuple(f"t{i}.py::f{i}" for i in range(10))
    assert abs(broken_run_limits(baseline, WIDE, 600, spread).wall_seconds - (400 / 51 + 3)) < 1e-9
    # never more than the whole suite's limit; 3 s for start-up whatever the share
    every = tuple(t for t, _ in baseline.durations)
    assert broken_run_limits(baseline, WIDE, 600, every).wall_seconds == 43.0
    tiny = _baseline(tiny_seed, tiny_env, wall=0.1)
    assert abs(broken_run_limits(tiny, WIDE, 600, few).wall_seconds - (0.4 * 2 / 101 + 3)) < 1e-9


def test_a_runner_of_whole_files_counts_every_test_of_those_files(tiny_seed, tiny_env):
    baseline = _baseline(tiny_seed, tiny_env, wall=10.0)
    one = ("t0.py::f0",)
    by_test = broken_run_limits(baseline, WIDE, 600, one).wall_seconds
    by_file = broken_run_limits(baseline, WIDE, 600, one, whole_files=True).wall_seconds
    assert abs(by_test - (40 / 51 + 3)) < 1e-9  # its file's share
    assert abs(by_file - (40 * 2 / 101 + 3)) < 1e-9  # t0.py holds 2 tests
    assert by_test < by_file


def test_a_test_of_unknown_duration_means_the_whole_suites_limit(tiny_seed, tiny_env):
    baseline = _baseline(tiny_seed, tiny_env, wall=10.0)
    assert broken_run_limits(baseline, WIDE, 600, ("t0.py::f0", "new.py::t")).wall_seconds == 45.0
    old = dataclasses.replace(baseline, durations=())  # a baseline cached before durations
    assert broken_run_limits(old, WIDE, 600, ("t0.py::f0",)).wall_seconds == 45.0


def test_a_hang_in_a_selection_is_cut_short(cache_dir, sandbox):
    seed = acquire(SEEDS / "messy", cache_dir=cache_dir)
    env = build_environment(seed.manifest, cache_dir=cache_dir)
    baseline = run_baseline(seed, env, sandbox, runs=2, limits=LIMITS)
    cmap = coverage_map(seed, env, sandbox, limits=LIMITS, cache_dir=cache_dir)
    cands = excise(seed, index_seed(seed), max_candidates=100, strategies=("stub_body",))
    hang = next(c for c in cands.candidates if c.units[0].endswith("::parse_payload"))
    full = validate_candidate(hang, seed, env, baseline, sandbox, runs=2, limits=LIMITS)
    fast = validate_candidate(
        hang, seed, env, baseline, sandbox, runs=2, limits=LIMITS, coverage=cmap
    )
    assert full.status == fast.status == "timeout"
    whole = broken_run_limits(baseline, LIMITS, seed.manifest.timeout).wall_seconds
    assert f"did not finish in {whole:.0f}s" in full.reason
    selected = select_tests(hang, cmap, baseline.stable_passed, seed)
    assert selected is not None and len(selected) < len(baseline.stable_passed)
    part = broken_run_limits(baseline, LIMITS, seed.manifest.timeout, selected).wall_seconds
    assert part < whole
    assert f"did not finish in {part:.0f}s" in fast.reason
