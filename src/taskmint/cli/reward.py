"""`taskmint serve-reward`: the reward service (the `serve` extra)."""

from __future__ import annotations

import argparse
import importlib
import os
from typing import Any

from taskmint.cli.commands import version_dir
from taskmint.config import PipelineConfig
from taskmint.errors import TaskmintError

__all__ = ["cmd_serve_reward"]


def cmd_serve_reward(args: argparse.Namespace, config: PipelineConfig) -> int:
    """Serve rewards for one or more versions until SIGTERM or Ctrl-C (which drain)."""
    try:
        # imported only now: starlette and uvicorn are the optional `serve` extra
        service = importlib.import_module("taskmint.service")
    except ImportError as exc:
        raise TaskmintError(
            f"the reward service needs starlette and uvicorn, which are not installed ({exc}); "
            "install them with: pip install 'taskmint[serve]'"
        ) from exc
    datasets = args.dataset or [version_dir(argparse.Namespace(dataset=None), config)]
    defaults = service.ServiceConfig()
    settings = service.ServiceConfig(
        concurrency=args.concurrency or defaults.concurrency,
        queue_size=args.queue or 0,
        queue_per_env=args.queue_per_env or 0,
        deadline=args.deadline,
        max_patch_bytes=args.max_patch_bytes,
        retries=args.retries,
        warm_up=not args.no_warm_up,
    )
    token = args.token or os.environ.get("TASKMINT_REWARD_TOKEN") or None

    def ready(svc: Any) -> None:
        versions = ", ".join(f"{v} ({u})" for v, u in svc.registry.versions.items())
        print(
            f"serving rewards for {len(svc.registry)} tasks of {versions} on "
            f"http://{args.host}:{args.port} ({settings.concurrency} graders, queue "
            f"{settings.queue_limit})",
            flush=True,
        )

    service.serve(
        datasets,
        state_dir=args.state_dir or config.cache_dir / "reward-service",
        host=args.host,
        port=args.port,
        token=token,
        config=settings,
        sandbox=config.sandbox,
        cache_dir=config.cache_dir,
        limits=config.sandbox.limits,
        verify_config=config.verify,
        drain_seconds=args.drain,
        log_level=args.log_level,
        on_ready=ready,
    )
    return 0
