"""The cargo runner on the tiny fixture crate, with the real toolchain in the real sandbox:
outcomes per test from nextest's JUnit and rustdoc's lines, build errors as failed tests,
selection, and what code under test cannot forge."""

from __future__ import annotations

import tempfile
from pathlib import Path

import pytest

from taskmint.config import Limits
from taskmint.errors import SandboxError
from taskmint.files import copy_tree
from taskmint.languages import profile
from taskmint.languages.rust import parse_cargo_report
from taskmint.records import Environment, RunReport, SeedApp
from taskmint.runners import run_tests
from taskmint.runners.inside.cargo_runner import doc_ids, parse_doctests
from taskmint.sandbox import LocalSandbox

LIMITS = Limits(wall_seconds=300)

ALL = {
    "doc:tinyrs::src/lib.rs - add": "passed",
    "doc:tinyrs::src/math.rs - math::factorial": "passed",
    "lib:tinyrs::math::tests::an_ignored_test": "skipped",
    "lib:tinyrs::math::tests::divide_by_zero_panics": "passed",
    "lib:tinyrs::math::tests::factorial_of_five": "passed",
    "lib:tinyrs::math::tests::factorial_of_zero_is_one": "passed",
    "lib:tinyrs::tests::adds_small_numbers": "passed",
    "lib:tinyrs::text::tests::reverse_flips_the_order": "passed",
    "lib:tinyrs::text::tests::vowels_counts_both_cases": "passed",
    "test:tinyrs/api::add_and_reverse_together": "passed",
    "test:tinyrs/api::divide_rounds_toward_zero": "passed",
}
FACTORIAL = "    (1..=n).product()\n"


def _run(
    seed: SeedApp,
    env: Environment,
    sandbox: LocalSandbox,
    tmp_path: Path,
    edits: dict[str, str] | None = None,
    test_ids: tuple[str, ...] | None = None,
    limits: Limits = LIMITS,
) -> RunReport:
    ws = tmp_path / "ws"
    copy_tree(Path(seed.root), ws, seed.files)
    for rel, text in (edits or {}).items():
        (ws / rel).write_text(text)
    return run_tests(
        sandbox,
        ws,
        seed.manifest,
        env,
        adapter=profile("rust").adapter,
        limits=limits,
        test_ids=test_ids,
    )


def _edit(seed: SeedApp, rel: str, old: str, new: str) -> dict[str, str]:
    text = (Path(seed.root) / rel).read_text()
    assert old in text
    return {rel: text.replace(old, new)}


def test_the_original_passes_with_one_outcome_per_test(rust_seed, rust_env, sandbox, tmp_path):
    report = _run(rust_seed, rust_env, sandbox, tmp_path)
    assert report.complete and report.nonce_ok and not report.tampered
    assert report.outcome_map() == ALL
    assert not report.collection_errors
    known = (Path(rust_env.prefix) / "tests.json").read_text()
    assert all(tid in known for tid in ALL)


def test_a_stubbed_body_fails_exactly_its_tests(rust_seed, rust_env, sandbox, tmp_path):
    edits = _edit(rust_seed, "src/math.rs", FACTORIAL, "    todo!()\n")
    report = _run(rust_seed, rust_env, sandbox, tmp_path, edits)
    broken = {
        "lib:tinyrs::math::tests::factorial_of_five",
        "lib:tinyrs::math::tests::factorial_of_zero_is_one",
        "doc:tinyrs::src/math.rs - math::factorial",
    }
    assert report.outcome_map() == {t: "failed" if t in broken else o for t, o in ALL.items()}
    messages = {r.test_id: r.message or "" for r in report.results}
    assert "not yet implemented" in messages["lib:tinyrs::math::tests::factorial_of_five"]


def test_a_build_error_fails_every_selected_test(rust_seed, rust_env, sandbox, tmp_path):
    edits = _edit(rust_seed, "src/text.rs", "s.chars().rev().collect()", "s.len()")
    chosen = (
        "lib:tinyrs::tests::adds_small_numbers",
        "test:tinyrs/api::divide_rounds_toward_zero",
        "doc:tinyrs::src/lib.rs - add",
    )
    report = _run(rust_seed, rust_env, sandbox, tmp_path, edits, test_ids=chosen)
    assert report.complete
    assert report.outcome_map() == dict.fromkeys(chosen, "failed")
    for result in report.results:
        assert "mismatched types" in (result.message or ""), result
    assert any("did not build" in e for e in report.collection_errors)


