"""The Python profile: pytest seeds, read and edited with libcst and `ast`.

- seeds: detected from their metadata, layout and pytest configuration without running any
  of their code (`python.detect`, over `project`, `dependencies` and `plugins`); a suite that
  breaks on pytest itself runs again under older pytests (`fallback_manifest`).
- environment: a venv of the declared dependencies and the test tools, holding no copy of the
  seed (`taskmint.envs`).
- runner: pytest with taskmint's plugin (`PytestAdapter`), coverage.py's per-test contexts,
  forked batches, bytecode written once per snapshot, planted canaries.
- code: the libcst engine (`index.python` and the strategies of `excise`), `ast` for
  mutants and for what describe reads (`python.reading`).
- Harbor: the seed's venv runs the grader and pytest with the adapter's own arguments.
"""

from __future__ import annotations

import dataclasses
import importlib.metadata
import json
import os
import re
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any, ClassVar

from packaging.version import Version

from taskmint.config import MIN_PYTEST
from taskmint.envs.venv import build_venv, venv_id
from taskmint.languages.base import LanguageProfile, Shape
from taskmint.languages.python import hidden, reading
from taskmint.languages.python.detect import detect_manifest, looks_like_python
from taskmint.languages.python.runner import PytestAdapter
from taskmint.languages.python.scm_version import write_version_file
from taskmint.records import Environment, Language, SeedManifest, Strategy
from taskmint.runners.adapters import VENV_DIR

__all__ = ["PytestAdapter", "PythonProfile"]

# What pytest says when a suite breaks on its newer versions rather than on the code: a
# deprecation that the project's `filterwarnings = error` turns into an error (click 8.4.2 and
# packaging 26.2 on pytest 9.1+), a hook argument pytest removed (docopt-ng's `path` on 9.0).
_PYTEST_TROUBLE = re.compile(
    r"PytestRemovedIn\d+Warning|PytestDeprecationWarning|PluginValidationError"
    r"|unknown hook|has no argument|argument '\w+' cannot be found"
)


