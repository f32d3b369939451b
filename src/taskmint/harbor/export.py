"""`export_harbor`: a published version's tasks as Harbor task folders.

One folder per task, in Harbor's task format:

- `task.toml`: Harbor's configuration (schema_version 1.4, [task], [metadata], [verifier],
  [agent], [environment] with network_mode "no-network"), the metadata naming the task, its
  calibration rows, the dataset version and a sha256 over every other file of the folder. The
  verifier is separate (`[verifier] environment_mode = "separate"`, `artifacts = ["/app"]`): a
  harness that offers it grades in a fresh container of `environment/` (a copy of
  [environment]) into which only the agent's `/app` is carried, so nothing the agent did to
  its own container's interpreter, tools or processes reaches the grading, whoever it ran as;
- `instruction.md`: the problem statement and the first `hint_level` hints;
- `environment/`: a Dockerfile on the seed's environment image (`taskmint images build`)
  adding the broken tree (the policy view: no history, no gold code, no hidden tests) at `/app`,
  owned by an unprivileged `agent` user, which the agent runs as (`[agent] user`): it cannot
  change the interpreter, the environment or anything outside `/app` and the temporary folders,
  nor create `/tests` before Harbor uploads it; the verifier runs as root (`[verifier] user`);
- `tests/`: `test.sh`, which runs taskmint's grader (`taskmint/harbor/inside/grade.py`) with
  the environment's interpreter over the agent's tree, with what it needs: the pristine broken
  tree, the pristine tests (hidden ones included), taskmint's runner files (its pytest plugin,
  its node harness or its cargo harness), the task's scope and expected ids (`task.json`), the
  static scan, and the digests of the environment image (`environment.json`, taken at export by
  `taskmint.harbor.digest`, with `environment.py` to compare them): a harness that shares the
  agent's container gets a grader that checks the interpreter (sha256sum in test.sh, before
  starting it), its standard library, site-packages, libraries and tools (hashlib in the
  grader, under `python -I -S`) and gives 0, "tampered environment", for any change;
- `solution/solve.sh`: applies the gold patch to `/app` (`git apply`, else `patch`, else the
  patched files from `solution/fixed.tar`: the default base image has neither tool).

The tasks of a language whose profile exports to Harbor (`LanguageProfile.harbor`: Python
seeds run by pytest, JavaScript seeds run by node, Rust seeds run by cargo) are exported; the
profile gives the runner's part of `task.json` and the tools the digests cover (a JavaScript
task's environment image holds node and a standard-library venv for the grader, a Rust task's
the toolchain, the vendored dependencies, the warm build, the linker and that venv:
`taskmint images build`). Any other
task gets a `HarborExportError`, recorded in `<dest>/.taskmint-export.json`, and the rest of
the export goes on.
"""

from __future__ import annotations

import hashlib
import io
import json
import logging
import os
import re
import shutil
import tarfile
import tempfile
import time
from collections.abc import Iterable, Sequence
from pathlib import Path
from typing import Any

from taskmint.config import PipelineConfig
from taskmint.consumer import workspace
from taskmint.errors import DatasetError, TaskmintError
from taskmint.files import copy_tree
from taskmint.harbor import digest
from taskmint.harbor.inside import grade
from taskmint.languages import find_profile, profile_for_seed, profiles
from taskmint.patches import apply_patch, file_changes
from taskmint.publish.loader import load_seed, load_tasks, resolve_version
from taskmint.records import SeedApp, Task
from taskmint.runners.adapters import VENV_DIR, inside_dir
from taskmint.sandbox.base import WORKSPACE
from taskmint.scratch import make_scratch
from taskmint.verify import scan
from taskmint.verify.reward import _protected_files
from taskmint.verify.scope import _PROTECTED_DIRS, PROTECTED_NAMES, PROTECTED_SUFFIXES

try:  # the docker backend names the environment images: `pip install 'taskmint[docker]'`
    from taskmint.sandbox.docker.images import environment_image_tag
