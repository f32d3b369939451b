"""The flaky fixture seed: random, order-dependent, timing-dependent and shared-state tests never
reach FAIL_TO_PASS or PASS_TO_PASS."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest

from taskmint.acquire import acquire
from taskmint.excise import excise
from taskmint.files import copy_tree
from taskmint.index import index_seed
from taskmint.index.coverage import coverage_map
from taskmint.languages import adapter_for, build_environment
from taskmint.runners import run_tests
from taskmint.validate import run_baseline, validate_candidate
from tests.conftest import LIMITS, SEEDS

FLAKY = {
    "tests/test_flaky.py::test_random_draw",
    "tests/test_flaky.py::test_order_needs_state",
    "tests/test_flaky.py::test_shared_first",
    "tests/test_flaky.py::test_shared_second",
    "tests/test_flaky.py::test_timing_fresh_cache",
}


@pytest.fixture(scope="module")
def flaky(cache_dir, sandbox):  # type: ignore[no-untyped-def]
    seed = acquire(SEEDS / "flaky", cache_dir=cache_dir)
    env = build_environment(seed.manifest, cache_dir=cache_dir)
    baseline = run_baseline(seed, env, sandbox, runs=5, limits=LIMITS)
    return seed, env, baseline


def test_declared_order_alone_would_miss_them(flaky, sandbox, tmp_path):
    # Without reordering (and with the same random seed), the order-dependent and shared-state
    # tests look stable: this is what the reversed and shuffled runs are for.
    seed, env, _ = flaky
    maps = []
    for i in range(2):
        ws = tmp_path / f"ws{i}"
        copy_tree(Path(seed.root), ws, seed.files)
        maps.append(
            run_tests(
                sandbox,
                ws,
                seed.manifest,
                env,
                adapter=adapter_for(seed.manifest),
                limits=LIMITS,
                seed=0,
            ).outcome_map()
        )
        shutil.rmtree(ws)
    assert maps[0]["tests/test_flaky.py::test_order_needs_state"] == "passed"
    assert maps[0]["tests/test_flaky.py::test_shared_first"] == "passed"
    assert maps[0] == maps[1]


def test_the_original_runs_find_every_flaky_test(flaky):
    _, _, baseline = flaky
    assert baseline.runs == 5
    assert [p.split("/")[0] for p in baseline.plans] == [
        "declared",
        "reverse",
        "shuffle",
        "declared",
        "shuffle",
    ]
    # the warm runs were forks of one collection, and still found every flaky test
    assert [p.split("/")[2] for p in baseline.plans] == [
        "cold",
        "forked",
        "cold",
        "forked",
        "cold",
    ]
    # the timing test may instead fail every time on a slow machine: then it is "failing"
    unusable = set(baseline.flaky) | set(baseline.failing)
    assert unusable >= FLAKY, set(baseline.stable_passed) & FLAKY
    assert not FLAKY & set(baseline.stable_passed)
    assert "tests/test_stable.py::test_mean" in baseline.stable_passed
    assert "tests/test_flaky.py::test_slow_step" in baseline.stable_passed


def test_no_flaky_test_reaches_either_list(flaky, sandbox, cache_dir):
    seed, env, baseline = flaky
    cmap = coverage_map(seed, env, sandbox, limits=LIMITS, cache_dir=cache_dir)
    candidates = excise(seed, index_seed(seed), max_candidates=24).candidates
    assert len(candidates) >= 8
    accepted = 0
    for cand in candidates:
        verdict = validate_candidate(
            cand, seed, env, baseline, sandbox, runs=2, limits=LIMITS, coverage=cmap
        )
        assert not FLAKY & set(verdict.fail_to_pass), (cand.units, verdict)
        assert not FLAKY & set(verdict.pass_to_pass), (cand.units, verdict)
        accepted += verdict.accepted
    assert accepted >= 4
