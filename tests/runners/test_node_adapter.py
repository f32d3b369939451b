"""The node test-runner adapter: per-test outcomes from taskmint's reporter, in the sandbox."""

from __future__ import annotations

from pathlib import Path

import pytest

from taskmint.acquire import acquire
from taskmint.envs import build_environment
from taskmint.files import copy_tree
from taskmint.runners import run_tests
from tests.conftest import LIMITS, SEEDS


@pytest.fixture(scope="module")
def js(cache_dir):
    seed = acquire(SEEDS / "tinyjs", cache_dir=cache_dir)
    return seed, build_environment(seed.manifest, cache_dir=cache_dir)


def _run(js, sandbox, tmp_path: Path, edits: dict[str, str] | None = None):
    seed, env = js
    ws = tmp_path / "ws"
    copy_tree(Path(seed.root), ws, seed.files)
    for rel, text in (edits or {}).items():
        (ws / rel).write_text(text)
    return run_tests(sandbox, ws, seed.manifest, env, limits=LIMITS)


def test_outcomes_come_from_the_reporter(js, sandbox, tmp_path):
    report = _run(js, sandbox, tmp_path)
    assert report.complete and report.nonce_ok
    assert report.outcome_map() == {
        "test/strings.test.js::strings > reverse flips the order": "passed",
        "test/strings.test.js::strings > vowels counts a e i o u": "passed",
        "test/strings.test.js::strings > a skipped case": "skipped",
    }


def test_a_stubbed_function_fails_its_tests_only(js, sandbox, tmp_path):
    seed, _ = js
    src = (Path(seed.root) / "src/strings.js").read_text()
    broken = src.replace('return [...s].reverse().join("");', 'throw new Error("not implemented");')
    report = _run(js, sandbox, tmp_path, {"src/strings.js": broken})
    outcomes = report.outcome_map()
    assert outcomes["test/strings.test.js::strings > reverse flips the order"] == "failed"
    assert outcomes["test/strings.test.js::strings > vowels counts a e i o u"] == "passed"


def test_a_file_that_does_not_load_is_recorded(js, sandbox, tmp_path):
    report = _run(js, sandbox, tmp_path, {"test/broken.test.js": "import {;\n"})
    assert any("test/broken.test.js" in e for e in report.collection_errors)
    assert report.outcome_map()["test/strings.test.js::strings > reverse flips the order"] == (
        "passed"
    )


def test_the_nonce_is_not_visible_to_the_tests(js, sandbox, tmp_path):
    probe = (
        'import { test } from "node:test";\n'
        'import assert from "node:assert/strict";\n'
        'test("no nonce here", () => { assert.equal(process.env.TASKMINT_NONCE, undefined); });\n'
    )
    report = _run(js, sandbox, tmp_path, {"test/probe.test.js": probe})
    assert report.outcome_map()["test/probe.test.js::no nonce here"] == "passed"
