"""The agent harness against a real HTTP server speaking chat completions, with the real `openai`
client, the real sandbox and the real verifier."""

from __future__ import annotations

import dataclasses
import json
import time
from pathlib import Path

import pytest

from taskmint.calibrate.endpoint import make_client
from taskmint.calibrate.models import AgentBudget, ModelConfig
from taskmint.calibrate.results import Attempt
from taskmint.calibrate.rollout import NUDGE, prompt_for, run_attempt
from taskmint.calibrate.tools import SandboxTests, Toolbox, workspace_diff
from taskmint.publish import load_seed
from taskmint.verify import policy_view
from tests.calibrate.fake_openai_server import (
    Call,
    FakeOpenAIServer,
    Hang,
    Status,
    Text,
    ToolCalls,
)
from tests.conftest import LIMITS

FAST = AgentBudget(
    max_turns=12, request_timeout=5.0, max_retries=2, backoff_base=0.05, wall_seconds=120
)


@pytest.fixture(scope="module")
def server():
    with FakeOpenAIServer() as s:
        yield s


@pytest.fixture(scope="module")
def task_and_seed(published_tasks, tiny_dataset, cache_dir):
    task = next(t for t in published_tasks if t.units[0].endswith("::top_words"))
    return task, load_seed(tiny_dataset, task.snapshot_id, cache_dir=cache_dir)


def _model(server: FakeOpenAIServer, **budget) -> ModelConfig:
    return ModelConfig(
        name="fake",
        base_url=server.base_url,
        model="fake/coder",
        price_input_per_mtok=2.0,
        price_output_per_mtok=8.0,
        budget=dataclasses.replace(FAST, **budget),
    )


def _attempt(server, task_and_seed, tiny_env, sandbox, tmp_path, **budget) -> Attempt:
    task, seed = task_and_seed
    model = _model(server, **budget)
    with make_client(model, "test-key") as client:
        return run_attempt(
            task,
            seed=seed,
            env=tiny_env,
            sandbox=sandbox,
            limits=LIMITS,
            model=model,
            client=client,
            workdir=tmp_path,
        )


def _gold_edit(patch: str) -> tuple[str, str, str]:
    """(path, old text, new text) of the gold patch's first hunk, as a search-and-replace."""
    lines = patch.splitlines(keepends=True)
    path = next(line[6:].strip() for line in lines if line.startswith("+++ b/"))
    start = next(i for i, line in enumerate(lines) if line.startswith("@@"))
    old, new = [], []
    for line in lines[start + 1 :]:
        if line.startswith("@@") or line.startswith("diff --git"):
            break
        tag, text = line[0], line[1:]
        if tag in " -":
            old.append(text)
        if tag in " +":
            new.append(text)
    return path, "".join(old), "".join(new)


def _tool_messages(body: dict) -> list[str]:
    return [m["content"] for m in body["messages"] if m["role"] == "tool"]


