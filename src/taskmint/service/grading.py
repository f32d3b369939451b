"""The reward service's engine: admission, fair queues, graders, idempotency, retries.

A request is admitted or refused at once: refused with `Overloaded` (HTTP 429 and a
`Retry-After` estimated from the recent grading time) when the queue is full, or when the
queue of the request's environment holds its share (`queue_per_env`; by default half the queue
when several environments are loaded), so one environment's flood (or one whose sandboxes
hang) cannot take the whole queue. `concurrency` grader threads take jobs round-robin over the
environments with work queued, and an environment holds at most `concurrency - 1` graders while
another has work waiting, so no environment waits behind another's backlog.

Each grading is `taskmint.verify.grade_patch` with the arguments the library's `verify` gives
it (the default `Limits` with the seed's timeout, the default `VerifyConfig`), so the reward is
the library's. A grading the sandbox failed (`Reward.error`: a fork server or bubblewrap killed
or hung from outside) or whose test run died of a signal (which a kill from outside and code
that kills itself both give) is graded again, on a cold sandbox, up to `retries` times. After
that, a sandbox error is answered as an error (never a reward); a run that died of a signal
every time is answered with its reward (0), as the library would.

A `request_id` names a request: a graded result is stored under it (`ResultStore`, on disk),
and the same id asked again, while grading or after, gets that result instead of a second
grading. The same id with a different task or patch is a conflict.
"""

from __future__ import annotations

import collections
import concurrent.futures
import hashlib
import math
import os
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from taskmint.config import Limits, VerifyConfig
from taskmint.errors import ManifestError
from taskmint.records import Reward, Task
from taskmint.sandbox.base import Sandbox
from taskmint.service.metrics import Metrics, resident_bytes
from taskmint.service.registry import Loaded, TaskRegistry
from taskmint.service.store import ResultStore
from taskmint.verify.reward import grade_patch

__all__ = [
    "Conflict",
    "Draining",
    "Overloaded",
    "RewardService",
    "ServiceConfig",
    "reward_json",
]


