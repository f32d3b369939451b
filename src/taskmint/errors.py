"""The one exception hierarchy of taskmint.

Exceptions are for broken contracts (a missing tool, a malformed manifest, a corrupt dataset).
Per-item failures (a candidate that does not validate, a file that does not parse) are values,
never exceptions: see `taskmint.records.Verdict`.
"""

from __future__ import annotations

__all__ = [
    "DatasetError",
    "EnvironmentBuildError",
    "ManifestError",
    "PatchError",
    "SandboxError",
    "SandboxUnavailableError",
    "TaskmintError",
]


class TaskmintError(Exception):
    """Base class of every error taskmint raises on purpose."""


class ManifestError(TaskmintError, ValueError):
    """A seed's `taskmint.toml` or a seeds manifest is missing or malformed."""


class EnvironmentBuildError(TaskmintError, RuntimeError):
    """A seed's test environment (venv) could not be built."""


class SandboxError(TaskmintError, RuntimeError):
    """The sandbox could not run a command (not: the command failed inside it)."""


class SandboxUnavailableError(SandboxError):
    """A sandbox backend's tool is missing on this machine."""


class PatchError(TaskmintError, ValueError):
    """A patch could not be parsed or applied."""


class DatasetError(TaskmintError, RuntimeError):
    """A published dataset is missing, incomplete or corrupt."""
