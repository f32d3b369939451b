"""The wire types of the taskmint OpenEnv environment: one action, one observation, the state.

An action names a tool and its arguments (`TaskmintAction(tool="read_file",
arguments={"path": "src/app.py"})`): the tools are listed in the observation `reset` returns, as
chat-completions function schemas, so a model's tool call maps onto an action one to one.
"""

from __future__ import annotations

from typing import Any

from openenv.core.env_server.types import Action, Observation, State
from pydantic import Field

__all__ = ["ENV_NAME", "TaskmintAction", "TaskmintObservation", "TaskmintState"]

ENV_NAME = "taskmint"  # the server's environment name: the Task API's routes are /taskmint/...


class TaskmintAction(Action):
    """One tool call: the tool's name and its arguments (a JSON object)."""

    tool: str = Field(description="the tool to run (one of the tools `reset` listed)")
    arguments: dict[str, Any] = Field(
        default_factory=dict, description="the tool's arguments, as its schema describes them"
    )


class TaskmintObservation(Observation):
    """What a reset or a step returns.

    `reset` fills `problem_statement`, `instructions` and `tools`; a step fills `tool` and
    `output` (the tool's text, `error` set when the call failed: an unknown tool, bad
    arguments, a path outside the repository, a step after the episode ended). The step that
    submits ends the episode (`done`) with `verify`'s reward and its details in `info`.
    """

    task_id: str = Field(default="", description="the task's instance_id")
    split: str = Field(default="", description="the split the task was drawn from")
    index: int = Field(default=-1, description="the task's index in its split")
    language: str = Field(default="", description="the task's language (python, javascript)")
    problem_statement: str = Field(default="", description="the task (reset only)")
    instructions: str = Field(default="", description="how the episode works (reset only)")
    tools: list[dict[str, Any]] = Field(
        default_factory=list, description="the tools, chat-completions schemas (reset only)"
    )
    tool: str = Field(default="", description="the tool this step ran")
    output: str = Field(default="", description="the tool's output")
    error: bool = Field(default=False, description="the call failed; output says why")
    info: dict[str, Any] = Field(
        default_factory=dict, description="submit: verify's verdict (reason, passed, expected...)"
    )


class TaskmintState(State):
    """The episode: its id and step count (OpenEnv's), the task, and how it ended."""

    task_id: str = ""
    split: str = ""
    index: int = -1
    done: bool = False
    reward: float | None = None
