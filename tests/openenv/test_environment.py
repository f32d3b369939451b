"""The OpenEnv environment, served for real (`taskmint serve-openenv` in a child process:
OpenEnv's app under uvicorn) and driven only through OpenEnv's client classes: the typed
`TaskmintEnv` (an `EnvClient`) and OpenEnv's own `GenericEnvClient`. Every command runs in the
real sandbox and every reward comes from the real `verify`."""

from __future__ import annotations

import time
from pathlib import Path

import httpx
import pytest
from openenv.core.generic_client import GenericEnvClient

from taskmint.consumer import load_tasks, verify
from taskmint.openenv import TaskmintEnv
from tests.openenv.helpers import gold_edits, gold_episode, step

TOOLS = {
    "shell",
    "list_files",
    "read_file",
    "search",
    "edit_file",
    "apply_patch",
    "run_tests",
    "submit",
}


def _task(dataset: Path, split: str, index: int):  # type: ignore[no-untyped-def]
    tasks = sorted(load_tasks(dataset, streaming=False), key=lambda t: t.instance_id)
    return [t for t in tasks if split == "all" or t.language == split][index]


def test_the_task_api_lists_the_version(openenv_url: str, mixed_dataset: Path) -> None:
    tasks = load_tasks(mixed_dataset, streaming=False)
    with TaskmintEnv(base_url=openenv_url).sync() as env:
        splits = env.list_splits()
        assert splits[:1] == ["all"] and {"python", "javascript"} <= set(splits)
        assert env.num_tasks("all") == len(tasks)
        n_py = env.num_tasks("python")
        n_js = env.num_tasks("javascript")
        assert n_py == sum(t.language == "python" for t in tasks) > 0
        assert n_js == sum(t.language == "javascript" for t in tasks) > 0
        listed = env.list_tasks("all")
        assert [t["id"] for t in listed] == sorted(t.instance_id for t in tasks)
        first = env.get_task("javascript", 0)
        assert first["language"] == "javascript" and first["index"] == 0
        assert first["split"] == "javascript"
        assert set(first) == {
            "id",
            "index",
            "split",
            "seed",
            "language",
            "strategy",
            "band",
            "retired",
        }  # metadata only: no statement, patch or tests
        assert env.get_task_range("python", 1, 3) == [env.get_task("python", i) for i in (1, 2)]
        with pytest.raises(ValueError, match=r"400.*out of range"):
            env.get_task("python", n_py)
        with pytest.raises(ValueError, match=r"400.*unknown split"):
            env.num_tasks("rust")
    # the routes are OpenEnv's Task API routes
    assert httpx.get(f"{openenv_url}/list_environments", trust_env=False).json() == ["taskmint"]


@pytest.mark.parametrize("split", ["python", "javascript"])
def test_a_gold_episode_earns_verify_reward(
    split: str, openenv_url: str, mixed_dataset: Path, cache_dir: Path, tmp_path: Path, capsys
) -> None:
    task = _task(mixed_dataset, split, 0)
    edits = gold_edits(task, cache_dir, tmp_path)
    took, seen = gold_episode(openenv_url, split, 0, edits)

    first = seen["reset"].observation
    assert first.task_id == task.instance_id and first.language == split
    assert task.problem_statement.strip() in first.problem_statement
    assert {t["function"]["name"] for t in first.tools} == TOOLS
    assert not seen["reset"].done and seen["reset"].reward is None

    read = seen["read_file"].observation
    assert not read.error
    assert edits[0].old.splitlines()[0].strip() in read.output  # line-numbered text
    shell = seen["shell"].observation
    assert (
        shell.output.startswith("[exit status 0]") and edits[0].path.split("/")[0] in shell.output
    )
    assert all(not r.observation.error for r in seen["edit_file"])

    tests = seen["run_tests"].observation
    assert not tests.error and "passed" in tests.output
    assert "failed" not in tests.output and "error" not in tests.output.lower(), tests.output

    submit = seen["submit"]
    assert submit.done and submit.reward == 1.0, submit.observation.output
    assert submit.observation.info["passed"] == submit.observation.info["expected"] > 0
    state = seen["state"]
    assert state.task_id == task.instance_id and state.done and state.reward == 1.0
    assert state.step_count == 4 + len(edits) and state.episode_id

    start = time.monotonic()
    plain = verify(task, task.patch, cache_dir=cache_dir)
    plain_seconds = time.monotonic() - start
    assert plain.reward == 1.0
    with capsys.disabled():
        print(
            f"\nopenenv {split} episode ({task.instance_id}): {took:.2f} s for "
            f"{state.step_count} steps through the client (verify inside: "
            f"{submit.observation.info['verify_seconds']:.2f} s); plain verify(task, gold): "
            f"{plain_seconds:.2f} s"
        )


