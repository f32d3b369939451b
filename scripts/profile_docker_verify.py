"""Where a warm docker `verify` spends its time: every step timed, per call, over N calls.

Usage: python scripts/profile_docker_verify.py [ROUNDS] [--bind] [--local] [--pool=N]
Builds (once, cached under $TMPDIR/taskmint-profile) the tiny fixture seed, its environment
and its tasks like tests/conftest.py does, then runs `verify` with the gold patch ROUNDS times
(each followed by a null patch, as the benchmark does) on a warm pool of 2 and prints the median
of each step. Steps nest (a step's time includes the steps inside it); "verify" is the whole
call. Take the lock when the numbers matter: `flock /tmp/bench.lock python scripts/...`.
"""

from __future__ import annotations

import collections
import functools
import importlib
import os
import pickle
import statistics
import sys
import tempfile
import threading
import time
from pathlib import Path
from typing import Any

import taskmint.sandbox.docker.sandbox as docker_mod
from taskmint.config import Limits

reward_mod = importlib.import_module("taskmint.verify.reward")

ROOT = Path(__file__).resolve().parents[1]
SEEDS = ROOT / "tests" / "fixtures" / "seeds"
LIMITS = Limits(wall_seconds=120)
BACKGROUND: dict[str, list[float]] = collections.defaultdict(list)
_current: dict[str, float] = {}


def timed(owner: Any, attr: str, label: str | None = None) -> None:
    fn = getattr(owner, attr)
    name = label or attr

    @functools.wraps(fn)
    def wrapper(*args: Any, **kwargs: Any) -> Any:
        if threading.current_thread() is not threading.main_thread():
            # The pool's background resets: not on the call's path, listed apart.
            start = time.monotonic()
            try:
                return fn(*args, **kwargs)
            finally:
                BACKGROUND[name].append(time.monotonic() - start)
        start = time.monotonic()
        try:
            return fn(*args, **kwargs)
        finally:
            _current[name] = _current.get(name, 0.0) + time.monotonic() - start

    setattr(owner, attr, wrapper)


def fixtures() -> tuple[Any, Any, Any]:
    cache = Path(tempfile.gettempdir()) / "taskmint-profile"
    cache.mkdir(exist_ok=True)
    os.chmod(cache, 0o755)
    pickled = cache / "tiny.pickle"
    if pickled.exists():
        return pickle.loads(pickled.read_bytes())  # type: ignore[no-any-return]
    from taskmint.acquire import acquire
    from taskmint.config import PipelineConfig
    from taskmint.excise import excise
    from taskmint.index import index_seed
    from taskmint.languages import build_environment
    from taskmint.pipeline import mint_candidate
    from taskmint.sandbox import LocalSandbox
    from taskmint.validate import run_baseline

    seed = acquire(SEEDS / "tiny", cache_dir=cache / "cache")
    env = build_environment(seed.manifest, cache_dir=cache / "cache")
    local = LocalSandbox()
    baseline = run_baseline(seed, env, local, runs=3, limits=Limits(wall_seconds=60))
    config = PipelineConfig(output_root=cache / "output", seeds_manifest=SEEDS / "seeds.toml")
    excised = excise(seed, index_seed(seed), max_candidates=60)
    results = [mint_candidate(c, seed, env, baseline, local, config) for c in excised.candidates]
    tasks = [r.task for r in results if r.task is not None]
    pickled.write_bytes(pickle.dumps((seed, env, tasks[0])))
    return seed, env, tasks[0]


def main() -> None:
    rounds = int(next((a for a in sys.argv[1:] if a.isdigit()), "15"))
    seed, env, task = fixtures()
    from taskmint.consumer import verify
    from taskmint.sandbox import LocalSandbox
    from taskmint.sandbox.docker import DockerOptions, DockerSandbox
    from taskmint.sandbox.docker.base_image import build_base_image
    from taskmint.sandbox.docker.client import docker_client
    from taskmint.sandbox.docker.images import build_environment_image

    for attr in (
        "copy_tree",
        "apply_patch",
        "_restore_tests",
        "_remove_bytecode",
        "plant_canaries",
        "_digest",
        "run_tests",
        "_remove_tree",
        "filter_patch",
        "scan_patch",
    ):
        timed(reward_mod, attr)
    for attr in ("parse",):
        from taskmint.languages.python import PytestAdapter

        timed(PytestAdapter, attr, "adapter.parse")
    from taskmint.sandbox.docker import containers, execs, streams

    for attr in ("run", "_key"):
        timed(docker_mod.DockerSandbox, attr, f"docker.{attr}")
    for attr in ("checkout", "checkin"):
        timed(containers.ContainerPool, attr, f"pool.{attr}")
    for attr in ("run_standby", "run_cold", "collect", "prepare"):
        timed(execs.ContainerExecs, attr, f"exec.{attr}")
    for attr in ("pack_inputs", "unpack_report"):
        timed(streams, attr)
    from docker.api.client import APIClient

    for attr in ("exec_create", "exec_start", "exec_inspect", "kill"):
        timed(APIClient, attr, f"api.{attr}")
    if "--local" in sys.argv:
        sandbox: Any = LocalSandbox()
    else:
        client = docker_client()
        base = build_base_image(client)
        build_environment_image(env, client, base=base)
        pool = int(next((a[7:] for a in sys.argv if a.startswith("--pool=")), "2"))
        options = DockerOptions(base_image=base, warm=pool, bind_environment="--bind" in sys.argv)
        sandbox = DockerSandbox(options=options)
    calls: list[dict[str, float]] = []
    try:
        verify(task, "", seed=seed, env=env, sandbox=sandbox, limits=LIMITS)  # start the pool
        _current.clear()
        for _ in range(rounds):
            start = time.monotonic()
            got = verify(task, task.patch, seed=seed, env=env, sandbox=sandbox, limits=LIMITS)
            _current["verify"] = time.monotonic() - start
            assert got.reward == 1.0, got.reason
            calls.append(dict(_current))
            _current.clear()
            null = verify(task, "", seed=seed, env=env, sandbox=sandbox, limits=LIMITS)
            assert null.reward == 0.0, null.reason
            _current.clear()
    finally:
        if hasattr(sandbox, "close"):
            sandbox.close()
    names = list(dict.fromkeys(n for c in calls for n in c))
    print(f"{'step':<22} {'median ms':>9} {'min ms':>7} {'max ms':>7}")
    for name in names:
        xs = [c.get(name, 0.0) * 1000 for c in calls]
        print(f"{name:<22} {statistics.median(xs):>9.1f} {min(xs):>7.1f} {max(xs):>7.1f}")
    print("in the background (pool resets), per call:")
    for name, ys in BACKGROUND.items():
        xs = [y * 1000 for y in ys]
        print(f"{name:<22} {statistics.median(xs):>9.1f} {min(xs):>7.1f} {max(xs):>7.1f}")


if __name__ == "__main__":
    main()