except (ImportError, TaskmintError) as exc:  # pragma: no cover - without the docker extra
    _DOCKER_MISSING: Exception | None = exc
    environment_image_tag = None  # type: ignore[assignment]
else:
    _DOCKER_MISSING = None

__all__ = [
    "APP_DIR",
    "EXPORT_RECORD",
    "SCHEMA_VERSION",
    "HarborExportError",
    "content_hash",
    "export_harbor",
    "export_task",
]

log = logging.getLogger(__name__)

SCHEMA_VERSION = "1.4"  # Harbor's task.toml schema the files follow (harbor 0.25)
APP_DIR = "/app"  # the task's working directory in the container
EXPORT_RECORD = ".taskmint-export.json"  # what was exported and what was not, under `dest`
SANDBOX_UID = 10001  # the runtime image's unprivileged user: the grader runs the tests as it
AGENT_USER = "agent"  # the agent's user (`[agent] user`): owns /app and nothing else
AGENT_UID = 10002  # neither root nor the test user, so it can touch neither's files
VERIFIER_USER = "root"  # the grader locks the tests down and runs them as SANDBOX_UID
VERIFIER_MODE = "separate"  # Harbor's [verifier] environment_mode: grade in a fresh container
AGENT_TIMEOUT = 1800.0
BUILD_TIMEOUT = 600.0
CPUS = 1
MEMORY_MB = 4096
STORAGE_MB = 10240
_GRADER = Path(__file__).parent / "inside" / "grade.py"
_EPOCH = 1_577_836_800  # the timestamp of every archived file (2020-01-01)


class HarborExportError(TaskmintError):
    """A task that cannot be exported to Harbor (yet)."""


def _base_image_tag(env_id: str) -> str:
    """The tag of taskmint's environment image of `env_id` (`taskmint images build`)."""
    if environment_image_tag is None:
        raise HarborExportError(
            f"the default base image is taskmint's environment image of the seed, named by the "
            f"docker backend, which is not installed ({_DOCKER_MISSING}); pass base_image"
        )
    return environment_image_tag(env_id)


def _folder_name(instance_id: str) -> str:
    name = re.sub(r"[^A-Za-z0-9._-]+", "-", instance_id).strip(".-")
    if not name:
        raise HarborExportError(f"task id {instance_id!r} gives no usable folder name")
    return name


def _tar(root: Path, files: Iterable[str], out: Path) -> None:
    """A reproducible tar of `files` under `root`: sorted, root-owned, one timestamp."""
    with tarfile.open(out, "w", format=tarfile.PAX_FORMAT) as tar:
        dirs: set[str] = set()
        for rel in sorted(set(files)):
            parts = rel.split("/")
            for i in range(1, len(parts)):
                d = "/".join(parts[:i])
                if d not in dirs:
                    dirs.add(d)
                    info = tarfile.TarInfo(d)
                    info.type, info.mode, info.mtime = tarfile.DIRTYPE, 0o755, _EPOCH
                    tar.addfile(info)
            data = (root / rel).read_bytes()
            info = tarfile.TarInfo(rel)
            info.size, info.mtime = len(data), _EPOCH
            info.mode = 0o755 if os.access(root / rel, os.X_OK) else 0o644
            tar.addfile(info, io.BytesIO(data))


def _files(root: Path) -> list[str]:
    return sorted(
        p.relative_to(root).as_posix() for p in root.rglob("*") if p.is_file() or p.is_symlink()
    )


def content_hash(folder: Path) -> str:
    """sha256 over every file of a task folder but `task.toml` (path and content of each)."""
    h = hashlib.sha256()
    for rel in _files(folder):
        if rel == "task.toml":
            continue
        h.update(rel.encode() + b"\0" + (folder / rel).read_bytes() + b"\0")
    return h.hexdigest()


def _toml(value: Any) -> str:
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, int | float):
        return repr(value)
    if isinstance(value, str):
        return json.dumps(value)  # a JSON string is a TOML basic string
    if isinstance(value, list | tuple):
        return "[" + ", ".join(_toml(v) for v in value) + "]"
    raise TypeError(f"no TOML for {value!r}")


