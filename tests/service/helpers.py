"""Shared by tests/service and the load benchmark: the real `taskmint serve-reward` in a child
process, patches made by editing a task's workspace (slow, wrong), and the comparable part of a
reward."""

from __future__ import annotations

import contextlib
import json
import os
import re
import signal
import subprocess
import sys
import tempfile
import time
import urllib.error
import urllib.request
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from taskmint.agents import agent_workspace, diff_of
from taskmint.patches import apply_patch
from taskmint.records import Reward, Task
from tests.net import free_port

ROOT = Path(__file__).resolve().parents[2]


@dataclass
class Server:
    url: str
    port: int
    proc: subprocess.Popen[bytes]
    log: Path
    argv: list[str]

    def health(self) -> dict[str, Any]:
        status, body = http("GET", f"{self.url}/healthz")
        return {"http_status": status, **body}


def http(
    method: str,
    url: str,
    body: bytes | dict[str, Any] | None = None,
    headers: dict[str, str] | None = None,
    timeout: float = 300.0,
) -> tuple[int, Any]:
    """One plain request (no retries): status and the decoded JSON (or raw) answer."""
    status, _, answer = http_full(method, url, body, headers, timeout)
    return status, answer


def http_full(
    method: str,
    url: str,
    body: bytes | dict[str, Any] | None = None,
    headers: dict[str, str] | None = None,
    timeout: float = 300.0,
) -> tuple[int, dict[str, str], Any]:
    """`http`, with the answer's headers (lower-case names)."""
    data = json.dumps(body).encode() if isinstance(body, dict) else body
    hdrs = {"Content-Type": "application/json"} if data is not None else {}
    hdrs.update(headers or {})
    req = urllib.request.Request(url, data=data, method=method, headers=hdrs)
    try:
        with urllib.request.urlopen(req, timeout=timeout) as resp:
            status, raw, got = resp.status, resp.read(), resp.headers
    except urllib.error.HTTPError as exc:
        status, raw, got = exc.code, exc.read(), exc.headers
    lower = {k.lower(): v for k, v in got.items()}
    if "json" in lower.get("content-type", ""):
        return status, lower, json.loads(raw)
    return status, lower, raw


def start_server(
    dataset: Path, output_root: Path, log: Path, *args: str, port: int | None = None
) -> Server:
    """Start `taskmint serve-reward` (the real CLI, uvicorn) on a loopback port."""
    port = port or free_port()
    argv = [
        sys.executable,
        "-m",
        "taskmint.cli",
        "--output",
        str(output_root),
        "serve-reward",
        "--dataset",
        str(dataset),
        "--port",
        str(port),
        *args,
    ]
    out = open(log, "ab")  # noqa: SIM115 - the child keeps it
    proc = subprocess.Popen(argv, stdout=out, stderr=subprocess.STDOUT, cwd=ROOT)
    out.close()
    return Server(f"http://127.0.0.1:{port}", port, proc, log, argv)


def wait_ready(server: Server, timeout: float = 300.0) -> None:
    """Until /healthz says ready (the warm-up graded a gold patch per environment)."""
    deadline = time.monotonic() + timeout
    while True:
        if server.proc.poll() is not None:
            raise AssertionError(
                f"the service exited {server.proc.returncode}:\n{server.log.read_text()}"
            )
        with contextlib.suppress(OSError):
            if server.health()["http_status"] == 200:
                return
        if time.monotonic() > deadline:
            raise AssertionError(f"the service was not ready in {timeout} s")
        time.sleep(0.3)


def stop(server: Server, sig: int = signal.SIGTERM, timeout: float = 120.0) -> int:
    if server.proc.poll() is None:
        server.proc.send_signal(sig)
    try:
        return server.proc.wait(timeout=timeout)
    except subprocess.TimeoutExpired:
        server.proc.kill()
        return server.proc.wait()


@contextlib.contextmanager
def running(dataset: Path, output_root: Path, log: Path, *args: str) -> Iterator[Server]:
    server = start_server(dataset, output_root, log, *args)
    try:
        wait_ready(server)
        yield server
    finally:
        stop(server)