def test_a_wrong_fix_earns_zero(openenv_url: str, mixed_dataset: Path, cache_dir: Path, tmp_path):
    """Through OpenEnv's generic client (plain dicts): no taskmint class on the client side."""
    task = _task(mixed_dataset, "python", 1)
    edit = gold_edits(task, cache_dir, tmp_path)[0]
    with GenericEnvClient(base_url=openenv_url, message_timeout_s=900).sync() as env:
        first = env.reset(split="python", index=1)
        assert first.observation["task_id"] == task.instance_id
        wrong = {"path": edit.path, "old_text": edit.old, "new_text": edit.old + "\n# not a fix\n"}
        edited = env.step({"tool": "edit_file", "arguments": wrong})
        assert not edited.observation["error"], edited.observation
        result = env.step({"tool": "submit", "arguments": {}})
    assert result.done and result.reward == 0.0
    assert result.observation["info"]["passed"] < result.observation["info"]["expected"]


def test_commands_run_in_the_sandbox(openenv_url: str) -> None:
    with TaskmintEnv(base_url=openenv_url).sync() as env:
        env.reset(split="python", index=0)
        who = "id -u; command -v python; python -c 'import sys; print(sys.prefix)'"
        out = step(env, "shell", command=who)
        lines = out.observation.output.splitlines()
        assert lines[0] == "[exit status 0]"
        assert int(lines[1]) >= 200_000  # an unprivileged uid, not the server's
        assert lines[2] == "/opt/venv/bin/python" and lines[3] == "/opt/venv"
        net = step(
            env,
            "shell",
            command="python -c \"import socket; socket.create_connection(('1.1.1.1', 53), 3)\"",
        )
        assert "[exit status 1]" in net.observation.output
        assert "Network is unreachable" in net.observation.output, net.observation.output
        made = step(env, "shell", command="echo made-in-the-sandbox > note.txt")
        assert made.observation.output.startswith("[exit status 0]")
        read = step(env, "read_file", path="note.txt")
        assert "made-in-the-sandbox" in read.observation.output
        start = time.monotonic()
        slow = step(env, "shell", command="sleep 30", timeout=1)
        assert time.monotonic() - start < 20
        assert slow.observation.output.startswith("[timed out after 1 s")
        assert not slow.done
        env.reset(split="javascript", index=0)
        node = step(env, "shell", command="node -e 'console.log(typeof process.version)'")
        assert node.observation.output == "[exit status 0]\nstring\n", node.observation.output


def test_bad_actions_give_error_observations(openenv_url: str) -> None:
    with TaskmintEnv(base_url=openenv_url).sync() as env:
        early = step(env, "read_file", path="x")
        assert early.observation.error and "call reset first" in early.observation.output
        with pytest.raises(RuntimeError, match="unknown split"):
            env.reset(split="rust", index=0)
        with pytest.raises(RuntimeError, match="out of range"):
            env.reset(split="python", index=10_000)
        with pytest.raises(RuntimeError, match="unknown reset argument"):
            env.reset(split="python", index=0, language="python")
        env.reset(split="python", index=0)
        cases = {
            ("rm_rf", ()): "unknown tool 'rm_rf'",
            ("read_file", ()): "missing argument(s) ['path']",
            ("read_file", (("path", 3),)): "argument 'path' must be a string",
            ("read_file", (("path", "../../etc/passwd"),)): "leaves the repository",
            ("read_file", (("path", "/etc/passwd"),)): "leaves the repository",
            ("edit_file", (("path", "nope.py"), ("old_text", "a"), ("new_text", "b"))): (
                "does not exist"
            ),
            ("shell", ()): "`command` must be a non-empty string",
            ("shell", (("command", "true"), ("timeout", -1))): "`timeout` must be a positive",
            ("shell", (("command", "true"), ("cwd", "/"))): "unknown argument(s) ['cwd']",
            ("submit", (("now", True),)): "submit takes no arguments",
        }
        for (tool, args), message in cases.items():
            result = step(env, tool, **dict(args))
            assert result.observation.error, (tool, args)
            assert message in result.observation.output, (tool, result.observation.output)
            assert not result.done
        assert env.state().step_count == len(cases)
        done = step(env, "submit")
        assert done.done and done.reward == 0.0
        after = step(env, "read_file", path="x")
        assert after.observation.error and "episode is over" in after.observation.output
        assert after.done and after.reward == 0.0
    # an action that is not an action at all: OpenEnv's validation refuses it before the
    # environment sees it, and the session goes on
    with GenericEnvClient(base_url=openenv_url, message_timeout_s=900).sync() as raw:
        raw.reset(split="python", index=0)
        with pytest.raises(RuntimeError, match="VALIDATION_ERROR"):
            raw.step({"tool": "read_file", "arguments": {}, "sudo": True})
        with pytest.raises(RuntimeError, match="VALIDATION_ERROR"):
            raw.step({"arguments": {"path": "x"}})
        listed = raw.step({"tool": "list_files", "arguments": {}})
        assert not listed.observation["error"] and listed.observation["output"]
    # the server goes on serving
    assert httpx.get(f"{openenv_url}/health", trust_env=False).status_code == 200
    with TaskmintEnv(base_url=openenv_url).sync() as env:
        again = env.reset(split="javascript", index=0)
        assert again.observation.language == "javascript" and not again.done
