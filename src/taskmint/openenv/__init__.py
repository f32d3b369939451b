"""taskmint tasks as an OpenEnv environment (the optional `openenv` extra: openenv-core).

- `TaskmintEnvironment` (`environment`): one task per episode; `reset(split, index)` gives the
  problem statement and the tools, `step(TaskmintAction)` runs a tool in taskmint's sandbox,
  and `submit` ends the episode with `taskmint.verify`'s reward. It implements OpenEnv's Task
  API (`list_splits`, `list_tasks`, `num_tasks`, `get_task`, `get_task_range`).
- `TaskCatalog` (`catalog`): a dataset version's tasks by split, their runtimes, the sandbox.
- `create_taskmint_app` / `serve` (`server`): OpenEnv's `create_app` under uvicorn
  (`taskmint serve-openenv`).
- `TaskmintEnv` (`client`): OpenEnv's `EnvClient` for it, with the Task API.

Nothing below this package imports it: `pip install taskmint` works without openenv-core.
See docs/openenv.md.
"""

from taskmint.openenv.catalog import CatalogConfig, TaskCatalog, UnknownSplitError
from taskmint.openenv.client import TaskmintEnv
from taskmint.openenv.environment import TaskmintEnvironment
from taskmint.openenv.models import ENV_NAME, TaskmintAction, TaskmintObservation, TaskmintState
from taskmint.openenv.server import add_task_api, create_taskmint_app, serve

__all__ = [
    "ENV_NAME",
    "CatalogConfig",
    "TaskCatalog",
    "TaskmintAction",
    "TaskmintEnv",
    "TaskmintEnvironment",
    "TaskmintObservation",
    "TaskmintState",
    "UnknownSplitError",
    "add_task_api",
    "create_taskmint_app",
    "serve",
]
