"""verify(task, patch): the reward, the policy view, and patch filtering."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from taskmint.consumer import verify
from taskmint.patches import unified_diff
from taskmint.publish import load_seed
from taskmint.verify import filter_patch, policy_view
from tests.conftest import LIMITS


@pytest.fixture(scope="module")
def task_and_seed(published_tasks, tiny_dataset, cache_dir):
    task = next(
        t
        for t in published_tasks
        if t.units[0].endswith("::top_words") and t.strategy == "stub_body"
    )
    return task, load_seed(tiny_dataset, task.snapshot_id, cache_dir=cache_dir)


def _verify(task, seed, env, sandbox, patch):
    return verify(task, patch, seed=seed, env=env, sandbox=sandbox, limits=LIMITS)


def test_every_published_task_rewards_oracle_and_not_null(
    published_tasks, tiny_dataset, cache_dir, tiny_env, sandbox
):
    assert len(published_tasks) >= 8
    for task in published_tasks:
        seed = load_seed(tiny_dataset, task.snapshot_id, cache_dir=cache_dir)
        assert task.FAIL_TO_PASS
        assert _verify(task, seed, tiny_env, sandbox, task.patch).reward == 1.0
        assert _verify(task, seed, tiny_env, sandbox, "").reward == 0.0


def test_policy_view_is_the_broken_tree_without_history(task_and_seed, tmp_path):
    task, seed = task_and_seed
    view = policy_view(task, seed, tmp_path / "view")
    text = (view / "tinylib" / "text.py").read_text()
    assert "raise NotImplementedError" in text
    assert "ranked = sorted" not in text
    names = {p.name for p in view.rglob("*")}
    assert not names & {".git", "__pycache__", ".pytest_cache"}
    assert {int(os.stat(p).st_mtime) for p in view.rglob("*")} == {946684800}


def test_an_honest_patch_written_by_hand_is_rewarded(task_and_seed, tiny_env, sandbox, tmp_path):
    task, seed = task_and_seed
    view = policy_view(task, seed, tmp_path / "view")
    path = view / "tinylib" / "text.py"
    before = path.read_text()
    after = before.replace(
        '    """The `n` most frequent words, ties broken alphabetically."""\n'
        "    raise NotImplementedError\n",
        '    """The `n` most frequent words, ties broken alphabetically."""\n'
        "    counts = word_counts(text)\n"
        "    order = sorted(counts, key=lambda w: (-counts[w], w))\n"
        "    return order[:n]\n",
    )
    assert after != before
    reward = _verify(task, seed, tiny_env, sandbox, unified_diff("tinylib/text.py", before, after))
    assert reward.reward == 1.0, reward.reason
    assert reward.passed == reward.expected == len(task.FAIL_TO_PASS) + len(task.PASS_TO_PASS)


def test_edits_to_tests_and_config_are_dropped(task_and_seed, tiny_env, sandbox, tmp_path):
    task, seed = task_and_seed
    view = policy_view(task, seed, tmp_path / "view")
    test_file = "tests/test_text.py"
    old = (view / test_file).read_text()
    cheat = unified_diff(
        test_file, old, old.replace("assert top_words", "assert True or top_words")
    )
    cheat += unified_diff("tests/conftest.py", None, "import pytest\n")
    cheat += unified_diff("conftest.py", None, "def pytest_runtest_call(item): pass\n")
    kept, rejected = filter_patch(cheat, task)
    assert kept == ""
    assert len(rejected) == 3
    reward = _verify(task, seed, tiny_env, sandbox, cheat)
    assert reward.reward == 0.0
    assert len(reward.rejected_paths) == 3


def test_a_patch_that_does_not_apply_gets_zero_with_a_reason(task_and_seed, tiny_env, sandbox):
    task, seed = task_and_seed
    bad = unified_diff("tinylib/text.py", "nothing like this\n", "at all\n")
    reward = _verify(task, seed, tiny_env, sandbox, bad)
    assert reward.reward == 0.0
    assert "does not apply" in reward.reason


def test_exiting_early_is_not_a_pass(task_and_seed, tiny_env, sandbox, tmp_path):
    task, seed = task_and_seed
    view = policy_view(task, seed, tmp_path / "view")
    path = view / "tinylib" / "text.py"
    before = path.read_text()
    after = before.replace("import re\n", "import os\nimport re\nos._exit(0)\n", 1)
    reward = _verify(task, seed, tiny_env, sandbox, unified_diff("tinylib/text.py", before, after))
    assert reward.reward == 0.0


def test_the_same_patch_gives_the_same_reward(task_and_seed, tiny_env, sandbox):
    task, seed = task_and_seed
    rewards = {(_verify(task, seed, tiny_env, sandbox, task.patch).reward) for _ in range(3)}
    assert rewards == {1.0}


def test_policy_view_refuses_a_non_empty_folder(task_and_seed, tmp_path: Path):
    task, seed = task_and_seed
    (tmp_path / "x").write_text("hi")
    with pytest.raises(FileExistsError):
        policy_view(task, seed, tmp_path)