def _table(name: str, values: dict[str, Any], *, array: bool = False) -> str:
    head = f"[[{name}]]" if array else f"[{name}]"
    return "\n".join([head, *(f"{k} = {_toml(v)}" for k, v in values.items())]) + "\n"


def task_toml(
    task: Task, *, name: str, version_url: str, digest: str, hint_level: int, verifier: float
) -> str:
    """Harbor's task.toml for `task` (see the module docstring)."""
    metadata = {
        "instance_id": task.instance_id,
        "seed": task.seed,
        "strategy": task.strategy,
        "language": task.language,
        "band": task.band,
        "snapshot_id": task.snapshot_id,
        "env_id": task.env_id,
        "hint_level": hint_level,
        "dataset_version": version_url,
        "content_sha256": digest,
    }
    sections = [
        # the agent's tree is what a separate verifier gets of the agent's container
        f"schema_version = {_toml(SCHEMA_VERSION)}\nartifacts = {_toml([APP_DIR])}\n",
        _table(
            "task",
            {
                "name": f"taskmint/{name}",
                "description": f"taskmint task {task.instance_id} ({task.seed}, {task.strategy})",
                "keywords": ["taskmint", task.language, task.strategy, task.seed],
            },
        ),
        _table("metadata", metadata),
        *(
            _table(
                "metadata.calibration",
                {
                    "solver_kind": c.solver_kind,
                    "solver_name": c.solver_name,
                    "hint_level": c.hint_level,
                    "attempts": c.attempts,
                    "solves": c.solves,
                },
                array=True,
            )
            for c in task.calibration
        ),
        _table(
            "verifier",
            {
                "timeout_sec": verifier,
                "user": VERIFIER_USER,
                # a fresh container of environment/ (a copy of [environment]), with /app carried
                # over from the agent's and tests/ uploaded: nothing else of the agent's
                "environment_mode": VERIFIER_MODE,
            },
        ),
        _table("agent", {"timeout_sec": AGENT_TIMEOUT, "user": AGENT_USER}),
        _table(
            "environment",
            {
                "build_timeout_sec": BUILD_TIMEOUT,
                "cpus": CPUS,
                "memory_mb": MEMORY_MB,
                "storage_mb": STORAGE_MB,
                "network_mode": "no-network",
            },
        ),
    ]
    return "\n".join(sections)


def instruction(task: Task, hint_level: int) -> str:
    """The problem statement and the first `hint_level` hints."""
    text = task.problem_statement.rstrip() + "\n"
    hints = task.hints[: max(0, hint_level)]
    if hints:
        text += "\n## Hints\n\n" + "".join(f"{i}. {h.strip()}\n" for i, h in enumerate(hints, 1))
    return text + f"\nThe project is in `{APP_DIR}`; change its source files there.\n"


DOCKERFILE = """\
# The seed's test environment (taskmint's environment image, `taskmint images build`) and the
# task's broken tree at {app}: nothing else (no history, no gold code, no hidden tests).
# The agent runs as `{user}` (task.toml's [agent] user), which owns {app} and nothing else;
# /tests and /logs exist, root's, so the agent cannot prepare them for the verifier.
FROM {base}
USER root
ENV PATH={venv}/bin:/usr/local/bin:/usr/bin:/bin
RUN grep -q '^{user}:' /etc/passwd || {{ \\
        echo '{user}:x:{uid}:{uid}::/home/{user}:/bin/sh' >> /etc/passwd && \\
        echo '{user}:x:{uid}:' >> /etc/group; }} && \\
    mkdir -p /home/{user} {app} /tests /logs/verifier /logs/agent && \\
    chown {user}:{user} /home/{user} /logs/agent && chmod 0755 /tests /logs /logs/verifier
ADD app.tar {app}/
RUN chown -R {user}:{user} {app}
WORKDIR {app}
"""


def dockerfile(base: str) -> str:
    """The environment's Dockerfile on the image `base`."""
    return DOCKERFILE.format(base=base, app=APP_DIR, venv=VENV_DIR, user=AGENT_USER, uid=AGENT_UID)


