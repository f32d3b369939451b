"""Serving the environment: OpenEnv's own app factory (`create_app`) under uvicorn.

`create_taskmint_app` builds the FastAPI app with OpenEnv's `create_app` (the `/ws` session
protocol that `EnvClient` speaks, `/reset`, `/step`, `/state`, `/schema`, `/health`,
`/metadata`) over `TaskmintEnvironment`. OpenEnv's Task API routes (`GET /taskmint/splits`,
`POST /taskmint/tasks`, `/taskmint/num_tasks`, `/taskmint/task`, `/taskmint/task_range`,
`GET /list_environments`) are registered here with the same paths, bodies and status codes as
OpenEnv's Task API guide, because openenv-core 0.3 (the release this is built on) does not
register them itself; an app that already has them is left as it is.
"""

from __future__ import annotations

import functools
import os
from collections.abc import Callable
from typing import Any

import uvicorn
from fastapi import FastAPI, HTTPException
from openenv.core.env_server.http_server import create_app
from openenv.core.env_server.types import ConcurrencyConfig
from pydantic import BaseModel

from taskmint.config import Limits
from taskmint.openenv.catalog import CatalogConfig, TaskCatalog
from taskmint.openenv.environment import TaskmintEnvironment
from taskmint.openenv.models import ENV_NAME, TaskmintAction, TaskmintObservation
from taskmint.sandbox.base import Sandbox

__all__ = ["ENV_NAME", "add_task_api", "create_taskmint_app", "serve"]


class _SplitBody(BaseModel):
    split: str


class _TaskBody(BaseModel):
    split: str
    index: int


class _RangeBody(BaseModel):
    split: str
    start: int | None = None
    stop: int | None = None


def create_taskmint_app(
    catalog: TaskCatalog,
    *,
    max_sessions: int = 4,
    session_timeout: float | None = None,
    env_name: str = ENV_NAME,
) -> FastAPI:
    """The OpenEnv app over `catalog`: up to `max_sessions` concurrent episodes (one per
    websocket session), idle ones closed after `session_timeout` seconds (None: never)."""
    factory = functools.partial(TaskmintEnvironment, catalog)
    app = create_app(
        factory,
        TaskmintAction,
        TaskmintObservation,
        env_name=env_name,
        concurrency_config=ConcurrencyConfig(
            max_concurrent_envs=max_sessions, session_timeout=session_timeout
        ),
    )
    add_task_api(app, factory, env_name)
    return app


def add_task_api(
    app: FastAPI, factory: Callable[[], TaskmintEnvironment], env_name: str = ENV_NAME
) -> None:
    """Register the Task API routes over a fresh environment per request (the methods are
    metadata only), unless the app has them already."""
    prefix = f"/{env_name}"
    if any(getattr(route, "path", None) == f"{prefix}/splits" for route in app.routes):
        return

    def call(method: str, *args: Any) -> Any:
        env = factory()
        try:
            return getattr(env, method)(*args)
        except IndexError as exc:
            raise HTTPException(status_code=400, detail=str(exc)) from None
        finally:
            env.close()

    @app.get("/list_environments", tags=["Task API"])
    def list_environments() -> list[str]:
        return [env_name]

    @app.get(f"{prefix}/splits", tags=["Task API"])
    def splits() -> list[dict[str, str]]:
        return call("list_splits")

    @app.post(f"{prefix}/tasks", tags=["Task API"])
    def tasks(body: _SplitBody) -> dict[str, Any]:
        return {"tasks": call("list_tasks", body.split), "env_name": env_name}

    @app.post(f"{prefix}/num_tasks", tags=["Task API"])
    def num_tasks(body: _SplitBody) -> dict[str, int]:
        return {"num_tasks": call("num_tasks", body.split)}

    @app.post(f"{prefix}/task", tags=["Task API"])
    def task(body: _TaskBody) -> dict[str, Any]:
        return {"task": call("get_task", body.split, body.index)}

    @app.post(f"{prefix}/task_range", tags=["Task API"])
    def task_range(body: _RangeBody) -> dict[str, Any]:
        return {"tasks": call("get_task_range", body.split, body.start, body.stop)}


def serve(
    dataset: str | os.PathLike[str],
    *,
    host: str = "127.0.0.1",
    port: int = 8000,
    max_sessions: int = 4,
    session_timeout: float | None = None,
    cache_dir: str | os.PathLike[str] | None = None,
    sandbox: Sandbox | None = None,
    limits: Limits | None = None,
    config: CatalogConfig | None = None,
    log_level: str = "info",
    on_ready: Callable[[TaskCatalog], None] | None = None,
) -> None:
    """Serve the tasks of the dataset version `dataset` until interrupted."""
    catalog = TaskCatalog(
        dataset, cache_dir=cache_dir, sandbox=sandbox, limits=limits, config=config
    )
    app = create_taskmint_app(catalog, max_sessions=max_sessions, session_timeout=session_timeout)
    if on_ready is not None:
        on_ready(catalog)
    uvicorn.run(app, host=host, port=port, log_level=log_level)