def edited_patch(task: Task, cache_dir: Path, edit: Callable[[Path], None]) -> str:
    """The diff of the task's workspace after the gold patch and then `edit(workspace)`."""
    with tempfile.TemporaryDirectory(prefix="taskmint-edit-") as tmp:
        ws = agent_workspace(task, Path(tmp) / "ws", git=False, cache_dir=cache_dir)
        apply_patch(ws, task.patch)
        edit(ws)
        return diff_of(ws, task, cache_dir=cache_dir)


def gold_source(task: Task) -> str:
    """The first file the gold patch changes."""
    found = re.search(r"^\+\+\+ b/(\S+)", task.patch, re.MULTILINE)
    assert found, task.patch[:200]
    return found.group(1)


def slow_patch(task: Task, cache_dir: Path, seconds: float) -> str:
    """The gold patch, plus a sleep of `seconds` when the changed module is imported."""

    def edit(ws: Path) -> None:
        path = ws / gold_source(task)
        line = (
            f"\nimport time as _tm_time\n_tm_time.sleep({seconds})\n"
            if path.suffix == ".py"
            else f"\n{{ const _end = Date.now() + {int(seconds * 1000)}; "
            "while (Date.now() < _end) {} }\n"
        )
        path.write_text(path.read_text() + line)

    return edited_patch(task, cache_dir, edit)


def wrong_patch(task: Task, cache_dir: Path) -> str:
    """The gold patch with its first added `return` returning nothing useful (or, with no
    such line, its last added line dropped): usually wrong, and graded like any patch."""
    added = [
        line[1:]
        for line in task.patch.splitlines()
        if line.startswith("+") and not line.startswith("+++") and line[1:].strip()
    ]

    def edit(ws: Path) -> None:
        path = ws / gold_source(task)
        text = path.read_text()
        for line in added:
            stripped = line.strip()
            if stripped.startswith("return ") and line in text:
                blank = "return None" if path.suffix == ".py" else "return undefined;"
                path.write_text(text.replace(line, line.replace(stripped, blank), 1))
                return
        if added and added[-1] in text:
            indent = added[-1][: len(added[-1]) - len(added[-1].lstrip())]
            filler = "pass" if path.suffix == ".py" else ";"
            path.write_text(text.replace(added[-1], indent + filler, 1))

    return edited_patch(task, cache_dir, edit)


def comparable(reward: Reward | dict[str, Any]) -> dict[str, Any]:
    """What must be identical between the service's and the library's reward for one pair
    (the times differ run to run)."""
    if isinstance(reward, dict):
        from taskmint.client import reward_from_json

        reward = reward_from_json(reward)
    return {
        "reward": reward.reward,
        "reason": reward.reason,
        "passed": reward.passed,
        "expected": reward.expected,
        "tampered": reward.tampered,
        "rejected_paths": reward.rejected_paths,
        "findings": reward.findings,
        "error": reward.error,
        "outcomes": tuple((o.test_id, o.outcome) for o in reward.outcomes),
    }


def sandbox_processes(service_pid: int, pattern: str) -> list[int]:
    """Descendants of the service whose command line matches `pattern`."""
    children: dict[int, list[int]] = {}
    for entry in os.listdir("/proc"):
        if not entry.isdigit():
            continue
        try:
            with open(f"/proc/{entry}/stat") as fh:
                ppid = int(fh.read().rsplit(")", 1)[1].split()[1])
        except (OSError, ValueError, IndexError):
            continue
        children.setdefault(ppid, []).append(int(entry))
    found, todo = [], list(children.get(service_pid, []))
    while todo:
        pid = todo.pop()
        todo += children.get(pid, [])
        try:
            with open(f"/proc/{pid}/cmdline", "rb") as fh:
                cmd = fh.read().replace(b"\0", b" ").decode("utf-8", "replace")
        except OSError:
            continue
        if re.search(pattern, cmd):
            found.append(pid)
    return found


def kill(pids: list[int], sig: int = signal.SIGKILL) -> int:
    done = 0
    for pid in pids:
        with contextlib.suppress(ProcessLookupError, PermissionError):
            os.kill(pid, sig)
            done += 1
    return done
