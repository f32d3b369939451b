"""taskmint: mint verifiable reinforcement-learning coding tasks.

A working application with a passing test suite goes in; tasks come out, each a feature removed
from the application, proven to break specific tests, described, calibrated, and published as a
versioned Hugging Face dataset with a `verify(task, patch)` reward function.

A training job needs only `load_tasks`, `workspace` and `verify` (`taskmint.consumer`), which
install with no extras. The stages (one subpackage each: acquire, index, excise, validate,
verify, publish, calibrate, describe) are driven by the Prefect-free `taskmint.pipeline`, which
the CLI and the Prefect flows (`taskmint.flows`, extra `taskmint[flows]`) run.
"""

from taskmint import pyast as _pyast  # noqa: F401  (installs the locked ast.parse)
from taskmint.client import RewardClient
from taskmint.config import PipelineConfig
from taskmint.consumer import load_tasks, verify, workspace
from taskmint.errors import TaskmintError
from taskmint.records import Candidate, CodeIndex, Environment, Reward, SeedApp, Task, Verdict

__version__ = "0.1.0"

__all__ = [
    "Candidate",
    "CodeIndex",
    "Environment",
    "PipelineConfig",
    "Reward",
    "RewardClient",
    "SeedApp",
    "Task",
    "TaskmintError",
    "Verdict",
    "__version__",
    "load_tasks",
    "verify",
    "workspace",
]
