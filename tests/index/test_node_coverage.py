"""Per-file selection for JavaScript from V8's block coverage (node runs one process per test
file, so a source line is attributed to the test files whose process executed it)."""

from __future__ import annotations

from pathlib import Path

import pytest

from taskmint.acquire import acquire
from taskmint.excise import excise
from taskmint.index import index_seed
from taskmint.index.coverage import _executed_lines, _line_starts, coverage_map
from taskmint.languages import build_environment
from taskmint.records import Candidate
from taskmint.validate import run_baseline
from taskmint.validate.selection import select_tests
from tests.conftest import LIMITS, assert_selection_exact

ROOT = Path(__file__).resolve().parents[2]


def test_innermost_range_decides_a_line():
    text = "function f() {\n  if (x) {\n    never();\n  }\n  return 1;\n}\nf();\n"
    starts = _line_starts(text)
    inner = text.index("{\n    never")
    functions = [
        {"ranges": [{"startOffset": 0, "endOffset": len(text), "count": 1}]},
        {
            "ranges": [
                {"startOffset": 0, "endOffset": text.index("\nf();"), "count": 1},
                {"startOffset": inner, "endOffset": text.index("  return"), "count": 0},
            ]
        },
    ]
    lines = _executed_lines(functions, starts)
    assert 3 not in lines  # the untaken branch
    assert {1, 2, 5, 7} <= lines


@pytest.fixture(scope="module")
def mdrender(cache_dir, sandbox):  # type: ignore[no-untyped-def]
    seed = acquire(ROOT / "seed_apps" / "mdrender", cache_dir=cache_dir)
    env = build_environment(seed.manifest, cache_dir=cache_dir)
    baseline = run_baseline(seed, env, sandbox, runs=3, limits=LIMITS)
    cmap = coverage_map(seed, env, sandbox, limits=LIMITS, cache_dir=cache_dir)
    assert cmap is not None
    return seed, env, baseline, cmap


def test_node_map_attributes_lines_to_test_files(mdrender):
    _, _, _, cmap = mdrender
    assert len(cmap.tests) > 100
    slug = cmap.collect_lines["src/slugger.js"]
    files = {f for owners in slug.values() for f in owners}
    assert "test/slugger.test.js" in files
    assert "test/urls.test.js" not in files  # it never runs the slugger


def test_node_selection_runs_fewer_files_with_the_same_verdicts(mdrender, sandbox):
    seed, env, baseline, cmap = mdrender
    cands = [
        c
        for c in excise(
            seed, index_seed(seed), max_candidates=40, strategies=("stub_body",)
        ).candidates
        if (sel := select_tests(c, cmap, baseline.stable_passed, seed)) is not None
        and len({t.split("::")[0] for t in sel}) <= 6
    ][:3]
    assert len(cands) == 3
    for cand in cands:
        assert_selection_exact(cand, seed, env, baseline, sandbox, cmap)


def test_node_removals_run_the_loading_files_with_the_same_verdicts(mdrender, sandbox):
    """Removed functions, methods and classes: the test files whose process loaded the file."""
    seed, env, baseline, cmap = mdrender
    picked: dict[str, Candidate] = {}
    for cand in excise(
        seed,
        index_seed(seed),
        max_candidates=40,
        strategies=("remove_function", "remove_method", "remove_class"),
    ).candidates:
        sel = select_tests(cand, cmap, baseline.stable_passed, seed)
        assert sel is not None, cand.units
        if cand.strategy not in picked and len({t.split("::")[0] for t in sel}) <= 8:
            picked[cand.strategy] = cand
    assert set(picked) == {"remove_function", "remove_method", "remove_class"}
    for cand in picked.values():
        assert_selection_exact(cand, seed, env, baseline, sandbox, cmap)
