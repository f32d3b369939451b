"""Per-runner command lines and report readers."""

from __future__ import annotations

import abc
import hashlib
import json
import os
import posixpath
import shutil
import tempfile
from collections.abc import Callable
from importlib import resources
from pathlib import Path

from taskmint.envs.copies import wheel_folders
from taskmint.envs.venv import base_interpreter
from taskmint.records import Environment, RunReport, SeedManifest
from taskmint.runners.inside.protocol import BatchSpec, ChannelInput, NodeInput, RunOptions
from taskmint.runners.report import parse_node_report, parse_pytest_report
from taskmint.sandbox.base import REPORT_DIR, WORKSPACE, Mount

__all__ = [
    "Adapter",
    "NodeAdapter",
    "PytestAdapter",
    "adapter_for",
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


# taskmint's pytest options, after the project's own configuration (its ini file and addopts
# apply, so the suite selects what a plain `python -m pytest` selects). --tb=no: outcomes and
# crash messages come from the plugin, and formatting tracebacks for every failing test costs
# more than the tests on a broken tree. A test file that fails to import is recorded and the
# rest still run. --maxfail (0: none) overrides a project's -x.
PYTEST_OPTIONS = (
    "-p",
    "no:cacheprovider",
    "-q",
    "--tb=no",
    "--no-header",
    "--continue-on-collection-errors",
)


class PytestAdapter(Adapter):
    """pytest with taskmint's plugin and bootstrap under the project's own configuration;
    plugin autoload disabled (the environment's plugins are registered explicitly)."""

    runner = "pytest"

    def mounts(self, env: Environment) -> list[Mount]:
        """Also the seed's venv, and an empty folder over the interpreter's own site-packages
        and over every folder of the interpreter holding wheels (`ensurepip/_bundled`)."""
        mounts = super().mounts(env)
        mounts.append(Mount(source=env.prefix, target=VENV_DIR))
        if env.python_version:
            # The interpreter's own site-packages (other projects' packages) are not part of
            # any seed's environment. Its `test` package stays: it is the standard library's,
            # and tests import `test.support` from it as they do outside (zipp, through
            # jaraco.test).
            major, minor = env.python_version.split(".")[:2]
            lib = f"{env.interpreter_prefix}/lib/python{major}.{minor}"
            if Path(lib, "site-packages").is_dir():
                mounts.append(Mount(source=str(_empty_dir()), target=f"{lib}/site-packages"))
            # Nor are the wheels it bundles: ensurepip's pip vendors a dozen projects (tenacity,
            # rich, urllib3, idna, ...), its setuptools another dozen, and a seed among them
            # would find its own code there.
            if any(m.target == env.interpreter_prefix for m in mounts):
                mounts += [
                    Mount(source=str(_empty_dir()), target=folder)
                    for folder in wheel_folders(env.interpreter_prefix)
                ]
        return mounts

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
        """`python -I -B run_pytest.py ...` over the selected tests (all test paths by default)."""
        pythonpath = [posixpath.normpath(posixpath.join(WORKSPACE, p)) for p in manifest.pythonpath]
        options: RunOptions = {
            "pythonpath": pythonpath,
            "coverage": None,
            "order": order,
            "seed": seed,
            "test_timeout": manifest.test_timeout,
            "plugins": [list(p) for p in manifest.plugins],
        }
        if compile_bytecode:
            options["compile"] = True
        if test_ids is None:
            targets = list(manifest.test_paths)
        else:
            # Collect only the files holding the selected tests; the plugin deselects the rest
            # (much faster than handing pytest thousands of node ids).
            targets = list(dict.fromkeys(t.split("::", 1)[0] for t in test_ids))
            options["select_file"] = SELECT_FILE
        if coverage:
            options["coverage"] = {
                "data_file": COVERAGE_FILE,
                # coverage's `source` takes folders; a single-module seed (`parse.py`) is
                # measured through its folder, and the map keeps only the source paths' files
                "source": sorted(
                    {
                        posixpath.join(WORKSPACE, posixpath.dirname(p) if p.endswith(".py") else p)
                        for p in manifest.source_paths
                    }
                ),
            }
        argv = (
            f"{VENV_DIR}/bin/python",
            "-I",
            "-B",
            f"{RUNNER_DIR}/run_pytest.py",
            REPORT_FILE,
            nonce,
            json.dumps(options),
            "--",
            *PYTEST_OPTIONS,
            "--rootdir",
            WORKSPACE,
            f"--maxfail={1 if fail_fast else 0}",
            # The coverage run imports the seed's modules before pytest starts: pytest would
            # warn (an error under a project's `filterwarnings = error`) that a plugin module
            # among them (`-p pkg.plugin`) was imported before it could rewrite it.
            *(["-W", "ignore::pytest.PytestAssertRewriteWarning"] if coverage else []),
            *targets,
        )
        env_vars = [
            *self.base_env(),
            ("PYTEST_DISABLE_PLUGIN_AUTOLOAD", "1"),
            # The runner itself runs isolated (-I) and puts these on its own path; the Python
            # processes the tests start import the seed from them too, as they would import an
            # installed copy (click's test_light_imports runs `python -` and imports click).
            ("PYTHONPATH", os.pathsep.join(pythonpath)),
        ]
        return argv, tuple(env_vars)

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
        """`argv` (from `command`) turned into a channel run: `run_pytest.py --channel`, with
        the nonce, options, selection and pytest arguments as the channel's input."""
        options: RunOptions = json.loads(argv[6])
        options.pop("select_file", None)
        if test_ids is not None:
            options["select"] = list(test_ids)
        if batch is not None:
            options["batch"] = batch
        data: ChannelInput = {"nonce": argv[5], "options": options, "args": list(argv[8:])}
        return (*argv[:4], "--channel"), json.dumps(data).encode()

    def save_coverage(self, report_dir: Path, dest: Path) -> bool:
        """coverage.py's data file (per-test contexts)."""
        src = report_dir / posixpath.basename(COVERAGE_FILE)
        if not src.is_file():
            return False
        shutil.copyfile(src, dest)
        return True

    def parse(self, report_dir: Path, nonce: str) -> RunReport:
        """Read the pytest plugin's JSON lines."""
        return parse_pytest_report(report_dir / "report.jsonl", nonce)


class NodeAdapter(Adapter):
    """node's built-in test runner under taskmint's harness (`runners/inside/node_runner.py`):
    each test file in its own node process whose results come back signed on a channel of
    their own, never through the process's standard output."""

    runner = "node"
    selects_whole_files = True

    def mounts(self, env: Environment) -> list[Mount]:
        """Also the interpreter that runs the harness (the host's own, its site-packages and
        bundled wheels hidden), when it lies outside /usr."""
        mounts = super().mounts(env)
        _, prefix = base_interpreter()
        if not prefix.startswith("/usr") and prefix != env.interpreter_prefix:
            mounts.append(Mount(source=prefix, target=prefix))
            libs = [str(p) for p in Path(prefix, "lib").glob("python3*/site-packages")]
            hidden = sorted({*libs, *wheel_folders(prefix)})
            mounts += [Mount(source=str(_empty_dir()), target=p) for p in hidden]
        return mounts

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
        """`python -I -S -B node_runner.py REPORT INPUT` (the input file: `node_input`).
        Node runs each test file in its own process and cannot select single tests by id or
        reorder them: a selection runs the files that hold the selected tests, in their
        declared order. With `coverage`, every test process writes V8's precise block coverage
        into the report folder (NODE_V8_COVERAGE). There is no bytecode to write:
        `compile_bytecode` is ignored."""
        python, _ = base_interpreter()
        argv = (python, "-I", "-S", "-B", f"{RUNNER_DIR}/node_runner.py", REPORT_FILE, NODE_INPUT)
        return argv, tuple(self.base_env())

    def node_input(
        self,
        manifest: SeedManifest,
        env: Environment,
        *,
        nonce: str,
        test_ids: tuple[str, ...] | None,
        coverage: bool = False,
    ) -> NodeInput:
        """What the harness runs: the test files (every test path, or the files of the
        selected tests), with node and the test processes' environment."""
        targets = (
            list(manifest.test_paths)
            if test_ids is None
            else list(dict.fromkeys(t.split("::", 1)[0] for t in test_ids))
        )
        child_env = [[k, v] for k, v in self.base_env()] + [["NODE_OPTIONS", ""]]
        if coverage:
            child_env.append(["NODE_V8_COVERAGE", V8_COVERAGE_DIR])
        return {
            "nonce": nonce,
            "node": env.interpreter,
            "files": targets,
            "select": list(test_ids) if test_ids is not None else None,
            "cwd": WORKSPACE,
            "env": child_env,
        }

    def inputs(
        self,
        manifest: SeedManifest,
        env: Environment,
        *,
        nonce: str,
        test_ids: tuple[str, ...] | None,
        coverage: bool = False,
    ) -> dict[str, bytes]:
        """The harness's input file (it deletes it before any test file runs)."""
        data = self.node_input(manifest, env, nonce=nonce, test_ids=test_ids, coverage=coverage)
        return {posixpath.basename(NODE_INPUT): json.dumps(data).encode()}

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
        """`node_runner.py --channel`, the harness's input on the channel."""
        data = self.node_input(manifest, env, nonce=nonce, test_ids=test_ids, coverage=coverage)
        return (*argv[:5], "--channel"), json.dumps(data).encode()

    def save_coverage(self, report_dir: Path, dest: Path) -> bool:
        """The folder of V8 coverage files, one per process."""
        src = report_dir / posixpath.basename(V8_COVERAGE_DIR)
        if not src.is_dir():
            return False
        shutil.copytree(src, dest)
        return True

    def parse(self, report_dir: Path, nonce: str) -> RunReport:
        """Read the harness's JSON lines."""
        return parse_node_report(report_dir / "report.jsonl", nonce)


def _empty_dir() -> Path:
    path = Path(tempfile.gettempdir()) / "taskmint-empty"
    path.mkdir(mode=0o755, exist_ok=True)
    return path


# Adapters of runners defined outside this module (`languages/rust` registers "cargo").
EXTRA_ADAPTERS: dict[str, Callable[[], Adapter]] = {}


def adapter_for(manifest: SeedManifest) -> Adapter:
    """The adapter for a seed's runner."""
    if manifest.runner in EXTRA_ADAPTERS:
        return EXTRA_ADAPTERS[manifest.runner]()
    return PytestAdapter() if manifest.runner == "pytest" else NodeAdapter()
