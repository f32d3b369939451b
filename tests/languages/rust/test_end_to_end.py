"""Rust tasks end to end: minted from the bundled seed by the pipeline's own steps, published,
read back, and graded through the CLI and the consumer's `verify`: the gold patch gets 1, no
patch 0."""

from __future__ import annotations

import json

from taskmint import consumer
from taskmint.cli import main
from taskmint.consumer import load_tasks


def test_published_rust_tasks_read_back_whole(cronplan_tasks):
    _seed, _env, tasks, dataset = cronplan_tasks
    loaded = {t.instance_id: t for t in load_tasks(dataset, streaming=False)}
    assert set(loaded) == {t.instance_id for t in tasks}
    for task in tasks:
        back = loaded[task.instance_id]
        assert back.language == "rust" and back.FAIL_TO_PASS == task.FAIL_TO_PASS
        assert back.FAIL_TO_PASS and all(":" in t for t in back.FAIL_TO_PASS)
        assert back.problem_statement.strip() and len(back.hints) >= 3
        assert "todo!()" in back.breaking_patch or back.strategy != "stub_body"
        # the gate graded mutants of the gold code with the task's tests
        assert back.mutants >= 1 and back.mutation_score is not None


def test_cli_gives_the_gold_patch_1_and_no_patch_0(cronplan_tasks, work_dir, tmp_path, capsys):
    _seed, _env, tasks, dataset = cronplan_tasks
    empty = tmp_path / "empty.diff"
    empty.write_text("")
    for task in tasks[:2]:
        gold = tmp_path / f"{task.instance_id}.diff"
        gold.write_text(task.patch)
        rewards = []
        for patch in (gold, empty):
            # the session's output root: its cache holds the environment already built
            argv = ["--output", str(work_dir), "verify", task.instance_id, str(patch)]
            assert main([*argv, "--dataset", str(dataset), "--json"]) == 0
            rewards.append(json.loads(capsys.readouterr().out))
        assert rewards[0]["reward"] == 1.0, rewards[0]["reason"]
        assert rewards[1]["reward"] == 0.0 and rewards[1]["passed"] < rewards[1]["expected"]


def test_the_consumers_verify_grades_a_loaded_rust_task(cronplan_tasks, cache_dir):
    dataset = cronplan_tasks[3]
    task = next(t for t in load_tasks(dataset, streaming=False))
    assert consumer.verify(task, task.patch, cache_dir=cache_dir).reward == 1.0
    broken = consumer.verify(task, "", cache_dir=cache_dir)
    assert broken.reward == 0.0 and "did not pass" in broken.reason


def test_the_reward_service_grades_rust_tasks(cronplan_tasks, work_dir, tmp_path):
    from taskmint import RewardClient
    from tests.service.helpers import running

    _seed, _env, tasks, dataset = cronplan_tasks
    with running(dataset, work_dir, tmp_path / "serve.log") as server:
        client = RewardClient(server.url)
        task = tasks[0]
        assert client.verify(task.instance_id, task.patch).reward == 1.0
        assert client.verify(task.instance_id, "").reward == 0.0


def test_an_openenv_gold_episode_on_a_rust_task_earns_1(
    cronplan_tasks, work_dir, cache_dir, tmp_path
):
    from tests.openenv.helpers import gold_edits, gold_episode, running_server

    dataset = cronplan_tasks[3]
    task = sorted(load_tasks(dataset, streaming=False), key=lambda t: t.instance_id)[0]
    edits = gold_edits(task, cache_dir, tmp_path)
    with running_server(dataset, work_dir, tmp_path / "openenv.log") as url:
        _took, seen = gold_episode(url, "rust", 0, edits)
    assert seen["reset"].observation.language == "rust"
    tests = seen["run_tests"].observation
    assert not tests.error and "passed" in tests.output, tests.output
    submit = seen["submit"]
    assert submit.done and submit.reward == 1.0, submit.observation.output
