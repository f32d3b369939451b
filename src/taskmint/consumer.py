"""What a training job needs of a published version: `load_tasks`, `workspace`, `verify`.

This is the whole consumer: it installs with `pip install taskmint` and no extras (no Prefect,
Dask, docker or openai). A task loaded from a version remembers where it came from
(`Task.origin`); the seed snapshot and its built test environment are fetched from that
version's `environments` config once per hash and cached under `cache_dir`, so a worker pays
for them once per seed.
"""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any

from taskmint.client import URL_ENV, RewardClient
from taskmint.config import PipelineConfig, VerifyConfig
from taskmint.errors import DatasetError
from taskmint.languages import build_environment
from taskmint.publish.loader import load_seed, load_tasks
from taskmint.records import Environment, Reward, SeedApp, Task
from taskmint.sandbox.base import Limits, Sandbox
from taskmint.sandbox.local import LocalSandbox
from taskmint.verify.reward import grade_patch, policy_view

__all__ = ["load_tasks", "runtime_for", "verify", "workspace"]

_CLIENTS: dict[str, RewardClient] = {}


def _cache(cache_dir: str | os.PathLike[str] | None) -> Path:
    return Path(cache_dir) if cache_dir is not None else PipelineConfig().cache_dir


def _origin(task: Task) -> str:
    if not task.origin:
        raise DatasetError(
            f"task {task.instance_id} has no origin (it was not loaded from a published "
            "version); load it with taskmint.load_tasks, or pass seed= explicitly"
        )
    return task.origin


def workspace(
    task: Task,
    dest: str | os.PathLike[str],
    *,
    cache_dir: str | os.PathLike[str] | None = None,
    storage_options: dict[str, Any] | None = None,
) -> Path:
    """Write the policy's view of `task` (the broken tree) into the empty folder `dest`.

    The seed snapshot comes from the `environments` config of the version the task was loaded
    from (`origin`), unpacked once per snapshot hash under `cache_dir`.
    """
    seed = load_seed(
        _origin(task),
        task.snapshot_id,
        cache_dir=_cache(cache_dir),
        storage_options=storage_options,
    )
    return policy_view(task, seed, Path(dest))


def runtime_for(
    task: Task,
    *,
    cache_dir: str | os.PathLike[str] | None = None,
    storage_options: dict[str, Any] | None = None,
) -> tuple[SeedApp, Environment]:
    """The seed snapshot and the built test environment a loaded task is verified with.

    Both are cached by hash under `cache_dir` (the snapshot by its tree, the environment by
    its inputs), so a training loop pays for them once per seed.
    """
    cache = _cache(cache_dir)
    seed = load_seed(
        _origin(task), task.snapshot_id, cache_dir=cache, storage_options=storage_options
    )
    return seed, build_environment(seed, cache_dir=cache)


def verify(
    task: Task,
    patch: str,
    *,
    seed: SeedApp | None = None,
    env: Environment | None = None,
    sandbox: Sandbox | None = None,
    limits: Limits | None = None,
    fail_fast: bool = False,
    cache_dir: str | os.PathLike[str] | None = None,
    storage_options: dict[str, Any] | None = None,
    config: VerifyConfig | None = None,
    reward_url: str | None = None,
) -> Reward:
    """The reward for `patch` (a `git diff` relative to the task's root) on `task`.

    `seed` and `env` default to the ones of the version the task was loaded from (see
    `runtime_for`); `sandbox` to the local bubblewrap sandbox; `limits` to the defaults with
    the seed's timeout; `config` to the default `VerifyConfig`. The grading itself is
    `taskmint.verify.grade_patch`, the one function every reward comes from.

    With `reward_url` (or `TASKMINT_REWARD_URL` set, and no `seed`, `env` or `sandbox` given)
    the patch is graded by that `taskmint serve-reward` service instead, through
    `taskmint.RewardClient` (same reward, retried across overload and restarts); an empty
    `reward_url` forces local grading.
    """
    if reward_url is None and seed is None and env is None and sandbox is None:
        reward_url = os.environ.get(URL_ENV) or None
    if reward_url:
        client = _CLIENTS.get(reward_url)
        if client is None:
            client = _CLIENTS[reward_url] = RewardClient(reward_url)
        return client.verify(task.instance_id, patch)
    if seed is None or env is None:
        seed, env = runtime_for(task, cache_dir=cache_dir, storage_options=storage_options)
    return grade_patch(
        task,
        patch,
        seed=seed,
        env=env,
        sandbox=sandbox if sandbox is not None else LocalSandbox(),
        limits=limits if limits is not None else Limits().with_wall(seed.manifest.timeout),
        config=config if config is not None else VerifyConfig(),
        fail_fast=fail_fast,
    )