def test_a_model_that_reads_edits_tests_and_submits_gets_reward_one(
    server, task_and_seed, tiny_env, sandbox, tmp_path
):
    task, _ = task_and_seed
    path, old, new = _gold_edit(task.patch)
    server.script(
        [
            ToolCalls((Call("list_files", {}),)),
            ToolCalls((Call("read_file", {"path": path}),)),
            ToolCalls((Call("search", {"pattern": "def top_words"}),)),
            ToolCalls((Call("edit_file", {"path": path, "old_text": old, "new_text": new}),)),
            ToolCalls((Call("run_tests", {}),)),
            ToolCalls((Call("submit", {}),), content="Done."),
        ]
    )
    attempt = _attempt(server, task_and_seed, tiny_env, sandbox, tmp_path)
    assert attempt.stop == "submitted"
    assert attempt.reward == 1.0 and attempt.solved, attempt.reason
    assert not attempt.infra_error
    assert attempt.turns == 6 and attempt.tool_calls == 6 and attempt.tool_errors == 0
    assert attempt.model_id == "fake-coder-1"
    assert path in attempt.patch
    # what the model was shown: the problem statement, the broken file, passing tests
    first = server.requests[0]
    assert first["messages"][1]["content"] == prompt_for(task)
    assert first["model"] == "fake/coder"
    assert {t["function"]["name"] for t in first["tools"]} >= {"read_file", "submit"}
    listing, shown, found = _tool_messages(server.requests[3])
    assert path in listing and "tests/" in listing
    assert "raise NotImplementedError" in shown and "ranked = sorted" not in shown
    assert f"{path}:" in found
    test_output = _tool_messages(server.requests[5])[-1]
    assert "passed" in test_output and "failed" not in test_output, test_output
    assert server.headers[0]["authorization"] == "Bearer test-key"
    # token accounting is the sum of what the server reported
    sent = [json.dumps(b["messages"]) for b in server.requests]
    assert attempt.prompt_tokens == sum(len(s) // 4 for s in sent)
    assert attempt.completion_tokens > 0
    expected_cost = (attempt.prompt_tokens * 2.0 + attempt.completion_tokens * 8.0) / 1e6
    assert attempt.cost == pytest.approx(expected_cost, abs=1e-6)


def test_a_model_that_gives_up_gets_zero_after_one_nudge(
    server, task_and_seed, tiny_env, sandbox, tmp_path
):
    server.script([Text("I cannot solve this."), Text("Still no.")])
    attempt = _attempt(server, task_and_seed, tiny_env, sandbox, tmp_path)
    assert attempt.stop == "gave_up"
    assert attempt.reward == 0.0 and not attempt.infra_error
    assert "no changes" in attempt.reason
    assert attempt.turns == 2
    assert server.requests[1]["messages"][-1] == {"role": "user", "content": NUDGE}


def test_malformed_tool_calls_get_error_messages_and_the_attempt_goes_on(
    server, task_and_seed, tiny_env, sandbox, tmp_path
):
    task, _ = task_and_seed
    path, _, _ = _gold_edit(task.patch)
    server.script(
        [
            ToolCalls(
                (
                    Call("read_file", '{"path": "tinylib/text.py"'),  # not JSON
                    Call("rm_rf", {"path": "/"}),  # no such tool
                    Call("read_file", {}),  # missing argument
                    Call("read_file", {"path": "../../../etc/passwd"}),  # leaves the workspace
                    Call("read_file", {"path": path, "start_line": "one"}),  # wrong type
                    Call("edit_file", {"path": path, "old_text": "nowhere", "new_text": "x"}),
                    Call("apply_patch", {"patch": "not a diff at all"}),
                    Call("run_tests", {"tests": ["tests/nope.py"]}),
                    Call("read_file", '["a list"]'),
                )
            ),
            ToolCalls((Call("read_file", {"path": path, "start_line": 1, "end_line": 3}),)),
            Text("Giving up."),
            Text("Really."),
        ]
    )
    attempt = _attempt(server, task_and_seed, tiny_env, sandbox, tmp_path)
    assert attempt.stop == "gave_up" and not attempt.infra_error
    assert attempt.tool_calls == 10 and attempt.tool_errors == 9
    errors = _tool_messages(server.requests[1])
    assert len(errors) == 9 and all(e.startswith("error:") for e in errors), errors
    assert "not valid JSON" in errors[0]
    assert "unknown tool 'rm_rf'" in errors[1]
    assert "missing argument" in errors[2]
    assert "leaves the repository" in errors[3]
    assert "must be a integer" in errors[4]
    assert "does not occur" in errors[5]
    assert "no visible test matches" in errors[7]
    ok = _tool_messages(server.requests[2])[-1]
    assert ok.startswith("    1  ") and not ok.startswith("error")


def test_rate_limits_and_server_errors_are_retried_with_backoff(
    server, task_and_seed, tiny_env, sandbox, tmp_path
):
    task, _ = task_and_seed
    server.script(
        [
            Status(429, "slow down", {"retry-after": "0.2"}),
            Status(503, "overloaded"),
            ToolCalls((Call("apply_patch", {"patch": task.patch}),)),
            ToolCalls((Call("submit", {}),)),
        ]
    )
    started = time.monotonic()
    attempt = _attempt(server, task_and_seed, tiny_env, sandbox, tmp_path)
    assert attempt.retries == 2
    assert attempt.stop == "submitted" and attempt.reward == 1.0, attempt.reason
    assert not attempt.infra_error
    assert time.monotonic() - started >= 0.2  # Retry-After was honoured
    assert len(server.requests) == 4


def test_a_server_that_never_answers_times_out_as_an_infrastructure_error(
    server, task_and_seed, tiny_env, sandbox, tmp_path
):
    server.script([Hang(), Hang()])
    started = time.monotonic()
    attempt = _attempt(
        server, task_and_seed, tiny_env, sandbox, tmp_path, request_timeout=1.0, max_retries=1
    )
    elapsed = time.monotonic() - started
    assert attempt.stop == "api_error" and attempt.infra_error
    assert "timed out" in attempt.reason
    assert attempt.reward == 0.0 and attempt.turns == 0 and attempt.retries == 1
    assert 2.0 <= elapsed < 20.0
    assert len(server.requests) == 2


def test_a_refused_request_is_not_retried(server, task_and_seed, tiny_env, sandbox, tmp_path):
    server.script([Status(401, "invalid api key"), Status(401, "invalid api key")])
    attempt = _attempt(server, task_and_seed, tiny_env, sandbox, tmp_path)
    assert attempt.stop == "api_error" and attempt.infra_error
    assert "HTTP 401" in attempt.reason and "API key" in attempt.reason
    assert len(server.requests) == 1 and attempt.retries == 0


def test_the_turn_and_token_budgets_end_the_attempt(
    server, task_and_seed, tiny_env, sandbox, tmp_path
):
    read = ToolCalls((Call("read_file", {"path": "tinylib/text.py"}),))
    server.script([read] * 5)
    attempt = _attempt(server, task_and_seed, tiny_env, sandbox, tmp_path, max_turns=3)
    assert attempt.stop == "max_turns" and attempt.turns == 3 and not attempt.infra_error

    server.script([read] * 5)
    attempt = _attempt(server, task_and_seed, tiny_env, sandbox, tmp_path, max_tokens=1000)
    assert attempt.stop == "max_tokens" and attempt.turns < 5
    assert attempt.tokens >= 1000


def test_the_attempt_is_graded_even_without_submit(
    server, task_and_seed, tiny_env, sandbox, tmp_path
):
    task, _ = task_and_seed
    server.script(
        [ToolCalls((Call("apply_patch", {"patch": task.patch}),)), Text("done"), Text("done")]
    )
    attempt = _attempt(server, task_and_seed, tiny_env, sandbox, tmp_path)
    assert attempt.stop == "gave_up" and attempt.reward == 1.0, attempt.reason


def test_hints_are_given_up_to_the_level(task_and_seed):
    task, _ = task_and_seed
    assert len(task.hints) >= 2
    assert task.hints[0] not in prompt_for(task, 0)
    with_two = prompt_for(task, 2)
    assert task.hints[0] in with_two and task.hints[1] in with_two
    assert all(h not in with_two for h in task.hints[2:] if h not in task.hints[:2])


def test_the_toolbox_diff_and_test_runner_over_a_policy_view(
    task_and_seed, tiny_env, sandbox, tmp_path: Path
):
    task, seed = task_and_seed
    view = policy_view(task, seed, tmp_path / "view")
    ws = tmp_path / "ws"
    import shutil

    shutil.copytree(view, ws)
    tests = SandboxTests(
        manifest=seed.manifest,
        env=tiny_env,
        sandbox=sandbox,
        limits=LIMITS,
        visible=task.FAIL_TO_PASS + task.PASS_TO_PASS,
    )
    box = Toolbox(ws, tests=tests, max_output=400)
    before = box.call("run_tests", json.dumps({"tests": [task.FAIL_TO_PASS[0]]}))
    assert "failed" in before.content.lower() and not before.error
    assert box.call(
        "edit_file", json.dumps({"path": "new/x.py", "old_text": "", "new_text": "1\n"})
    )
    long = box.call("read_file", json.dumps({"path": "tinylib/text.py"}))
    assert long.content.endswith("ask for less]")
    assert box.call("submit", None).submitted
    diff = workspace_diff(view, ws)
    assert "new file mode" in diff and "b/new/x.py" in diff
    assert workspace_diff(view, view) == ""
