"""mini-swe-agent, an agent harness nobody here wrote, works on a taskmint task end to end.

Its own agent (`DefaultAgent`) with its own prompts (`config/mini.yaml`), its own model class
(`LitellmModel`: litellm and the openai client, bash as a tool call) and its own bubblewrap
environment run on a workspace from `taskmint.agents.agent_workspace`. The model is the
project's real HTTP server speaking chat completions (`FakeOpenAIServer`), scripted to look at
the files, rewrite the broken file through the shell, run the visible tests, write
`git diff` to a file and submit it the way mini-swe-agent's SWE-bench config does. taskmint
grades the harness's final diff (its submission) with `verify`, and the workspace's diff from
`taskmint.agents.diff_of` too: the gold rewrite gets 1, a wrong fix (the function returns a
constant) gets 0.
"""

from __future__ import annotations

import json
import shutil
import time
from pathlib import Path
from typing import Any

import pytest
import yaml

from taskmint.agents import agent_workspace, bubblewrap_args, diff_of
from taskmint.consumer import runtime_for, verify
from taskmint.patches import apply_patch, file_changes
from taskmint.records import Task
from tests.calibrate.fake_openai_server import Call, FakeOpenAIServer, ToolCalls

MARKER = "COMPLETE_TASK_AND_SUBMIT_FINAL_OUTPUT"
MODEL = "fake-coder-1"  # the id FakeOpenAIServer answers with
PRICE = {
    "input_cost_per_token": 2e-6,
    "output_cost_per_token": 8e-6,
    "cache_creation_input_token_cost": 0.0,
    "cache_read_input_token_cost": 0.0,
    "mode": "chat",
}


@pytest.fixture(scope="module")
def mini(tmp_path_factory):
    """mini-swe-agent's modules, imported quietly: no banner, its config folder in a temporary
    place, litellm's price table from the package (no download), one model attempt (a script
    that ran out must fail the test, not be retried for minutes)."""
    with pytest.MonkeyPatch.context() as mp:
        mp.setenv("MSWEA_SILENT_STARTUP", "1")
        mp.setenv("MSWEA_GLOBAL_CONFIG_DIR", str(tmp_path_factory.mktemp("mswea-config")))
        mp.setenv("LITELLM_LOCAL_MODEL_COST_MAP", "True")
        mp.setenv("MSWEA_MODEL_RETRY_STOP_AFTER_ATTEMPT", "1")
        import litellm
        import minisweagent
        from minisweagent.agents.default import DefaultAgent
        from minisweagent.environments.extra.bubblewrap import BubblewrapEnvironment
        from minisweagent.models.litellm_model import LitellmModel

        # litellm prints a banner when it first tries the bare model name the server answers
        mp.setattr(litellm, "suppress_debug_info", True)
        config = yaml.safe_load((minisweagent.package_dir / "config" / "mini.yaml").read_text())
        # a local model is priced through mini-swe-agent's model registry, as its docs say
        registry = tmp_path_factory.mktemp("mswea-registry") / "registry.json"
        registry.write_text(json.dumps({f"openai/{MODEL}": PRICE | {"litellm_provider": "openai"}}))
        yield {
            "version": minisweagent.__version__,
            "Agent": DefaultAgent,
            "Environment": BubblewrapEnvironment,
            "Model": LitellmModel,
            "config": config,
            "registry": registry,
        }


@pytest.fixture(scope="module")
def server():
    with FakeOpenAIServer() as s:
        yield s


@pytest.fixture(scope="module")
def task(published_tasks) -> Task:
    return next(t for t in published_tasks if t.units[0].endswith("::top_words"))


def _bash(*commands: str, thought: str) -> ToolCalls:
    return ToolCalls(tuple(Call("bash", {"command": c}) for c in commands), content=thought)


def _tool_outputs(messages: list[dict[str, Any]]) -> list[str]:
    return [m["extra"]["raw_output"] for m in messages if m.get("role") == "tool"]


