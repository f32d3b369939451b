"""The JavaScript profile: node seeds, read and edited with tree-sitter.

- seeds: a `taskmint.toml` with `language = "javascript"` (`runner = "node"`); JavaScript trees
  are not detected yet.
- environment: the host's `node`, at its real path (`kind="node"`: no folder of packages; the
  seed's own files are all its tests import).
- runner: node's test runner under taskmint's harness (`NodeAdapter`), V8 coverage.
- code: `JAVASCRIPT` (`javascript.syntax`): the units, `throw new Error("not implemented");`
  as the stub, the mutation operators' node kinds.
- Harbor: the node harness over the expected tests' files, node itself among the digested
  tools.
"""

from __future__ import annotations

import os
import shutil
import subprocess
from collections.abc import Sequence
from pathlib import Path
from typing import Any, ClassVar

from taskmint.errors import EnvironmentBuildError
from taskmint.languages.base import LanguageProfile
from taskmint.languages.javascript.runner import NODE_HARNESS, NodeAdapter
from taskmint.languages.javascript.syntax import JAVASCRIPT
from taskmint.languages.treesitter import TreeSitterSyntax
from taskmint.records import Environment, Language, SeedManifest, Strategy, stable_id

__all__ = ["JAVASCRIPT", "NODE_HARNESS", "JavaScriptProfile", "NodeAdapter"]


def _node_version(node: str) -> str:
    try:
        return subprocess.run(
            [node, "--version"], capture_output=True, text=True, check=True, timeout=30
        ).stdout.strip()
    except (OSError, subprocess.SubprocessError) as exc:
        raise EnvironmentBuildError(
            f"node is needed for JavaScript seeds but could not run ({exc}); install nodejs"
        ) from exc


class JavaScriptProfile(LanguageProfile):
    """JavaScript seeds run by node (see the module docstring)."""

    name: ClassVar[Language] = "javascript"
    runner: ClassVar[str] = "node"
    extensions: ClassVar[tuple[str, ...]] = JAVASCRIPT.extensions
    engine: ClassVar[str] = "tree-sitter"
    syntax: ClassVar[TreeSitterSyntax | None] = JAVASCRIPT
    strategies: ClassVar[tuple[Strategy, ...]] = (
        "stub_body",
        "remove_function",
        "remove_method",
        "remove_class",
    )
    brace_methods: ClassVar[bool] = True
    harbor: ClassVar[bool] = True

    def __init__(self) -> None:
        self._adapter = NodeAdapter()

    @property
    def adapter(self) -> NodeAdapter:
        """node's test runner under taskmint's harness."""
        return self._adapter

    def test_command(self, manifest: SeedManifest) -> str:
        """`node --test` over the test paths."""
        return "node --test " + " ".join(manifest.test_paths)

    def environment_id(self, manifest: SeedManifest) -> str:
        """The node binary (its real path) and its version."""
        node = shutil.which("node") or "node"
        return "node-" + stable_id("node", os.path.realpath(node), _node_version(node))

    def build_environment(self, manifest: SeedManifest, *, cache_dir: Path) -> Environment:
        """The host's node; nothing to build."""
        env_id = self.environment_id(manifest)
        node = shutil.which("node")
        if node is None:
            raise EnvironmentBuildError("node not found on PATH; install nodejs (Debian: nodejs)")
        real = os.path.realpath(node)
        return Environment(
            env_id=env_id,
            kind="node",
            prefix="",
            interpreter=real,
            interpreter_prefix=os.path.dirname(os.path.dirname(real)),
            python_version="",
        )

    def harbor_runner(
        self, manifest: SeedManifest, *, env_id: str, expected: Sequence[str]
    ) -> dict[str, Any]:
        """The node the task's image holds (this machine's, at its real path, when the
        environment id is the task's; else `node` on the tests' PATH: an image of the
        user's) and the harness's input; the grader fills in the nonce, the files, the
        selection and the workspace per run."""
        found = shutil.which("node")
        node = "node"
        if found is not None and self.environment_id(manifest) == env_id:
            node = os.path.realpath(found)
        env = Environment(
            env_id=env_id,
            kind="node",
            prefix="",
            interpreter=node,
            interpreter_prefix="",
            python_version="",
        )
        node_input = self.adapter.node_input(manifest, env, nonce="", test_ids=tuple(expected))
        return {
            "node": node_input["node"],
            "node_input": {"env": node_input["env"]},
            "env": [list(kv) for kv in NodeAdapter.base_env()],
        }

    def harbor_tools(self, spec: dict[str, Any]) -> tuple[str, ...]:
        """node itself."""
        return (spec["node"],)
