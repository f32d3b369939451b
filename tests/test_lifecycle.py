"""The reaper (`taskmint/reaper.py`): when its owner's pipe closes, it kills the process groups
and removes the folders it was told of, and leaves alone what is not what it was told; an owner
killed outright with a stopped sandbox leaves nothing of it."""

from __future__ import annotations

import os
import pickle
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from taskmint import reaper
from taskmint.config import Limits
from taskmint.languages.python import PytestAdapter
from taskmint.lifecycle import process_start_time
from taskmint.records import Environment
from taskmint.sandbox import RunSpec
from tests.procs import command, kill_all, left_after, process_tree

SCRIPT = Path(reaper.__file__)


def _alive(proc: subprocess.Popen[bytes]) -> bool:
    return proc.poll() is None


def test_the_reaper_cleans_up_when_its_owner_is_gone(tmp_path: Path) -> None:
    folder = tmp_path / "scratch"
    (folder / "deep").mkdir(parents=True)
    (folder / "deep" / "f").write_text("x")
    kept = tmp_path / "kept"
    kept.mkdir()
    group = subprocess.Popen(["sleep", "60"], start_new_session=True)
    other = subprocess.Popen(["sleep", "60"], start_new_session=True)
    lines = [
        f"group\t{group.pid}\t{process_start_time(group.pid)}",
        f"group\t{other.pid}\t0",  # not the process that started then: a reused pid
        f"path\t{folder}",
        f"path\t{tmp_path / 'never-made'}",
    ]
    try:
        subprocess.run(
            [sys.executable, "-I", str(SCRIPT), "1"],
            input="\n".join(lines).encode() + b"\n",  # then end of input: the owner is gone
            timeout=60,
            check=True,
        )
        deadline = time.monotonic() + 10
        while _alive(group) and time.monotonic() < deadline:
            time.sleep(0.05)
        assert not _alive(group)
        assert _alive(other)
        assert not folder.exists() and kept.is_dir()
    finally:
        group.kill()
        other.kill()
        group.wait()
        other.wait()


def test_a_long_lived_owners_reaper_forgets_what_is_gone(tmp_path: Path) -> None:
    gone, live = tmp_path / "gone", tmp_path / "live"
    live.mkdir()
    paths = {str(gone): None, str(live): None}
    groups = {999_999_999: "1"}  # no such process
    reaper._prune(groups, paths)
    assert paths == {str(live): None} and groups == {}


# The owner: a taskmint process running one sandboxed run (the spec, pickled, in argv[1]).
_OWNER = """
import pickle, sys
from taskmint.config import SandboxConfig
from taskmint.sandbox import LocalSandbox
spec = pickle.loads(open(sys.argv[1], "rb").read())
LocalSandbox(SandboxConfig(warm=spec.warm)).run(spec)
"""


@pytest.mark.parametrize("warm", [True, False], ids=["fork-server", "cold"])
def test_a_killed_owners_stopped_sandbox_is_reaped(
    tiny_env: Environment, tmp_path: Path, warm: bool
) -> None:
    """Every process of a sandbox (bubblewrap, the namespace's init, a fork server and the run
    in it) is stopped (SIGSTOP), then its owner is SIGKILLed: the reaper kills the sandbox,
    stopped as it is, and nothing of it is left."""
    ws = tmp_path / "ws"
    ws.mkdir()
    spec = RunSpec(
        argv=("/opt/venv/bin/python", "-I", "-B", "-c", "import time; time.sleep(600)"),
        workspace=str(ws),
        mounts=tuple(PytestAdapter().mounts(tiny_env)),
        env=(("PATH", "/usr/bin:/bin"), ("HOME", "/tmp")),
        limits=Limits(wall_seconds=600),
        warm=warm,
    )
    (tmp_path / "spec").write_bytes(pickle.dumps(spec))
    owner = subprocess.Popen([sys.executable, "-c", _OWNER, str(tmp_path / "spec")])
    tree: dict[int, str] = {}
    try:
        # Until the run's code runs: with a fork server, the server, its run's first process,
        # the run's init and the code; cold, the code.
        interpreters = 4 if warm else 1
        deadline = time.monotonic() + 120
        while True:
            tree = process_tree(owner.pid)
            found = [pid for pid in tree if command(pid)[:1] == [spec.argv[0]]]
            if len(found) >= interpreters:
                break
            assert owner.poll() is None and time.monotonic() < deadline, "the run did not start"
            time.sleep(0.1)
        reapers = {pid for pid in tree if str(SCRIPT) in command(pid)}
        assert len(reapers) == 1, tree
        sandbox = {pid: start for pid, start in tree.items() if pid not in reapers}
        for pid in sandbox:
            os.kill(pid, signal.SIGSTOP)
        owner.kill()
        owner.wait()
        assert not left_after({pid: tree[pid] for pid in reapers}, timeout=60), "the reaper hung"
        left = left_after(sandbox, timeout=5)
        assert not left, f"the stopped sandbox outlived its owner and the reaper: {left}"
    finally:
        owner.kill()
        owner.wait()
        kill_all(tree)