TEST_SH = """\
#!/bin/bash
# taskmint's grader: takes nothing from the agent but its changes to the files the task allows,
# rebuilds a fresh workspace with the pristine tests (hidden ones included) and canaries, runs
# the expected tests with taskmint's report plugin and writes /logs/verifier/reward.txt (0 or 1),
# reward.json (numbers only) and grade.json (with the reason). Paths can be moved with
# TASKMINT_TESTS_DIR, TASKMINT_APP, TASKMINT_LOGS, TASKMINT_GRADE_WS, TASKMINT_PYTHON,
# TASKMINT_RUN_AS and TASKMINT_CHECK_ENVIRONMENT (see grade.py).
# The whole script is one block, read before any of it runs.
{{
set -u
src="${{BASH_SOURCE[0]}}"
case "$src" in */*) here="${{src%/*}}" ;; *) here=. ;; esac
here="$(cd "$here" && pwd)"
export TASKMINT_TESTS_DIR="${{TASKMINT_TESTS_DIR:-$here}}"
logs="${{TASKMINT_LOGS:-/logs/verifier}}"
python="${{TASKMINT_PYTHON:-{python}}}"
[ -d "$logs" ] || mkdir -p "$logs"
# a zero, written by the shell itself, until the grader says otherwise: nothing the agent left
# in the log folder counts (Harbor reads reward.json first)
verdict() {{  # TAMPERED(0|1) REASON
    printf '0\\n' > "$logs/reward.txt"
    printf '{{"expected": {expected}, "passed": 0, "reward": 0, "tampered": %s}}\\n' "$1" \\
        > "$logs/reward.json"
    printf '{{"reason": "%s", "reward": 0.0, "tampered": %s}}\\n' "$2" \\
        "$([ "$1" = 1 ] && echo true || echo false)" > "$logs/grade.json"
}}
verdict 0 "the grader did not finish"
{checks}exec "$python" {flags} "$TASKMINT_TESTS_DIR/grade.py"  # it writes the reward files
}}
"""

# Before the interpreter runs, with the digests of the export: the loader's preload list must
# not exist (a test by bash itself), and the interpreter and every library it maps must be as
# they were (sha256sum; the grader checks sha256sum in turn with Python's hashlib, so replacing
# one of the two is caught by the other).
CHECKS = """\
if [ "${{TASKMINT_CHECK_ENVIRONMENT:-1}}" != 0 ]; then
{preload}    paths=({paths})
    sums=({sums})
    got="$({sha256sum} -- "${{paths[@]}}" 2>/dev/null)"
    bad=""
    for i in "${{!paths[@]}}"; do
        case $'\\n'"$got"$'\\n' in
            *$'\\n'"${{sums[$i]}}  ${{paths[$i]}}"$'\\n'*) ;;
            *) bad="$bad ${{paths[$i]}}" ;;
        esac
    done
    if [ -n "$bad" ]; then
        verdict 1 "tampered environment:$bad: changed"
        echo "reward 0: tampered environment:$bad: changed"; exit 0
    fi
fi
"""
PRELOAD_CHECK = """\
    if [ -e /etc/ld.so.preload ] || [ -L /etc/ld.so.preload ]; then
        verdict 1 "tampered environment: /etc/ld.so.preload: new"
        echo "reward 0: tampered environment: /etc/ld.so.preload: new"; exit 0
    fi
"""
_SAFE_PATH = re.compile(r"^/[A-Za-z0-9._+@/-]+$")  # written into test.sh and JSON as it is


