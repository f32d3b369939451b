"""Shared by tests/openenv and the episode benchmark: a mixed (Python + JavaScript) published
version, the real server started through the CLI, and an episode driven through the client."""

from __future__ import annotations

import contextlib
import os
import shutil
import signal
import subprocess
import sys
import time
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import httpx

from taskmint.consumer import workspace
from taskmint.openenv import TaskmintAction, TaskmintEnv
from taskmint.patches import apply_patch
from taskmint.records import Task
from tests.net import free_port

ROOT = Path(__file__).resolve().parents[2]


@contextlib.contextmanager
def running_server(dataset: Path, output_root: Path, log: Path) -> Iterator[str]:
    """`taskmint serve-openenv` in a child process (the real CLI, OpenEnv's app, uvicorn) on a
    free loopback port; yields its URL once /health answers, and stops it afterwards."""
    port = free_port()
    argv = [
        sys.executable,
        "-m",
        "taskmint.cli",
        "--output",
        str(output_root),
        "serve-openenv",
        "--dataset",
        str(dataset),
        "--port",
        str(port),
        "--command-timeout",
        "30",
        "--log-level",
        "warning",
    ]
    with open(log, "wb") as out:
        proc = subprocess.Popen(argv, stdout=out, stderr=subprocess.STDOUT, cwd=ROOT)
    url = f"http://127.0.0.1:{port}"
    try:
        deadline = time.monotonic() + 300
        while True:
            if proc.poll() is not None:
                raise AssertionError(f"the server exited {proc.returncode}:\n{log.read_text()}")
            with contextlib.suppress(httpx.HTTPError):
                if httpx.get(f"{url}/health", timeout=2, trust_env=False).status_code == 200:
                    break
            if time.monotonic() > deadline:
                raise AssertionError(f"the server did not answer in 300 s:\n{log.read_text()}")
            time.sleep(0.5)
        yield url
    finally:
        proc.send_signal(signal.SIGINT)
        try:
            proc.wait(timeout=60)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait()


@dataclass(frozen=True)
class Edit:
    path: str
    old: str
    new: str


def gold_edits(task: Task, cache_dir: Path, tmp: Path) -> list[Edit]:
    """The gold patch as edit_file calls: for each file it changes, the broken text and the
    fixed one (the whole file, which occurs exactly once in itself)."""
    view = workspace(task, tmp / "view", cache_dir=cache_dir)
    fixed = tmp / "fixed"
    shutil.copytree(view, fixed)
    apply_patch(fixed, task.patch)
    edits = []
    for dirpath, _, names in os.walk(fixed):
        for name in names:
            rel = (Path(dirpath) / name).relative_to(fixed).as_posix()
            before = view / rel
            old = before.read_text(encoding="utf-8") if before.exists() else ""
            new = (fixed / rel).read_text(encoding="utf-8")
            if old != new:
                edits.append(Edit(rel, old, new))
    assert edits, task.instance_id
    return edits


def step(env: object, tool: str, **arguments: object):  # type: ignore[no-untyped-def]
    """One tool call through the (sync) client."""
    return env.step(TaskmintAction(tool=tool, arguments=arguments))  # type: ignore[attr-defined]


def gold_episode(url: str, split: str, index: int, edits: list[Edit]) -> tuple[float, dict]:
    """reset, read the file, shell, the gold edits, run the visible tests, submit: the
    episode's wall seconds and what each step returned (by tool)."""
    seen: dict = {}
    start = time.monotonic()
    with TaskmintEnv(base_url=url).sync() as env:
        first = env.reset(split=split, index=index)
        seen["reset"] = first
        seen["read_file"] = step(env, "read_file", path=edits[0].path)
        seen["shell"] = step(env, "shell", command="ls -a")
        seen["edit_file"] = [
            step(env, "edit_file", path=e.path, old_text=e.old, new_text=e.new) for e in edits
        ]
        seen["run_tests"] = step(env, "run_tests")
        seen["submit"] = step(env, "submit")
        seen["state"] = env.state()
    return time.monotonic() - start, seen
