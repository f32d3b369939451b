"""`TaskmintEnv`: OpenEnv's `EnvClient` typed for this environment, with the Task API.

Episodes go over OpenEnv's websocket session (`reset`, `step`, `state`); the Task API over
HTTP, as OpenEnv's Task API guide has environment clients do. The client is async, like every
`EnvClient`; `.sync()` gives OpenEnv's synchronous wrapper, which wraps these methods too:

    with TaskmintEnv(base_url="http://127.0.0.1:8000").sync() as env:
        n = env.num_tasks("python")
        first = env.reset(split="python", index=0)
        result = env.step(TaskmintAction(tool="read_file", arguments={"path": "app.py"}))
"""

from __future__ import annotations

from typing import Any

import httpx
from openenv.core.client_types import StepResult
from openenv.core.env_client import EnvClient

from taskmint.openenv.models import ENV_NAME, TaskmintAction, TaskmintObservation, TaskmintState

__all__ = ["TaskmintEnv"]


class TaskmintEnv(EnvClient[TaskmintAction, TaskmintObservation, TaskmintState]):
    """A session with a taskmint environment server (see the module's docstring).

    `message_timeout_s` bounds one reply: a `submit` runs `verify`, and `run_tests` or
    `shell` the time they are given, so the default is generous.
    """

    def __init__(
        self,
        base_url: str,
        *,
        message_timeout_s: float = 900.0,
        env_name: str = ENV_NAME,
        **kwargs: Any,
    ) -> None:
        super().__init__(base_url, message_timeout_s=message_timeout_s, **kwargs)
        http = base_url.rstrip("/")
        if http.startswith("ws://"):
            http = "http://" + http[len("ws://") :]
        elif http.startswith("wss://"):
            http = "https://" + http[len("wss://") :]
        self._http_url = http
        self._env_name = env_name

    # -- EnvClient's hooks ----------------------------------------------------------------------

    def _step_payload(self, action: TaskmintAction) -> dict[str, Any]:
        return action.model_dump()

    def _parse_result(self, payload: dict[str, Any]) -> StepResult[TaskmintObservation]:
        obs = TaskmintObservation(
            **payload.get("observation", {}),
            reward=payload.get("reward"),
            done=bool(payload.get("done", False)),
        )
        return StepResult(observation=obs, reward=obs.reward, done=obs.done)

    def _parse_state(self, payload: dict[str, Any]) -> TaskmintState:
        return TaskmintState(**payload)

    # -- the Task API (HTTP) --------------------------------------------------------------------

    async def _task_api(self, method: str, route: str, body: dict[str, Any] | None = None) -> Any:
        url = f"{self._http_url}/{self._env_name}/{route}"
        async with httpx.AsyncClient(timeout=60.0, trust_env=False) as http:
            response = await http.request(method, url, json=body)
        if response.status_code >= 400:
            try:
                detail = response.json().get("detail", response.text)
            except ValueError:
                detail = response.text
            raise ValueError(f"{route}: {response.status_code} {detail}")
        return response.json()

    async def list_splits(self) -> list[str]:
        """The split names (`all`, the languages, the bands)."""
        return [s["name"] for s in await self._task_api("GET", "splits")]

    async def num_tasks(self, split: str) -> int:
        """How many tasks `split` holds."""
        return int((await self._task_api("POST", "num_tasks", {"split": split}))["num_tasks"])

    async def get_task(self, split: str, index: int) -> dict[str, Any]:
        """Task `index` of `split`: id, seed, language, strategy, band, retired."""
        body = {"split": split, "index": index}
        task: dict[str, Any] = (await self._task_api("POST", "task", body))["task"]
        return task

    async def list_tasks(self, split: str) -> list[dict[str, Any]]:
        """Every task of `split`, as `get_task` gives them."""
        tasks: list[dict[str, Any]] = (await self._task_api("POST", "tasks", {"split": split}))[
            "tasks"
        ]
        return tasks

    async def get_task_range(
        self, split: str, start: int | None = None, stop: int | None = None
    ) -> list[dict[str, Any]]:
        """Tasks `start:stop` of `split`."""
        body = {"split": split, "start": start, "stop": stop}
        tasks: list[dict[str, Any]] = (await self._task_api("POST", "task_range", body))["tasks"]
        return tasks
