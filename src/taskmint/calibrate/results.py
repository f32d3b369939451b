"""What model calibration produces: `Attempt` per attempt, `TaskCalibration` per task.

These records, the store protocol attempts are kept in across runs (`AttemptStore`) and the
key an attempt is kept under (`attempt_key`) need no model client: importing them never
imports `openai`, so a consumer of stored or published results needs no calibration extra.
"""

from __future__ import annotations

import hashlib
import json
from dataclasses import dataclass
from typing import Any, Literal, Protocol

from taskmint.calibrate.models import ModelConfig
from taskmint.config import VerifyConfig
from taskmint.records import Calibration, Task

__all__ = ["Attempt", "AttemptStore", "StopReason", "TaskCalibration", "attempt_key"]

StopReason = Literal[
    "submitted",  # the model called submit
    "gave_up",  # the model stopped calling tools
    "max_turns",
    "max_tokens",
    "wall_time",
    "context_exhausted",  # the endpoint refused a conversation longer than its context
    "api_error",  # the endpoint failed (infrastructure; the attempt does not count)
]


@dataclass(frozen=True, slots=True, kw_only=True)
class Attempt:
    """One model's attempt at one task, graded."""

    task_id: str
    model: str  # the configured name
    model_id: str  # the model id the endpoint reported ("" if it never answered)
    hint_level: int
    reward: float
    stop: StopReason
    reason: str
    infra_error: bool = False
    turns: int = 0
    tool_calls: int = 0
    tool_errors: int = 0
    prompt_tokens: int = 0
    completion_tokens: int = 0
    cost: float = 0.0
    wall_time: float = 0.0
    retries: int = 0
    patch: str = ""

    @property
    def solved(self) -> bool:
        """Whether the verifier gave full reward."""
        return self.reward >= 1.0

    @property
    def tokens(self) -> int:
        """Prompt plus completion tokens."""
        return self.prompt_tokens + self.completion_tokens


@dataclass(frozen=True, slots=True, kw_only=True)
class TaskCalibration:
    """Everything calibration learned about one task across the configured models.

    `calibrations` holds one row per (model, hint level): `solver_kind="model"`, the model's
    configured name and the hint level (0: no hint; K: the first K hints). `min_hint_level` is,
    per model, the smallest configured hint level at which it solved the task at least once
    (None: never). `attempts` holds every attempt made, infrastructure errors included, in the
    order made.
    """

    instance_id: str
    calibrations: tuple[Calibration, ...]
    bands: tuple[tuple[str, str], ...]  # (model, band) without hints
    min_hint_level: tuple[tuple[str, int | None], ...]
    retired: bool
    model_ids: tuple[tuple[str, str], ...] = ()  # (model, id the endpoint reported)
    wall_time: float = 0.0
    errors: tuple[str, ...] = ()
    attempts: tuple[Attempt, ...] = ()


class AttemptStore(Protocol):
    """Where finished attempts are kept across runs (`taskmint.cache.ResultStore` is one)."""

    def get(self, key: str) -> tuple[bool, Any]: ...

    def put(self, key: str, value: Any) -> None: ...


def attempt_key(
    task: Task, model: ModelConfig, hint_level: int, index: int, verify_config: VerifyConfig | None
) -> str:
    """The store key of one attempt: what it saw (the task's text and code), who made it (the
    model's whole configuration), with which hints, which sample, graded how."""
    blob = json.dumps(
        [
            "attempt",
            task.instance_id,
            task.problem_statement,
            list(task.hints),
            task.breaking_patch,
            task.patch,
            repr(model),
            hint_level,
            index,
            repr(verify_config),
        ],
        sort_keys=True,
        default=str,
    )
    return hashlib.sha256(blob.encode("utf-8", "surrogateescape")).hexdigest()
