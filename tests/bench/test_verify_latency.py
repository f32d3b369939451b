"""Benchmark: `verify` latency over the raw test time, local vs docker cold vs docker warm.

Raw test time: the same graded test ids run by pytest directly on the host, in a workspace
built the same way, with no sandbox at all. Each backend then runs `verify` with the gold patch
(reward 1) several times; the median latency over the median raw time is the ratio. Target:
docker warm at most 1.5x. "docker warm" is a pool of POOL containers whose runs go to a
preloaded standby interpreter (see docs/docker.md).
Run: `.venv/bin/python -m pytest -q -s tests/bench/test_verify_latency.py`.
"""

from __future__ import annotations

import statistics
import subprocess
import tempfile
import time
from pathlib import Path

from taskmint.config import Limits
from taskmint.consumer import verify
from taskmint.files import copy_tree
from taskmint.patches import apply_patch
from taskmint.records import Environment, SeedApp, Task
from taskmint.sandbox import LocalSandbox, Sandbox
from taskmint.sandbox.docker import DockerOptions, DockerSandbox
from taskmint.sandbox.docker.base_image import build_base_image
from taskmint.sandbox.docker.client import docker_client
from taskmint.sandbox.docker.images import build_environment_image

ROUNDS = 7
POOL = 2  # warm containers: one serves while the other is reset and its interpreter preloads
LIMITS = Limits(wall_seconds=120)


def raw_time(task: Task, seed: SeedApp, env: Environment) -> float:
    expected = list(dict.fromkeys((*task.FAIL_TO_PASS, *task.PASS_TO_PASS)))
    with tempfile.TemporaryDirectory() as tmp:
        ws = Path(tmp)
        copy_tree(Path(seed.root), ws, seed.files)
        apply_patch(ws, task.breaking_patch)
        apply_patch(ws, task.patch)
        start = time.monotonic()
        proc = subprocess.run(
            [
                f"{env.prefix}/bin/python",
                "-I",
                "-B",
                "-m",
                "pytest",
                "-q",
                "-p",
                "no:cacheprovider",
                "-o",
                f"pythonpath={ws}",
                "--rootdir",
                str(ws),
                *expected,
            ],
            cwd=ws,
            capture_output=True,
            text=True,
            env={
                "PYTHONPATH": str(ws),
                "PYTEST_DISABLE_PLUGIN_AUTOLOAD": "1",
                "PATH": "/usr/bin:/bin",
            },
        )
        took = time.monotonic() - start
    assert proc.returncode == 0, proc.stdout[-2000:]
    return took


def latency(sandbox: Sandbox, task: Task, seed: SeedApp, env: Environment) -> list[float]:
    times = []
    for _ in range(ROUNDS):
        start = time.monotonic()
        reward = verify(task, task.patch, seed=seed, env=env, sandbox=sandbox, limits=LIMITS)
        times.append(time.monotonic() - start)
        assert reward.reward == 1.0, reward.reason
        null = verify(task, "", seed=seed, env=env, sandbox=sandbox, limits=LIMITS)
        assert null.reward == 0.0, null.reason
    return times


def test_verify_latency_local_vs_docker(tiny_tasks, tiny_seed, tiny_env):
    client = docker_client()
    base = build_base_image(client)
    build_environment_image(tiny_env, client, base=base)
    task = tiny_tasks[0]
    raw = statistics.median(raw_time(task, tiny_seed, tiny_env) for _ in range(ROUNDS))
    rows = {}
    rows["local"] = latency(LocalSandbox(), task, tiny_seed, tiny_env)
    with DockerSandbox(options=DockerOptions(base_image=base, warm=0)) as cold:
        rows["docker cold"] = latency(cold, task, tiny_seed, tiny_env)
    for name, bind in (("docker warm", False), ("warm + bind", True)):
        options = DockerOptions(base_image=base, warm=POOL, bind_environment=bind)
        with DockerSandbox(options=options) as warm:
            verify(task, "", seed=tiny_seed, env=tiny_env, sandbox=warm, limits=LIMITS)  # start
            rows[name] = latency(warm, task, tiny_seed, tiny_env)
    print(
        f"\ntask {task.instance_id}: {len(task.FAIL_TO_PASS) + len(task.PASS_TO_PASS)} "
        f"graded tests, raw pytest on the host {raw * 1000:.0f} ms (median of {ROUNDS})"
    )
    print(f"{'backend':<12} {'median ms':>10} {'min ms':>8} {'max ms':>8} {'x raw':>7}")
    ratios = {}
    for name, times in rows.items():
        med = statistics.median(times)
        ratios[name] = med / raw
        print(
            f"{name:<12} {med * 1000:>10.0f} {min(times) * 1000:>8.0f} "
            f"{max(times) * 1000:>8.0f} {ratios[name]:>7.2f}"
        )
    assert ratios["docker warm"] <= 1.5, ratios
