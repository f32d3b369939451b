"""The coverage map when tests pass values to each other: a test that reads a cache another test
filled executes none of the lines that computed it, yet on a broken tree it reads the broken
value. Caches of `functools` are emptied before each test of the coverage run; any other state a
test leaves behind makes the lines it ran shared. Checked against full-suite validation."""

from __future__ import annotations

from pathlib import Path

import pytest

from taskmint.patches import unified_diff
from taskmint.records import Candidate, SeedApp
from taskmint.validate import validate_candidate
from taskmint.validate.selection import select_tests
from tests.conftest import LIMITS, assert_selection_exact, with_coverage

FILE = "memo/cached.py"


@pytest.fixture(scope="module")
def memo(cache_dir, sandbox):  # type: ignore[no-untyped-def]
    return with_coverage("memo", cache_dir, sandbox)


def _line(seed: SeedApp, text: str) -> int:
    lines = (Path(seed.root) / FILE).read_text().splitlines()
    return next(i for i, line in enumerate(lines, 1) if line.strip() == text)


def edit(seed: SeedApp, unit: str, old: str, new: str) -> Candidate:
    """A body-level candidate: the line `old` of memo/cached.py becomes `new`."""
    text = (Path(seed.root) / FILE).read_text()
    assert text.count(old) == 1, old
    broken = text.replace(old, new)
    line = _line(seed, old)
    return Candidate(
        candidate_id=unit,
        snapshot_id=seed.snapshot_id,
        seed=seed.name,
        language="python",
        strategy="stub_body",
        units=(f"{FILE}::{unit}",),
        files=(FILE,),
        breaking_patch=unified_diff(FILE, text, broken),
        gold_patch=unified_diff(FILE, broken, text),
        removed_code=old,
        spans=((FILE, line, line),),
    )


def test_a_cached_value_counts_for_every_test_that_reads_it(memo):
    """`width` is an lru_cache: test_width_again only reads what test_width_first computed. With
    the cache emptied before each test, both executed `_column`."""
    seed, _, _, cmap = memo
    line = _line(seed, "return 2 if ord(char) > 0x1000 else 1")
    assert cmap.tests_touching(FILE, line, line) == (
        "tests/test_first.py::test_width_first",
        "tests/test_then.py::test_width_again",
    )


def test_an_edit_under_an_lru_cache_selects_the_readers_and_matches_the_full_suite(memo, sandbox):
    seed, env, baseline, cmap = memo
    cand = edit(
        seed,
        "_column",
        "return 2 if ord(char) > 0x1000 else 1",
        "return 3 if ord(char) > 0x1000 else 0",
    )
    fast = assert_selection_exact(cand, seed, env, baseline, sandbox, cmap, runs=2)
    assert fast.status == "accepted"
    assert set(fast.fail_to_pass) == {
        "tests/test_first.py::test_width_first",
        "tests/test_then.py::test_width_again",
    }


@pytest.mark.parametrize(
    ("unit", "old", "new", "readers"),
    [
        (  # a module-level dict filled on demand
            "_compute_score",
            "return sum(ord(c) - 96 for c in word.lower())",
            "return len(word)",
            "score",
        ),
        (  # a global built on first use
            "_build_palette",
            'return {"red": "#f00", "green": "#0f0", "blue": "#00f"}',
            'return {"red": "#e00", "green": "#0f0", "blue": "#00e"}',
            "palette",
        ),
        ("cube", "return n * n * n", "return n * n", "cube"),  # a cache held in a closure
        ("_fib_step", "return b, a + b", "return b, a + b + 1", "fib"),  # a mutable default
    ],
)
def test_an_edit_under_other_state_a_test_leaves_runs_the_full_suite(
    memo, sandbox, unit, old, new, readers
):
    seed, env, baseline, cmap = memo
    cand = edit(seed, unit, old, new)
    assert select_tests(cand, cmap, baseline.stable_passed, seed) is None
    fast = validate_candidate(
        cand, seed, env, baseline, sandbox, runs=2, limits=LIMITS, coverage=cmap
    )
    full = validate_candidate(cand, seed, env, baseline, sandbox, runs=2, limits=LIMITS)
    assert (fast.status, fast.fail_to_pass) == (full.status, full.fail_to_pass)
    assert set(fast.fail_to_pass) == {
        f"tests/test_first.py::test_{readers}_first",
        f"tests/test_then.py::test_{readers}_again",
    }


@pytest.mark.parametrize(
    ("unit", "old", "new", "selected"),
    [
        (  # `add` keeps no state: the two tests that call it, not the suite
            "add",
            "return a + b",
            "return a - b",
            ("tests/test_first.py::test_add", "tests/test_then.py::test_add_again"),
        ),
        (  # unittest's class bookkeeping, the module's `__warningregistry__` and the class's
            # `__slotnames__` change between these tests: not state the tests leave
            "scale",
            "return Point(point.x * factor, point.y * factor)",
            "return point",
            (
                "tests/test_unittest_style.py::ScaleTests::test_copy_and_warn",
                "tests/test_unittest_style.py::ScaleTests::test_scale",
            ),
        ),
    ],
)
def test_lines_no_leaking_test_ran_keep_a_narrow_selection(memo, sandbox, unit, old, new, selected):
    seed, env, baseline, cmap = memo
    cand = edit(seed, unit, old, new)
    assert select_tests(cand, cmap, baseline.stable_passed, seed) == selected
    assert_selection_exact(cand, seed, env, baseline, sandbox, cmap, runs=2)
