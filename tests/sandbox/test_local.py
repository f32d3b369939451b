"""The local bubblewrap sandbox, tried for real: every isolation test runs against a cold run
(a fresh bubblewrap per command) and a warm one (a fork server's child, see `sandbox.warm`)."""

from __future__ import annotations

import os
import socket
import sys
import threading
import time
from pathlib import Path

import pytest

from taskmint.config import Limits, SandboxConfig
from taskmint.errors import SandboxUnavailableError
from taskmint.languages.python import PytestAdapter
from taskmint.records import Environment
from taskmint.sandbox import FakeSandbox, LocalSandbox, RunResult, RunSpec, bwrap_path

REPO = Path(__file__).resolve().parents[2]


_BOXES: dict[str, LocalSandbox] = {}


@pytest.fixture(params=["cold", "warm"])
def box(request: pytest.FixtureRequest):  # type: ignore[no-untyped-def]
    """A local sandbox that runs every command cold, or one that serves it warm."""
    if request.param not in _BOXES:
        _BOXES[request.param] = LocalSandbox(SandboxConfig(warm=request.param == "warm"))
    return _BOXES[request.param]


def run_py(sandbox: LocalSandbox, env: Environment, tmp_path: Path, code: str, **limits: float):
    ws = tmp_path / "ws"
    ws.mkdir(exist_ok=True)
    spec = RunSpec(
        argv=(f"{env.prefix and '/opt/venv'}/bin/python", "-I", "-B", "-c", code),
        workspace=str(ws),
        mounts=tuple(PytestAdapter().mounts(env)),
        env=(("PATH", "/usr/bin:/bin"), ("HOME", "/tmp")),
        limits=Limits(**{"wall_seconds": 30, **limits}),  # type: ignore[arg-type]
    )
    served = sandbox.warm.served if sandbox.warm is not None else 0
    result = sandbox.run(spec)
    if sandbox.warm is not None:  # the warm box really served it (no silent cold fallback)
        assert sandbox.warm.served > served
    return result


def test_network_is_unreachable(box, tiny_env, tmp_path):
    server = socket.socket()
    server.bind(("127.0.0.1", 0))
    server.listen(1)
    port = server.getsockname()[1]
    code = f"""
import socket
for host, port in (("127.0.0.1", {port}), ("1.1.1.1", 53)):
    try:
        socket.create_connection((host, port), timeout=3)
        print("CONNECTED", host)
    except OSError as exc:
        print("REFUSED", host, type(exc).__name__)
"""
    result = run_py(box, tiny_env, tmp_path, code)
    server.close()
    assert "CONNECTED" not in result.output
    assert result.output.count("REFUSED") == 2, result.output


def test_only_workspace_and_tmp_are_writable_and_repo_is_invisible(box, tiny_env, tmp_path):
    code = f"""
import os
print("uid", os.getuid())
open("/workspace/ok.txt", "w").write("x")
open("/tmp/ok.txt", "w").write("x")
for path in ("/usr/evil", "/opt/venv/evil", "/evil"):
    try:
        open(path, "w")
        print("WROTE", path)
    except OSError:
        print("DENIED", path)
for path in ({str(REPO)!r}, {str(REPO / "seed_apps")!r}, {sys.prefix!r}, "/root/.cache"):
    print("VISIBLE" if os.path.exists(path) else "HIDDEN", path)
"""
    result = run_py(box, tiny_env, tmp_path, code)
    assert "WROTE" not in result.output
    assert result.output.count("DENIED") == 3, result.output
    assert "VISIBLE" not in result.output, result.output
    assert (tmp_path / "ws" / "ok.txt").read_text() == "x"
    uid = int(result.output.split("uid", 1)[1].split()[0])
    assert uid >= 200_000


def test_wall_clock_timeout_kills_the_whole_tree(box, tiny_env, tmp_path):
    # A grandchild that ignores SIGTERM and keeps the output pipe open must not outlive the run.
    code = """
import os, signal, subprocess, time
subprocess.Popen(["/bin/sh", "-c", "trap '' TERM; sleep 300"])
time.sleep(300)
"""
    start = time.monotonic()
    result = run_py(box, tiny_env, tmp_path, code, wall_seconds=2)
    assert result.timed_out
    assert result.exit_code is None
    assert time.monotonic() - start < 15


def test_output_is_capped(box, tiny_env, tmp_path):
    code = "import sys\nfor _ in range(200000): sys.stdout.write('x' * 100 + '\\n')"
    result = run_py(box, tiny_env, tmp_path, code, output_bytes=10_000)
    assert result.output_truncated
    assert len(result.output) < 12_000


def test_memory_limit(box, tiny_env, tmp_path):
    code = "x = bytearray(3 * 1024**3)\nprint('ALLOCATED')"
    result = run_py(box, tiny_env, tmp_path, code, memory_bytes=1024**3)
    assert "ALLOCATED" not in result.output
    assert "MemoryError" in result.output


def test_process_limit_stops_a_fork_bomb(box, tiny_env, tmp_path):
    code = """
import os
children = 0
try:
    for _ in range(10000):
        if os.fork() == 0:
            import time; time.sleep(30); os._exit(0)
        children += 1
except OSError as exc:
    print("LIMITED after", children, type(exc).__name__)
"""
    start = time.monotonic()
    result = run_py(box, tiny_env, tmp_path, code, processes=64, wall_seconds=20)
    assert "LIMITED after" in result.output, result.output
    assert int(result.output.split("LIMITED after")[1].split()[0]) < 64
    assert time.monotonic() - start < 25


def test_file_size_limit(box, tiny_env, tmp_path):
    code = """
try:
    with open('/workspace/big', 'wb') as fh:
        fh.write(b'x' * (8 * 1024 * 1024))
    print('WROTE')
except OSError as exc:
    print('LIMITED', exc.errno)
"""
    result = run_py(box, tiny_env, tmp_path, code, file_bytes=1024 * 1024)
    assert "WROTE" not in result.output
    assert (tmp_path / "ws" / "big").stat().st_size <= 1024 * 1024


def test_missing_bubblewrap_names_the_package(monkeypatch):
    monkeypatch.setenv("PATH", "/nonexistent")
    with pytest.raises(SandboxUnavailableError, match="bubblewrap"):
        bwrap_path()


def test_fake_sandbox_records_specs():
    fake = FakeSandbox(
        lambda spec: RunResult(exit_code=0, timed_out=False, wall_time=0.0, output="hi")
    )
    with fake as sb:
        result = sb.run(RunSpec(argv=("true",), workspace="/nowhere"))
    assert result.output == "hi"
    assert fake.calls[0].argv == ("true",)


def test_concurrent_runs_do_not_share_a_uid(box, tiny_env, tmp_path):
    outputs: list[str] = []

    def one(i: int) -> None:
        d = tmp_path / f"c{i}"
        d.mkdir()
        outputs.append(run_py(box, tiny_env, d, "import os; print(os.getuid())").output)

    threads = [threading.Thread(target=one, args=(i,)) for i in range(4)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert len({o.strip() for o in outputs}) == 4
    assert all(os.path.isdir(tmp_path / f"c{i}") for i in range(4))