def test_sh(spec: dict[str, Any], manifest: dict[str, Any] | None) -> str:
    """tests/test.sh: the grader under `python -I -S` with no bytecode cache; with the digests
    of the export (`manifest`), the interpreter's own, after checking it (`CHECKS`)."""
    checks, python = "", spec["python"]
    if manifest is not None:
        python = manifest["python"]
        entries = manifest["entries"]
        sha256sum = manifest.get("tools", {}).get("sha256sum")
        paths = [p for p in manifest["bootstrap"] if _SAFE_PATH.match(p)]
        if sha256sum and _SAFE_PATH.match(sha256sum) and paths:
            one_a_line = "\n" + " " * 8
            checks = CHECKS.format(
                # an image that preloads on purpose: the grader checks the list's digest
                preload=PRELOAD_CHECK if entries.get("/etc/ld.so.preload") == "absent" else "",
                paths=one_a_line.join(["", *paths]) + "\n    ",
                sums=one_a_line.join(["", *(entries[p].removeprefix("sha256:") for p in paths)])
                + "\n    ",
                sha256sum=sha256sum,
            )
    return TEST_SH.format(
        python=python,
        expected=len(dict.fromkeys(spec["expected"])),
        checks=checks,
        flags=" ".join(["-S", *grade.PYTHON_FLAGS]),
    )


SOLVE_SH = """\
#!/bin/bash
# The gold patch, applied to {app}: with git or patch when the image has one, else the files
# the patch leaves, from fixed.tar.
set -euo pipefail
here="$(cd "$(dirname "${{BASH_SOURCE[0]}}")" && pwd)"
cd "${{TASKMINT_APP:-{app}}}"
if command -v git >/dev/null 2>&1; then
    git apply --whitespace=nowarn -p1 "$here/gold.patch"
elif command -v patch >/dev/null 2>&1; then
    patch -p1 --forward --batch < "$here/gold.patch"
else
    tar -xf "$here/fixed.tar" --no-same-owner
fi
"""


def _runner_spec(task: Task, seed: SeedApp) -> dict[str, Any]:
    """The grader's `task.json`: the expected ids, the scope, and taskmint's own command line
    for them (the nonce and selection are the grader's, per run), as the seed's language's
    profile gives it (`LanguageProfile.harbor_runner`: the pytest adapter's, or the node
    harness over the expected ids' files)."""
    manifest = seed.manifest
    language = profile_for_seed(seed)
    expected = list(dict.fromkeys((*task.FAIL_TO_PASS, *task.PASS_TO_PASS)))
    spec: dict[str, Any] = {
        "instance_id": task.instance_id,
        "runner": manifest.runner,
        # the grader's interpreter: the seed's venv, or a node image's standard-library venv
        "python": f"{VENV_DIR}/bin/python",
        "workspace": WORKSPACE,
        "expected": expected,
        "test_paths": list(task.test_paths),
        "source_paths": list(task.source_paths),
        "hidden_files": sorted({t.split("::", 1)[0] for t in task.hidden_tests}),
        "protected_files": _protected_files(seed, task),
        "protected_names": sorted(PROTECTED_NAMES),
        "protected_suffixes": sorted(PROTECTED_SUFFIXES),
        "protected_dirs": sorted(_PROTECTED_DIRS),
        "canary_dir": language.canary_folder(task.test_paths),
        "timeout": manifest.timeout,
        "sandbox_uid": SANDBOX_UID,
    }
    regions = _test_code_regions(task, seed)
    if regions:
        spec["test_regions"] = regions
    return {**spec, **language.harbor_runner(manifest, env_id=task.env_id, expected=expected)}


def _test_code_regions(task: Task, seed: SeedApp) -> dict[str, list[list[int]]]:
    """Per source file of the broken tree, the line ranges of the test code it holds (Rust's
    unit tests and doctests, `LanguageProfile.test_code_regions`), which the grader refuses to
    see changed."""
    language = profile_for_seed(seed)
    root = Path(seed.root)
    sources = [
        f
        for f in seed.files
        if f.endswith(language.extensions)
        and language.test_code_regions(f, (root / f).read_bytes())
    ]
    if not sources:
        return {}
    ws = make_scratch("taskmint-regions-")
    try:
        copy_tree(root, ws, sources)
        apply_patch(ws, task.breaking_patch)
        out: dict[str, list[list[int]]] = {}
        for rel in sources:
            path = ws / rel
            if path.is_file():
                found = language.test_code_regions(rel, path.read_bytes())
                if found:
                    out[rel] = [list(r) for r in found]
        return out
    finally:
        shutil.rmtree(ws, ignore_errors=True)


