"""What an agent harness that acts through a shell needs to work on a taskmint task.

A harness such as mini-swe-agent runs a model's shell commands in a folder and ends with a
diff. Three calls cover that, with the plain install (no extras):

- `agent_workspace(task, dest)`: the policy's view of the task (`consumer.workspace`), made a
  git repository with one commit of the broken tree, so that an agent (or a harness's submit
  step) can run `git diff`. The commit holds nothing the policy view does not: no history of
  the original code. Caches (`__pycache__`, `.pytest_cache`, bytecode) are listed in
  `.git/info/exclude`, not in a `.gitignore` that would change the tree.
- `bubblewrap_args(task)`: arguments for `bwrap` that give a sandboxed shell the system
  read-only, a private `/tmp`, no network, and the task's test environment (its venv and
  interpreter, read-only, first on `PATH`), so `python -m pytest` runs the visible tests as the
  grader would. A harness adds its own `--bind` of the workspace after them (mini-swe-agent's
  bubblewrap environment takes them as `wrapper_args`).
- `diff_of(workspace, task)`: the agent's changes as a `git diff`, computed against a fresh
  policy view rather than taken from the agent, ready for `verify`. `.git`, caches and
  bytecode are left out; anything else the agent wrote is in it, and `verify` keeps only the
  files the task allows.
"""

from __future__ import annotations

import os
import shutil
import subprocess
import tempfile
from pathlib import Path
from typing import Any

from taskmint.calibrate.tools import workspace_diff
from taskmint.consumer import runtime_for, workspace
from taskmint.errors import TaskmintError
from taskmint.records import Task

__all__ = ["agent_workspace", "bubblewrap_args", "diff_of"]

_EXCLUDE = "__pycache__/\n*.py[co]\n.pytest_cache/\n"
_SYSTEM_DIRS = ("/usr", "/bin", "/sbin", "/lib", "/lib32", "/lib64", "/etc")
_SYSTEM_PATH = "/usr/local/bin:/usr/bin:/bin:/usr/sbin:/sbin"


def _git(dest: Path, *args: str) -> None:
    git = shutil.which("git")
    if git is None:
        raise TaskmintError("git is needed for an agent workspace; install the Debian package git")
    env = {
        "PATH": os.environ.get("PATH", "/usr/bin:/bin"),
        "HOME": str(dest),
        "GIT_CONFIG_NOSYSTEM": "1",
        "GIT_CONFIG_GLOBAL": os.devnull,
        "GIT_CEILING_DIRECTORIES": str(dest.parent),
        "LC_ALL": "C",
        # one commit, the same for every workspace of the task
        "GIT_AUTHOR_NAME": "taskmint",
        "GIT_AUTHOR_EMAIL": "taskmint@localhost",
        "GIT_COMMITTER_NAME": "taskmint",
        "GIT_COMMITTER_EMAIL": "taskmint@localhost",
        "GIT_AUTHOR_DATE": "2000-01-01T00:00:00Z",
        "GIT_COMMITTER_DATE": "2000-01-01T00:00:00Z",
    }
    done = subprocess.run(
        [git, "-c", "init.defaultBranch=main", "-c", "commit.gpgsign=false", *args],
        cwd=dest,
        env=env,
        capture_output=True,
        text=True,
        timeout=120,
    )
    if done.returncode != 0:
        raise TaskmintError(f"git {args[0]} failed in {dest}: {done.stderr.strip()[-2000:]}")


def agent_workspace(
    task: Task,
    dest: str | os.PathLike[str],
    *,
    git: bool = True,
    cache_dir: str | os.PathLike[str] | None = None,
    storage_options: dict[str, Any] | None = None,
) -> Path:
    """Write the policy's view of `task` into the empty folder `dest`; with `git`, make it a
    repository whose one commit is the broken tree (`git diff` then shows the agent's changes).
    """
    path = workspace(task, dest, cache_dir=cache_dir, storage_options=storage_options)
    if git:
        _git(path, "init", "--quiet")
        (path / ".git" / "info").mkdir(parents=True, exist_ok=True)
        (path / ".git" / "info" / "exclude").write_text(_EXCLUDE, encoding="utf-8")
        _git(path, "add", "--all", "--force")  # the whole view, whatever a .gitignore says
        _git(path, "commit", "--quiet", "--no-verify", "-m", f"{task.instance_id}: broken tree")
    return path


def bubblewrap_args(
    task: Task,
    *,
    network: bool = False,
    cache_dir: str | os.PathLike[str] | None = None,
    storage_options: dict[str, Any] | None = None,
) -> list[str]:
    """`bwrap` arguments for a shell that works on `task` (the workspace's bind not included).

    The system folders and the task's environment (built or taken from the cache as `verify`
    does) are read-only, `/tmp` is private, the environment is cleared down to `PATH` (the
    environment's `bin` first), `HOME=/tmp` and `LANG`, and the network is off unless
    `network`. Put them before the harness's `--bind WORKSPACE WORKSPACE --chdir WORKSPACE`.
    """
    _, env = runtime_for(task, cache_dir=cache_dir, storage_options=storage_options)
    args = ["--unshare-user-try", "--unshare-pid", "--unshare-ipc", "--unshare-uts"]
    if not network:
        args.append("--unshare-net")
    args += ["--die-with-parent", "--new-session"]
    for folder in _SYSTEM_DIRS:
        if Path(folder).exists():
            args += ["--ro-bind", folder, folder]
    args += ["--tmpfs", "/tmp", "--proc", "/proc", "--dev", "/dev"]
    bins: list[str] = []
    for folder in (env.prefix, env.interpreter_prefix):
        if folder and not any(folder == s or folder.startswith(s + "/") for s in _SYSTEM_DIRS):
            args += ["--ro-bind", folder, folder]
    if env.prefix:
        bins.append(str(Path(env.prefix) / "bin"))
    bins.append(str(Path(env.interpreter).parent))
    path = ":".join(dict.fromkeys([*bins, *_SYSTEM_PATH.split(":")]))
    args += ["--clearenv", "--setenv", "PATH", path, "--setenv", "HOME", "/tmp"]
    args += ["--setenv", "LANG", "C.UTF-8"]
    return args


def diff_of(
    workspace_dir: str | os.PathLike[str],
    task: Task,
    *,
    cache_dir: str | os.PathLike[str] | None = None,
    storage_options: dict[str, Any] | None = None,
) -> str:
    """The changes in `workspace_dir` against a fresh policy view of `task`, as a `git diff`.

    Nothing the agent reports is used: the pristine view is rebuilt from the task, and the diff
    is made file by file (`.git`, `__pycache__`, `.pytest_cache` and bytecode left out).
    """
    with tempfile.TemporaryDirectory(prefix="taskmint-view-") as scratch:
        view = workspace(
            task, Path(scratch) / "view", cache_dir=cache_dir, storage_options=storage_options
        )
        return workspace_diff(view, Path(workspace_dir))
