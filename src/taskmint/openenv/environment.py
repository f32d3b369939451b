"""`TaskmintEnvironment`: one taskmint task per episode, as an OpenEnv `Environment`.

`reset(split, index)` writes the task's policy view (`taskmint.workspace`: the broken tree, no
history, no hidden tests, no answer) into a fresh scratch folder, keeps a pristine copy, and
returns the problem statement and the tools. `step(TaskmintAction)` runs one tool:

- `shell`: a command (`bash -c`) in taskmint's sandbox over the workspace, as an unprivileged
  user with no network, the seed's interpreter and environment on `PATH`, and a wall-clock
  limit (`timeout`, default and ceiling from `CatalogConfig`);
- `list_files`, `read_file`, `search`, `edit_file`, `apply_patch`: the calibration harness's
  file tools (`taskmint.calibrate.tools.Toolbox`), which never leave the workspace;
- `run_tests`: the visible tests (the task's expected tests less the hidden ones) over a copy
  of the workspace, in the sandbox, with the seed's timeout;
- `submit`: the workspace's diff against the pristine view, graded by `taskmint.verify`; the
  episode ends with its reward.

A bad call (an unknown tool, missing or mistyped arguments, a path outside the workspace, a
step before `reset` or after `submit`) returns an observation with `error` set and the reason;
the session goes on. The Task API (`list_splits`, `list_tasks`, `num_tasks`, `get_task`,
`get_task_range`) answers from the shared `TaskCatalog` without touching episode state.
"""

from __future__ import annotations

import json
import posixpath
import shutil
import uuid
from pathlib import Path
from typing import Any

from openenv.core.env_server.interfaces import Environment
from openenv.core.env_server.types import EnvironmentMetadata

from taskmint.calibrate.tools import TOOL_SPECS, SandboxTests, Toolbox, workspace_diff
from taskmint.consumer import verify, workspace
from taskmint.errors import SandboxError
from taskmint.languages import adapter_for
from taskmint.openenv.catalog import TaskCatalog, UnknownSplitError
from taskmint.openenv.models import TaskmintAction, TaskmintObservation, TaskmintState
from taskmint.records import Environment as SeedEnvironment
from taskmint.records import SeedApp, Task
from taskmint.runners.adapters import VENV_DIR, Adapter
from taskmint.sandbox.base import WORKSPACE, RunSpec
from taskmint.scratch import make_scratch

__all__ = ["INSTRUCTIONS", "SHELL_SPEC", "TaskmintEnvironment", "statement"]

SHELL_SPEC: dict[str, Any] = {
    "type": "function",
    "function": {
        "name": "shell",
        "description": "Run a shell command (bash -c) at the repository root, in a sandbox with "
        "the project's interpreter and dependencies on PATH and no network. Returns the exit "
        "status and the output (stdout and stderr together). Files it changes stay changed.",
        "parameters": {
            "type": "object",
            "properties": {
                "command": {"type": "string", "description": "the command line"},
                "timeout": {
                    "type": "number",
                    "description": "seconds before the command is killed (default 60)",
                },
            },
            "required": ["command"],
            "additionalProperties": False,
        },
    },
}

INSTRUCTIONS = """\
You are in a repository checked out at its root. A feature of the project has been removed and
you must restore it. Work through the tools: shell (a sandboxed command line, no network),
list_files, read_file and search to explore; edit_file (exact search-and-replace) or
apply_patch (a unified diff) to change files; run_tests to run the project's visible tests;
submit when you are done, which ends the episode. Only changes to source files count: tests and
test configuration are restored before grading, and hidden tests check the same behaviour.
"""


def statement(task: Task, hint_level: int = 0) -> str:
    """The problem statement, the first `hint_level` hints, and how the tests run."""
    parts = [task.problem_statement.strip()]
    hints = task.hints[: max(0, hint_level)]
    if hints:
        parts.append("## Hints\n\n" + "\n".join(f"{i}. {h}" for i, h in enumerate(hints, 1)))
    parts.append(f"The visible tests run with `{task.test_command}` (the run_tests tool).")
    return "\n\n".join(parts)


class _Episode:
    """One episode's task, folders and tools."""

    def __init__(
        self, catalog: TaskCatalog, task: Task, split: str, index: int, root: Path
    ) -> None:
        self.task, self.split, self.index, self.root = task, split, index, root
        self.seed, self.env = catalog.runtime(task)
        self.view = workspace(
            task,
            root / "view",
            cache_dir=catalog.cache_dir,
            storage_options=catalog.storage_options,
        )
        self.ws = root / "ws"
        shutil.copytree(self.view, self.ws, symlinks=True)
        hidden = set(task.hidden_tests)
        visible = tuple(
            t for t in dict.fromkeys((*task.FAIL_TO_PASS, *task.PASS_TO_PASS)) if t not in hidden
        )
        tests = SandboxTests(
            manifest=self.seed.manifest,
            env=self.env,
            sandbox=catalog.sandbox,
            limits=catalog.limits.with_wall(self.seed.manifest.timeout),
            visible=visible,
        )
        self.toolbox = Toolbox(self.ws, tests=tests, max_output=catalog.config.max_output)


