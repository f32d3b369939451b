"""The JavaScript profile's test runner: node's built-in test runner under taskmint's harness.

The harness (`runners/inside/node_runner.py`) runs each test file in its own node process
whose results come back signed on a channel of their own, never through the process's
standard output. Coverage is V8's precise block coverage, one file per process.
"""

from __future__ import annotations

import posixpath
import shutil
from pathlib import Path

from taskmint.records import Environment, RunReport, SeedManifest
from taskmint.runners.adapters import NODE_INPUT, V8_COVERAGE_DIR, HarnessAdapter
from taskmint.runners.inside.protocol import NodeInput
from taskmint.runners.report import parse_node_report
from taskmint.sandbox.base import WORKSPACE, Mount

__all__ = ["NODE_HARNESS", "NodeAdapter"]

# the harness's files in `runners/inside/`
NODE_HARNESS = ("node_runner.py", "harness_io.py", "node_child.mjs", "node_main.mjs")


class NodeAdapter(HarnessAdapter):
    """node's built-in test runner under taskmint's harness (`runners/inside/node_runner.py`):
    each test file in its own node process whose results come back signed on a channel of
    their own, never through the process's standard output.

    `python -I -S -B node_runner.py REPORT INPUT` (the input file: `node_input`). Node runs
    each test file in its own process and cannot select single tests by id or reorder them: a
    selection runs the files that hold the selected tests, in their declared order. With
    `coverage`, every test process writes V8's precise block coverage into the report folder
    (NODE_V8_COVERAGE). There is no bytecode to write: `compile_bytecode` is ignored."""

    runner = "node"
    selects_whole_files = True
    coverage_format = "v8"
    inside_files = NODE_HARNESS
    harness = "node_runner.py"
    input_file = NODE_INPUT

    def mounts(self, env: Environment) -> list[Mount]:
        """Also the interpreter that runs the harness (the host's own, its site-packages and
        bundled wheels hidden), when it lies outside /usr."""
        return super().mounts(env) + self.host_python_mounts(skip=env.interpreter_prefix)

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

    harness_input = node_input

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
