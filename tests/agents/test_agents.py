"""`taskmint.agents`: the workspace an agent harness starts from, the shell's sandbox arguments,
and the agent's diff, on the session's published tiny tasks with the real sandbox and grader."""

from __future__ import annotations

import os
import shutil
import subprocess
from pathlib import Path

import pytest

from taskmint.agents import agent_workspace, bubblewrap_args, diff_of
from taskmint.consumer import runtime_for, verify, workspace
from taskmint.patches import apply_patch, file_changes
from taskmint.records import Task


@pytest.fixture(scope="module")
def task(published_tasks) -> Task:
    return next(t for t in published_tasks if t.units[0].endswith("::top_words"))


def _git(ws: Path, *args: str) -> str:
    env = {"PATH": os.environ["PATH"], "HOME": str(ws), "GIT_CONFIG_NOSYSTEM": "1"}
    done = subprocess.run(
        ["git", *args], cwd=ws, env=env, capture_output=True, text=True, check=True
    )
    return done.stdout


def _files(root: Path) -> dict[str, bytes]:
    return {
        p.relative_to(root).as_posix(): p.read_bytes()
        for p in root.rglob("*")
        if p.is_file() and ".git" not in p.relative_to(root).parts
    }


def test_the_agent_workspace_is_the_policy_view_in_a_one_commit_repository(
    task, cache_dir, tmp_path
):
    ws = agent_workspace(task, tmp_path / "ws", cache_dir=cache_dir)
    plain = workspace(task, tmp_path / "plain", cache_dir=cache_dir)
    assert _files(ws) == _files(plain) and not (plain / ".git").exists()
    assert _git(ws, "status", "--porcelain") == ""
    assert len(_git(ws, "log", "--format=%H").split()) == 1
    assert sorted(_git(ws, "ls-files").split()) == sorted(_files(plain))
    # caches a test run leaves are ignored without a .gitignore in the tree
    (ws / "tinylib" / "__pycache__").mkdir()
    (ws / "tinylib" / "__pycache__" / "text.cpython-311.pyc").write_bytes(b"\0")
    (ws / ".pytest_cache").mkdir()
    assert _git(ws, "status", "--porcelain") == ""
    # the same commit for every workspace of the task
    again = agent_workspace(task, tmp_path / "again", cache_dir=cache_dir)
    assert _git(again, "rev-parse", "HEAD") == _git(ws, "rev-parse", "HEAD")
    no_git = agent_workspace(task, tmp_path / "no-git", git=False, cache_dir=cache_dir)
    assert not (no_git / ".git").exists()


def test_diff_of_is_the_agents_change_against_a_fresh_view_and_grades(task, cache_dir, tmp_path):
    ws = agent_workspace(task, tmp_path / "ws", cache_dir=cache_dir)
    assert diff_of(ws, task, cache_dir=cache_dir) == ""
    apply_patch(ws, task.patch)
    (ws / "tinylib" / "__pycache__").mkdir()
    (ws / "tinylib" / "__pycache__" / "text.cpython-311.pyc").write_bytes(b"\0")
    _git(ws, "add", "--all")  # what the agent does to .git is not part of its diff
    diff = diff_of(ws, task, cache_dir=cache_dir)
    assert [c.path for c in file_changes(diff)] == [c.path for c in file_changes(task.patch)]
    assert verify(task, diff, cache_dir=cache_dir).reward == 1.0


def test_bubblewrap_args_give_a_shell_the_task_environment_and_nothing_else(
    task, cache_dir, tmp_path
):
    ws = agent_workspace(task, tmp_path / "ws", cache_dir=cache_dir)
    seed, env = runtime_for(task, cache_dir=cache_dir)
    script = (
        "python -c 'import sys; print(sys.prefix)'; "
        "python -m pytest --version; "
        "echo home=$HOME; "
        "ls /sys/class/net 2>/dev/null || tail -n +3 /proc/net/dev | cut -d: -f1; "
        f"test -e {seed.root} && echo seed-visible; "
        f"test -e {Path.cwd()} && echo checkout-visible; "
        f"touch {env.prefix}/x 2>/dev/null && echo env-writable; "
        "touch written && echo ws-writable"
    )
    bwrap = shutil.which("bwrap")
    assert bwrap is not None
    args = bubblewrap_args(task, cache_dir=cache_dir)
    done = subprocess.run(
        [bwrap, *args, "--bind", str(ws), str(ws), "--chdir", str(ws), "bash", "-c", script],
        capture_output=True,
        text=True,
        timeout=120,
    )
    lines = [line.strip() for line in done.stdout.splitlines()]
    assert lines[0] == env.prefix, done.stdout + done.stderr
    assert lines[1].startswith("pytest "), done.stdout + done.stderr
    assert lines[2] == "home=/tmp"
    assert lines[3:-1] == ["lo"], done.stdout  # no network but loopback
    assert lines[-1] == "ws-writable" and (ws / "written").exists()
    for leak in ("seed-visible", "checkout-visible", "env-writable"):
        assert leak not in lines, done.stdout
    with_net = bubblewrap_args(task, network=True, cache_dir=cache_dir)
    assert "--unshare-net" in args and "--unshare-net" not in with_net
