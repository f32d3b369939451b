"""The broken tree's later runs repeat only the tests whose verdict is still open.

The `coin` seed's breaking patch makes `answer()` right or wrong at random. The plugin reseeds
`random` before each test from (the run's seed, the test id), and the broken tree's j-th run
uses seed j (`run_plan`), so each test's result in each run is known in advance: the test can
say which tests must be FAIL_TO_PASS, which dropped, and what each run was asked to run.
"""

from __future__ import annotations

import dataclasses
import json
import random
from pathlib import Path

import pytest

from taskmint.acquire import acquire
from taskmint.index.coverage import coverage_map
from taskmint.languages import build_environment
from taskmint.patches import unified_diff
from taskmint.records import Candidate
from taskmint.sandbox import LocalSandbox
from taskmint.sandbox.base import RunResult, RunSpec
from taskmint.validate import run_baseline, validate_candidate
from taskmint.validate.baseline import run_plan
from tests.conftest import LIMITS, SEEDS

SOURCE = "coin/__init__.py"
TESTS = [f"tests/test_coin.py::test_answer_{i:02d}" for i in range(24)]
OTHER = "tests/test_coin.py::test_other"


class Spy(LocalSandbox):
    """The real sandbox, noting the selection each run was asked to run (None: everything)."""

    def __init__(self) -> None:
        super().__init__()
        self.selections: list[set[str] | None] = []

    def run(self, spec: RunSpec) -> RunResult:
        assert spec.channel_input is not None  # the selection travels on the channel
        select = json.loads(spec.channel_input)["options"].get("select")
        self.selections.append(None if select is None else set(select))
        return super().run(spec)


def passes(test_id: str, run: int) -> bool:
    """Whether the broken `answer()` is right in `test_id` during the broken tree's run `run`."""
    rng = random.Random(f"{run_plan(run).seed}|{test_id}")  # how the plugin seeds each test
    return rng.random() < 0.5


@pytest.fixture(scope="module")
def coin(cache_dir):
    seed = acquire(SEEDS / "coin", cache_dir=cache_dir)
    env = build_environment(seed.manifest, cache_dir=cache_dir)
    baseline = run_baseline(seed, env, LocalSandbox(), runs=3, limits=LIMITS)
    assert set(baseline.stable_passed) == {*TESTS, OTHER}
    old = (Path(seed.root) / SOURCE).read_text()
    new = old.replace(
        "    return 42\n", "    import random\n\n    return 42 if random.random() < 0.5 else 0\n"
    )
    assert new != old
    cand = Candidate(
        candidate_id="coin-answer",
        snapshot_id=seed.snapshot_id,
        seed=seed.name,
        language="python",
        strategy="stub_body",
        units=(f"{SOURCE}::answer",),
        files=(SOURCE,),
        breaking_patch=unified_diff(SOURCE, old, new),
        gold_patch=unified_diff(SOURCE, new, old),
        removed_code="    return 42\n",
        spans=((SOURCE, 6, 6),),  # the body: `return 42`
    )
    return seed, env, baseline, cand


@pytest.mark.parametrize("runs", [2, 3])
def test_later_runs_repeat_only_the_tests_still_failing(coin, runs):
    seed, env, baseline, cand = coin
    spy = Spy()
    verdict = validate_candidate(cand, seed, env, baseline, spy, runs=runs, limits=LIMITS)
    failed_all = [t for t in TESTS if not any(passes(t, j) for j in range(runs))]
    mixed = [t for t in TESTS if not passes(t, 0) and any(passes(t, j) for j in range(runs))]
    # the 24 draws hold every case: failing throughout, failing then passing, passing first
    assert failed_all and mixed and any(passes(t, 0) and not passes(t, 1) for t in TESTS)
    assert verdict.status == "accepted", verdict.reason
    assert set(verdict.fail_to_pass) == set(failed_all)
    assert set(verdict.dropped_tests) == set(mixed)
    # a test that passed in the first run is settled: PASS_TO_PASS, even if a later run of it
    # would have failed (it passed every time on the original, which is the solved task)
    assert set(verdict.pass_to_pass) == {OTHER, *(t for t in TESTS if passes(t, 0))}
    assert verdict.broken_runs == runs
    # what each run was asked to run: everything first, then only the open tests
    expected: list[set[str] | None] = [None]
    for j in range(1, runs):
        expected.append({t for t in TESTS if not any(passes(t, i) for i in range(j))})
    assert spy.selections == expected


def test_with_a_selection_the_first_run_is_the_selection(coin, cache_dir):
    seed, env, baseline, cand = coin
    cmap = coverage_map(seed, env, LocalSandbox(), limits=LIMITS, cache_dir=cache_dir)
    spy = Spy()
    verdict = validate_candidate(
        cand, seed, env, baseline, spy, runs=2, limits=LIMITS, coverage=cmap
    )
    assert spy.selections[0] == set(TESTS)  # test_other never runs answer()
    assert spy.selections[1] == {t for t in TESTS if not passes(t, 0)}
    assert set(verdict.fail_to_pass) == {t for t in TESTS if not (passes(t, 0) or passes(t, 1))}


def test_no_second_run_when_nothing_failed(coin):
    seed, env, baseline, cand = coin
    old = (Path(seed.root) / SOURCE).read_text()
    harmless = old.replace('return "other"', 'return "o" + "ther"')
    spy = Spy()
    cand = dataclasses.replace(cand, breaking_patch=unified_diff(SOURCE, old, harmless))
    verdict = validate_candidate(cand, seed, env, baseline, spy, runs=2, limits=LIMITS)
    assert verdict.status == "no_failing_tests"
    assert verdict.broken_runs == 1 and spy.selections == [None]


def test_reruns_all_repeat_everything_with_the_same_verdict(coin):
    seed, env, baseline, cand = coin
    spy = Spy()
    full = validate_candidate(cand, seed, env, baseline, spy, runs=2, limits=LIMITS, reruns="all")
    assert spy.selections == [None, None]
    open_ = validate_candidate(cand, seed, env, baseline, LocalSandbox(), runs=2, limits=LIMITS)
    assert (full.status, full.fail_to_pass) == (open_.status, open_.fail_to_pass)
    # the one difference: a test that passed first and failed later is dropped, not kept
    later = {t for t in TESTS if passes(t, 0) and not passes(t, 1)}
    assert set(full.dropped_tests) == set(open_.dropped_tests) | later
    assert set(full.pass_to_pass) == set(open_.pass_to_pass) - later
    with pytest.raises(ValueError, match="reruns"):
        validate_candidate(cand, seed, env, baseline, spy, runs=2, limits=LIMITS, reruns="some")
