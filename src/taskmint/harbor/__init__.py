"""Harbor: a published version's tasks as Harbor task folders, and trials of them.

`taskmint export harbor` (`export_harbor`) writes one folder per task in Harbor's task format
(task.toml, instruction.md, environment/, tests/, solution/); its verifier is taskmint's grader,
with the defences of `taskmint.verify` (see `taskmint.harbor.export`). `run_trial` tries a
folder on the local Docker Engine in Harbor's order (build, start, agent, tests, reward; see
`taskmint.harbor.trial`).
"""

from taskmint.harbor.export import HarborExportError, content_hash, export_harbor, export_task
from taskmint.harbor.trial import TrialResult, run_trial, run_trials

__all__ = [
    "HarborExportError",
    "TrialResult",
    "content_hash",
    "export_harbor",
    "export_task",
    "run_trial",
    "run_trials",
]
