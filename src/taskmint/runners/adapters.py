"""What a test runner's adapter is: `Adapter`, and the paths every runner shares.

Each language's profile holds the adapter of its runner (`taskmint.languages`: pytest for
Python, taskmint's node harness for JavaScript). An adapter says how its runner starts in the
sandbox, which files it reads, how its structured report is read, and what the runner can do
(`forks`, `compiles`, `plants_canaries`, `selects_whole_files`, `coverage_format`), which the
stages ask instead of checking which runner it is.
"""

from __future__ import annotations

import abc
import hashlib
import json
import posixpath
import tempfile
from collections.abc import Mapping
from importlib import resources
from pathlib import Path
from typing import Any

from taskmint.envs.copies import wheel_folders
from taskmint.envs.venv import base_interpreter
from taskmint.records import Environment, RunReport, SeedManifest
from taskmint.runners.inside.protocol import BatchSpec
from taskmint.runners.report import BatchReport
from taskmint.sandbox.base import REPORT_DIR, Mount

__all__ = [
    "COVERAGE_FILE",
    "NODE_INPUT",
    "REPORT_FILE",
    "RUNNER_DIR",
    "SELECT_FILE",
    "V8_COVERAGE_DIR",
    "VENV_DIR",
    "Adapter",
    "HarnessAdapter",
    "empty_dir",
    "inside_dir",
    "runner_fingerprint",
]

RUNNER_DIR = "/opt/taskmint"  # taskmint's in-sandbox runner files, read-only
VENV_DIR = "/opt/venv"  # the seed's environment, read-only
REPORT_FILE = posixpath.join(REPORT_DIR, "report.jsonl")
COVERAGE_FILE = posixpath.join(REPORT_DIR, "coverage.db")
SELECT_FILE = posixpath.join(REPORT_DIR, "select.json")
V8_COVERAGE_DIR = posixpath.join(REPORT_DIR, "v8cov")
NODE_INPUT = posixpath.join(REPORT_DIR, "node_input.json")


def runner_fingerprint() -> str:
    """A hash of the in-sandbox runner files: cached results made by other runners are stale."""
    h = hashlib.sha256()
    root = inside_dir()
    for path in sorted(root.rglob("*")):
        if path.is_file() and "__pycache__" not in path.parts:
            h.update(path.relative_to(root).as_posix().encode() + b"\0" + path.read_bytes())
    return h.hexdigest()[:12]


def inside_dir() -> Path:
    """The host folder holding the files that run inside the sandbox."""
    return Path(str(resources.files("taskmint.runners").joinpath("inside")))


class Adapter(abc.ABC):
    """How one test runner is started in the sandbox and how its report is read."""

    runner: str = "abstract"
    # whether a selection runs every test of each file that holds a selected test
    selects_whole_files: bool = False
    # whether a batch of runs can be served as forks of one collection (`run_batch`)
    forks: bool = False
    # whether a run can write the workspace's bytecode instead of testing (`runners.bytecode`)
    compiles: bool = False
    # whether the verifier plants canary tests next to the seed's tests (`verify.canary`);
    # a runner that runs its own canaries reports tampering itself
    plants_canaries: bool = False
    # what a coverage run leaves (`save_coverage`), which `index.coverage` reads by this name
    coverage_format: str = ""
    # the files of `inside_dir()` the runner needs, as glob patterns (a Harbor task ships them)
    inside_files: tuple[str, ...] = ()

    def mounts(self, env: Environment) -> list[Mount]:
        """Read-only mounts the runner needs: its interpreter, the environment, runner files."""
        mounts = [Mount(source=str(inside_dir()), target=RUNNER_DIR)]
        if env.interpreter_prefix and not env.interpreter_prefix.startswith("/usr"):
            mounts.append(Mount(source=env.interpreter_prefix, target=env.interpreter_prefix))
        return mounts

    @abc.abstractmethod
    def command(
        self,
        manifest: SeedManifest,
        env: Environment,
        *,
        nonce: str,
        test_ids: tuple[str, ...] | None = None,
        coverage: bool = False,
        fail_fast: bool = False,
        order: str = "declared",
        seed: int | None = None,
        compile_bytecode: bool = False,
    ) -> tuple[tuple[str, ...], tuple[tuple[str, str], ...]]:
        """The argv and environment variables of one run (`coverage`: record per-test contexts
        into `COVERAGE_FILE`; `fail_fast`: stop at the first failure; `order`: "declared",
        "reverse" or "shuffle"; `seed`: the shuffle's seed and the per-test `random` seed;
        `compile_bytecode`: write the workspace's bytecode instead of testing; where
        supported)."""

    @abc.abstractmethod
    def parse(self, report_dir: Path, nonce: str) -> RunReport:
        """Per-test outcomes from the report folder."""

    def parse_batch(self, report_dir: Path, nonce: str) -> BatchReport:
        """The outcomes of a forked batch's runs (a runner that `forks`)."""
        raise NotImplementedError(f"{self.runner} does not run forked batches")

    def save_coverage(self, report_dir: Path, dest: Path) -> bool:
        """Copy what a coverage run left in the report folder to `dest`; False if nothing."""
        return False

    def inputs(
        self,
        manifest: SeedManifest,
        env: Environment,
        *,
        nonce: str,
        test_ids: tuple[str, ...] | None,
        coverage: bool = False,
    ) -> dict[str, bytes]:
        """Files the run reads from the report folder (name -> content), for a run without the
        out-of-band channel."""
        if test_ids is None:
            return {}
        return {posixpath.basename(SELECT_FILE): json.dumps(list(test_ids)).encode()}

    @abc.abstractmethod
    def channel_command(
        self,
        argv: tuple[str, ...],
        manifest: SeedManifest,
        env: Environment,
        *,
        nonce: str,
        test_ids: tuple[str, ...] | None,
        coverage: bool = False,
        batch: BatchSpec | None = None,
    ) -> tuple[tuple[str, ...], bytes]:
        """`argv` (from `command`) turned into a run over the out-of-band channel, and what the
        channel's input holds (the nonce and the selection among it)."""

    @staticmethod
    def host_python_mounts(skip: str = "") -> list[Mount]:
        """The host's own interpreter (which runs a harness as `python -I -S`), when it lies
        outside /usr and is not `skip` (mounted already): its folder, with an empty folder over
        its site-packages and over every folder of it holding wheels."""
        _, prefix = base_interpreter()
        if prefix.startswith("/usr") or prefix == skip:
            return []
        mounts = [Mount(source=prefix, target=prefix)]
        libs = [str(p) for p in Path(prefix, "lib").glob("python3*/site-packages")]
        hidden = sorted({*libs, *wheel_folders(prefix)})
        return mounts + [Mount(source=str(empty_dir()), target=p) for p in hidden]

    @staticmethod
    def base_env() -> list[tuple[str, str]]:
        """A clean, deterministic environment."""
        return [
            ("PATH", "/usr/local/bin:/usr/bin:/bin"),
            ("HOME", "/tmp"),
            ("TMPDIR", "/tmp"),
            ("LANG", "C.UTF-8"),
            ("LC_ALL", "C.UTF-8"),
            ("TZ", "UTC"),
            ("PYTHONHASHSEED", "0"),
        ]