def _manifest(
    base: str, spec: dict[str, Any], cache: Path, extra_tools: tuple[str, ...] = ()
) -> dict[str, Any] | None:
    """The digests of the environment image `base` as the task's grader sees it (see
    `taskmint.harbor.digest`); None, with a warning, when they cannot be taken here."""
    tools = ["bash", "sha256sum", *extra_tools]
    manifest, why = digest.environment_manifest(
        base, python=spec["python"], tools=tools, cache_dir=cache
    )
    if manifest is None:
        log.warning(
            "no environment digests for %s: %s; its grader cannot check a shared container "
            "(only a separate verifier protects it from an agent run as root)",
            base,
            why,
        )
    return manifest


def _copy_runner(dest: Path, patterns: tuple[str, ...]) -> None:
    """taskmint's in-sandbox runner files that the runner needs (`Adapter.inside_files`: the
    Python ones for pytest, the harness for node)."""
    src = inside_dir()
    for path in sorted(p for pattern in patterns for p in src.rglob(pattern)):
        if "__pycache__" in path.parts:
            continue
        target = dest / path.relative_to(src)
        target.parent.mkdir(parents=True, exist_ok=True)
        shutil.copyfile(path, target)


def _write(path: Path, text: str, *, executable: bool = False) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text, encoding="utf-8")
    path.chmod(0o755 if executable else 0o644)


def export_task(
    task: Task,
    dest: Path,
    *,
    version_url: str,
    hint_level: int = 0,
    base_image: str | None = None,
    cache_dir: str | os.PathLike[str] | None = None,
    storage_options: dict[str, Any] | None = None,
) -> Path:
    """Write one task's Harbor folder `dest/<instance id>` (replacing an older one)."""
    language = find_profile(task.language)
    if language is None or not language.harbor:
        exported = ", ".join(p.name for p in profiles() if p.harbor)
        raise HarborExportError(
            f"{task.instance_id}: {task.language} tasks cannot be exported to Harbor yet "
            f"(only {exported} seeds are supported)"
        )
    cache = Path(cache_dir) if cache_dir is not None else PipelineConfig().cache_dir
    if not task.origin:
        raise DatasetError(f"task {task.instance_id} was not loaded from a published version")
    seed = load_seed(
        task.origin, task.snapshot_id, cache_dir=cache, storage_options=storage_options
    )
    if seed.manifest.runner != language.runner:
        raise HarborExportError(
            f"{task.instance_id}: {task.language} seeds run by {seed.manifest.runner} cannot be "
            f"exported to Harbor yet (only {language.runner})"
        )
    name = _folder_name(task.instance_id)
    base = base_image if base_image is not None else _base_image_tag(task.env_id)
    dest.mkdir(parents=True, exist_ok=True)
    scratch = Path(tempfile.mkdtemp(prefix=f".{name}.", dir=dest))
    try:
        view = workspace(task, scratch / "view", cache_dir=cache, storage_options=storage_options)
        out = scratch / name
        env_dir, tests_dir, sol_dir = out / "environment", out / "tests", out / "solution"
        for d in (env_dir, tests_dir / "runner", sol_dir):
            d.mkdir(parents=True)
        broken = _files(view)
        _tar(view, broken, env_dir / "app.tar")
        _write(env_dir / "Dockerfile", dockerfile(base))
        shutil.copyfile(env_dir / "app.tar", tests_dir / "broken.tar")
        _tar(Path(seed.root), _protected_files(seed, task), tests_dir / "tests.tar")
        spec = _runner_spec(task, seed)
        _write(tests_dir / "task.json", json.dumps(spec, indent=1, sort_keys=True) + "\n")
        shutil.copyfile(_GRADER, tests_dir / "grade.py")
        shutil.copyfile(scan.__file__, tests_dir / "scan.py")
        _copy_runner(tests_dir / "runner", language.adapter.inside_files)
        manifest = _manifest(base, spec, cache, language.harbor_tools(spec))
        if manifest is not None:
            _write(tests_dir / "environment.json", json.dumps(manifest, sort_keys=True) + "\n")
            shutil.copyfile(digest.PROBE, tests_dir / "environment.py")
        _write(tests_dir / "test.sh", test_sh(spec, manifest), executable=True)
        # the solution: the gold patch, and the files it leaves (for images without git/patch)
        gold = task.patch if task.patch.endswith("\n") else task.patch + "\n"
        _write(sol_dir / "gold.patch", gold)
        apply_patch(view, task.patch)
        fixed = sorted(
            {c.path for c in file_changes(task.patch) if c.path and (view / c.path).is_file()}
        )
        _tar(view, fixed, sol_dir / "fixed.tar")
        _write(sol_dir / "solve.sh", SOLVE_SH.format(app=APP_DIR), executable=True)
        _write(out / "instruction.md", instruction(task, hint_level))
        verifier = float(round(2 * seed.manifest.timeout + 120.0))
        _write(
            out / "task.toml",
            task_toml(
                task,
                name=name,
                version_url=version_url,
                digest=content_hash(out),
                hint_level=hint_level,
                verifier=verifier,
            ),
        )
        final = dest / name
        if final.exists():
            shutil.rmtree(final)
        out.rename(final)
    finally:
        shutil.rmtree(scratch, ignore_errors=True)
    return final


