"""The reward service (`taskmint serve-reward`, extra `taskmint[serve]`): `verify` over HTTP.

`TaskRegistry` loads and checks dataset versions; `RewardService` admits, queues and grades
(`grade_patch`, the library's one grading path) with bounded concurrency, back-pressure,
deadlines, retries on sandbox faults, and results stored by request id; `create_app` is the
HTTP API (Starlette) and `serve` runs it under uvicorn. The client is `taskmint.RewardClient`,
which needs no extra.
"""

from taskmint.service.app import create_app
from taskmint.service.grading import RewardService, ServiceConfig, reward_json
from taskmint.service.registry import TaskRegistry, UnknownTask
from taskmint.service.server import serve

__all__ = [
    "RewardService",
    "ServiceConfig",
    "TaskRegistry",
    "UnknownTask",
    "create_app",
    "reward_json",
    "serve",
]
