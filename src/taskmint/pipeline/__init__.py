"""The pipeline: what happens to a seed and its candidates, Prefect-free.

`seed` prepares a seed (acquire, environment, index, original runs, coverage); `mint` mints its
candidates in one fixed order (validate, leak scan, describe and the reference solvers);
`calibration` runs the configured models; `refresh.refresh` and `harder.harder` are the two
runs (not exported here: the modules keep their names); `summary`
and `alerts` report them. Steps run through an `Executor` (`steps`): `LocalExecutor` in this
process, or Prefect tasks in `taskmint.flows`, which add retries, task runners and the UI and
nothing else. Every per-item failure comes back as a value (`failures`).
"""

from taskmint.pipeline.calibration import (
    CalibrationOutcome,
    calibrate_seed,
    calibrate_version,
    calibrate_with_models,
    spend_of,
)
from taskmint.pipeline.failures import describe_error, failure_verdict, is_infrastructure_error
from taskmint.pipeline.harder import Budget, HarderRequest, HarderResult
from taskmint.pipeline.mint import MintResult, mint_candidate, result_store
from taskmint.pipeline.progress import NullProgress, Progress, reporting
from taskmint.pipeline.refresh import RefreshResult, SeedOutcome, mint_seed
from taskmint.pipeline.seed import PreparedSeed, fallback_manifest, prepare_seed, test_command
from taskmint.pipeline.steps import Executor, LocalExecutor, Step, step, step_of
from taskmint.pipeline.summary import SeedSummary, summarize_seed

__all__ = [
    "Budget",
    "CalibrationOutcome",
    "Executor",
    "HarderRequest",
    "HarderResult",
    "LocalExecutor",
    "MintResult",
    "NullProgress",
    "PreparedSeed",
    "Progress",
    "RefreshResult",
    "SeedOutcome",
    "SeedSummary",
    "Step",
    "calibrate_seed",
    "calibrate_version",
    "calibrate_with_models",
    "describe_error",
    "failure_verdict",
    "fallback_manifest",
    "is_infrastructure_error",
    "mint_candidate",
    "mint_seed",
    "prepare_seed",
    "reporting",
    "result_store",
    "spend_of",
    "step",
    "step_of",
    "summarize_seed",
    "test_command",
]
