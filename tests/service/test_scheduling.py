"""The service's engine on its own: admission, fair turns between environments, regrading after
sandbox faults, draining. The grading function is replaced by a timed stand-in here (what is
under test is the scheduling); the real grading path is tested over HTTP in
test_reward_service.py and test_faults.py."""

from __future__ import annotations

import threading
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from taskmint.records import Reward, Task
from taskmint.sandbox.local import LocalSandbox
from taskmint.service.grading import Draining, Overloaded, RewardService, ServiceConfig
from taskmint.service.registry import TaskRegistry


@pytest.fixture(scope="module")
def registry(mixed_dataset: Path, cache_dir: Path) -> TaskRegistry:
    return TaskRegistry([mixed_dataset], cache_dir=cache_dir)


def _service(
    registry: TaskRegistry, tmp: Path, grade: Callable[..., Reward], **config: Any
) -> RewardService:
    return RewardService(
        registry,
        LocalSandbox(),
        retry_sandbox=LocalSandbox(),
        config=ServiceConfig(warm_up=False, **config),
        state_dir=tmp,
        grade=grade,
    )


def _by_env(registry: TaskRegistry) -> dict[str, list[Task]]:
    out: dict[str, list[Task]] = {}
    for loaded in registry.tasks():
        out.setdefault(loaded.task.env_id, []).append(loaded.task)
    assert len(out) == 2
    return out


def test_an_environment_flood_does_not_hold_the_others(
    registry: TaskRegistry, tmp_path: Path
) -> None:
    starts: list[str] = []
    lock = threading.Lock()
    long_gate, short_gate = threading.Event(), threading.Event()
    both = threading.Barrier(3)

    def grade(task: Task, patch: str, **_: Any) -> Reward:
        with lock:
            starts.append(patch)
        if patch in ("long", "short-0"):
            both.wait(10)
        (long_gate if patch == "long" else short_gate).wait(30)
        return Reward(reward=1.0, reason="ok")

    service = _service(registry, tmp_path, grade, concurrency=2, queue_size=20)
    try:
        flood_env, other_env = sorted(_by_env(registry).items(), key=lambda kv: -len(kv[1]))
        flood = registry.get(flood_env[1][0].instance_id)
        jobs = [service.submit(flood, "long", "long", 1e9)[0]]
        jobs += [service.submit(flood, f"short-{i}", f"s{i}", 1e9)[0] for i in range(6)]
        both.wait(10)  # both graders hold the flooded environment's jobs
        # one environment's share of the queue is half of it (two environments loaded)
        with pytest.raises(Overloaded) as info:
            for i in range(6, 20):
                service.submit(flood, f"short-{i}", f"s{i}", 1e9)
        assert info.value.retry_after >= 1
        late, _ = service.submit(registry.get(other_env[1][0].instance_id), "other", "o", 1e9)
        assert late is not None
        short_gate.set()
        late.future.result(timeout=30)
        # the grader freed first goes to the other environment, not to the flood's next job
        assert starts[2] == "other", starts
        long_gate.set()
        for job in jobs:
            assert job is not None and job.future.result(timeout=30)[0] == 200
    finally:
        long_gate.set()
        short_gate.set()
        service.close()


def test_sandbox_faults_are_graded_again_and_signals_settle(
    registry: TaskRegistry, tmp_path: Path
) -> None:
    calls: list[bool] = []
    script = {
        "fault": [Reward(reward=0.0, reason="sandbox error: x", error="x")] * 3,
        "heal": [
            Reward(reward=0.0, reason="the test run did not complete", signal=9),
            Reward(reward=1.0, reason="all expected tests passed"),
        ],
        "suicide": [Reward(reward=0.0, reason="the test run did not complete", signal=9)] * 3,
    }

    def grade(task: Task, patch: str, *, sandbox: object, **_: Any) -> Reward:
        calls.append(sandbox is service.retry_sandbox)
        return script[patch].pop(0)

    service = _service(registry, tmp_path, grade, concurrency=1, retries=2)
    task = registry.tasks()[0].task
    try:
        answers = {}
        for patch in ("fault", "heal", "suicide"):
            job, _ = service.submit(registry.get(task.instance_id), patch, patch, 1e9)
            assert job is not None
            answers[patch] = job.future.result(timeout=30)
        status, body = answers["fault"]
        assert status == 503 and body["status"] == "error" and body["attempts"] == 3
        status, body = answers["heal"]
        assert status == 200 and body["reward"] == 1.0 and body["attempts"] == 2
        status, body = answers["suicide"]  # died every time: its reward, as the library says
        assert status == 200 and body["reward"] == 0.0 and body["signal"] == 9
        assert calls == [False, True, True, False, True, False, True, True]  # retries run cold
        # an error is not kept; a graded result is
        assert service.store.get("fault") is None and service.store.get("heal") is not None
    finally:
        service.close()


def test_a_draining_service_takes_nothing_new(registry: TaskRegistry, tmp_path: Path) -> None:
    started = threading.Event()

    def grade(task: Task, patch: str, **_: Any) -> Reward:
        started.set()
        time.sleep(0.5)
        return Reward(reward=1.0, reason="ok")

    service = _service(registry, tmp_path, grade, concurrency=1)
    task = registry.tasks()[0].task
    job, _ = service.submit(registry.get(task.instance_id), "a", "a", 1e9)
    assert job is not None and started.wait(10)
    service.begin_drain()
    with pytest.raises(Draining):
        service.submit(registry.get(task.instance_id), "b", "b", 1e9)
    # the same id in flight still joins its grading
    joined, _ = service.submit(registry.get(task.instance_id), "a", "a", 1e9)
    assert joined is job
    service.close()
    assert job.future.result(timeout=1)[0] == 200


def test_a_queued_request_past_its_deadline_is_not_graded(
    registry: TaskRegistry, tmp_path: Path
) -> None:
    graded: list[str] = []

    def grade(task: Task, patch: str, **_: Any) -> Reward:
        graded.append(patch)
        time.sleep(0.5)
        return Reward(reward=1.0, reason="ok")

    service = _service(registry, tmp_path, grade, concurrency=1)
    task = registry.tasks()[0].task
    try:
        first, _ = service.submit(registry.get(task.instance_id), "a", "a", time.monotonic() + 60)
        late, _ = service.submit(registry.get(task.instance_id), "b", "b", time.monotonic() + 0.1)
        assert first is not None and late is not None
        assert late.future.result(timeout=30)[0] == 504
        assert graded == ["a"]
    finally:
        service.close()