def empty_dir() -> Path:
    """An empty folder on the host, mounted over what a run must not see."""
    path = Path(tempfile.gettempdir()) / "taskmint-empty"
    path.mkdir(mode=0o755, exist_ok=True)
    return path


class HarnessAdapter(Adapter):
    """A runner under one of taskmint's harnesses in `inside_dir()`: `python -I -S -B
    <harness> REPORT INPUT` under the host's interpreter, its input (`harness_input`, JSON)
    in the file `input_file` of the report folder, which it deletes before anything else
    runs, or, with `--channel`, on the out-of-band channel. The harness cannot reorder the
    tests, seed them, stop at the first failure or write bytecode: `order`, `seed`,
    `fail_fast` and `compile_bytecode` do not apply."""

    harness: str = ""  # the harness's file in `inside_dir()`
    input_file: str = ""  # where its input is, in the report folder

    @abc.abstractmethod
    def harness_input(
        self,
        manifest: SeedManifest,
        env: Environment,
        *,
        nonce: str,
        test_ids: tuple[str, ...] | None,
        coverage: bool = False,
    ) -> Mapping[str, Any]:
        """What the harness runs: the nonce, the selection, the tools and the limits."""

    def command(
        self,
        manifest: SeedManifest,
        env: Environment,
        *,
        nonce: str,
        test_ids: tuple[str, ...] | None = None,
        coverage: bool = False,
        fail_fast: bool = False,
        order: str = "declared",
        seed: int | None = None,
        compile_bytecode: bool = False,
    ) -> tuple[tuple[str, ...], tuple[tuple[str, str], ...]]:
        """`python -I -S -B <harness> REPORT INPUT`."""
        python, _ = base_interpreter()
        argv = (python, "-I", "-S", "-B", f"{RUNNER_DIR}/{self.harness}", REPORT_FILE)
        return (*argv, self.input_file), tuple(self.base_env())

    def inputs(
        self,
        manifest: SeedManifest,
        env: Environment,
        *,
        nonce: str,
        test_ids: tuple[str, ...] | None,
        coverage: bool = False,
    ) -> dict[str, bytes]:
        """The harness's input file."""
        data = self.harness_input(manifest, env, nonce=nonce, test_ids=test_ids, coverage=coverage)
        return {posixpath.basename(self.input_file): json.dumps(data).encode()}

    def channel_command(
        self,
        argv: tuple[str, ...],
        manifest: SeedManifest,
        env: Environment,
        *,
        nonce: str,
        test_ids: tuple[str, ...] | None,
        coverage: bool = False,
        batch: BatchSpec | None = None,
    ) -> tuple[tuple[str, ...], bytes]:
        """`<harness> --channel`, the harness's input on the channel."""
        data = self.harness_input(manifest, env, nonce=nonce, test_ids=test_ids, coverage=coverage)
        return (*argv[:5], "--channel"), json.dumps(data).encode()