class PythonProfile(LanguageProfile):
    """Python seeds run by pytest (see the module docstring)."""

    name: ClassVar[Language] = "python"
    runner: ClassVar[str] = "pytest"
    extensions: ClassVar[tuple[str, ...]] = (".py",)
    engine: ClassVar[str] = "libcst"
    strategies: ClassVar[tuple[Strategy, ...]] = (
        "stub_body",
        "remove_function",
        "remove_class",
        "remove_block",
        "feature_cluster",
        "feature",
    )
    shows_decorators: ClassVar[bool] = True
    harbor: ClassVar[bool] = True

    def __init__(self) -> None:
        self._adapter = PytestAdapter()

    # -- seeds

    def detects(self, root: Path) -> bool:
        """Build metadata or `.py` files at the top of the tree (or under src/)."""
        return looks_like_python(root)

    def detect_manifest(self, root: Path, *, name: str, description: str = "") -> SeedManifest:
        """Source paths, test paths, pythonpath, dependencies and the project's own pytest
        plugins (`python.detect`)."""
        return detect_manifest(root, name=name, description=description)

    def complete_checkout(self, root: Path, describe: str) -> tuple[str, ...]:
        """The version module a build from the tags would write (setuptools-scm, hatch-vcs,
        PDM), when the project's configuration names one (`python.scm_version`)."""
        written = write_version_file(root, describe)
        return (written,) if written is not None else ()

    def fallback_manifest(
        self, manifest: SeedManifest, problems: Sequence[str]
    ) -> SeedManifest | None:
        """The manifest with an older pytest, when the original runs broke on pytest itself
        (`_PYTEST_TROUBLE` in one of `problems`), else None. The steps: taskmint's own
        version, then the newest release of the previous minor (`<9.2` for 9.2.0), then of
        the previous major (`<9`), never older than `MIN_PYTEST`. A pytest constraint the
        project declares itself is kept as it is."""
        if not any(_PYTEST_TROUBLE.search(t) for t in problems):
            return None
        current = Version(importlib.metadata.version("pytest"))
        steps = [
            s
            for s in (f"<{current.major}.{current.minor}", f"<{current.major}")
            if Version(s[1:]) > Version(MIN_PYTEST)
        ]
        if manifest.pytest and manifest.pytest not in steps:
            return None  # the project's own constraint
        later = steps[steps.index(manifest.pytest) + 1 :] if manifest.pytest else steps
        return dataclasses.replace(manifest, pytest=later[0]) if later else None

    def test_command(self, manifest: SeedManifest) -> str:
        """`python -m pytest` over the test paths."""
        return "python -m pytest -p no:cacheprovider " + " ".join(manifest.test_paths)

    # -- environment and runner

    def environment_id(self, manifest: SeedManifest) -> str:
        """The venv's id (`envs.venv_id`)."""
        return venv_id(manifest)

    def build_environment(self, manifest: SeedManifest, *, cache_dir: Path) -> Environment:
        """The seed's venv (`envs.build_venv`)."""
        return build_venv(manifest, cache_dir=cache_dir)

    @property
    def adapter(self) -> PytestAdapter:
        """pytest with taskmint's plugin."""
        return self._adapter

    # -- what statements say

    def module_name(self, file: str) -> str | None:
        """The dotted module of a `.py` file (a package's `__init__.py`: the package)."""
        if not file.endswith(".py"):
            return None
        mod = file[: -len(".py")].replace("/", ".")
        return mod[: -len(".__init__")] if mod.endswith(".__init__") else mod

    def canary_folder(self, test_paths: Sequence[str]) -> str:
        """The first test path's folder (its own folder when it is a test module)."""
        first = test_paths[0] if test_paths else "tests"
        return os.path.dirname(first) if first.endswith(".py") else first.rstrip("/")

    def interface_lines(self, code: str) -> set[int] | None:
        """Docstrings and definition headers, from `ast`."""
        return reading.interface_lines(code)

    def outline(self, code: str) -> list[str] | None:
        """The outline read from `ast`."""
        return reading.outline(code)

    def shape(self, code: str) -> Shape | None:
        """The shape read from `ast`."""
        return reading.shape(code)

    def test_docs(self, root: Path, tests: Sequence[str]) -> tuple[tuple[str, str], ...]:
        """The test functions' docstrings, from `ast`."""
        return reading.test_docs(root, tests)

    def class_docstring(self, root: Path, file: str, qualname: str) -> str | None:
        """The class's docstring, from `ast`."""
        return reading.class_docstring(root, file, qualname)

    # -- hidden tests

    def hidden_tests(
        self,
        fail_to_pass: tuple[str, ...],
        pass_to_pass: tuple[str, ...],
        *,
        seed: str,
        fraction: float,
        pass_fraction: float,
        source_of: Callable[[str], str | None] | None = None,
    ) -> tuple[str, ...]:
        """Whole test functions, chosen by `python.hidden.choose_hidden`."""
        return hidden.choose_hidden(
            fail_to_pass,
            pass_to_pass,
            seed=seed,
            fraction=fraction,
            pass_fraction=pass_fraction,
            source_of=source_of,
        )

    def strip_hidden(self, path: str, text: str, hidden_ids: tuple[str, ...]) -> str:
        """The test functions cut out of the module's text (`python.hidden.strip_hidden`)."""
        return hidden.strip_hidden(path, text, hidden_ids)

    # -- Harbor

    def harbor_runner(
        self, manifest: SeedManifest, *, env_id: str, expected: Sequence[str]
    ) -> dict[str, Any]:
        """The pytest adapter's command over the expected tests, in the image's venv: the
        interpreter, the runner's options (the selection is the grader's, per run), pytest's
        arguments without the test files, and the environment variables."""
        venv = Environment(
            env_id=env_id,
            kind="venv",
            prefix=VENV_DIR,
            interpreter=f"{VENV_DIR}/bin/python",
            interpreter_prefix="",
            python_version="",
        )
        targets = len(dict.fromkeys(t.split("::", 1)[0] for t in expected))
        argv, env_vars = self.adapter.command(manifest, venv, nonce="", test_ids=tuple(expected))
        options = json.loads(argv[6])
        options.pop("select_file", None)
        return {
            "python": argv[0],
            "options": options,
            "args": list(argv[8 : len(argv) - targets]),
            "env": [list(kv) for kv in env_vars],
        }
