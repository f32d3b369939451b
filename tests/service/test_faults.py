"""The reward service under pressure and faults: a full queue (429 + Retry-After, and the
client's retries), deadlines, sandbox processes killed mid-request, SIGTERM (drains), and a
restart (results kept by request id). Each request gets one answer and never a wrong reward."""

from __future__ import annotations

import signal
import threading
import time
import uuid
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import pytest

from taskmint import RewardClient
from taskmint.consumer import load_tasks
from taskmint.records import Task
from tests.procs import kill_all, left_after, process_tree
from tests.service.helpers import (
    Server,
    http,
    http_full,
    kill,
    running,
    sandbox_processes,
    slow_patch,
    start_server,
    stop,
    wait_ready,
)

pytestmark = pytest.mark.slow


@pytest.fixture(scope="module")
def task(tiny_dataset: Path) -> Task:
    return sorted(load_tasks(tiny_dataset, streaming=False), key=lambda t: t.instance_id)[0]


@pytest.fixture(scope="module")
def slow(task: Task, cache_dir: Path) -> str:
    """The gold patch, taking 3 s more to import."""
    return slow_patch(task, cache_dir, 3)


@pytest.fixture(scope="module")
def narrow(tiny_dataset: Path, work_dir: Path) -> object:
    """One grader and a queue of one."""
    with running(
        tiny_dataset,
        work_dir,
        work_dir / "reward-narrow.log",
        "--concurrency",
        "1",
        "--queue",
        "1",
        "--state-dir",
        str(work_dir / "reward-narrow"),
    ) as server:
        yield server


def _body(task: Task, patch: str, **extra: object) -> dict[str, object]:
    return {"instance_id": task.instance_id, "patch": patch, **extra}


def test_full_queue_answers_429_and_the_client_waits(narrow: Server, task: Task, slow: str) -> None:
    def send(_: object) -> tuple[int, dict, dict]:
        return http_full("POST", f"{narrow.url}/verify", _body(task, slow))

    # the first is being graded before the others arrive: one of them fits the queue of one
    with ThreadPoolExecutor(4) as pool:
        first = pool.submit(send, None)
        deadline = time.monotonic() + 30
        while narrow.health()["running"] < 1 and time.monotonic() < deadline:
            time.sleep(0.05)
        assert narrow.health()["running"] == 1
        others = [pool.submit(send, None) for _ in range(3)]
        answers = [first.result(), *(f.result() for f in others)]
    codes = sorted(status for status, _, _ in answers)
    assert codes.count(429) >= 1 and codes.count(200) >= 2, codes
    for status, headers, body in answers:
        if status == 429:
            assert int(headers["retry-after"]) >= 1 and body["status"] == "overloaded"
        else:
            assert body["reward"] == 1.0
    client = RewardClient(narrow.url)
    with ThreadPoolExecutor(4) as pool:
        rewards = list(pool.map(lambda _: client.verify(task.instance_id, slow).reward, range(4)))
    assert rewards == [1.0] * 4
    assert client.retries >= 1  # it was told to wait, and did


def test_deadline_then_the_same_request_id(narrow: Server, task: Task, slow: str) -> None:
    rid = f"deadline-{uuid.uuid4().hex}"
    before = narrow.health()["gradings"]
    status, headers, body = http_full(
        "POST", f"{narrow.url}/verify", _body(task, slow, request_id=rid, deadline=0.5)
    )
    assert status == 504 and body["retryable"] and "retry-after" in headers, body
    status, body = http("POST", f"{narrow.url}/verify", _body(task, slow, request_id=rid))
    assert status == 200 and body["reward"] == 1.0
    assert narrow.health()["gradings"] == before + 1  # the retry got the first grading


@pytest.mark.parametrize("target", ["forkserver", "bwrap"])
def test_sandbox_killed_mid_request_is_graded_again(
    narrow: Server, task: Task, slow: str, target: str
) -> None:
    answer: list[tuple[int, dict]] = []
    sender = threading.Thread(
        target=lambda: answer.append(http("POST", f"{narrow.url}/verify", _body(task, slow)))
    )
    sender.start()
    killed = 0
    deadline = time.monotonic() + 10
    while not killed and time.monotonic() < deadline:
        time.sleep(0.3)
        killed = kill(sandbox_processes(narrow.proc.pid, target))
    sender.join(timeout=300)
    assert killed, "no sandbox process was found to kill"
    status, body = answer[0]
    assert status == 200 and body["reward"] == 1.0, body
    if target == "forkserver":  # the run died with its server: that grading was not used
        assert body["attempts"] >= 2
    # (killing the outer bubblewrap of a server leaves the server and its run going)
    assert narrow.proc.poll() is None


