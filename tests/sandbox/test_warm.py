"""Warm runs (fork servers) of the local sandbox: what a cold run guarantees, a warm one must too.

The isolation tests shared with cold runs live in test_local.py (parametrized over both); these
are the ones specific to a long-lived server that serves one run after another.
"""

from __future__ import annotations

import os
import shutil
import signal
import time
from pathlib import Path

import pytest

from taskmint.config import Limits, SandboxConfig
from taskmint.files import copy_tree
from taskmint.languages import adapter_for
from taskmint.languages.python import PytestAdapter
from taskmint.records import Environment, SeedApp
from taskmint.runners import run_tests
from taskmint.sandbox import LocalSandbox, RunSpec
from taskmint.sandbox.warm import WarmPool
from tests.procs import children, command, kill_all, left_after, process_tree

LIMITS = Limits(wall_seconds=30)


@pytest.fixture(scope="module")
def warm_box() -> LocalSandbox:
    return LocalSandbox(SandboxConfig(warm=True))


def test_sandboxes_configured_alike_share_their_servers(warm_box, tiny_env, tmp_path):
    # The flows open a sandbox per task: the warm servers must outlive each of them.
    _run(warm_box, tiny_env, tmp_path, "first", "print(1)")
    other = LocalSandbox(SandboxConfig(warm=True))
    assert other.warm is warm_box.warm
    started = other.warm.started
    other.close()
    _run(other, tiny_env, tmp_path, "second", "print(2)")
    assert other.warm.started == started  # served by the server the first run started


def _spec(env: Environment, ws: Path, code: str) -> RunSpec:
    return RunSpec(
        argv=("/opt/venv/bin/python", "-I", "-B", "-c", code),
        workspace=str(ws),
        mounts=tuple(PytestAdapter().mounts(env)),
        env=(("PATH", "/usr/bin:/bin"), ("HOME", "/tmp")),
        limits=LIMITS,
    )


def _run(box: LocalSandbox, env: Environment, tmp_path: Path, name: str, code: str) -> str:
    ws = tmp_path / name
    ws.mkdir()
    assert box.warm is not None
    served = box.warm.served
    result = box.run(_spec(env, ws, code))
    assert box.warm.served == served + 1, "the run was not served warm"
    return result.output


def test_a_warm_run_has_no_privileges_and_its_own_namespaces(warm_box, tiny_env, tmp_path):
    code = """
import os, socket, subprocess
status = dict(line.split(":", 1) for line in open("/proc/self/status") if ":" in line)
for key in ("CapInh", "CapPrm", "CapEff", "CapBnd", "CapAmb", "NoNewPrivs", "NSpid"):
    print(key, status[key].strip())
print("uid", os.getuid(), os.geteuid(), os.getgroups())
print("pids", sorted(int(p) for p in os.listdir("/proc") if p.isdigit()))
print("spool", os.listdir("/spool"))
print("host", socket.gethostname())
try:
    import ctypes
    libc = ctypes.CDLL(None, use_errno=True)
    print("umount", libc.umount2(b"/spool", 2), ctypes.get_errno())
except OSError as exc:
    print("umount", exc)
"""
    out = _run(warm_box, tiny_env, tmp_path, "a", code)
    for key in ("CapInh", "CapPrm", "CapEff", "CapBnd", "CapAmb"):
        assert f"{key} 0000000000000000" in out, out
    assert "NoNewPrivs 1" in out
    assert "NSpid 2" in out  # PID 2 of its own namespace: its init is 1, the server is unseen
    assert "pids [1, 2]" in out, out
    assert "spool []" in out  # other runs' workspaces are covered
    assert "host sandbox" in out
    assert "umount -1 1" in out  # EPERM: the cover cannot be lifted
    uid = int(out.split("uid ", 1)[1].split()[0])
    assert uid >= 200_000


def test_one_run_leaves_nothing_for_the_next(warm_box, tiny_env, tmp_path):
    write = """
import os
for d in ("/tmp", "/dev/shm"):
    if os.path.isdir(d):
        open(os.path.join(d, "secret"), "w").write("answer")
print("WROTE")
"""
    look = """
import os
for d in ("/tmp", "/dev/shm"):
    print(d, os.path.exists(os.path.join(d, "secret")))
import sys
print("modules", "secret_module" in sys.modules)
"""
    assert "WROTE" in _run(
        warm_box,
        tiny_env,
        tmp_path,
        "w",
        write + "import sys\nsys.modules['secret_module'] = sys\n",
    )
    out = _run(warm_box, tiny_env, tmp_path, "r", look)
    assert "/tmp False" in out
    assert "/dev/shm True" not in out
    assert "modules False" in out


