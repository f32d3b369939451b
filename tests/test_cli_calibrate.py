"""`taskmint calibrate`: reference solvers alone without models, the openai client with them."""

from __future__ import annotations

from pathlib import Path

from taskmint.cli import main
from taskmint.publish import latest_version, load_tasks
from tests.calibrate.fake_openai_server import FakeOpenAIServer, Text


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
    assert [c.model for c in again[task.instance_id].calibration] == [
        "reference/null",
        "reference/oracle",
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
    row = {c.model: c for c in calibrated.calibration}["quitter"]
    assert (row.attempts, row.solves) == (2, 0)
    assert calibrated.band == "unsolved"
    assert not calibrated.retired
    assert Path(version).name == "v0001"