@dataclass(frozen=True, slots=True, kw_only=True)
class ServiceConfig:
    """The service's limits; the defaults are what `taskmint serve-reward` uses."""

    concurrency: int = field(default_factory=lambda: len(os.sched_getaffinity(0)) or 2)
    queue_size: int = 0  # 0: 8 per grader
    queue_per_env: int = 0  # 0: the whole queue
    deadline: float = 900.0  # seconds, when a request gives none
    max_deadline: float = 3600.0
    max_patch_bytes: int = 1 << 20
    max_batch: int = 64
    retries: int = 2
    store_entries: int = 1_000_000
    warm_up: bool = True

    def __post_init__(self) -> None:
        for name in ("concurrency", "max_patch_bytes", "max_batch", "store_entries"):
            if getattr(self, name) < 1:
                raise ManifestError(f"{name} must be at least 1, got {getattr(self, name)!r}")
        for name in ("queue_size", "queue_per_env", "retries"):
            if getattr(self, name) < 0:
                raise ManifestError(f"{name} must be 0 or more, got {getattr(self, name)!r}")
        if not 0 < self.deadline <= self.max_deadline:
            raise ManifestError(f"deadline must be in (0, {self.max_deadline:g}] seconds")

    @property
    def queue_limit(self) -> int:
        return self.queue_size or 8 * self.concurrency

    def env_queue_limit(self, environments: int) -> int:
        """The most one environment may have waiting: `queue_per_env`, or by default half the
        queue when there is more than one environment."""
        if self.queue_per_env:
            return min(self.queue_per_env, self.queue_limit)
        return self.queue_limit if environments <= 1 else max(1, self.queue_limit // 2)

    @property
    def env_running_limit(self) -> int:
        """The most graders one environment holds while another has work waiting."""
        return max(1, self.concurrency - 1)


class Overloaded(Exception):
    """The queue is full: try again after `retry_after` seconds."""

    def __init__(self, message: str, retry_after: int) -> None:
        super().__init__(message)
        self.retry_after = retry_after


class Draining(Exception):
    """The service is stopping: it takes no new requests."""


class Conflict(Exception):
    """A request id already names another request."""


def fingerprint(loaded: Loaded, patch: str) -> str:
    """What a request asks: the version, the task and the patch."""
    h = hashlib.sha256()
    for part in (loaded.version, loaded.task.instance_id, patch):
        h.update(part.encode("utf-8", "surrogatepass") + b"\0")
    return h.hexdigest()


def reward_json(reward: Reward) -> dict[str, Any]:
    """A `Reward` as JSON (`taskmint.client.reward_from_json` reads it back)."""
    return {
        "reward": reward.reward,
        "reason": reward.reason,
        "passed": reward.passed,
        "expected": reward.expected,
        "tampered": reward.tampered,
        "rejected_paths": list(reward.rejected_paths),
        "findings": list(reward.findings),
        "error": reward.error,
        "signal": reward.signal,
        "wall_time": reward.wall_time,
        "outcomes": [
            {"test_id": o.test_id, "outcome": o.outcome, "duration": o.duration}
            for o in reward.outcomes
        ],
    }


def outcome_of(reward: Reward) -> str:
    """The reward's reason, as one label for the metrics."""
    if reward.error:
        return "sandbox_error"
    if reward.reward == 1.0:
        return "passed"
    if reward.tampered:
        return "tampered"
    if reward.signal:
        return "killed"
    if reward.reason.startswith("the tests timed out"):
        return "timed_out"
    if reward.reason.startswith("the test run did not complete"):
        return "incomplete"
    if reward.reason.startswith("the static scan"):
        return "scan"
    if "expected test(s) did not pass" in reward.reason:
        return "tests_failed"
    return "patch_rejected"


@dataclass(eq=False)
class Job:
    """One admitted grading, and every request waiting for it."""

    loaded: Loaded
    patch: str
    request_id: str
    fingerprint: str
    deadline: float  # monotonic
    env: str
    admitted: float = field(default_factory=time.monotonic)
    future: concurrent.futures.Future[tuple[int, dict[str, Any]]] = field(
        default_factory=concurrent.futures.Future
    )


class RewardService:
    """Grades patches of the registry's tasks with `concurrency` threads."""

    def __init__(
        self,
        registry: TaskRegistry,
        sandbox: Sandbox,
        *,
        retry_sandbox: Sandbox | None = None,
        config: ServiceConfig | None = None,
        state_dir: str | os.PathLike[str],
        limits: Limits | None = None,
        verify_config: VerifyConfig | None = None,
        grade: Callable[..., Reward] = grade_patch,
    ) -> None:
        self.registry = registry
        self.sandbox = sandbox
        self.retry_sandbox = retry_sandbox or sandbox
        self.config = config or ServiceConfig()
        self.limits = limits or Limits()
        self.verify_config = verify_config or VerifyConfig()
        self._grade_patch = grade
        self.store = ResultStore(Path(state_dir) / "results.sqlite", self.config.store_entries)
        self.metrics = Metrics()
        self._describe_metrics()
        self._cond = threading.Condition()
        self._queues: dict[str, collections.deque[Job]] = {}
        self._order: collections.deque[str] = collections.deque()  # envs with work, in turn
        self._queued = 0
        self._running = 0
        self._running_by_env: collections.Counter[str] = collections.Counter()
        self._env_limit = self.config.env_queue_limit(len(registry.environments()))
        self._inflight: dict[str, Job] = {}
        self._draining = False
        self._stopped = False
        self._recent: collections.deque[float] = collections.deque(maxlen=64)
        self.gradings = 0  # grade_patch calls (retries and the warm-up included)
        self.jobs = 0  # requests graded (each request id at most once)
        self.warmed: dict[str, dict[str, Any]] = {}  # env id -> the warm-up's result
        self.ready = threading.Event()
        pool = getattr(sandbox, "warm", None)
        if pool is not None:  # keep a warm server per grader for each environment
            pool.max_idle = max(pool.max_idle, self.config.concurrency)
            pool.max_total = max(pool.max_total, 2 * self.config.concurrency)
        self._workers = [
            threading.Thread(target=self._work, name=f"taskmint-grader-{i}", daemon=True)
            for i in range(self.config.concurrency)
        ]
        for worker in self._workers:
            worker.start()

    # -- admission ------------------------------------------------------------------------------

    def submit(
        self, loaded: Loaded, patch: str, request_id: str, deadline: float
    ) -> tuple[Job | None, dict[str, Any] | None]:
        """Admit a grading, or find the one `request_id` already names: (job to wait for,
        None), or (None, stored result). Raises Overloaded, Draining or Conflict."""
        fp = fingerprint(loaded, patch)
        stored = self.store.get(request_id)
        if stored is not None:
            if stored[0] != fp:
                raise Conflict(f"request_id {request_id!r} was used for another task or patch")
            self.metrics.inc("taskmint_reward_replays_total")
            return None, {**stored[1], "cached": True}
        env = loaded.task.env_id
        with self._cond:
            job = self._inflight.get(request_id)
            if job is not None:
                if job.fingerprint != fp:
                    raise Conflict(f"request_id {request_id!r} names another request in flight")
                job.deadline = max(job.deadline, deadline)
                self.metrics.inc("taskmint_reward_joined_total")
                return job, None
            if self._draining:
                raise Draining("the service is stopping; send the request again later")
            queue = self._queues.setdefault(env, collections.deque())
            if self._queued >= self.config.queue_limit or len(queue) >= self._env_limit:
                raise Overloaded(
                    f"the queue is full ({self._queued} waiting, {len(queue)} for this "
                    "environment); retry after the Retry-After seconds",
                    self.retry_after(),
                )
            job = Job(loaded, patch, request_id, fp, deadline, env)
            queue.append(job)
            if env not in self._order:
                self._order.append(env)
            self._queued += 1
            self._inflight[request_id] = job
            self._cond.notify()
        return job, None

    def room(self) -> int:
        """How many more gradings the queue takes now."""
        with self._cond:
            return max(0, self.config.queue_limit - self._queued)

    def retry_after(self) -> int:
        """Seconds until the queue has likely moved on: the recent grading time per queued
        job over the graders (1 to 60)."""
        per = sum(self._recent) / len(self._recent) if self._recent else 1.0
        return max(1, min(60, math.ceil(per * (self._queued + 1) / self.config.concurrency)))

    # -- graders --------------------------------------------------------------------------------

    def _next(self) -> Job | None:
        with self._cond:
            while not self._order and not self._stopped:
                self._cond.wait()
            if self._stopped and not self._order:
                return None
            # The first environment in turn that holds fewer than its share of graders; when
            # every one with work holds its share, the first in turn (no grader stays idle).
            cap = self.config.env_running_limit
            env = next((e for e in self._order if self._running_by_env[e] < cap), self._order[0])
            self._order.remove(env)
            queue = self._queues[env]
            job = queue.popleft()
            if queue:
                self._order.append(env)  # its next job waits for the other environments
            self._queued -= 1
            self._running += 1
            self._running_by_env[env] += 1
            return job

    def _work(self) -> None:
        while True:
            job = self._next()
            if job is None:
                return
            try:
                if time.monotonic() > job.deadline:
                    status, result = (
                        504,
                        _error(
                            "the request's deadline passed before a grader was free", retryable=True
                        ),
                    )
                    self.metrics.inc("taskmint_reward_outcomes_total", outcome="expired")
                else:
                    status, result = self._grade(job)
            except Exception as exc:  # a grader never dies: the request gets the error
                status, result = 500, _error(f"internal error: {exc!r}", retryable=True)
                self.metrics.inc("taskmint_reward_outcomes_total", outcome="internal_error")
            if status == 200:
                self.store.put(job.request_id, job.fingerprint, result)
            with self._cond:
                self._running -= 1
                self._running_by_env[job.env] -= 1
                self._inflight.pop(job.request_id, None)
                self._cond.notify_all()
            job.future.set_result((status, result))

    def _grade(self, job: Job) -> tuple[int, dict[str, Any]]:
        task = job.loaded.task
        start = time.monotonic()
        queue_time = start - job.admitted
        seed, env = self.registry.runtime(task)
        with self._cond:
            self.jobs += 1
        attempts = 0
        while True:
            attempts += 1
            reward = self.grade(task, job.patch, cold=attempts > 1, seed_env=(seed, env))
            if not (reward.error or reward.signal) or attempts > self.config.retries:
                break
            cause = "sandbox_error" if reward.error else "signal"
            self.metrics.inc("taskmint_reward_retries_total", cause=cause)
        elapsed = time.monotonic() - start
        self._recent.append(elapsed)
        outcome = outcome_of(reward)
        self.metrics.inc("taskmint_reward_outcomes_total", outcome=outcome)
        self.metrics.observe("taskmint_reward_grading_seconds", elapsed)
        self.metrics.observe("taskmint_reward_queue_seconds", queue_time)
        meta = {
            "request_id": job.request_id,
            "instance_id": task.instance_id,
            "dataset_version": job.loaded.version,
            "attempts": attempts,
            "queue_time": round(queue_time, 3),
            "grading_time": round(elapsed, 3),
        }
        if reward.error:
            return 503, {
                **_error(f"the sandbox failed {attempts} time(s): {reward.error}", True),
                **meta,
            }
        return 200, {"status": "graded", **reward_json(reward), **meta, "cached": False}

    def grade(
        self,
        task: Task,
        patch: str,
        *,
        cold: bool = False,
        seed_env: tuple[Any, Any] | None = None,
    ) -> Reward:
        """One `grade_patch` call with the library's arguments (on the cold sandbox if
        `cold`)."""
        seed, env = seed_env or self.registry.runtime(task)
        with self._cond:
            self.gradings += 1
        return self._grade_patch(
            task,
            patch,
            seed=seed,
            env=env,
            sandbox=self.retry_sandbox if cold else self.sandbox,
            limits=self.limits.with_wall(seed.manifest.timeout),
            config=self.verify_config,
        )

    # -- warm-up, state, stop -------------------------------------------------------------------

    def warm_up(self) -> None:
        """Resolve every environment and grade one gold patch in each (which starts its warm
        sandbox); `ready` is set when done. A failure is recorded, never raised."""
        try:
            for env_id, loaded in self.registry.environments().items():
                if self._stopped:
                    return
                try:
                    reward = self.grade(loaded.task, loaded.task.patch)
                    self.warmed[env_id] = {
                        "task": loaded.task.instance_id,
                        "gold_reward": reward.reward,
                        "reason": reward.reason,
                        "seconds": reward.wall_time,
                    }
                except Exception as exc:  # recorded: /healthz shows it
                    self.warmed[env_id] = {"task": loaded.task.instance_id, "error": repr(exc)}
        finally:
            self.ready.set()

    def state(self) -> dict[str, Any]:
        """What `/healthz` shows."""
        with self._cond:
            queued = {env: len(q) for env, q in self._queues.items() if q}
            return {
                "ready": self.ready.is_set(),
                "draining": self._draining,
                "tasks": len(self.registry),
                "versions": dict(self.registry.versions),
                "concurrency": self.config.concurrency,
                "running": self._running,
                "queued": self._queued,
                "queued_by_env": queued,
                "queue_limit": self.config.queue_limit,
                "env_queue_limit": self._env_limit,
                "gradings": self.gradings,
                "jobs": self.jobs,
                "stored_results": len(self.store),
                "warm_up": self.warmed,
            }

    def begin_drain(self) -> None:
        """Take no new requests; those admitted are still graded."""
        with self._cond:
            self._draining = True

    def close(self, timeout: float = 30.0) -> None:
        """Finish the admitted jobs (up to `timeout` seconds), then stop the graders."""
        self.begin_drain()
        end = time.monotonic() + timeout
        with self._cond:
            while (self._queued or self._running) and time.monotonic() < end:
                self._cond.wait(timeout=max(0.0, end - time.monotonic()))
            self._stopped = True
            self._cond.notify_all()
        for worker in self._workers:
            worker.join(timeout=max(0.1, end - time.monotonic()))
        self.store.close()

    def _describe_metrics(self) -> None:
        m = self.metrics
        m.describe("taskmint_reward_requests_total", "HTTP requests answered, by route and status")
        m.describe("taskmint_reward_request_seconds", "Time from a request's arrival to its answer")
        m.describe("taskmint_reward_grading_seconds", "Time to grade one patch (retries included)")
        m.describe("taskmint_reward_queue_seconds", "Time a grading waited for a grader")
        m.describe("taskmint_reward_outcomes_total", "Gradings by outcome (the reward's reason)")
        m.describe("taskmint_reward_retries_total", "Gradings repeated, by cause")
        m.describe("taskmint_reward_replays_total", "Requests answered from the stored results")
        m.describe("taskmint_reward_joined_total", "Requests that joined the same id in flight")

        def queue() -> list[tuple[tuple[tuple[str, str], ...], float]]:
            with self._cond:
                depths = sorted((env, len(q)) for env, q in self._queues.items())
            return [((("env", env),), float(n)) for env, n in depths]

        def load() -> list[tuple[tuple[tuple[str, str], ...], float]]:
            with self._cond:
                return [
                    ((("state", "running"),), float(self._running)),
                    ((("state", "queued"),), float(self._queued)),
                ]

        def pool(name: str) -> Callable[[], list[tuple[tuple[tuple[str, str], ...], float]]]:
            def read() -> list[tuple[tuple[tuple[str, str], ...], float]]:
                warm = getattr(self.sandbox, "warm", None)
                return [] if warm is None else [((), float(warm.stats()[name]))]

            return read

        m.gauge("taskmint_reward_queue_depth", "Gradings waiting, by environment", queue)
        m.gauge("taskmint_reward_load", "Gradings running and waiting", load)
        m.gauge("taskmint_sandbox_pool_idle", "Warm sandbox servers idle", pool("idle"))
        m.gauge("taskmint_sandbox_pool_started", "Warm sandbox servers started", pool("started"))
        m.gauge("taskmint_sandbox_pool_served", "Runs served by warm servers", pool("served"))
        m.gauge(
            "taskmint_process_resident_memory_bytes",
            "The service's resident memory",
            lambda: [((), float(resident_bytes()))],
        )


def _error(message: str, retryable: bool) -> dict[str, Any]:
    return {"status": "error", "error": message, "retryable": retryable}
