"""Code a test runs in another process: a Python child started with subprocess is measured
(its lines are the test's, `subcov/sitecustomize.py`); any other process (a shell, a child that
never reports) is invisible to the coverage map, so such a test must be in every selection."""

from __future__ import annotations

from taskmint.acquire import acquire
from taskmint.excise import excise
from taskmint.index import index_seed
from taskmint.index.coverage import coverage_map
from taskmint.languages import build_environment
from taskmint.validate import run_baseline, validate_candidate
from taskmint.validate.selection import select_tests
from tests.conftest import LIMITS, SEEDS

CLI = "tests/test_calc.py::test_cli"
SHELL = "tests/test_calc.py::test_cli_through_shell"
HARD = "tests/test_calc.py::test_child_that_exits_hard"
HALF = "tests/test_calc.py::test_half"
NESTED = "tests/test_calc.py::test_child_starts_python"
OTHER = "tests/test_calc.py::test_child_starts_a_program"
UNMEASURED = (SHELL, HARD, OTHER)


def test_measured_children_and_unmeasured_ones(cache_dir, sandbox):
    seed = acquire(SEEDS / "spawns", cache_dir=cache_dir)
    env = build_environment(seed.manifest, cache_dir=cache_dir)
    baseline = run_baseline(seed, env, sandbox, runs=3, limits=LIMITS)
    assert set(baseline.stable_passed) == {CLI, SHELL, HARD, HALF, NESTED, OTHER}
    cmap = coverage_map(seed, env, sandbox, limits=LIMITS, cache_dir=cache_dir)
    assert cmap is not None
    # the shell, the child that exits with os._exit and the child that starts /bin/true did not
    # all report back: those tests are always selected
    assert sorted(cmap.tests[i] for i in cmap.spawned) == sorted(UNMEASURED)
    assert cmap.always_run(baseline.stable_passed) == tuple(sorted(UNMEASURED))
    # double() ran only in test_cli's child process, and is attributed to test_cli
    assert cmap.tests_touching("calc/__init__.py", 6, 7) == (CLI,)
    # triple() ran in Python grandchildren: under a shell (measured, but the shell is not) and
    # under a measured Python child
    assert cmap.tests_touching("calc/__init__.py", 18, 19) == tuple(sorted([SHELL, NESTED]))
    # half() ran in the test process, in a child that never reported its lines, and in one
    # that did (but started a program that did not)
    assert cmap.tests_touching("calc/__init__.py", 12, 13) == tuple(sorted([HALF, OTHER]))
    cands = excise(seed, index_seed(seed), max_candidates=20, strategies=("stub_body",)).candidates
    by_unit = {c.units: c for c in cands}
    expected = {
        "calc/__init__.py::double": ((*UNMEASURED, CLI), (CLI,)),
        "calc/__init__.py::triple": ((*UNMEASURED, NESTED), (SHELL, NESTED)),
        "calc/__init__.py::half": ((*UNMEASURED, HALF), (HALF, HARD, OTHER)),
    }
    for unit, (selection, f2p) in expected.items():
        cand = by_unit[(unit,)]
        assert select_tests(cand, cmap, baseline.stable_passed, seed) == tuple(sorted(selection))
        fast = validate_candidate(
            cand, seed, env, baseline, sandbox, runs=2, limits=LIMITS, coverage=cmap
        )
        full = validate_candidate(cand, seed, env, baseline, sandbox, runs=2, limits=LIMITS)
        assert fast.status == full.status == "accepted", unit
        assert set(fast.fail_to_pass) == set(full.fail_to_pass) == set(f2p), unit
