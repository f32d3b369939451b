"""`taskmint calibrate`: reference solvers alone without models, the openai client with them;
finished attempts are kept, so a rerun (after a SIGINT, say) asks the model only for the rest."""

from __future__ import annotations

import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from taskmint.cache import ResultStore
from taskmint.cli import main
from taskmint.publish import latest_version, load_tasks
from tests.calibrate.fake_openai_server import FakeOpenAIServer, Hang, Text

pytestmark = pytest.mark.slow  # each test runs the CLI over a real seed

ROOT = Path(__file__).resolve().parents[1]


def test_calibrate_without_models_reruns_the_reference_solvers(tiny_dataset, tmp_path, capsys):
    task = load_tasks(tiny_dataset, streaming=False)[0]
    code = main(
        ["--output", str(tmp_path), "calibrate", task.instance_id, "--dataset", str(tiny_dataset)]
    )
    assert code == 0
    out = capsys.readouterr().out
    assert f"{task.instance_id}: reference/null 0/1" in out
    version = latest_version(tmp_path / "datasets" / "taskmint")
    again = {t.instance_id: t for t in load_tasks(version)}
    assert len(again) == len(load_tasks(tiny_dataset))
    assert [(c.solver_kind, c.solver_name) for c in again[task.instance_id].calibration] == [
        ("reference", "null"),
        ("reference", "oracle"),
    ]


def test_calibrate_with_a_model_adds_its_row_and_band(tiny_dataset, tmp_path, capsys):
    task = load_tasks(tiny_dataset, streaming=False)[0]
    with FakeOpenAIServer() as server:
        server.script([Text("I cannot do this.")] * 20)
        models = tmp_path / "models.toml"
        models.write_text(
            "[calibration]\ncap = 2\nmin_attempts = 2\n\n"
            f'[[model]]\nname = "quitter"\nbase_url = "{server.base_url}"\n'
            'model = "fake-coder-1"\napi_key_env = ""\n'
        )
        code = main(
            [
                "--output",
                str(tmp_path),
                "calibrate",
                task.instance_id,
                "--dataset",
                str(tiny_dataset),
                "--models",
                str(models),
            ]
        )
    assert code == 0, capsys.readouterr().err
    version = latest_version(tmp_path / "datasets" / "taskmint")
    calibrated = {t.instance_id: t for t in load_tasks(version)}[task.instance_id]
    row = {c.label: c for c in calibrated.calibration}["quitter"]
    assert (row.attempts, row.solves) == (2, 0)
    assert calibrated.band == "unsolved"
    assert not calibrated.retired
    assert Path(version).name == "v0001"


def _models_file(tmp_path: Path, base_url: str) -> Path:
    models = tmp_path / "models.toml"
    models.write_text(
        "[calibration]\ncap = 2\nmin_attempts = 2\n\n"
        f'[[model]]\nname = "quitter"\nbase_url = "{base_url}"\n'
        'model = "fake-coder-1"\napi_key_env = ""\n'
    )
    return models


def _calibrate_args(tmp_path: Path, task_id: str, dataset: Path, models: Path) -> list[str]:
    out = tmp_path / "out"
    return [
        "--output",
        str(out),
        "calibrate",
        task_id,
        "--dataset",
        str(dataset),
        "--models",
        str(models),
    ]


def _quitter_row(tmp_path: Path, task_id: str) -> tuple[int, int]:
    version = latest_version(tmp_path / "out" / "datasets" / "taskmint")
    task = {t.instance_id: t for t in load_tasks(version)}[task_id]
    row = {c.label: c for c in task.calibration}["quitter"]
    return row.attempts, row.solves


def test_a_rerun_takes_finished_attempts_from_the_store(tiny_dataset, tmp_path, capsys):
    task = load_tasks(tiny_dataset, streaming=False)[0]
    with FakeOpenAIServer() as server:
        models = _models_file(tmp_path, server.base_url)
        server.script([Text("I cannot do this.")] * 20)
        assert main(_calibrate_args(tmp_path, task.instance_id, tiny_dataset, models)) == 0
        asked = len(server.requests)
        assert asked == 4  # two attempts, each a reply and the reply to the nudge
        assert main(_calibrate_args(tmp_path, task.instance_id, tiny_dataset, models)) == 0
        assert len(server.requests) == asked, "a stored attempt was asked of the model again"
    assert _quitter_row(tmp_path, task.instance_id) == (2, 0)


def test_sigint_stops_calibrate_at_once_and_the_rerun_keeps_the_finished_attempt(
    tiny_dataset, tmp_path
):
    task = load_tasks(tiny_dataset, streaming=False)[0]
    store = ResultStore(tmp_path / "out" / "cache" / "results")
    with FakeOpenAIServer() as server:
        models = _models_file(tmp_path, server.base_url)
        # the first attempt gives up; the second waits for an answer that never comes
        server.script([Text("I cannot do this."), Text("Still no."), Hang()])
        err = tmp_path / "calibrate.err"
        with err.open("w") as fh:
            proc = subprocess.Popen(
                [
                    sys.executable,
                    "-m",
                    "taskmint.cli",
                    *_calibrate_args(tmp_path, task.instance_id, tiny_dataset, models),
                ],
                cwd=ROOT,
                stdout=subprocess.DEVNULL,
                stderr=fh,
            )
        try:
            deadline = time.monotonic() + 300
            while len(server.requests) < 3 and time.monotonic() < deadline:
                assert proc.poll() is None, err.read_text()
                time.sleep(0.05)
            assert len(store.journal()) == 1  # the finished attempt is stored
            sent = time.monotonic()
            proc.send_signal(signal.SIGINT)
            proc.wait(timeout=30)
            took = time.monotonic() - sent
        finally:
            if proc.poll() is None:
                proc.kill()
        printed = err.read_text()
        assert proc.returncode == 130, printed[-3000:]
        assert took < 10
        assert "run the same command again to resume" in printed
        assert "Traceback" not in printed

        server.script([Text("I cannot do this.")] * 20)
        assert main(_calibrate_args(tmp_path, task.instance_id, tiny_dataset, models)) == 0
        assert len(server.requests) == 2, "only the attempt that was stopped is made again"
    assert _quitter_row(tmp_path, task.instance_id) == (2, 0)
