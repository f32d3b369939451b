"""Stage 7, `calibrate`: a `Task` -> a `Calibration` per solver.

Two reference solvers run on every task (`reference`): `null` submits an empty patch and must
get reward 0 (the task is really broken), and `oracle` submits the gold patch and must get
reward 1 (the task is solvable and the verifier agrees). Models are calibrated against any
OpenAI-compatible endpoint: `campaign.calibrate_models` samples each (task, model, hint level)
sequentially (`sequential`, stopping by a `policy.SequentialPolicy` on the posteriors of
`posterior` and `joint`) with attempts of the attempt loop (`rollout`, over the tools of
`tools`), whose chat completions come from `endpoint`; `results` holds what they produce.
Bands and retirement are in `bands`, the static difficulty predictor in `predictor`.

`endpoint` imports the `openai` client, an optional dependency (`taskmint[calibrate]`), and so
do `rollout` and `campaign` through it; `import taskmint.calibrate` does not. Their public names
(`calibrate_models`, `run_attempt`, `make_client`) load on first use; without `openai`,
calibrating a model raises a `TaskmintError` that says what to install.
"""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING

from taskmint.calibrate.bands import band_of, is_retired, overall_band
from taskmint.calibrate.models import (
    DEFAULT_BANDS,
    AgentBudget,
    CalibrationConfig,
    MissingApiKeyError,
    ModelConfig,
    load_calibration_config,
    resolve_api_key,
)
from taskmint.calibrate.policy import SequentialPolicy
from taskmint.calibrate.predictor import DifficultyPredictor, cross_validate, fit_predictor
from taskmint.calibrate.reference import REFERENCE_SOLVERS, calibrate_reference, wilson_interval
from taskmint.calibrate.results import Attempt, AttemptStore, TaskCalibration
from taskmint.calibrate.sequential import Estimate, run_sequential

if TYPE_CHECKING:
    from taskmint.calibrate.campaign import calibrate_models
    from taskmint.calibrate.endpoint import make_client
    from taskmint.calibrate.rollout import run_attempt

__all__ = [
    "DEFAULT_BANDS",
    "REFERENCE_SOLVERS",
    "AgentBudget",
    "Attempt",
    "AttemptStore",
    "CalibrationConfig",
    "DifficultyPredictor",
    "Estimate",
    "MissingApiKeyError",
    "ModelConfig",
    "SequentialPolicy",
    "TaskCalibration",
    "band_of",
    "calibrate_models",
    "calibrate_reference",
    "cross_validate",
    "fit_predictor",
    "is_retired",
    "load_calibration_config",
    "make_client",
    "overall_band",
    "resolve_api_key",
    "run_attempt",
    "run_sequential",
    "wilson_interval",
]

# The names whose modules import the optional `openai` client, by module: loaded on first use.
_NEEDS_OPENAI = {
    "calibrate_models": "campaign",
    "make_client": "endpoint",
    "run_attempt": "rollout",
}


def __getattr__(name: str) -> object:
    module = _NEEDS_OPENAI.get(name)
    if module is None:
        raise AttributeError(f"module 'taskmint.calibrate' has no attribute {name!r}")
    return getattr(importlib.import_module(f"taskmint.calibrate.{module}"), name)
