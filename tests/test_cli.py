"""The CLI is a thin shell: every command has help, errors are one line and exit 2."""

from __future__ import annotations

import subprocess
import sys

import pytest

from taskmint.cli import build_parser, main, prefect_defaults


def _commands() -> list[str]:
    parser = build_parser()
    sub = next(a for a in parser._actions if a.dest == "command")
    return sorted(sub.choices)  # type: ignore[union-attr]


def test_commands():
    assert _commands() == [
        "calibrate",
        "harder",
        "images",
        "refresh",
        "serve",
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