def test_a_build_error_in_a_whole_run_fails_the_whole_suite(rust_seed, rust_env, sandbox, tmp_path):
    edits = _edit(rust_seed, "src/text.rs", "s.chars().rev().collect()", "s.len()")
    report = _run(rust_seed, rust_env, sandbox, tmp_path, edits)
    assert report.complete
    assert set(report.outcome_map()) == set(ALL)  # the original's tests, none dropped
    assert set(report.outcome_map().values()) == {"failed"}


def test_a_removed_function_fails_the_targets_that_use_it(rust_seed, rust_env, sandbox, tmp_path):
    """The library still builds without `divide`; its unit tests and the integration test
    file that call it do not, and every test of those two targets fails. The doctests run."""
    text = (Path(rust_seed.root) / "src/math.rs").read_text()
    start = text.index("/// Integer division")
    end = text.index("#[cfg(test)]")
    report = _run(
        rust_seed, rust_env, sandbox, tmp_path, {"src/math.rs": text[:start] + text[end:]}
    )
    expected = {
        t: "passed" if t.startswith("doc:") else "failed" for t in ALL if t != "lib:tinyrs::x"
    }
    assert report.outcome_map() == expected
    errors = " ".join(report.collection_errors)
    assert "lib:tinyrs did not build" in errors and "test:tinyrs/api did not build" in errors


def test_selection_runs_only_the_selected_ids(rust_seed, rust_env, sandbox, tmp_path):
    chosen = (
        "lib:tinyrs::math::tests::factorial_of_five",
        "test:tinyrs/api::divide_rounds_toward_zero",
        "doc:tinyrs::src/lib.rs - add",
    )
    report = _run(rust_seed, rust_env, sandbox, tmp_path, test_ids=chosen)
    assert report.outcome_map() == dict.fromkeys(chosen, "passed")
    whole = _run(rust_seed, rust_env, sandbox, tmp_path / "b", test_ids=("test:tinyrs/api",))
    assert whole.outcome_map() == {t: o for t, o in ALL.items() if t.startswith("test:")}


def test_a_missing_report_is_an_infrastructure_error(rust_seed, rust_env, sandbox, tmp_path):
    with pytest.raises(SandboxError, match="no report"):
        parse_cargo_report(tmp_path / "nothing.jsonl", "n")
    # the harness cannot even start: its interpreter is refused the memory it needs
    starved = Limits(wall_seconds=60, memory_bytes=8 * 1024**2)
    with pytest.raises(SandboxError, match="no report"):
        _run(rust_seed, rust_env, sandbox, tmp_path, limits=starved)


def test_printed_libtest_lines_do_not_count(rust_seed, rust_env, sandbox, tmp_path):
    """Code under test prints what libtest and rustdoc print for a pass, then fails; and a
    doctest's own output follows rustdoc's results, where it is never read."""
    forged = (
        '    println!("test math::tests::factorial_of_five ... ok");\n'
        '    println!("test src/math.rs - math::factorial (line 5) ... ok");\n'
        '    println!("test result: ok. 1 passed; 0 failed; 0 ignored; 0 measured");\n'
        "    0\n"
    )
    report = _run(
        rust_seed, rust_env, sandbox, tmp_path, _edit(rust_seed, "src/math.rs", FACTORIAL, forged)
    )
    outcomes = report.outcome_map()
    assert outcomes["lib:tinyrs::math::tests::factorial_of_five"] == "failed"
    assert outcomes["doc:tinyrs::src/math.rs - math::factorial"] == "failed"
    assert outcomes["doc:tinyrs::src/lib.rs - add"] == "passed"
    assert not report.tampered


def test_exiting_early_is_never_a_pass(rust_seed, rust_env, sandbox, tmp_path):
    """`process::exit(0)` from the code under test ends the test's process with status 0:
    nextest alone would call it a pass; the harness wants libtest's result line."""
    edits = _edit(rust_seed, "src/math.rs", FACTORIAL, "    std::process::exit(0)\n")
    report = _run(rust_seed, rust_env, sandbox, tmp_path, edits)
    outcomes = report.outcome_map()
    assert outcomes["lib:tinyrs::math::tests::factorial_of_five"] == "failed"
    assert outcomes["lib:tinyrs::math::tests::factorial_of_zero_is_one"] == "failed"
    message = {r.test_id: r.message for r in report.results}
    assert "process::exit" in (message["lib:tinyrs::math::tests::factorial_of_five"] or "")
    assert outcomes["lib:tinyrs::tests::adds_small_numbers"] == "passed"


