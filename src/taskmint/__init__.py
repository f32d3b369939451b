"""taskmint: mint verifiable reinforcement-learning coding tasks.

A working application with a passing test suite goes in; tasks come out, each a feature removed
from the application, proven to break specific tests, described, calibrated, and published as a
versioned Hugging Face dataset with a `verify(task, patch)` reward function.

Stages (one subpackage each): acquire -> envs -> index -> excise -> validate -> describe ->
calibrate -> publish, and verify. Prefect flows live in the top-level `flows` package.
"""

from taskmint import pyast as _pyast  # noqa: F401  (installs the locked ast.parse)
from taskmint.config import PipelineConfig
from taskmint.errors import TaskmintError
from taskmint.records import Candidate, CodeIndex, Environment, Reward, SeedApp, Task, Verdict
from taskmint.verify import verify

__version__ = "0.1.0"


def __getattr__(name: str) -> object:
    # `taskmint.load_tasks` imports `datasets` only when a loader asks for it.
    if name == "load_tasks":
        from taskmint.publish.loader import load_tasks

        return load_tasks
    raise AttributeError(f"module 'taskmint' has no attribute {name!r}")


__all__ = [
    "Candidate",
    "CodeIndex",
    "Environment",
    "PipelineConfig",
    "Reward",
    "SeedApp",
    "Task",
    "TaskmintError",
    "Verdict",
    "__version__",
    "load_tasks",
    "verify",
]
