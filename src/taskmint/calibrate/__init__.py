"""Stage 7, `calibrate`: a `Task` -> a `Calibration` per solver.

Two reference solvers run on every task: `null` submits an empty patch and must get reward 0
(the task is really broken), and `oracle` submits the gold patch and must get reward 1 (the
task is solvable and the verifier agrees). Models are calibrated through the `openai` client
against any OpenAI-compatible endpoint (`agent`), with sequential sampling (`sequential`), bands
and retirement (`bands`), and a static difficulty predictor (`predictor`).
"""

from taskmint.calibrate.agent import (
    Attempt,
    AttemptStore,
    TaskCalibration,
    calibrate_models,
    make_client,
    row_name,
    run_attempt,
)
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
from taskmint.calibrate.predictor import DifficultyPredictor, cross_validate, fit_predictor
from taskmint.calibrate.reference import REFERENCE_SOLVERS, calibrate_reference, wilson_interval
from taskmint.calibrate.sequential import Estimate, SequentialPolicy, run_sequential

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
    "row_name",
    "run_attempt",
    "run_sequential",
    "wilson_interval",
]
