"""What the verifier relies on from the local sandbox, cold and warm alike: the out-of-band
channel, read-only test files, a size-capped workspace and a memory cap per sandbox."""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest

from taskmint.config import Limits, SandboxConfig
from taskmint.languages.python import PytestAdapter
from taskmint.sandbox import LocalSandbox, RunSpec
from taskmint.sandbox.base import CGROUP_MEMORY

CAP = 16 * 1024**2
_BOXES: dict[str, LocalSandbox] = {}


@pytest.fixture(params=["cold", "warm"])
def box(request: pytest.FixtureRequest) -> LocalSandbox:
    if request.param not in _BOXES:
        _BOXES[request.param] = LocalSandbox(
            SandboxConfig(warm=request.param == "warm", workspace_bytes=CAP)
        )
    return _BOXES[request.param]


def _run(box: LocalSandbox, env, ws: Path, code: str, **spec: object):  # type: ignore[no-untyped-def]
    served = box.warm.served if box.warm is not None else 0
    result = box.run(
        RunSpec(
            argv=("/opt/venv/bin/python", "-I", "-B", "-c", code),
            workspace=str(ws),
            mounts=tuple(PytestAdapter().mounts(env)),
            env=(("PATH", "/usr/bin:/bin"), ("HOME", "/tmp")),
            limits=Limits(wall_seconds=30),
            **spec,  # type: ignore[arg-type]
        )
    )
    if box.warm is not None:  # really served warm, no silent cold fallback
        assert box.warm.served > served, result.output
    return result


def test_the_channel_is_reachable_only_through_its_descriptors(box, tiny_env, tmp_path):
    ws = tmp_path / "ws"
    ws.mkdir()
    secret = "f00d" * 8
    code = r"""
import json, os
fd_in, fd_out = (int(x) for x in os.environ.pop("TASKMINT_CHANNEL").split())
data = os.read(fd_in, 1 << 16).decode()
os.close(fd_in)
seen = ""
for p in ("/proc/self/cmdline", "/proc/self/environ", "/proc/1/cmdline", "/proc/1/environ"):
    try:
        seen += open(p, "rb").read().decode("latin-1")
    except OSError:
        pass
for d, dirs, fs in os.walk("/"):
    if d == "/":  # not the read-only system, interpreter and environment trees
        dirs[:] = [x for x in dirs if x in ("run", "tmp", "workspace", "home", "var", "etc")]
    for f in fs:
        try:
            seen += open(os.path.join(d, f), "rb").read(1 << 16).decode("latin-1")
        except OSError:
            pass
os.write(fd_out, json.dumps({"got": data, "leaked": json.loads(data)["nonce"] in seen}).encode())
"""
    report = tmp_path / "report.jsonl"
    result = _run(
        box,
        tiny_env,
        ws,
        code,
        channel_input=json.dumps({"nonce": secret}).encode(),
        channel_report=str(report),
    )
    assert result.exit_code == 0, result.output
    out = json.loads(report.read_text())
    assert json.loads(out["got"]) == {"nonce": secret}
    assert out["leaked"] is False


def test_readonly_paths_cannot_be_changed_renamed_or_deleted(box, tiny_env, tmp_path):
    ws = tmp_path / "ws"
    (ws / "tests").mkdir(parents=True)
    (ws / "tests" / "test_a.py").write_text("def test_a():\n    assert 1\n")
    (ws / "conftest.py").write_text("")
    (ws / "src.py").write_text("x = 1\n")
    code = r"""
import os
tries = {
    "write": lambda: open("/workspace/tests/test_a.py", "w").write("x"),
    "chmod": lambda: os.chmod("/workspace/tests/test_a.py", 0o666),
    "delete": lambda: os.unlink("/workspace/tests/test_a.py"),
    "rename-dir": lambda: os.rename("/workspace/tests", "/workspace/old"),
    "new-file-in-tests": lambda: open("/workspace/tests/conftest.py", "w").write("x"),
    "replace-conftest": lambda: os.replace("/workspace/src.py", "/workspace/conftest.py"),
    "edit-source": lambda: open("/workspace/src.py", "w").write("x = 2\n"),
    "new-file-at-root": lambda: open("/workspace/new.py", "w").write("y = 1\n"),
}
for name, act in tries.items():
    try:
        act()
        print(name, "ok")
    except OSError:
        print(name, "refused")
"""
    result = _run(box, tiny_env, ws, code, readonly=("tests", "conftest.py"))
    lines = dict(line.split() for line in result.output.split("\n") if line.strip())
    assert lines == {
        "write": "refused",
        "chmod": "refused",
        "delete": "refused",
        "rename-dir": "refused",
        "new-file-in-tests": "refused",
        "replace-conftest": "refused",
        "edit-source": "ok",
        "new-file-at-root": "ok",
    }, result.output
    assert (ws / "tests" / "test_a.py").read_text().startswith("def test_a")
    assert (ws / "src.py").read_text() == "x = 2\n"  # the run's changes come back


def test_the_workspace_is_size_capped(box, tiny_env, tmp_path):
    ws = tmp_path / "ws"
    ws.mkdir()
    code = r"""
import os
st = os.statvfs("/workspace")
print("size", st.f_blocks * st.f_frsize)
written = 0
try:
    for i in range(1000):
        with open(f"/workspace/f{i}", "wb") as fh:
            fh.write(b"x" * (1 << 20))
        written += 1 << 20
except OSError as exc:
    print("stopped", exc.errno)
print("written", written)
"""
    result = _run(box, tiny_env, ws, code)
    lines = dict(line.split(None, 1) for line in result.output.splitlines() if line.strip())
    assert int(lines["size"]) <= CAP
    assert lines["stopped"] == "28"  # ENOSPC
    assert int(lines["written"]) <= CAP
    assert sum(f.stat().st_size for f in ws.iterdir()) <= CAP


@pytest.mark.skipif(
    not os.access(CGROUP_MEMORY, os.W_OK), reason="no writable cgroup v1 memory controller here"
)
def test_the_whole_sandbox_shares_one_memory_cap(box, tiny_env, tmp_path):
    """Eight processes of 200 MiB each stay under a 256 MiB RLIMIT_AS apiece, but not under
    the sandbox's cap (256 MiB, plus the fork server's share when warm): some are killed."""
    ws = tmp_path / "ws"
    ws.mkdir()
    code = r"""
import os, signal, time
pids = []
for _ in range(8):
    pid = os.fork()
    if pid == 0:
        block = bytearray(200 * 1024 * 1024)
        for i in range(0, len(block), 4096):
            block[i] = 1
        time.sleep(2)
        os._exit(0)
    pids.append(pid)
killed = 0
for pid in pids:
    _, status = os.waitpid(pid, 0)
    killed += os.WIFSIGNALED(status) and os.WTERMSIG(status) == signal.SIGKILL
print("killed", killed)
"""
    served = box.warm.served if box.warm is not None else 0
    result = box.run(
        RunSpec(
            argv=("/opt/venv/bin/python", "-I", "-B", "-c", code),
            workspace=str(ws),
            mounts=tuple(PytestAdapter().mounts(tiny_env)),
            env=(("PATH", "/usr/bin:/bin"),),
            limits=Limits(wall_seconds=60, memory_bytes=256 * 1024**2),
        )
    )
    if box.warm is not None:
        assert box.warm.served > served
    assert "killed" in result.output, result.output
    assert int(result.output.split("killed", 1)[1].split()[0]) >= 1, result.output