def export_harbor(
    version: str | os.PathLike[str],
    dest: str | os.PathLike[str],
    *,
    task_ids: Sequence[str] | None = None,
    hint_level: int = 0,
    base_image: str | None = None,
    cache_dir: str | os.PathLike[str] | None = None,
    storage_options: dict[str, Any] | None = None,
) -> list[Path]:
    """Export the tasks of a published version (all, or `task_ids`) as Harbor task folders
    under `dest`; returns the folders written.

    A task that cannot be exported (a JavaScript task, for now: `HarborExportError`; or any
    taskmint error of its own data) is skipped with its reason, logged and recorded in
    `<dest>/.taskmint-export.json` with the folders written and the seconds each task took.
    """
    if hint_level < 0:
        raise ValueError("hint_level must be 0 or more")
    if base_image is None:  # fail once, not once per task, without the docker extra
        _base_image_tag("")
    ref = resolve_version(version, storage_options=storage_options)
    tasks = load_tasks(version, streaming=False, storage_options=storage_options)
    if task_ids is not None:
        by_id = {t.instance_id: t for t in tasks}
        unknown = [i for i in task_ids if i not in by_id]
        if unknown:
            raise DatasetError(f"no task {unknown[0]!r} in {ref.url} ({len(unknown)} unknown)")
        tasks = [by_id[i] for i in dict.fromkeys(task_ids)]
    out = Path(dest)
    written: list[Path] = []
    skipped: list[dict[str, str]] = []
    timings: dict[str, float] = {}
    for task in tasks:
        start = time.monotonic()
        try:
            written.append(
                export_task(
                    task,
                    out,
                    version_url=ref.url,
                    hint_level=hint_level,
                    base_image=base_image,
                    cache_dir=cache_dir,
                    storage_options=storage_options,
                )
            )
        except TaskmintError as exc:  # HarborExportError, or this task's data (a bad patch)
            log.warning("not exported: %s: %s", task.instance_id, exc)
            skipped.append({"instance_id": task.instance_id, "reason": str(exc)})
        timings[task.instance_id] = round(time.monotonic() - start, 3)
    out.mkdir(parents=True, exist_ok=True)
    record = {
        "dataset_version": ref.url,
        "hint_level": hint_level,
        "exported": [p.name for p in written],
        "skipped": skipped,
        # folders whose grader cannot check a shared container (no digests of their image)
        "without_environment_digests": [
            p.name for p in written if not (p / "tests" / "environment.json").is_file()
        ],
        "seconds": timings,
    }
    (out / EXPORT_RECORD).write_text(json.dumps(record, indent=2) + "\n", encoding="utf-8")
    return written
