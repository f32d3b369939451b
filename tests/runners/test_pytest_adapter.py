"""The pytest adapter: per-test outcomes from taskmint's plugin, never from printed text."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

from taskmint.files import copy_tree
from taskmint.languages import adapter_for
from taskmint.records import RunReport
from taskmint.runners import run_tests
from taskmint.runners.adapters import inside_dir
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
    return run_tests(
        sandbox,
        ws,
        tiny_seed.manifest,
        tiny_env,
        adapter=adapter_for(tiny_seed.manifest),
        limits=LIMITS,
    )


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


def test_the_standard_librarys_test_package_is_there_and_site_packages_is_not(
    tiny_seed, tiny_env, sandbox, tmp_path
):
    """Tests import `test.support` as they do outside (zipp's, through jaraco.test); the
    interpreter's own site-packages (other projects' packages) stays hidden."""
    major, minor = tiny_env.python_version.split(".")[:2]
    lib = f"{tiny_env.interpreter_prefix}/lib/python{major}.{minor}"
    probe = (
        "import os\n"
        "from test.support import os_helper\n\n\n"
        "def test_stdlib_test_package():\n"
        "    assert callable(os_helper.temp_dir)\n\n\n"
        "def test_no_interpreter_site_packages():\n"
        f"    assert not os.listdir({lib + '/site-packages'!r})\n"
    )
    report = _run(tiny_seed, tiny_env, sandbox, tmp_path, {"tests/test_std.py": probe})
    outcomes = report.outcome_map()
    assert outcomes["tests/test_std.py::test_stdlib_test_package"] == "passed", report
    assert outcomes["tests/test_std.py::test_no_interpreter_site_packages"] == "passed"


def test_selected_ids_only(tiny_seed, tiny_env, sandbox, tmp_path):
    ws = tmp_path / "ws"
    copy_tree(Path(tiny_seed.root), ws, tiny_seed.files)
    wanted = ("tests/test_intervals.py::test_interval_set_membership[4-False]",)
    report = run_tests(
        sandbox,
        ws,
        tiny_seed.manifest,
        tiny_env,
        adapter=adapter_for(tiny_seed.manifest),
        limits=LIMITS,
        test_ids=wanted,
    )
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


FAILURES = """
import pytest

def helper(depth):
    if depth == 0:
        raise KeyError("deep " + "x" * 50)
    return helper(depth - 1)

def test_assert_rewritten():
    items = [1, 2, 3]
    assert len(items) == 4, "wrong length"

def test_deep_raise():
    helper(30)

def test_chained():
    try:
        {}["missing"]
    except KeyError as exc:
        raise ValueError("while looking up") from exc

def test_hidden_frames():
    __tracebackhide__ = True
    raise RuntimeError("all hidden")

def test_fail_plain():
    pytest.fail("no traceback wanted", pytrace=False)

def test_fail_traced():
    pytest.fail("with a traceback")

def test_missing_fixture(no_such_fixture):
    pass

@pytest.fixture
def bad_teardown():
    yield
    raise OSError("teardown broke")

def test_teardown_error(bad_teardown):
    pass

@pytest.mark.xfail(strict=True)
def test_xpass_strict():
    pass

class TestGroup:
    def test_method(self):
        raise AttributeError("no attribute here")
"""

RECORDER = """
import importlib.util, json, os
spec = importlib.util.spec_from_file_location("tm_plugin", os.environ["TM_PLUGIN"])
mod = importlib.util.module_from_spec(spec)
spec.loader.exec_module(mod)
messages = {}

def pytest_runtest_logreport(report):
    if report.failed:
        messages[report.nodeid] = mod._message(report)

def pytest_sessionfinish(session):
    with open(os.environ["TM_OUT"], "w") as fh:
        json.dump(messages, fh)
"""


def test_failure_messages_are_pytests_own(tiny_seed, tiny_env, sandbox, tmp_path):
    """The runner reports failures from the crash line only (`_crash_only`): each message is
    the one pytest's full failure repr gives, for failures of every kind."""
    report = _run(tiny_seed, tiny_env, sandbox, tmp_path, {"tests/test_f.py": FAILURES})
    got = {r.test_id: r.message for r in report.results if r.message}
    # the same file under plain pytest, whose reports keep the full repr
    plain = tmp_path / "plain"
    (plain / "tests").mkdir(parents=True)
    (plain / "tests" / "test_f.py").write_text(FAILURES)
    (plain / "recorder.py").write_text(RECORDER)
    out = tmp_path / "messages.json"
    env = {
        **os.environ,
        "TM_PLUGIN": str(inside_dir() / "taskmint_pytest_report.py"),
        "TM_OUT": str(out),
        "PYTHONPATH": str(plain),
        "PYTEST_DISABLE_PLUGIN_AUTOLOAD": "1",
    }
    subprocess.run(
        [
            sys.executable,
            "-m",
            "pytest",
            "-q",
            "--tb=no",
            "-p",
            "recorder",
            "-p",
            "no:cacheprovider",
            "tests/test_f.py",
        ],
        cwd=plain,
        env=env,
        capture_output=True,
        check=False,
    )
    want = json.loads(out.read_text())
    assert len(want) == 10, want
    # pytest's own report of a missing fixture (kept whole) names the file where it ran
    missing = "tests/test_f.py::test_missing_fixture"
    assert "fixture 'no_such_fixture' not found" in (got.pop(missing) or "")
    want.pop(missing)
    assert got == want
