"""The per-test coverage map and the test selection built on it."""

from __future__ import annotations

import pytest

from taskmint.excise import excise
from taskmint.index import index_seed
from taskmint.index.coverage import coverage_map
from taskmint.validate import validate_candidate
from taskmint.validate.selection import select_tests
from tests.conftest import LIMITS


@pytest.fixture(scope="module")
def tiny_cmap(tiny_seed, tiny_env, sandbox, cache_dir):
    cmap = coverage_map(tiny_seed, tiny_env, sandbox, limits=LIMITS, cache_dir=cache_dir)
    assert cmap is not None
    return cmap


def test_map_attributes_body_lines_to_the_tests_that_run_them(tiny_cmap, tiny_seed):
    units = {u.qualname: u for u in index_seed(tiny_seed).units}
    top = units["top_words"]
    assert tiny_cmap.tests_touching(top.file, top.body_start_line, top.end_line) == (
        "tests/test_text.py::test_top_words_breaks_ties_alphabetically",
    )
    # the def line runs at import, outside any test: no selection is possible there
    assert tiny_cmap.tests_touching(top.file, top.start_line, top.end_line) is None
    assert len(tiny_cmap.tests) == 10


def test_map_is_cached(tiny_seed, tiny_env, sandbox, cache_dir, tiny_cmap):
    again = coverage_map(tiny_seed, tiny_env, sandbox, limits=LIMITS, cache_dir=cache_dir)
    assert again == tiny_cmap


def test_map_from_the_snapshots_bytecode_is_the_map_from_source(
    tiny_seed, tiny_env, sandbox, cache_dir, tiny_cmap, tmp_path, monkeypatch
):
    """With a cache, the coverage run starts from the snapshot's compiled bytecode (as every
    validation run does), and measures the same lines as a run that compiles from source."""
    import taskmint.runners.bytecode as bytecode

    installed: list[int] = []
    real_install = bytecode.install_bytecode

    def counting(tree, folder, patch=""):  # type: ignore[no-untyped-def]
        installed.append(real_install(tree, folder, patch))
        return installed[-1]

    monkeypatch.setattr(bytecode, "install_bytecode", counting)
    fresh = coverage_map(tiny_seed, tiny_env, sandbox, limits=LIMITS, cache_dir=tmp_path)
    assert installed and installed[0] > 0  # the seed's and its tests' pycs went in
    monkeypatch.setattr(bytecode, "install_bytecode", real_install)
    from_source = coverage_map(tiny_seed, tiny_env, sandbox, limits=LIMITS)
    assert fresh == from_source == tiny_cmap


def test_selection_gives_the_same_verdicts_as_the_full_suite(
    tiny_seed, tiny_env, tiny_baseline, sandbox, tiny_cmap
):
    candidates = excise(
        tiny_seed, index_seed(tiny_seed), max_candidates=20, strategies=("stub_body",)
    ).candidates
    assert candidates
    for cand in candidates:
        assert select_tests(cand, tiny_cmap) is not None
        full = validate_candidate(
            cand, tiny_seed, tiny_env, tiny_baseline, sandbox, runs=1, limits=LIMITS
        )
        fast = validate_candidate(
            cand,
            tiny_seed,
            tiny_env,
            tiny_baseline,
            sandbox,
            runs=1,
            limits=LIMITS,
            coverage=tiny_cmap,
        )
        assert (fast.status, fast.fail_to_pass, fast.pass_to_pass) == (
            full.status,
            full.fail_to_pass,
            full.pass_to_pass,
        ), cand.units
        assert fast.tests_run < full.tests_run


def test_no_map_means_the_full_suite(tiny_seed):
    cand = excise(tiny_seed, index_seed(tiny_seed), max_candidates=1).candidates[0]
    assert select_tests(cand, None) is None


def test_a_single_module_seed_is_measured(cache_dir, sandbox):
    from taskmint.acquire import acquire
    from taskmint.languages import build_environment
    from tests.conftest import SEEDS

    seed = acquire(SEEDS / "onemod", cache_dir=cache_dir)
    env = build_environment(seed.manifest, cache_dir=cache_dir)
    cmap = coverage_map(seed, env, sandbox, limits=LIMITS)
    assert cmap is not None
    units = {u.qualname: u for u in index_seed(seed).units}
    shout = units["shout"]
    assert cmap.tests_touching(shout.file, shout.body_start_line, shout.end_line) == (
        "test_onemod.py::test_shout",
    )
    assert "onemod.py" in cmap.lines
