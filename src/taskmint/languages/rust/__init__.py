"""The Rust profile: cargo seeds, run by cargo-nextest and rustdoc under taskmint's harness.

- seeds: a tree with a Cargo.toml at its root (`detect.is_rust_tree`); its manifest read by
  `cargo metadata` (`detect.detect_manifest`); fetched by `taskmint.acquire.rust` (a crate from
  the Rust crate registry, a git commit, a folder), which locks and vendors it
  (`detect.prepare_tree`);
- environment: the toolchain, an offline cargo home, the vendored dependencies and a warm
  target folder (`environment.build_environment(seed, cache_dir=, sandbox=)`: it needs the
  seed's tree and a sandbox, which the profile's manifest-only `build_environment` does not
  get, see `RustProfile.build_environment`);
- runner: `CargoAdapter` (`adapter`): the harness command, its report, the test ids;
- code: the `RUST` tree-sitter syntax (`languages.grammars`) for indexing, and the profile's
  own candidates (`candidates.rust_candidates`: stubs with `todo!()`, removed functions,
  methods and impl blocks, features, each leaving a tree that compiles) and mutants
  (`mutants.rust_mutants`);
- `RUST_PROTECTED_NAMES`: the files that configure a Rust build or test run, which no patch
  may change and which stay read-only in every run.

`languages/__init__.py` registers the profile. docs/rust.md says how it works, what it costs,
and what a policy can still forge.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Sequence
from pathlib import Path
from typing import Any, ClassVar

from taskmint.config import FeatureSize, SandboxConfig
from taskmint.errors import EnvironmentBuildError
from taskmint.languages.base import LanguageProfile
from taskmint.languages.grammars import RUST
from taskmint.languages.rust.adapter import CargoAdapter, parse_cargo_report, split_id
from taskmint.languages.rust.candidates import STRATEGIES, rust_candidates
from taskmint.languages.rust.detect import (
    RustSourceError,
    detect_manifest,
    has_tests,
    is_rust_tree,
    prepare_tree,
)
from taskmint.languages.rust.environment import build_environment, environment_id
from taskmint.languages.rust.mutants import rust_mutants
from taskmint.languages.rust.toolchain import Toolchain, ToolchainMissing, find_toolchain
from taskmint.languages.treesitter import TreeSitterSyntax
from taskmint.records import (
    Candidate,
    Environment,
    Language,
    SeedApp,
    SeedManifest,
    SkippedFile,
    Strategy,
    Unit,
)
from taskmint.sandbox import open_sandbox

__all__ = [
    "RUST_PROTECTED_NAMES",
    "CargoAdapter",
    "RustProfile",
    "RustSourceError",
    "Toolchain",
    "ToolchainMissing",
    "build_environment",
    "detect_manifest",
    "environment_id",
    "find_toolchain",
    "has_tests",
    "is_rust_tree",
    "parse_cargo_report",
    "prepare_tree",
    "split_id",
]

# Files that configure a Rust build or its test run (by name, anywhere in the tree): a build
# script runs arbitrary code at build time, `.cargo/config.toml` can set a test runner, linker
# or rustc wrapper, `rust-toolchain.toml` a toolchain, `.config/nextest.toml` the runner.
RUST_PROTECTED_NAMES = frozenset(
    {
        "Cargo.toml",
        "Cargo.lock",
        "build.rs",
        "config.toml",
        "config",
        "rust-toolchain",
        "rust-toolchain.toml",
        "nextest.toml",
        "taskmint.toml",
        ".cargo-checksum.json",
    }
)


class RustProfile(LanguageProfile):
    """Rust seeds run by cargo (see the package docstring)."""

    name: ClassVar[Language] = "rust"
    runner: ClassVar[str] = "cargo"
    extensions: ClassVar[tuple[str, ...]] = RUST.extensions
    engine: ClassVar[str] = "tree-sitter"
    own_edits: ClassVar[bool] = True
    syntax: ClassVar[TreeSitterSyntax | None] = RUST
    strategies: ClassVar[tuple[Strategy, ...]] = STRATEGIES
    brace_methods: ClassVar[bool] = True

    def __init__(self) -> None:
        self._adapter = CargoAdapter()

    @property
    def adapter(self) -> CargoAdapter:
        """cargo-nextest and rustdoc under taskmint's cargo harness."""
        return self._adapter

    def detects(self, root: Path) -> bool:
        """A Cargo.toml at the root."""
        return is_rust_tree(root)

    def detect_manifest(self, root: Path, *, name: str, description: str = "") -> SeedManifest:
        """From `cargo metadata`: the library and binary folders, the integration tests'."""
        return detect_manifest(root, name=name, description=description)

    def prepare_tree(self, tree: Path, cache_dir: Path, *, label: str) -> None:
        """`detect.prepare_tree`: no `target/`, a test somewhere, a Cargo.lock, the
        dependencies (dev-dependencies included) vendored under `cache_dir`."""
        prepare_tree(tree, cache_dir, label=label)

    def test_command(self, manifest: SeedManifest) -> str:
        """nextest over the workspace, then the doctests."""
        return "cargo nextest run --workspace && cargo test --doc --workspace"

    def seed_environment(
        self, seed: SeedApp, *, cache_dir: Path, sandbox: SandboxConfig | None = None
    ) -> Environment:
        """The toolchain, the vendored dependencies and the snapshot's warm build, made in a
        sandbox of `sandbox` (default: the local one); see `environment.build_environment`."""
        config = sandbox or SandboxConfig()
        with open_sandbox(config) as box:
            return build_environment(seed, cache_dir=cache_dir, sandbox=box, limits=config.limits)

    def seed_environment_id(self, seed: SeedApp) -> str:
        """The snapshot's, its lock's and the toolchain's."""
        return environment_id(seed)

    def candidates(
        self,
        seed: SeedApp,
        units: Sequence[Unit],
        *,
        max_candidates: int,
        random_seed: int,
        min_body_lines: int,
        strategies: Sequence[Strategy],
        feature_size: FeatureSize | None,
    ) -> tuple[list[Candidate], list[SkippedFile]]:
        """`candidates.rust_candidates`: every candidate leaves a tree that compiles."""
        return rust_candidates(
            seed,
            units,
            max_candidates=max_candidates,
            random_seed=random_seed,
            min_body_lines=min_body_lines,
            strategies=[s for s in strategies if s in STRATEGIES],
            feature_size=feature_size,
        )

    def mutants(self, path: str, data: bytes, lines: set[int]) -> list[dict[str, Any]]:
        """`mutants.rust_mutants`, as the fields of a mutant each."""
        return [dataclasses.asdict(m) for m in rust_mutants(path, data, lines)]

    def environment_id(self, manifest: SeedManifest) -> str:
        """Not from a manifest: a Rust environment is the snapshot's (its warm build), see
        `environment.environment_id(seed)`."""
        raise EnvironmentBuildError(
            "a Rust environment is made from the seed's snapshot, not its manifest: pass the "
            "seed (taskmint.languages.environment_id(seed))"
        )

    def build_environment(self, manifest: SeedManifest, *, cache_dir: Path) -> Environment:
        """Not from a manifest: a Rust environment needs the seed's tree (its Cargo.lock and
        vendored dependencies) and a sandbox for the warm build, see
        `environment.build_environment(seed, cache_dir=, sandbox=)`."""
        raise EnvironmentBuildError(
            "a Rust environment is built from the seed itself, in the sandbox: pass the seed "
            "(taskmint.languages.build_environment(seed, cache_dir=..., sandbox=...))"
        )
