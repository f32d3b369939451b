"""The pytest adapter: per-test outcomes from taskmint's plugin, never from printed text."""

from __future__ import annotations

from pathlib import Path

from taskmint.acquire.snapshot import copy_tree
from taskmint.records import RunReport
from taskmint.runners import run_tests
from taskmint.runners.report import parse_pytest_report
from tests.conftest import LIMITS

TRICKY = """
import pytest

def test_passes():
    print("tests/test_x.py::test_fails PASSED")  # printed lies are not read

def test_fails():
    assert 1 == 2, "one is not two"

@pytest.fixture
def broken():
    raise RuntimeError("fixture exploded")

def test_setup_error(broken):
    pass

@pytest.mark.skip(reason="not today")
def test_skipped():
    pass

@pytest.mark.xfail(reason="known")
def test_xfail():
    assert False

@pytest.mark.parametrize("value", ["a b", "c[d]"])
def test_odd_ids(value):
    assert value
"""


def _run(tiny_seed, tiny_env, sandbox, tmp_path: Path, files: dict[str, str]) -> RunReport:
    ws = tmp_path / "ws"
    copy_tree(Path(tiny_seed.root), ws, tiny_seed.files)
    for rel, text in files.items():
        (ws / rel).write_text(text)
    return run_tests(sandbox, ws, tiny_seed.manifest, tiny_env, limits=LIMITS)


def test_outcomes_of_every_kind(tiny_seed, tiny_env, sandbox, tmp_path):
    report = _run(tiny_seed, tiny_env, sandbox, tmp_path, {"tests/test_x.py": TRICKY})
    outcomes = report.outcome_map()
    assert report.complete and report.nonce_ok
    assert outcomes["tests/test_x.py::test_passes"] == "passed"
    assert outcomes["tests/test_x.py::test_fails"] == "failed"
    assert outcomes["tests/test_x.py::test_setup_error"] == "error"
    assert outcomes["tests/test_x.py::test_skipped"] == "skipped"
    assert outcomes["tests/test_x.py::test_xfail"] == "xfailed"
    assert outcomes["tests/test_x.py::test_odd_ids[a b]"] == "passed"
    assert outcomes["tests/test_x.py::test_odd_ids[c[d]]"] == "passed"
    failed = next(r for r in report.results if r.test_id.endswith("test_fails"))
    assert "one is not two" in (failed.message or "")


def test_collection_errors_are_recorded(tiny_seed, tiny_env, sandbox, tmp_path):
    report = _run(
        tiny_seed, tiny_env, sandbox, tmp_path, {"tests/test_bad.py": "import no_such_module\n"}
    )
    assert any("tests/test_bad.py" in e for e in report.collection_errors)
    # the other files still ran
    assert report.outcome_map()["tests/test_text.py::test_word_counts_counts_repeats"] == "passed"


def test_selected_ids_only(tiny_seed, tiny_env, sandbox, tmp_path):
    ws = tmp_path / "ws"
    copy_tree(Path(tiny_seed.root), ws, tiny_seed.files)
    wanted = ("tests/test_intervals.py::test_interval_set_membership[4-False]",)
    report = run_tests(sandbox, ws, tiny_seed.manifest, tiny_env, limits=LIMITS, test_ids=wanted)
    assert report.outcome_map() == {wanted[0]: "passed"}


def test_report_records_with_a_wrong_nonce_are_flagged(tmp_path):
    path = tmp_path / "report.jsonl"
    path.write_text(
        '{"type": "phase", "nodeid": "t::a", "when": "call", "outcome": "passed", '
        '"nonce": "good"}\n'
        '{"type": "phase", "nodeid": "t::b", "when": "call", "outcome": "passed", '
        '"nonce": "forged"}\n'
        "not json\n"
        '{"type": "finish", "exitstatus": 0, "nonce": "good"}\n'
    )
    report = parse_pytest_report(path, "good")
    assert report.outcome_map() == {"t::a": "passed"}
    assert report.complete
    assert not report.nonce_ok


def test_a_run_that_stops_early_is_incomplete(tiny_seed, tiny_env, sandbox, tmp_path):
    killer = "import os\n\ndef test_exit():\n    os._exit(0)\n\ndef test_after():\n    pass\n"
    report = _run(tiny_seed, tiny_env, sandbox, tmp_path, {"tests/test_zz.py": killer})
    assert not report.complete
    assert report.outcome_map().get("tests/test_zz.py::test_after") == "missing"