class TaskmintEnvironment(Environment[TaskmintAction, TaskmintObservation, TaskmintState]):
    """taskmint tasks as OpenEnv episodes (see the module's docstring); one per session."""

    SUPPORTS_CONCURRENT_SESSIONS = True  # each session has its own scratch folder

    def __init__(self, catalog: TaskCatalog) -> None:
        super().__init__()
        self.catalog = catalog
        self._episode: _Episode | None = None
        self._state = TaskmintState()

    # -- the Task API (OpenEnv's TaskProvider protocol) ---------------------------------------

    def list_splits(self) -> list[dict[str, str]]:
        """The splits (`all`, the languages, the bands), all of type `train`."""
        return [{"name": name, "type": "train"} for name in self.catalog.split_names()]

    def list_tasks(self, split: str) -> list[dict[str, Any]]:
        """Every task of `split`, as metadata."""
        return self.get_task_range(split)

    def num_tasks(self, split: str) -> int:
        """How many tasks `split` holds."""
        return len(self.catalog.split(split))

    def get_task(self, split: str, index: int) -> dict[str, Any]:
        """The metadata of task `index` of `split` (IndexError when there is none)."""
        return TaskCatalog.spec(self.catalog.task(split, index), split, index)

    def get_task_range(
        self, split: str, start: int | None = None, stop: int | None = None
    ) -> list[dict[str, Any]]:
        """Tasks `start:stop` of `split` (slice semantics), as metadata."""
        tasks = self.catalog.split(split)
        indices = range(len(tasks))[slice(start, stop)]
        return [TaskCatalog.spec(tasks[i], split, i) for i in indices]

    # -- episodes -------------------------------------------------------------------------------

    def reset(
        self,
        seed: int | None = None,
        episode_id: str | None = None,
        split: str = "all",
        index: int | None = None,
        hint_level: int = 0,
        **kwargs: Any,
    ) -> TaskmintObservation:
        """Start an episode on task `index` of `split` (with no index, one drawn from `seed`)."""
        if kwargs:
            raise ValueError(
                f"unknown reset argument(s) {sorted(kwargs)}; reset takes split, index, "
                "hint_level, seed and episode_id"
            )
        tasks = self.catalog.split(split)
        if not tasks:
            raise UnknownSplitError(f"split {split!r} holds no task")
        if index is None:
            index = int(uuid.uuid4().int if seed is None else seed) % len(tasks)
        task = self.catalog.task(split, index)
        self._close_episode()
        root = make_scratch("taskmint-openenv-")
        try:
            self._episode = _Episode(self.catalog, task, split, index, root)
        except BaseException:
            shutil.rmtree(root, ignore_errors=True)
            raise
        self._state = TaskmintState(
            episode_id=episode_id or str(uuid.uuid4()),
            step_count=0,
            task_id=task.instance_id,
            split=split,
            index=index,
        )
        return TaskmintObservation(
            **self._where(),
            problem_statement=statement(task, hint_level),
            instructions=INSTRUCTIONS,
            tools=self.tools(),
        )

    @staticmethod
    def tools() -> list[dict[str, Any]]:
        """The tools' schemas (chat-completions form): shell, the file tools, run_tests, submit."""
        return [SHELL_SPEC, *(dict(spec) for spec in TOOL_SPECS)]

    def step(
        self, action: TaskmintAction, timeout_s: float | None = None, **kwargs: Any
    ) -> TaskmintObservation:
        """Run one tool; never raises for anything the policy sends."""
        ep = self._episode
        if ep is None:
            return self._error(action.tool, "no episode: call reset first")
        if self._state.done:
            return self._error(
                action.tool, "the episode is over (submitted); call reset to start another", True
            )
        self._state.step_count += 1
        if action.tool == "shell":
            return self._shell(ep, action.arguments, timeout_s)
        if action.tool == "submit":
            return self._submit(ep, action.arguments)
        outcome = ep.toolbox.call(action.tool, json.dumps(action.arguments))
        return TaskmintObservation(
            **self._where(), tool=action.tool, output=outcome.content, error=outcome.error
        )

    @property
    def state(self) -> TaskmintState:
        """The episode's id, step count and task."""
        return self._state

    def get_metadata(self) -> EnvironmentMetadata:
        """Name and description for OpenEnv's `/metadata`."""
        return EnvironmentMetadata(
            name="taskmint",
            description=f"taskmint tasks of {self.catalog.dataset}: restore a removed feature; "
            "the reward is taskmint.verify's",
        )

    def close(self) -> None:
        """Remove the episode's scratch folder."""
        self._close_episode()

    # -- the tools taskmint runs itself ----------------------------------------------------------

    def _shell(
        self, ep: _Episode, args: dict[str, Any], timeout_s: float | None
    ) -> TaskmintObservation:
        cfg = self.catalog.config
        command = args.get("command")
        unknown = sorted(set(args) - {"command", "timeout"})
        timeout = args.get("timeout", timeout_s if timeout_s is not None else cfg.command_seconds)
        if unknown:
            return self._error("shell", f"shell: unknown argument(s) {unknown}")
        if not isinstance(command, str) or not command.strip():
            return self._error("shell", "shell: `command` must be a non-empty string")
        if isinstance(timeout, bool) or not isinstance(timeout, int | float) or timeout <= 0:
            return self._error("shell", "shell: `timeout` must be a positive number of seconds")
        timeout = min(float(timeout), cfg.max_command_seconds)
        adapter = adapter_for(ep.seed.manifest)
        spec = RunSpec(
            argv=("/bin/bash", "-c", command),
            workspace=str(ep.ws),
            mounts=tuple(adapter.mounts(ep.env)),
            env=_shell_env(adapter, ep.seed, ep.env),
            limits=self.catalog.limits.with_wall(timeout),
            warm=False,
        )
        try:
            result = self.catalog.sandbox.run(spec)
        except SandboxError as exc:
            return self._error("shell", f"shell: the command could not be run: {exc}")
        status = (
            f"timed out after {timeout:g} s (killed)"
            if result.timed_out
            else f"exit status {result.exit_code}"
        )
        text = f"[{status}]\n{result.output}"
        if len(text) > cfg.max_output:
            text = text[: cfg.max_output] + "\n[... output truncated; ask for less]"
        return TaskmintObservation(**self._where(), tool="shell", output=text)

    def _submit(self, ep: _Episode, args: dict[str, Any]) -> TaskmintObservation:
        if args:
            return self._error("submit", f"submit takes no arguments, got {sorted(args)}")
        try:
            patch = workspace_diff(ep.view, ep.ws)
        except OSError as exc:
            return self._error("submit", f"submit: the workspace could not be read: {exc}")
        reward = verify(
            ep.task,
            patch,
            seed=ep.seed,
            env=ep.env,
            sandbox=self.catalog.sandbox,
            limits=self.catalog.limits.with_wall(ep.seed.manifest.timeout),
            config=self.catalog.config.verify,
        )
        self._state.done = True
        self._state.reward = reward.reward
        info = {
            "reason": reward.reason,
            "passed": reward.passed,
            "expected": reward.expected,
            "tampered": reward.tampered,
            "rejected_paths": [list(p) for p in reward.rejected_paths],
            "findings": list(reward.findings),
            "verify_seconds": reward.wall_time,
            "patch_bytes": len(patch.encode("utf-8", "surrogateescape")),
        }
        return TaskmintObservation(
            **self._where(),
            tool="submit",
            output=f"reward {reward.reward:g}: {reward.reason}",
            info=info,
            reward=reward.reward,
            done=True,
        )

    # -- helpers ------------------------------------------------------------------------------

    def _where(self) -> dict[str, Any]:
        ep = self._episode
        if ep is None:
            return {}
        return {
            "task_id": ep.task.instance_id,
            "split": ep.split,
            "index": ep.index,
            "language": ep.task.language,
        }

    def _error(self, tool: str, message: str, done: bool = False) -> TaskmintObservation:
        return TaskmintObservation(
            **self._where(),
            tool=tool,
            output=f"error: {message}",
            error=True,
            done=done,
            reward=self._state.reward if done else None,
        )

    def _close_episode(self) -> None:
        if self._episode is not None:
            shutil.rmtree(self._episode.root, ignore_errors=True)
            self._episode = None


def _shell_env(
    adapter: Adapter, seed: SeedApp, env: SeedEnvironment
) -> tuple[tuple[str, str], ...]:
    """The test runner's clean environment with the seed's interpreter first on PATH and, for
    Python, the seed's import paths on PYTHONPATH (so `python -c 'import pkg'` works)."""
    base = dict(adapter.base_env())
    if env.kind == "venv":
        first = f"{VENV_DIR}/bin"
        paths = [posixpath.normpath(posixpath.join(WORKSPACE, p)) for p in seed.manifest.pythonpath]
        if paths:
            base["PYTHONPATH"] = ":".join(paths)
    else:
        first = posixpath.dirname(env.interpreter)
    base["PATH"] = f"{first}:{base['PATH']}"
    return tuple(base.items())
