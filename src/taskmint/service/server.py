"""`serve`: load the versions, open the sandboxes, and run the app under uvicorn until stopped.

SIGTERM (or SIGINT) drains: new requests get 503 and `Retry-After`, uvicorn stops accepting
connections, the requests already admitted are graded and answered (up to `drain_seconds`),
and then the process exits.
"""

from __future__ import annotations

import dataclasses
import os
import sys
import threading
from collections.abc import Callable, Iterable
from pathlib import Path
from types import FrameType
from typing import Any

import uvicorn

from taskmint.config import Limits, SandboxConfig, VerifyConfig
from taskmint.sandbox import open_sandbox
from taskmint.service.app import create_app
from taskmint.service.grading import RewardService, ServiceConfig
from taskmint.service.registry import TaskRegistry

__all__ = ["serve"]

_LOOPBACK = {"127.0.0.1", "::1", "localhost"}


class _DrainingServer(uvicorn.Server):
    """uvicorn's server, telling the service to refuse new work as soon as a signal comes."""

    def __init__(self, config: uvicorn.Config, service: RewardService) -> None:
        super().__init__(config)
        self.service = service

    def handle_exit(self, sig: int, frame: FrameType | None) -> None:
        self.service.begin_drain()
        super().handle_exit(sig, frame)


def serve(
    datasets: Iterable[str | os.PathLike[str]],
    *,
    state_dir: str | os.PathLike[str],
    host: str = "127.0.0.1",
    port: int = 8000,
    token: str | None = None,
    config: ServiceConfig | None = None,
    sandbox: SandboxConfig | None = None,
    cache_dir: str | os.PathLike[str] | None = None,
    storage_options: dict[str, Any] | None = None,
    limits: Limits | None = None,
    verify_config: VerifyConfig | None = None,
    drain_seconds: float = 120.0,
    log_level: str = "info",
    on_ready: Callable[[RewardService], None] | None = None,
) -> None:
    """Serve rewards for the tasks of `datasets` (dataset or version folders, fsspec URLs)."""
    config = config or ServiceConfig()
    sandbox_config = sandbox or SandboxConfig()
    if host not in _LOOPBACK and not token:
        print(
            f"taskmint serve-reward: listening on {host} with no token: anyone who can reach "
            "the port can use the graders (give --token)",
            file=sys.stderr,
        )
    registry = TaskRegistry(datasets, cache_dir=cache_dir, storage_options=storage_options)
    cold_config = dataclasses.replace(sandbox_config, warm=False)
    with open_sandbox(sandbox_config) as warm, open_sandbox(cold_config) as cold:
        service = RewardService(
            registry,
            warm,
            retry_sandbox=cold,
            config=config,
            state_dir=Path(state_dir),
            limits=limits,
            verify_config=verify_config,
        )

        def start() -> None:
            target = service.warm_up if config.warm_up else service.ready.set
            threading.Thread(target=target, name="taskmint-warm-up", daemon=True).start()
            if on_ready is not None:
                on_ready(service)

        app = create_app(service, token=token, on_startup=start)
        server = _DrainingServer(
            uvicorn.Config(
                app,
                host=host,
                port=port,
                log_level=log_level,
                timeout_graceful_shutdown=int(drain_seconds),
                timeout_keep_alive=5,
                backlog=4096,
            ),
            service,
        )
        server.run()