def test_the_runners_pipes_are_out_of_reach(rust_seed, rust_env, sandbox, tmp_path):
    """A test process cannot open the descriptors of the process that reports on it (nextest
    for a test, rustdoc for a doctest: both run non-dumpable), so it cannot write a pass into
    the report they write."""
    probe = (
        "    let ppid = std::os::unix::process::parent_id();\n"
        '    let path = format!("/proc/{ppid}/fd/1");\n'
        "    match std::fs::OpenOptions::new().write(true).open(&path) {\n"
        '        Ok(_) => panic!("opened {path}"),\n'
        '        Err(e) => panic!("refused {path}: {e}"),\n'
        "    }\n"
    )
    report = _run(
        rust_seed, rust_env, sandbox, tmp_path, _edit(rust_seed, "src/math.rs", FACTORIAL, probe)
    )
    messages = {r.test_id: r.message or "" for r in report.results}
    outcomes = report.outcome_map()
    for tid in (
        "lib:tinyrs::math::tests::factorial_of_five",
        "doc:tinyrs::src/math.rs - math::factorial",
    ):
        assert outcomes[tid] == "failed"
    assert "refused" in messages["lib:tinyrs::math::tests::factorial_of_five"]
    assert "Permission denied" in messages["lib:tinyrs::math::tests::factorial_of_five"]
    assert not report.tampered and not report.collection_errors


def test_the_warm_target_is_not_visible_to_the_tests(rust_seed, rust_env, sandbox, tmp_path):
    """The warm build's folder is mounted but cannot be listed, and the workspace's target
    holds no incremental cache (of the original, or at all) when the tests run."""
    probe = (
        '    let warm = std::fs::read_dir("/opt/rust/warm").map(|d| d.count());\n'
        '    let inc = std::fs::read_dir("/workspace/target/debug/incremental")\n'
        "        .map(|d| d.count()).unwrap_or(0);\n"
        '    panic!("warm={warm:?} incremental={inc}");\n'
    )
    chosen = ("lib:tinyrs::math::tests::factorial_of_five",)
    edits = _edit(rust_seed, "src/math.rs", FACTORIAL, probe)
    report = _run(rust_seed, rust_env, sandbox, tmp_path, edits, test_ids=chosen)
    message = report.results[0].message or ""
    assert "warm=Err(" in message and "Permission denied" in message
    assert "incremental=0" in message


def test_rustdoc_lines_are_read_only_before_the_failures():
    text = "\n".join(
        [
            '{"reason":"build-finished","success":true}',
            "",
            "running 2 tests",
            "test src/lib.rs - a (line 3) ... ok",
            "test src/lib.rs - b (line 9) - should panic ... FAILED",
            "",
            "failures:",
            "",
            "---- src/lib.rs - b (line 9) stdout ----",
            "test src/lib.rs - b (line 9) ... ok",
            "failures:",
            "    src/lib.rs - b (line 9)",
            "",
            "test result: FAILED. 1 passed; 1 failed; 0 ignored; 0 measured; 0 filtered out",
        ]
    )
    results, problem = parse_doctests(text)
    assert problem == ""
    assert results == [("src/lib.rs - a (line 3)", "passed"), ("src/lib.rs - b (line 9)", "failed")]
    twice = text.replace("running 2 tests", "running 2 tests\ntest src/lib.rs - a (line 3) ... ok")
    assert parse_doctests(twice)[1].startswith("tampered: ")
    short = text.replace("1 passed; 1 failed", "2 passed; 0 failed")
    assert parse_doctests(short)[1].startswith("tampered: ")


def test_nothing_of_a_run_is_left_in_the_workspace(rust_seed, rust_env, sandbox):
    with tempfile.TemporaryDirectory() as tmp:
        report = _run(rust_seed, rust_env, sandbox, Path(tmp), test_ids=("doc:tinyrs",))
        assert set(report.outcome_map()) == {t for t in ALL if t.startswith("doc:")}
        assert not (Path(tmp) / "ws" / "target").exists()


