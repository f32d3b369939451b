"""The Python profile's test runner: pytest, with taskmint's plugin and bootstrap.

The run goes through `runners/inside/run_pytest.py` under the project's own configuration
(its ini file and addopts apply), with plugin autoload disabled (the environment's plugins are
registered explicitly). Outcomes come from the plugin's report, coverage from coverage.py's
dynamic contexts, one per test phase.
"""

from __future__ import annotations

import json
import os
import posixpath
import shutil
from pathlib import Path

from taskmint.envs.copies import wheel_folders
from taskmint.records import Environment, RunReport, SeedManifest
from taskmint.runners.adapters import (
    COVERAGE_FILE,
    REPORT_FILE,
    RUNNER_DIR,
    SELECT_FILE,
    VENV_DIR,
    Adapter,
    empty_dir,
)
from taskmint.runners.inside.protocol import BatchSpec, ChannelInput, RunOptions
from taskmint.runners.report import BatchReport, parse_pytest_batch, parse_pytest_report
from taskmint.sandbox.base import WORKSPACE, Mount

__all__ = ["PYTEST_OPTIONS", "PytestAdapter"]


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
    forks = True
    compiles = True
    plants_canaries = True
    coverage_format = "coverage.py"
    inside_files = ("*.py",)

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
                mounts.append(Mount(source=str(empty_dir()), target=f"{lib}/site-packages"))
            # Nor are the wheels it bundles: ensurepip's pip vendors a dozen projects (tenacity,
            # rich, urllib3, idna, ...), its setuptools another dozen, and a seed among them
            # would find its own code there.
            if any(m.target == env.interpreter_prefix for m in mounts):
                mounts += [
                    Mount(source=str(empty_dir()), target=folder)
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

    def parse_batch(self, report_dir: Path, nonce: str) -> BatchReport:
        """Read a forked batch's JSON lines."""
        return parse_pytest_batch(report_dir / "report.jsonl", nonce)
