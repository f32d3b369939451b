"""The run's `[verify]` config grades every path the same way.

With `scan_zeroes_reward = true`, a patch that passes the tests but adds a line the static scan
flags gets 0 - from `taskmint verify`, from the reference solvers' verifier, from a model's
attempt and from `taskmint calibrate` with models - as it does from the pipeline's own grading.
The patch is the gold patch plus a new module that imports `atexit` ("registers exit handlers").
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from taskmint.calibrate.endpoint import make_client
from taskmint.calibrate.models import AgentBudget, ModelConfig
from taskmint.calibrate.rollout import run_attempt
from taskmint.cli import main
from taskmint.config import VerifyConfig
from taskmint.patches import unified_diff
from taskmint.publish import latest_version, load_tasks
from taskmint.verify import Grader
from tests.calibrate.fake_openai_server import Call, FakeOpenAIServer, Forever, ToolCalls
from tests.conftest import LIMITS

STRICT = VerifyConfig(scan_zeroes_reward=True)
BUDGET = AgentBudget(max_turns=4, request_timeout=10, max_retries=1, backoff_base=0.05)


@pytest.fixture(scope="module")
def task_and_seed(stub_task_and_seed):  # type: ignore[no-untyped-def]
    return stub_task_and_seed


@pytest.fixture(scope="module")
def flagged_patch(task_and_seed) -> str:  # type: ignore[no-untyped-def]
    """The gold patch and a new source module the scan flags (harmless: it is never imported)."""
    task, _ = task_and_seed
    package = task.units[0].split("/", 1)[0]
    return task.patch + unified_diff(f"{package}/_exit_hooks.py", None, "import atexit\n")


@pytest.fixture(scope="module")
def cli_root(tmp_path_factory) -> Path:  # type: ignore[no-untyped-def]
    """One output root for the CLI runs, so the seed's environment is built once."""
    root = tmp_path_factory.mktemp("verify-config")
    (root / "strict.toml").write_text(
        'dataset_name = "strict"\n\n[verify]\nscan_zeroes_reward = true\n'
    )
    return root


def _solver(patch: str):  # type: ignore[no-untyped-def]
    def respond(body: dict) -> ToolCalls:
        if not any(m["role"] == "tool" for m in body["messages"]):
            return ToolCalls((Call("apply_patch", {"patch": patch}),))
        return ToolCalls((Call("submit", {}),))

    return respond


def test_taskmint_verify_honours_scan_zeroes_reward(
    task_and_seed, flagged_patch, tiny_dataset, cli_root, capsys
):
    task, _ = task_and_seed
    patch = cli_root / "flagged.diff"
    patch.write_text(flagged_patch)
    argv = ["verify", task.instance_id, str(patch), "--dataset", str(tiny_dataset), "--json"]

    assert main(["--output", str(cli_root), *argv]) == 0
    lenient = json.loads(capsys.readouterr().out)
    assert lenient["reward"] == 1.0, lenient["reason"]  # the tests pass
    assert any("registers exit handlers" in f for f in lenient["findings"])

    strict_config = ["--config", str(cli_root / "strict.toml")]
    assert main([*strict_config, "--output", str(cli_root), *argv]) == 0
    strict = json.loads(capsys.readouterr().out)
    assert strict["reward"] == 0.0
    assert "static scan" in strict["reason"], strict["reason"]
    assert strict["passed"] == strict["expected"]  # the tests still passed


def test_the_grader_of_the_reference_solvers_honours_it(
    task_and_seed, flagged_patch, tiny_env, sandbox
):
    task, seed = task_and_seed
    strict = Grader(seed=seed, env=tiny_env, sandbox=sandbox, limits=LIMITS, config=STRICT)
    lenient = Grader(seed=seed, env=tiny_env, sandbox=sandbox, limits=LIMITS, config=VerifyConfig())
    assert strict(task, flagged_patch, False).reward == 0.0
    assert lenient(task, flagged_patch, False).reward == 1.0


def test_a_model_attempt_honours_it(task_and_seed, flagged_patch, tiny_env, sandbox, tmp_path):
    task, seed = task_and_seed
    with FakeOpenAIServer() as server:
        server.script([Forever(_solver(flagged_patch))])
        model = ModelConfig(name="m", base_url=server.base_url, model="m/solver", budget=BUDGET)
        rewards = {}
        for name, config in (("strict", STRICT), ("default", None)):
            with make_client(model, "unused") as client:
                attempt = run_attempt(
                    task,
                    seed=seed,
                    env=tiny_env,
                    sandbox=sandbox,
                    limits=LIMITS,
                    model=model,
                    client=client,
                    workdir=tmp_path,
                    verify_config=config,
                )
            assert attempt.stop == "submitted" and not attempt.infra_error, attempt.reason
            assert "atexit" in attempt.patch
            rewards[name] = (attempt.reward, attempt.reason)
    assert rewards["strict"][0] == 0.0 and "static scan" in rewards["strict"][1], rewards
    assert rewards["default"][0] == 1.0, rewards


def test_taskmint_calibrate_grades_model_attempts_with_it(
    task_and_seed, flagged_patch, tiny_dataset, cli_root, capsys
):
    task, _ = task_and_seed
    with FakeOpenAIServer() as server:
        server.script([Forever(_solver(flagged_patch))])
        models = cli_root / "models.toml"
        models.write_text(
            "[calibration]\ncap = 2\nmin_attempts = 2\n\n"
            f'[[model]]\nname = "solver"\nbase_url = "{server.base_url}"\n'
            'model = "m/solver"\napi_key_env = ""\n'
            "budget = { max_turns = 4, request_timeout = 10, max_retries = 1 }\n"
        )
        strict = ["--config", str(cli_root / "strict.toml"), "--output", str(cli_root)]
        argv = [task.instance_id, "--dataset", str(tiny_dataset), "--models", str(models)]
        code = main([*strict, "calibrate", *argv])
    assert code == 0, capsys.readouterr().err
    version = latest_version(cli_root / "datasets" / "strict")
    calibrated = {t.instance_id: t for t in load_tasks(version)}[task.instance_id]
    row = {c.label: c for c in calibrated.calibration}["solver"]
    assert (row.solves, row.attempts) == (0, 2)  # the flagged patch earns nothing
