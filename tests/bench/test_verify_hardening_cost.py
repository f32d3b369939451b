"""Benchmark: what the hardened verifier's host limits cost per `verify` call.

The same gold patch is verified on the local sandbox, warm and cold, with each workspace on a
size-capped tmpfs (`workspace_bytes`, the default) and without it (0); prints the medians and
their ratio. Never asserted.
Run: `.venv/bin/python -m pytest -q -s tests/bench/test_verify_hardening_cost.py`.
"""

from __future__ import annotations

import statistics
import time

from taskmint.config import SandboxConfig
from taskmint.consumer import verify
from taskmint.publish import load_seed
from taskmint.sandbox import LocalSandbox
from tests.conftest import LIMITS

ROUNDS = 9


def test_cost_of_the_workspace_cap(published_tasks, tiny_dataset, cache_dir, tiny_env):
    task = next(t for t in published_tasks if t.units[0].endswith("::top_words"))
    seed = load_seed(tiny_dataset, task.snapshot_id, cache_dir=cache_dir)
    for warm in (True, False):
        medians = {}
        for cap in (1024**3, 0):
            box = LocalSandbox(SandboxConfig(warm=warm, workspace_bytes=cap))
            verify(task, task.patch, seed=seed, env=tiny_env, sandbox=box, limits=LIMITS)
            times = []
            for _ in range(ROUNDS):
                start = time.monotonic()
                reward = verify(
                    task, task.patch, seed=seed, env=tiny_env, sandbox=box, limits=LIMITS
                )
                times.append(time.monotonic() - start)
                assert reward.reward == 1.0, reward.reason
            medians[cap] = statistics.median(times)
        kind = "warm" if warm else "cold"
        print(
            f"\n{kind}: capped {medians[1024**3]:.3f}s, uncapped {medians[0]:.3f}s, "
            f"ratio {medians[1024**3] / medians[0]:.2f}"
        )
