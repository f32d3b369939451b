"""Code a test runs in another process is invisible to the coverage map: such a test (here a
CLI test running the seed with `python -m`) must be in every selection."""

from __future__ import annotations

from taskmint.acquire import acquire
from taskmint.envs import build_environment
from taskmint.excise import excise
from taskmint.index import index_seed
from taskmint.index.coverage import coverage_map
from taskmint.validate import run_baseline, validate_candidate
from taskmint.validate.selection import select_tests
from tests.conftest import LIMITS, SEEDS

CLI = "tests/test_calc.py::test_cli"
HALF = "tests/test_calc.py::test_half"


def test_a_test_that_starts_a_process_is_always_selected(cache_dir, sandbox):
    seed = acquire(SEEDS / "spawns", cache_dir=cache_dir)
    env = build_environment(seed.manifest, cache_dir=cache_dir)
    baseline = run_baseline(seed, env, sandbox, runs=3, limits=LIMITS)
    assert set(baseline.stable_passed) == {CLI, HALF}
    cmap = coverage_map(seed, env, sandbox, limits=LIMITS, cache_dir=cache_dir)
    assert cmap is not None
    assert [cmap.tests[i] for i in cmap.spawned] == [CLI]
    # no line of double() ran in the test process: only the subprocess ran it
    assert cmap.tests_touching("calc/__init__.py", 6, 7) == ()
    cands = excise(seed, index_seed(seed), max_candidates=20, strategies=("stub_body",)).candidates
    double = next(c for c in cands if c.units == ("calc/__init__.py::double",))
    assert select_tests(double, cmap, baseline.stable_passed, seed) == (CLI,)
    fast = validate_candidate(
        double, seed, env, baseline, sandbox, runs=2, limits=LIMITS, coverage=cmap
    )
    full = validate_candidate(double, seed, env, baseline, sandbox, runs=2, limits=LIMITS)
    assert fast.status == full.status == "accepted"
    assert fast.fail_to_pass == full.fail_to_pass == (CLI,)
