"""The CLI is a thin shell: every command has help, errors are one line and exit 2."""

from __future__ import annotations

import io
import json
import logging
import os
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
    assert lines[1].startswith("taskmint: alpha: 3/5 candidates done, 0 accepted, 3 rejected; ETA ")
    assert "unknown" not in lines[1]  # from the candidates done: 3 of about 10
    assert "alpha: 5/5 candidates done, 2 accepted, 3 rejected" in lines[2]
    assert "alpha: 2/5 accepted in " in lines[3] and "; ETA " in lines[3]
    assert "beta: error: the original suite is unusable" in lines[-1] and lines[-1].endswith(
        "ETA 0s"
    )


def test_progress_moves_with_each_candidate_and_estimates_from_the_candidates_done():
    out = io.StringIO()
    with RunDisplay("taskmint refresh", stream=out) as display:
        display.seed_started("alpha", 0, 3)
        assert display.eta() == "unknown"  # nothing done yet
        display.candidates_done("alpha", 0, 20, 0)  # planned: 20 candidates
        for i in range(20):
            display.candidate_finished("alpha", accepted=i % 2 == 0)
        seed = display.seeds["alpha"]
        assert (seed.done, seed.accepted) == (20, 10)
    lines = [line for line in out.getvalue().splitlines() if "candidates done" in line]
    # a plain line every tenth candidate, not one each
    assert [line.split(": ", 2)[2].split(";")[0] for line in lines[-2:]] == [
        "10/20 candidates done, 5 accepted, 5 rejected",
        "20/20 candidates done, 10 accepted, 10 rejected",
    ]
    assert len(lines) == 3 and "ETA unknown" not in lines[-1]  # 40 candidates left of 2 seeds


def test_seeds_minted_at_once_keep_their_own_rows():
    """Two seeds start under their seeds file's labels and report under their names, the
    second's events first: each lands on its own row (it took the newest row before)."""
    out = io.StringIO()
    with RunDisplay("taskmint refresh", stream=out) as display:
        display.seed_started("freezegun==1.5.4", 0, 2)
        display.seed_started("marshmallow==4.3.1", 1, 2)
        display.candidates_done("freezegun", 10, 60, 6)
        display.candidates_done("marshmallow", 0, 60, 0)
        display.candidate_finished("freezegun", accepted=True)
        display.seed_finished("marshmallow", 50, 60, None)
    assert display.order == ["freezegun", "marshmallow"]
    fz, ma = display.seeds["freezegun"], display.seeds["marshmallow"]
    assert (fz.done, fz.total, fz.accepted, fz.state) == (11, 60, 7, "minting")
    assert (ma.done, ma.accepted, ma.state) == (60, 50, "done")
    assert "freezegun: 10/60 candidates done" in out.getvalue()


def test_log_lines_print_above_the_live_table_and_their_handlers_come_back():
    """Prefect's console handler and a plain one write to the terminal the table is on:
    while it runs they write through it (above the table), and get their stream back."""
    from prefect.logging.handlers import PrefectConsoleHandler

    out = io.StringIO()
    logger = logging.getLogger("taskmint.test-display")
    plain, prefect = logging.StreamHandler(out), PrefectConsoleHandler(stream=out)
    console = prefect.console
    logger.addHandler(plain)
    logger.addHandler(prefect)
    logger.propagate = False
    try:
        with RunDisplay("taskmint refresh", stream=out, live=True) as display:
            display.seed_started("alpha", 0, 1)
            assert plain.stream is not out and prefect.console is display._live.console
            logger.warning("seed beta skipped: no tests")
            display.candidates_done("alpha", 4, 9, 1)
        assert plain.stream is out and prefect.stream is out and prefect.console is console
    finally:
        logger.removeHandler(plain)
        logger.removeHandler(prefect)
    lines = out.getvalue().splitlines()
    warned = [line for line in lines if "seed beta skipped: no tests" in line]
    assert len(warned) == 2, lines  # once per handler, each a line of its own
    assert all("alpha" not in line and "│" not in line for line in warned)


def test_progress_on_a_terminal_is_a_live_table():
    out = io.StringIO()
    with RunDisplay("taskmint refresh", stream=out, live=True) as display:
        display.seed_started("alpha", 0, 1)
        display.candidates_done("alpha", 4, 9, 1)
        display.seed_finished("alpha", 1, 9, None)
    text = out.getvalue()
    assert "taskmint refresh" in text and "alpha" in text and "9/9" in text
    assert "taskmint: " not in text  # no plain lines on a terminal


_TERMINAL_RUN = """
import logging, time
from prefect.logging.configuration import setup_logging
from taskmint.cli.display import RunDisplay

setup_logging()
log = logging.getLogger("prefect.taskmint-display")  # Prefect's console handler prints it
with RunDisplay("taskmint refresh") as display:
    display.seed_started("alpha", 0, 1)
    display.candidates_done("alpha", 0, 30, 0)
    for i in range(30):
        log.warning("Task run 'mint-%03d' - Finished in state Completed()", i)
        display.candidate_finished("alpha", accepted=True)
        time.sleep(0.02)
    display.seed_finished("alpha", 30, 30, None)
"""


def test_in_a_real_terminal_the_table_stays_one_and_the_log_goes_above_it(tmp_path):
    """In a pseudo-terminal read back by a terminal emulator (pyte): Prefect's own log lines,
    set up as Prefect sets them up, scroll above one live table; the title does not repeat
    down the screen (it did 15 times on the tiny seed's refresh before)."""
    import pty
    import subprocess

    import pyte

    leader, follower = pty.openpty()
    proc = subprocess.Popen(
        [sys.executable, "-c", _TERMINAL_RUN],
        stdin=follower,
        stdout=follower,
        stderr=follower,
        env={**os.environ, "COLUMNS": "120", "LINES": "30", "TERM": "xterm"},
    )
    os.close(follower)
    chunks = []
    while True:
        try:
            chunk = os.read(leader, 65536)
        except OSError:
            break
        if not chunk:
            break
        chunks.append(chunk)
    assert proc.wait(timeout=120) == 0
    os.close(leader)
    screen = pyte.HistoryScreen(120, 30, history=2000)
    pyte.ByteStream(screen).feed(b"".join(chunks))
    scrolled = ["".join(c.data for c in row.values()).rstrip() for row in screen.history.top]
    lines = [line for line in scrolled + [r.rstrip() for r in screen.display] if line]
    assert sum("taskmint refresh (" in line for line in lines) == 1, lines
    logged = [line for line in lines if "Finished in state Completed()" in line]
    assert len(logged) == 30 and not any("│" in line or "┃" in line for line in logged)
    assert "30/30" in "\n".join(lines[-8:])  # the table is last, with the final counts