def test_doctest_ids_survive_edits_above_them(rust_seed, rust_env, sandbox, tmp_path):
    edits = {
        rel: "// a line more\n// and another\n" + (Path(rust_seed.root) / rel).read_text()
        for rel in ("src/lib.rs", "src/math.rs")
    }
    report = _run(rust_seed, rust_env, sandbox, tmp_path, edits, test_ids=("doc:tinyrs",))
    assert report.outcome_map() == {t: o for t, o in ALL.items() if t.startswith("doc:")}


def test_an_items_doctests_are_numbered_by_line():
    names = ["a.rs - f (line 30)", "a.rs - f (line 4)", "b.rs - f (line 9)", "a.rs - g (line 1)"]
    assert doc_ids(names) == {
        "a.rs - f (line 4)": "a.rs - f",
        "a.rs - f (line 30)": "a.rs - f #2",
        "b.rs - f (line 9)": "b.rs - f",
        "a.rs - g (line 1)": "a.rs - g",
    }


def test_processes_a_test_leaves_behind_are_killed(rust_seed, rust_env, sandbox, tmp_path):
    spawn = (
        '    std::process::Command::new("/usr/bin/sleep").arg("300")\n'
        "        .stdout(std::process::Stdio::null()).stderr(std::process::Stdio::null())\n"
        "        .spawn().unwrap();\n" + FACTORIAL
    )
    edits = _edit(rust_seed, "src/math.rs", FACTORIAL, spawn)
    chosen = ("lib:tinyrs::math::tests::factorial_of_five",)
    report = _run(rust_seed, rust_env, sandbox, tmp_path, edits, test_ids=chosen)
    assert report.outcome_map() == dict.fromkeys(chosen, "passed")
    assert "taskmint-swept 1\n" in report.output_tail
    assert report.wall_time < 60


def test_rustdoc_runs_in_two_parts_are_read_whole():
    """A 2024-edition crate's merged doctests and its standalone ones (compile_fail, ...) are
    two runs, each with its own count and summary."""
    part = "running {n} tests\n{lines}\n\ntest result: ok. {n} passed; 0 failed; 0 ignored;\n"
    text = part.format(n=1, lines="test a.rs - f (line 3) ... ok") + part.format(
        n=1, lines="test a.rs - g (line 9) - compile fail ... ok"
    )
    assert parse_doctests(text) == (
        [("a.rs - f (line 3)", "passed"), ("a.rs - g (line 9)", "passed")],
        "",
    )
    unfinished = text.rsplit("test result", 1)[0]
    assert parse_doctests(unfinished)[1] == "rustdoc's doctest run did not finish"


TAMPERING = {
    # a cargo configuration naming a test runner that passes everything, for the next phase
    ".cargo": (
        '    std::fs::create_dir_all("/workspace/.cargo").ok();\n'
        '    std::fs::write("/workspace/.cargo/config.toml",\n'
        '        "[target.x86_64-unknown-linux-gnu]\\nrunner = \\"/bin/true\\"\\n").ok();\n'
    ),
    # the sources rustdoc compiles the doctests from, rewritten under it
    "src/lib.rs": (
        '    let lib = std::fs::read_to_string("/workspace/src/lib.rs").unwrap();\n'
        '    std::fs::write("/workspace/src/lib.rs", lib.replace("(2, 3), 5", "(2, 3), 5 + 0"))'
        ".ok();\n"
    ),
    # another test binary, replaced by one that prints a pass and exits 0
    "target/debug/deps/api-": (
        '    for e in std::fs::read_dir("/workspace/target/debug/deps").unwrap() {\n'
        "        let p = e.unwrap().path();\n"
        '        if p.file_name().unwrap().to_str().unwrap().starts_with("api-")\n'
        "            && p.extension().is_none() {\n"
        '            std::fs::write(&p, "#!/bin/sh\\necho test result: ok. 1 passed;\\n").ok();\n'
        "        }\n"
        "    }\n"
    ),
}


@pytest.mark.parametrize("what", sorted(TAMPERING))
def test_changing_what_a_later_phase_reads_is_tampering(
    what, rust_seed, rust_env, sandbox, tmp_path
):
    edits = _edit(rust_seed, "src/math.rs", FACTORIAL, TAMPERING[what] + FACTORIAL)
    report = _run(rust_seed, rust_env, sandbox, tmp_path, edits)
    assert report.tampered and what in report.tampered, report.tampered
    assert report.complete