def test_a_hung_sandbox_is_graded_again(
    tiny_dataset: Path, work_dir: Path, task: Task, slow: str
) -> None:
    """Fork servers stopped (SIGSTOP) mid-run: no answer comes within the run's limit plus the
    grace period, so the host kills them and grades again on a cold sandbox. Nothing of the
    stopped sandbox outlives that grading, stopped as it is, nor does anything the service
    started outlive the service. (A service of its own: the kills above may have left the
    shared one's pool cooling down, running cold.)"""
    log = work_dir / "reward-hung.log"
    started: dict[int, str] = {}  # what the service started: checked, then cleaned up
    try:
        with running(tiny_dataset, work_dir, log, "--concurrency", "1") as server:
            assert server.health()["warm_up"], "the warm-up starts a fork server"
            answer: list[tuple[int, dict]] = []
            sender = threading.Thread(
                target=lambda: answer.append(
                    http("POST", f"{server.url}/verify", _body(task, slow))
                )
            )
            start = time.monotonic()
            sender.start()
            time.sleep(1.0)  # the run has started: its module sleeps for 3 s on import
            targets = sandbox_processes(server.proc.pid, "forkserver")
            kill(targets, signal.SIGSTOP)
            tree = process_tree(server.proc.pid)
            stopped = {pid: tree[pid] for pid in targets if pid in tree}
            started.update(tree)
            sender.join(timeout=400)
            assert stopped, "no fork server was found to stop"
            status, body = answer[0]
            assert status == 200 and body["reward"] == 1.0 and body["attempts"] >= 2, body
            # the seed's timeout (60 s) and the grace period (15 s) passed before the retry
            assert time.monotonic() - start >= 60
            # the service killed the stopped sandbox (bubblewrap, the namespace's init, the
            # server and its run) before it graded again
            left = left_after(stopped, timeout=10)
            assert not left, f"the stopped sandbox outlived its grading: {left}"
            started.update(process_tree(server.proc.pid))
        left = left_after(started, timeout=30)
        assert not left, f"processes the service started outlived it: {left}"
    finally:
        kill_all(started)


def test_sigterm_drains_in_flight_requests(
    tiny_dataset: Path, work_dir: Path, task: Task, slow: str
) -> None:
    server = start_server(
        tiny_dataset, work_dir, work_dir / "reward-drain.log", "--concurrency", "1"
    )
    wait_ready(server)
    answers: list[tuple[int, dict]] = []
    senders = [
        threading.Thread(
            target=lambda: answers.append(http("POST", f"{server.url}/verify", _body(task, slow)))
        )
        for _ in range(2)
    ]
    for s in senders:
        s.start()
    time.sleep(1.0)
    server.proc.send_signal(signal.SIGTERM)
    for s in senders:
        s.join(timeout=120)
    # uvicorn re-raises the signal once it has drained: the exit status says SIGTERM
    assert server.proc.wait(timeout=60) in (0, -signal.SIGTERM)
    assert sorted(status for status, _ in answers) == [200, 200]
    assert all(body["reward"] == 1.0 for _, body in answers)
    with pytest.raises(OSError):
        http("POST", f"{server.url}/verify", _body(task, ""), timeout=5)


def test_restart_keeps_results_and_the_client_rides_it_out(
    tiny_dataset: Path, work_dir: Path, task: Task, slow: str
) -> None:
    state = work_dir / "reward-restart"
    log = work_dir / "reward-restart.log"
    server = start_server(tiny_dataset, work_dir, log, "--state-dir", str(state))
    try:
        wait_ready(server)
        rid = f"restart-{uuid.uuid4().hex}"
        status, first = http("POST", f"{server.url}/verify", _body(task, "", request_id=rid))
        assert status == 200
        # killed outright, with a request in flight from the client
        client = RewardClient(server.url, timeout=300)
        result: list[float] = []
        sender = threading.Thread(
            target=lambda: result.append(client.verify(task.instance_id, slow).reward)
        )
        sender.start()
        time.sleep(1.0)
        stop(server, signal.SIGKILL)
        server = start_server(
            tiny_dataset, work_dir, log, "--state-dir", str(state), port=server.port
        )
        wait_ready(server)
        sender.join(timeout=300)
        assert result == [1.0] and client.retries >= 1
        status, again = http("POST", f"{server.url}/verify", _body(task, "", request_id=rid))
        assert status == 200 and again["cached"] is True
        assert {k: again[k] for k in ("reward", "reason", "wall_time")} == {
            k: first[k] for k in ("reward", "reason", "wall_time")
        }
    finally:
        stop(server)