def test_a_workspace_copy_of_a_preloaded_package_wins(warm_box, tiny_env, tmp_path):
    # The server preloads the environment's packages (here `packaging`); a workspace holding a
    # package of the same name (say, the seed itself installed by mistake) must be imported
    # from the workspace, as in a cold run.
    ws = tmp_path / "pkg"
    (ws / "packaging").mkdir(parents=True)
    (ws / "packaging" / "__init__.py").write_text("MARK = 'workspace'\n")
    code = (
        "import sys; sys.path.insert(0, '/workspace'); import packaging; "
        "print('FROM', getattr(packaging, 'MARK', 'environment'))"
    )
    assert warm_box.warm is not None
    result = warm_box.run(_spec(tiny_env, ws, code))
    assert "FROM workspace" in result.output, result.output


def test_a_server_that_cannot_start_falls_back_to_cold(tiny_env, tmp_path):
    box = LocalSandbox(SandboxConfig(warm=True))
    box.warm = WarmPool(lambda *a: ["/bin/false", "--"])  # a "server" that exits at once
    ws = tmp_path / "ws"
    ws.mkdir()
    result = box.run(_spec(tiny_env, ws, "print('RAN', 6 * 7)"))
    assert "RAN 42" in result.output
    assert box.warm.served == 0


def test_a_failed_start_is_tried_again_after_a_while(tiny_env, tmp_path):
    box = LocalSandbox(SandboxConfig(warm=True))
    box.warm = WarmPool(
        lambda *a: ["/bin/false", "--"],
        spool_bytes=box.config.workspace_bytes,
        retry_after=1.0,
    )
    ws = tmp_path / "ws"
    ws.mkdir()
    assert "RAN 42" in box.run(_spec(tiny_env, ws, "print('RAN', 6 * 7)")).output
    box.warm.make_argv = box.server_command  # the cause of the failure is gone
    assert "RAN 42" in box.run(_spec(tiny_env, ws, "print('RAN', 6 * 7)")).output
    assert box.warm.served == 0  # still cold within `retry_after`
    time.sleep(1.1)
    assert "RAN 42" in box.run(_spec(tiny_env, ws, "print('RAN', 6 * 7)")).output
    assert box.warm.served == 1
    box.warm.close()


def _wait_dead(pid: int, timeout: float = 10.0) -> None:
    """Until `pid` is a zombie (or gone)."""
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        try:
            with open(f"/proc/{pid}/stat", encoding="utf-8") as fh:
                if fh.read().rsplit(")", 1)[1].split()[0] in ("Z", "X"):
                    return
        except FileNotFoundError:
            return
        time.sleep(0.02)
    raise AssertionError(f"{pid} still runs {timeout} s after SIGKILL")


def test_a_server_whose_bubblewrap_was_killed_leaves_nothing(tiny_env, tmp_path):
    """An idle server is stopped (SIGSTOP) and its bubblewrap killed from outside: the next run
    finds it dead, and what is left of it (the namespace's init and the server, stopped as they
    are) is killed before another server serves the run."""
    box = LocalSandbox(SandboxConfig(warm=True))
    box.warm = WarmPool(box.server_command, spool_bytes=box.config.workspace_bytes)  # its own
    before = process_tree(os.getpid())
    _run(box, tiny_env, tmp_path, "first", "print(1)")
    server = {
        pid: start
        for pid, start in process_tree(os.getpid()).items()
        if pid not in before and not any(arg.endswith("reaper.py") for arg in command(pid))
    }
    try:
        outer = [pid for pid in server if pid in children(os.getpid())]
        assert len(outer) == 1 and len(server) >= 3, server  # bubblewrap, its init, the server
        for pid in server:
            os.kill(pid, signal.SIGSTOP)
        os.kill(outer[0], signal.SIGKILL)
        _wait_dead(outer[0])  # killed, not merely sent the signal (a loaded machine is slow)
        _run(box, tiny_env, tmp_path, "second", "print(2)")
        assert box.warm.started == 2
        left = left_after(server, timeout=10)
        assert not left, f"the dead server's processes were left: {left}"
    finally:
        box.warm.close()
        kill_all(server)


def test_a_suite_gives_the_same_outcomes_warm_and_cold(
    warm_box, tiny_seed: SeedApp, tiny_env: Environment, tmp_path
):
    cold_box = LocalSandbox(SandboxConfig(warm=False))
    maps = []
    for box, name in ((cold_box, "cold"), (warm_box, "warm")):
        ws = tmp_path / name
        copy_tree(Path(tiny_seed.root), ws, tiny_seed.files)
        report = run_tests(
            box,
            ws,
            tiny_seed.manifest,
            tiny_env,
            adapter=adapter_for(tiny_seed.manifest),
            limits=LIMITS,
        )
        assert report.complete and report.nonce_ok
        maps.append(report.outcome_map())
        shutil.rmtree(ws)
    assert maps[0] == maps[1]
    assert len(maps[0]) >= 5
