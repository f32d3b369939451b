"""Selection for node's process-per-test-file runs: a removal in a file is seen only by the test
files whose process loaded it, by those that read files or start processes, and by nothing
else; checked against full-suite validation of the same candidates."""

from __future__ import annotations

from dataclasses import replace
from pathlib import Path

import pytest

from taskmint.patches import unified_diff
from taskmint.records import Candidate, SeedApp
from taskmint.validate import validate_candidate
from taskmint.validate.selection import select_tests
from tests.conftest import LIMITS, assert_selection_exact, with_coverage


@pytest.fixture(scope="module")
def loadjs(cache_dir, sandbox):  # type: ignore[no-untyped-def]
    return with_coverage("loadjs", cache_dir, sandbox)


def removal(seed: SeedApp, file: str, name: str, strategy: str = "remove_function") -> Candidate:
    """A candidate that deletes the exported function `name` (and the blank line after it)."""
    text = (Path(seed.root) / file).read_text()
    start = text.index(f"export function {name}(")
    end = text.index("\n}\n", start) + 3
    end += text[end:].startswith("\n")
    new = text[:start] + text[end:]
    return Candidate(
        candidate_id=f"{file}-{name}",
        snapshot_id=seed.snapshot_id,
        seed=seed.name,
        language="javascript",
        strategy=strategy,
        units=(f"{file}::{name}",),
        files=(file,),
        breaking_patch=unified_diff(file, text, new),
        gold_patch=unified_diff(file, new, text),
        removed_code=text[start:end],
    )


def _files(tests: tuple[str, ...] | None) -> set[str] | None:
    return None if tests is None else {t.split("::")[0] for t in tests}


def test_the_map_records_which_process_loaded_each_file(loadjs):
    _, _, _, cmap = loadjs
    assert cmap.process_per_file
    assert set(cmap.loaded["src/numbers.js"]) == {"test/numbers.test.js", "test/quad.test.js"}
    assert set(cmap.loaded["src/words.js"]) == {"test/words.test.js"}
    # cli.test.js's child reported (it loaded no test file); child.test.js's turned coverage off
    assert cmap.loaded_shared == ("src/cli.js",)
    assert cmap.spawned_files == ()


@pytest.mark.parametrize(
    ("file", "name", "expected"),
    [
        # loaded directly, and through src/quad.js; words.test.js never loads it
        ("src/numbers.js", "double", {"test/numbers.test.js", "test/quad.test.js"}),
        # loaded by words.test.js only, but read by source.test.js and run in child.test.js's
        # child process: both of those are selected for every edit
        ("src/words.js", "greet", {"test/words.test.js"}),
    ],
)
def test_removal_selects_the_loading_processes_and_matches_the_full_suite(
    loadjs, sandbox, file, name, expected
):
    seed, env, baseline, cmap = loadjs
    cand = removal(seed, file, name)
    selected = select_tests(cand, cmap, baseline.stable_passed, seed)
    reaching = {"test/source.test.js", "test/child.test.js", "test/cli.test.js"}
    assert _files(selected) == expected | reaching
    fast = assert_selection_exact(cand, seed, env, baseline, sandbox, cmap)
    assert fast.status == "accepted"


def test_greet_is_only_seen_by_reading_or_a_child_process(loadjs, sandbox):
    """No process that runs a test imports greet: only the files that reach outside see it."""
    seed, env, baseline, cmap = loadjs
    verdict = validate_candidate(
        removal(seed, "src/words.js", "greet"),
        seed,
        env,
        baseline,
        sandbox,
        runs=1,
        limits=LIMITS,
        coverage=cmap,
    )
    assert _files(verdict.fail_to_pass) == {"test/source.test.js", "test/child.test.js"}


def test_edits_outside_scripts_and_unrecorded_processes_mean_the_full_suite(loadjs):
    seed, _, baseline, cmap = loadjs
    # a file a child process loaded: which test started it is not known
    cli = removal(seed, "src/cli.js", "banner")
    assert select_tests(cli, cmap, baseline.stable_passed, seed) is None
    cand = removal(seed, "src/numbers.js", "triple")
    # a file V8 does not compile as a script (a JSON module) is never seen loading
    data = replace(cand, files=("src/data.json",))
    assert select_tests(data, cmap, baseline.stable_passed, seed) is None
    # a test file whose process left no coverage record is in every selection
    plain = _files(select_tests(cand, cmap, baseline.stable_passed, seed))
    assert plain is not None and "test/words.test.js" not in plain
    lost = replace(cmap, spawned_files=("test/words.test.js",))
    assert "test/words.test.js" in (_files(select_tests(cand, lost, None, seed)) or set())