def _episode(mini, server, task, workspace: Path, cache_dir: Path, fix: str) -> dict[str, Any]:
    """One mini-swe-agent run on `workspace` whose scripted model applies the shell command
    `fix`; returns what the harness returned, the trajectory it saved and the episode's
    seconds."""
    path = file_changes(task.patch)[0].path
    trajectory = workspace.parent / "trajectory.json"
    server.script(
        [
            _bash(
                "find . -name '*.py' -not -path './.git/*' | sort",
                thought="THOUGHT: Let me look at the layout of the project first.",
            ),
            _bash(
                f"grep -rn NotImplementedError {task.source_paths[0]}",
                f"cat {path}",
                thought="THOUGHT: Find what is missing and read that file.",
            ),
            _bash(fix, thought="THOUGHT: Implement the missing function."),
            _bash(
                "python -c 'import sys; print(sys.prefix)' && "
                "python -m pytest -q -p no:cacheprovider " + " ".join(task.test_paths),
                thought="THOUGHT: Run the tests.",
            ),
            _bash(f"git diff -- {path} > patch.txt", thought="THOUGHT: Write the patch."),
            _bash(f"echo {MARKER} && cat patch.txt", thought="THOUGHT: Submit."),
        ]
    )
    model_config = mini["config"]["model"]
    model = mini["Model"](
        model_name=f"openai/{MODEL}",
        model_kwargs={
            **model_config.get("model_kwargs", {}),
            "api_base": server.base_url,
            "api_key": "test-key",
        },
        observation_template=model_config["observation_template"],
        format_error_template=model_config["format_error_template"],
        litellm_model_registry=mini["registry"],
    )
    env = mini["Environment"](
        cwd=str(workspace),
        timeout=120,
        env=mini["config"]["environment"]["env"],
        wrapper_args=bubblewrap_args(task, cache_dir=cache_dir),
    )
    agent = mini["Agent"](
        model,
        env,
        **{**mini["config"]["agent"], "step_limit": 12, "output_path": trajectory},
    )
    start = time.monotonic()
    try:
        result = agent.run(task.problem_statement)
    finally:
        env.cleanup()
    seconds = time.monotonic() - start
    saved = json.loads(trajectory.read_text(encoding="utf-8"))  # the harness's own record
    assert saved["messages"] == json.loads(json.dumps(agent.messages))
    return {
        "result": result,
        "messages": saved["messages"],
        "seconds": seconds,
        "path": path,
        "cost": agent.cost,
        "environment_type": saved["info"]["config"]["environment_type"],
    }


def _gold_file(workspace: Path, task: Task, path: str, scratch: Path) -> str:
    shutil.copytree(workspace, scratch, ignore=shutil.ignore_patterns(".git"))
    apply_patch(scratch, task.patch)
    return (scratch / path).read_text(encoding="utf-8")


def _check_harness_ran(
    server: FakeOpenAIServer, run: dict[str, Any], task: Task, cache_dir: Path
) -> list[str]:
    """The harness sent its own prompt with the task and its bash tool, and really executed
    every scripted command in bubblewrap (their outputs are in its messages), the tests with
    the task's environment. Returns those outputs."""
    assert run["environment_type"].endswith(".extra.bubblewrap.BubblewrapEnvironment")
    first = server.requests[0]
    assert first["model"] == MODEL
    assert [t["function"]["name"] for t in first["tools"]] == ["bash"]
    assert task.problem_statement in first["messages"][1]["content"]
    assert MARKER in first["messages"][1]["content"]  # mini-swe-agent's own instructions
    assert len(server.requests) == 6
    outputs = _tool_outputs(run["messages"])
    assert len(outputs) == 6  # one per command; the submission ends the run instead
    listing, found, shown = outputs[0], outputs[1], outputs[2]
    assert run["path"].removeprefix("./") in listing and "tests/" in listing
    assert f"{run['path']}:" in found and "NotImplementedError" in shown
    assert outputs[4].startswith(runtime_for(task, cache_dir=cache_dir)[1].prefix + "\n")
    # the cost mini-swe-agent counted is the usage the server reported, at the registry's price
    usages = [m["extra"]["response"]["usage"] for m in run["messages"] if m["role"] == "assistant"]
    assert [u["prompt_tokens"] for u in usages] == [
        len(json.dumps(body["messages"])) // 4 for body in server.requests
    ]
    expected = sum(
        u["prompt_tokens"] * PRICE["input_cost_per_token"]
        + u["completion_tokens"] * PRICE["output_cost_per_token"]
        for u in usages
    )
    assert run["cost"] == pytest.approx(expected) and run["cost"] > 0
    return outputs


