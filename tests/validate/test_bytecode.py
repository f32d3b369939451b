"""The snapshot's bytecode, compiled once in the real sandbox and copied into validation trees."""

from __future__ import annotations

from pathlib import Path

from taskmint.acquire import acquire
from taskmint.excise import excise
from taskmint.files import copy_tree
from taskmint.index import index_seed
from taskmint.languages import adapter_for, build_environment
from taskmint.patches import unified_diff
from taskmint.runners import run_tests
from taskmint.runners.bytecode import build_bytecode, bytecode_dir, install_bytecode
from taskmint.validate import run_baseline, validate_candidate
from taskmint.validate.candidate import materialize
from tests.conftest import LIMITS, SEEDS


def _bytecode(tiny_seed, tiny_env, sandbox, tmp_path: Path) -> Path:
    made = build_bytecode(
        tiny_seed,
        tiny_env,
        sandbox,
        adapter=adapter_for(tiny_seed.manifest),
        limits=LIMITS,
        cache_dir=tmp_path,
    )
    assert made is not None and made == bytecode_dir(tiny_seed, tiny_env, tmp_path)
    return made


def test_compiled_once_with_module_and_rewritten_test_pycs(tiny_seed, tiny_env, sandbox, tmp_path):
    made = _bytecode(tiny_seed, tiny_env, sandbox, tmp_path)
    names = {p.relative_to(made).as_posix() for p in made.rglob("*.pyc")}
    assert any(n.startswith("tinylib/__pycache__/text.cpython-") for n in names), names
    # pytest's assertion-rewritten test module (named after the pytest version)
    assert any(n.startswith("tests/__pycache__/test_text.") and "-pytest-" in n for n in names)
    # CHECKED_HASH pycs: flags word 3 (hash-based, checked)
    pyc = next(made.glob("tinylib/__pycache__/text.cpython-*.pyc"))
    assert pyc.read_bytes()[4:8] == b"\x03\x00\x00\x00"
    # cached: a second call does no run and returns the same folder
    assert (
        build_bytecode(
            tiny_seed,
            tiny_env,
            sandbox,
            adapter=adapter_for(tiny_seed.manifest),
            limits=LIMITS,
            cache_dir=tmp_path,
        )
        == made
    )


def test_pycs_of_files_the_patch_touches_are_not_copied(tiny_seed, tiny_env, sandbox, tmp_path):
    made = _bytecode(tiny_seed, tiny_env, sandbox, tmp_path)
    text = (Path(tiny_seed.root) / "tinylib/text.py").read_text()
    patch = unified_diff("tinylib/text.py", text, text + "\nEXTRA = 1\n")
    tree = materialize(tiny_seed, patch, dest=tmp_path / "tree", bytecode=made)
    assert not list(tree.glob("tinylib/__pycache__/text.*.pyc"))
    assert list(tree.glob("tinylib/__pycache__/intervals.*.pyc"))
    assert list(tree.glob("tests/__pycache__/test_text.*pytest*.pyc"))


def test_a_changed_source_is_never_run_from_its_stale_pyc(tiny_seed, tiny_env, sandbox, tmp_path):
    """Even when a pyc of a changed file reaches the tree (here on purpose, bypassing the patch
    filter), the hash check makes the import compile the new source."""
    made = _bytecode(tiny_seed, tiny_env, sandbox, tmp_path)
    tree = tmp_path / "tree"
    copy_tree(Path(tiny_seed.root), tree, tiny_seed.files)
    assert install_bytecode(tree, made) > 0
    target = tree / "tinylib/text.py"
    # every function of the module renamed away: the text tests must fail
    target.write_text(target.read_text().replace("def ", "def _gone_"))
    report = run_tests(
        sandbox,
        tree,
        tiny_seed.manifest,
        tiny_env,
        adapter=adapter_for(tiny_seed.manifest),
        limits=LIMITS,
    )
    passed = [t for t, o in report.outcome_map().items() if o == "passed"]
    # the renamed functions cannot be imported: the test file fails to collect
    assert any("test_text" in e for e in report.collection_errors), report.collection_errors
    assert passed and not [t for t in passed if t.startswith("tests/test_text.py")]


def test_validation_gives_the_same_verdicts_with_and_without_bytecode(
    tiny_seed, tiny_env, sandbox, tmp_path
):
    with_cache = run_baseline(
        tiny_seed, tiny_env, sandbox, runs=2, limits=LIMITS, cache_dir=tmp_path
    )
    without = run_baseline(tiny_seed, tiny_env, sandbox, runs=2, limits=LIMITS)
    assert with_cache.bytecode and not without.bytecode
    assert with_cache.stable_passed == without.stable_passed
    cands = excise(tiny_seed, index_seed(tiny_seed), max_candidates=6).candidates
    assert len(cands) >= 3
    for cand in cands:
        a = validate_candidate(
            cand, tiny_seed, tiny_env, with_cache, sandbox, runs=2, limits=LIMITS
        )
        b = validate_candidate(cand, tiny_seed, tiny_env, without, sandbox, runs=2, limits=LIMITS)
        assert (a.status, a.fail_to_pass, a.pass_to_pass) == (
            b.status,
            b.fail_to_pass,
            b.pass_to_pass,
        ), cand.candidate_id


def test_no_bytecode_for_node_seeds(cache_dir, sandbox, tmp_path):
    seed = acquire(SEEDS / "tinyjs", cache_dir=cache_dir)
    env = build_environment(seed.manifest, cache_dir=cache_dir)
    assert (
        build_bytecode(
            seed,
            env,
            sandbox,
            adapter=adapter_for(seed.manifest),
            limits=LIMITS,
            cache_dir=tmp_path,
        )
        is None
    )
