"""The refresh flow, run for real by Prefect (ephemeral test harness), through the CLI.

One Prefect session for the whole test run (`prefect_harness`, tests/flows/conftest.py).
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from taskmint.cli import main
from taskmint.publish import latest_version, load_tasks
from taskmint.publish.report import REPORT, RUN_RECORD
from tests.browser import measure
from tests.conftest import SEEDS

pytestmark = pytest.mark.slow  # each test runs the CLI over a real seed


@pytest.fixture(scope="session")
def refreshed(prefect_harness, work_dir: Path):
    out = work_dir / "flow-output"
    import io
    from contextlib import redirect_stdout

    buf = io.StringIO()
    with redirect_stdout(buf):
        code = main(
            [
                "--output",
                str(out),
                "refresh",
                "--seeds",
                str(SEEDS / "bad_seeds.toml"),
                "--workers",
                "2",
            ]
        )
    assert code == 0
    return out, buf.getvalue()


def test_refresh_goes_on_past_bad_seeds_and_publishes(refreshed):
    out, printed = refreshed
    version = latest_version(out / "datasets" / "taskmint")
    tasks = load_tasks(version)
    seeds = {t.seed for t in tasks}
    assert seeds == {"tiny", "messy", "tinyjs"}
    assert {t.language for t in tasks} == {"python", "javascript"}
    assert sum(t.seed == "tiny" for t in tasks) >= 6
    assert "SEED ERROR" in printed  # redseed and the missing folder
    assert "no test passes reliably" in printed
    assert "does-not-exist" in printed
    assert "timeout: 1" in printed  # messy's hanging candidate
    assert "yield (accepted / candidates) by strategy" in printed
    assert f"dataset: {version} ({len(tasks)} tasks)" in printed


def test_the_refresh_leaves_its_run_record_and_a_report_the_browser_draws(refreshed, tmp_path):
    """At publish: run.json (every seed, the refused ones too, with its reason) and
    report.html, whose plots a real browser lays out with data, yield and rejections too."""
    out, _ = refreshed
    version = latest_version(out / "datasets" / "taskmint")
    run = json.loads((version / RUN_RECORD).read_text())
    rows = {s["seed"]: s for s in run["seeds"]}
    assert {"tiny", "messy", "tinyjs", "redseed", "does-not-exist"} <= set(rows)
    assert "no test passes reliably" in rows["redseed"]["error"]
    assert rows["tiny"]["accepted"] >= 6 and run["wall_time"] > 0
    # what each seed cost, and a rejected candidate named with its reason
    tiny = rows["tiny"]
    assert tiny["sandbox_runs"] >= 5 + 2 * tiny["candidates"]  # originals, broken runs
    assert 0 < tiny["prepare_seconds"] < tiny["wall_time"] and tiny["sandbox_seconds"] > 0
    assert tiny["host_seconds"] > 0 and run["peak_rss_mib"] > 0 and run["peak_child_rss_mib"] > 0
    assert rows["redseed"]["sandbox_runs"] >= 5  # a refused seed's original runs count
    (timeout,) = rows["messy"]["examples"]["timeout"]
    assert timeout.split()[0] in {"stub_body", "remove_function", "remove_block"}, timeout
    seen = measure(version / REPORT, tmp_path)
    assert seen["plots"] >= 14 and seen["empty"] == 0 and seen["drawn"] == seen["plots"], seen
    for caption in ("yield per seed", "yield per strategy", "candidates rejected", "band"):
        assert any(c.startswith(caption) for c in seen["captions"]), seen["captions"]
    page = (version / REPORT).read_text()
    assert "seed refused" in page and "reference/oracle" in page
    assert "(report.html)" in (version / "README.md").read_text()  # the card links it


def test_cli_show_workspace_and_verify(refreshed, tmp_path, capsys):
    out, _ = refreshed
    tasks = load_tasks(latest_version(out / "datasets" / "taskmint"))
    task = next(t for t in tasks if t.seed == "tiny")
    base = ["--output", str(out)]
    assert main([*base, "show", task.instance_id]) == 0
    assert task.problem_statement.splitlines()[0] in capsys.readouterr().out
    assert main([*base, "show", task.instance_id, "--json"]) == 0
    row = json.loads(capsys.readouterr().out)
    assert row["instance_id"] == task.instance_id and row["FAIL_TO_PASS"] == list(task.FAIL_TO_PASS)
    assert main([*base, "workspace", task.instance_id, str(tmp_path / "ws")]) == 0
    assert (tmp_path / "ws" / task.files[0]).exists()
    capsys.readouterr()
    (tmp_path / "gold.patch").write_text(task.patch)
    assert main([*base, "verify", task.instance_id, str(tmp_path / "gold.patch"), "--json"]) == 0
    assert json.loads(capsys.readouterr().out)["reward"] == 1.0
    (tmp_path / "empty.patch").write_text("")
    assert main([*base, "verify", task.instance_id, str(tmp_path / "empty.patch")]) == 0
    assert capsys.readouterr().out.startswith("reward: 0.0")
    assert main([*base, "show", "no-such-task"]) == 2
    assert "no task 'no-such-task'" in capsys.readouterr().err