def _report(name: str, run: dict[str, Any], verify_seconds: float, mini) -> None:
    print(
        f"\nmini-swe-agent {mini['version']} {name}: episode {run['seconds']:.2f} s "
        f"({len(run['messages'])} messages), verify {verify_seconds:.2f} s"
    )


def test_the_scripted_solve_through_mini_swe_agent_gets_reward_one(
    mini, server, task, tmp_path, cache_dir
):
    ws = agent_workspace(task, tmp_path / "ws", cache_dir=cache_dir)
    path = file_changes(task.patch)[0].path
    broken = (ws / path).read_text(encoding="utf-8")
    gold = _gold_file(ws, task, path, tmp_path / "gold")
    assert gold != broken and "TASKMINT_EOF" not in gold
    run = _episode(
        mini, server, task, ws, cache_dir, f"cat > {path} <<'TASKMINT_EOF'\n{gold}TASKMINT_EOF"
    )

    outputs = _check_harness_ran(server, run, task, cache_dir)
    tests_out = outputs[4]
    assert "passed" in tests_out and "failed" not in tests_out, tests_out
    assert (ws / path).read_text(encoding="utf-8") == gold  # the shell in bwrap wrote it

    result = run["result"]
    assert result["exit_status"] == "Submitted", result
    submission = result["submission"]
    assert submission.startswith(f"diff --git a/{path} b/{path}\n"), submission
    assert submission == (ws / "patch.txt").read_text(encoding="utf-8")

    start = time.monotonic()
    reward = verify(task, submission, cache_dir=cache_dir)
    verify_seconds = time.monotonic() - start
    assert reward.reward == 1.0, reward.reason

    # taskmint's own diff of the workspace (not the agent's word) grades the same; the
    # patch.txt the agent left at the root is outside the source paths and dropped
    ours = diff_of(ws, task, cache_dir=cache_dir)
    assert {c.path for c in file_changes(ours)} == {path, "patch.txt"}
    again = verify(task, ours, cache_dir=cache_dir)
    assert again.reward == 1.0, again.reason
    assert [r.split(":")[0] for r in again.rejected_paths] == ["patch.txt"], again.rejected_paths
    _report("scripted solve", run, verify_seconds, mini)


def test_a_wrong_fix_through_mini_swe_agent_gets_reward_zero(
    mini, server, task, tmp_path, cache_dir
):
    ws = agent_workspace(task, tmp_path / "ws", cache_dir=cache_dir)
    path = file_changes(task.patch)[0].path
    broken = (ws / path).read_text(encoding="utf-8")
    # the stub's `raise NotImplementedError(...)` becomes `return []`: a constant
    wrong = f"sed -i 's/raise NotImplementedError.*/return []/' {path}"
    run = _episode(mini, server, task, ws, cache_dir, wrong)

    outputs = _check_harness_ran(server, run, task, cache_dir)
    tests_out = outputs[4]
    assert "failed" in tests_out, tests_out
    edited = (ws / path).read_text(encoding="utf-8")
    assert edited != broken and "return []" in edited and "NotImplementedError" not in edited

    result = run["result"]
    assert result["exit_status"] == "Submitted", result
    submission = result["submission"]
    assert "+    return []" in submission, submission

    start = time.monotonic()
    reward = verify(task, submission, cache_dir=cache_dir)
    verify_seconds = time.monotonic() - start
    assert reward.reward == 0.0
    assert reward.outcomes and not reward.tampered, reward.reason  # graded, failing tests
    again = verify(task, diff_of(ws, task, cache_dir=cache_dir), cache_dir=cache_dir)
    assert again.reward == 0.0
    _report("wrong fix", run, verify_seconds, mini)
