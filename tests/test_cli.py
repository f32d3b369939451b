"""The CLI is a thin shell: every command has help, errors are one line and exit 2."""

from __future__ import annotations

import io
import json
import subprocess
import sys

import pytest

from taskmint.cli import build_parser, main, prefect_defaults
from taskmint.cli.display import RunDisplay


def _commands() -> list[str]:
    parser = build_parser()
    sub = next(a for a in parser._actions if a.dest == "command")
    return sorted(sub.choices)  # type: ignore[union-attr]


def test_commands():
    assert _commands() == [
        "calibrate",
        "export",
        "harder",
        "images",
        "list",
        "refresh",
        "report",
        "serve",
        "serve-openenv",
        "serve-reward",
        "show",
        "verify",
        "workspace",
    ]


@pytest.mark.parametrize("command", _commands())
def test_every_command_has_help(command, capsys):
    with pytest.raises(SystemExit) as exc:
        main([command, "--help"])
    assert exc.value.code == 0
    out = capsys.readouterr().out
    assert "usage: taskmint" in out and len(out.splitlines()) > 3


def test_console_script_help():
    out = subprocess.run(
        [sys.executable, "-m", "taskmint.cli", "--help"], capture_output=True, text=True, check=True
    ).stdout
    for command in _commands():
        assert command in out


def test_missing_dataset_is_a_clear_error(tmp_path, capsys):
    assert main(["--output", str(tmp_path), "show", "x"]) == 2
    err = capsys.readouterr().err
    assert err.startswith("taskmint: error: no published version") and "make demo" in err


def test_prefect_gets_time_to_start_its_server_unless_the_user_said_otherwise():
    env: dict[str, str] = {}
    prefect_defaults(env)
    assert env["PREFECT_SERVER_EPHEMERAL_STARTUP_TIMEOUT_SECONDS"] == "120"
    mine = {"PREFECT_SERVER_EPHEMERAL_STARTUP_TIMEOUT_SECONDS": "7"}
    prefect_defaults(mine)
    assert mine["PREFECT_SERVER_EPHEMERAL_STARTUP_TIMEOUT_SECONDS"] == "7"


def test_list_filters_a_version_and_prints_json(tiny_dataset, tiny_tasks, capsys):
    assert main(["list", "--dataset", str(tiny_dataset), "--json"]) == 0
    rows = json.loads(capsys.readouterr().out)
    assert sorted(r["instance_id"] for r in rows) == sorted(t.instance_id for t in tiny_tasks)
    strategy = tiny_tasks[0].strategy
    assert main(["list", "--dataset", str(tiny_dataset), "--strategy", strategy]) == 0
    captured = capsys.readouterr()
    lines = captured.out.splitlines()
    assert len(lines) == sum(t.strategy == strategy for t in tiny_tasks)
    assert all(f"  {strategy}  " in line for line in lines)
    assert main(["list", "--dataset", str(tiny_dataset), "--language", "rust"]) == 0
    assert capsys.readouterr().out == ""


def test_show_and_verify_print_json(tiny_dataset, tiny_tasks, tmp_path, capsys):
    task = tiny_tasks[0]
    assert (
        main(
            [
                "--output",
                str(tmp_path),
                "show",
                task.instance_id,
                "--dataset",
                str(tiny_dataset),
                "--json",
            ]
        )
        == 0
    )
    assert json.loads(capsys.readouterr().out)["instance_id"] == task.instance_id
    scored = next(t for t in tiny_tasks if t.mutation_score is not None)
    show = ["--output", str(tmp_path), "show", scored.instance_id, "--dataset", str(tiny_dataset)]
    assert main(show) == 0
    assert (
        f"test strength: mutation score {scored.mutation_score:.2f} ({scored.mutants_killed} of "
        f"{scored.mutants} mutants of the gold code killed)"
    ) in capsys.readouterr().out
    empty = tmp_path / "empty.diff"
    empty.write_text("")
    code = main(
        [
            "--output",
            str(tmp_path),
            "verify",
            task.instance_id,
            str(empty),
            "--dataset",
            str(tiny_dataset),
            "--json",
        ]
    )
    assert code == 0
    reward = json.loads(capsys.readouterr().out)
    assert reward["reward"] == 0.0 and reward["expected"] >= 1


def test_progress_off_a_terminal_is_plain_lines_with_an_eta():
    out = io.StringIO()
    with RunDisplay("taskmint refresh", stream=out) as display:
        display.seed_started("alpha", 0, 2)
        display.candidates_done("alpha", 3, 5, 0)
        display.candidates_done("alpha", 5, 5, 2)
        display.seed_finished("alpha", 2, 5, None)
        display.seed_started("beta", 1, 2)
        display.seed_finished("beta", 0, 0, "the original suite is unusable")
    lines = out.getvalue().splitlines()
    assert lines[0] == "taskmint: [1/2] alpha: preparing"
    assert lines[1].startswith(
        "taskmint: alpha: 3/5 candidates done, 0 accepted, 3 rejected; ETA unknown"
    )
    assert "alpha: 5/5 candidates done, 2 accepted, 3 rejected" in lines[2]
    assert "alpha: 2/5 accepted in " in lines[3] and "; ETA " in lines[3]
    assert "beta: error: the original suite is unusable" in lines[-1] and lines[-1].endswith(
        "ETA 0s"
    )


def test_progress_on_a_terminal_is_a_live_table():
    out = io.StringIO()
    with RunDisplay("taskmint refresh", stream=out, live=True) as display:
        display.seed_started("alpha", 0, 1)
        display.candidates_done("alpha", 4, 9, 1)
        display.seed_finished("alpha", 1, 9, None)
    text = out.getvalue()
    assert "taskmint refresh" in text and "alpha" in text and "9/9" in text
    assert "taskmint: " not in text  # no plain lines on a terminal
