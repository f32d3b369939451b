"""The node test-runner adapter: per-test outcomes from taskmint's reporter, in the sandbox."""

from __future__ import annotations

from pathlib import Path

import pytest

from taskmint.acquire import acquire
from taskmint.files import copy_tree
from taskmint.languages import adapter_for, build_environment
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
    return run_tests(
        sandbox, ws, seed.manifest, env, adapter=adapter_for(seed.manifest), limits=LIMITS
    )


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


def test_the_harness_is_out_of_the_test_processes_reach(js, sandbox, tmp_path):
    """The harness above each test process is not dumpable: its environment, memory and
    descriptors under /proc are closed to the tests (the same uid)."""
    probe = (
        'import { test } from "node:test";\n'
        'import assert from "node:assert/strict";\n'
        'import fs from "node:fs";\n'
        "const refused = (path) => {\n"
        "  try { fs.readFileSync(path); return false; }\n"
        '  catch (e) { return e.code === "EACCES" || e.code === "EPERM"; }\n'
        "};\n"
        'test("the parent is closed", () => {\n'
        "  const p = process.ppid;\n"
        '  for (const what of ["environ", "mem", "fd/0", "fd/1", "maps"]) {\n'
        "    assert.ok(refused(`/proc/${p}/${what}`), what);\n"
        "  }\n"
        "  assert.throws(() => fs.readdirSync(`/proc/${p}/fd`), /EACCES|EPERM/);\n"
        "});\n"
    )
    report = _run(js, sandbox, tmp_path, {"test/probe.test.js": probe})
    assert report.outcome_map()["test/probe.test.js::the parent is closed"] == "passed", report


def test_node_test_and_assert_cannot_be_swapped_from_inside(js, sandbox, tmp_path):
    probe = (
        'import { test } from "node:test";\n'
        'import * as nodeTest from "node:test";\n'
        'import assert from "node:assert";\n'
        'import strict from "node:assert/strict";\n'
        'import { createRequire } from "node:module";\n'
        "const require = createRequire(import.meta.url);\n"
        'test("frozen", () => {\n'
        "  assert.throws(() => { assert.strictEqual = () => {}; }, TypeError);\n"
        "  assert.throws(() => { strict.deepEqual = () => {}; }, TypeError);\n"
        '  assert.throws(() => { require("node:test").test = () => {}; }, TypeError);\n'
        "  assert.throws(() => { nodeTest.default.describe = () => {}; }, TypeError);\n"
        '  assert.throws(() => { require("node:module").Module._load = () => ({}); }, TypeError);\n'
        "});\n"
    )
    report = _run(js, sandbox, tmp_path, {"test/probe.test.js": probe})
    assert report.outcome_map()["test/probe.test.js::frozen"] == "passed", report


def test_a_test_process_that_exits_early_is_a_file_error(js, sandbox, tmp_path):
    early = (
        'import { test } from "node:test";\n'
        'test("first", () => {});\n'
        'test("second", () => { process.exit(0); });\n'
        'test("third", () => {});\n'
    )
    report = _run(js, sandbox, tmp_path, {"test/early.test.js": early})
    outcomes = report.outcome_map()
    assert report.complete and not report.tampered
    # (what the file reported before it ended may not have reached the harness: events leave
    # a test process asynchronously)
    assert "test/early.test.js::third" not in outcomes
    assert outcomes.get("test/early.test.js::first", "passed") == "passed"
    assert any("test/early.test.js" in e and "ended before" in e for e in report.collection_errors)
    # the other files are untouched
    assert outcomes["test/strings.test.js::strings > reverse flips the order"] == "passed"


def test_node_started_by_a_test_with_the_harness_flags_runs_its_own_tests(js, sandbox, tmp_path):
    """A test that starts node with its own process's flags (which name the harness's
    reporter) and a test file of its own: that node is not the harness's and runs normally."""
    inner = 'import { test } from "node:test";\ntest("inner", () => {});\n'
    probe = (
        'import { test } from "node:test";\n'
        'import assert from "node:assert/strict";\n'
        'import { spawnSync } from "node:child_process";\n'
        'import { writeFileSync } from "node:fs";\n'
        'test("a child node runs its tests", () => {\n'
        f"  writeFileSync('/tmp/inner.test.mjs', {inner!r});\n"
        "  const r = spawnSync(process.execPath, [...process.execArgv, '/tmp/inner.test.mjs'],"
        " { encoding: 'utf8', stdio: ['ignore', 'pipe', 'pipe', 'pipe'] });\n"
        "  assert.equal(r.status, 0, r.stderr);\n"
        "  assert.equal(process.argv[1], `${process.cwd()}/test/probe.test.js`);\n"
        "});\n"
    )
    report = _run(js, sandbox, tmp_path, {"test/probe.test.js": probe})
    assert report.outcome_map()["test/probe.test.js::a child node runs its tests"] == "passed", (
        report
    )
