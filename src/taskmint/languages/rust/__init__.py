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
- code: the `RUST` tree-sitter syntax (`languages.grammars`), `todo!()` as the stub;
- `RUST_PROTECTED_NAMES`: the files that configure a Rust build or test run, which no patch
  may change and which stay read-only in every run.

Importing this package registers the profile (`PROFILE`); `languages/__init__.py` does not
yet. docs/rust.md says how it works, what it costs, and what a policy can still forge.
"""

from __future__ import annotations

from pathlib import Path
from typing import ClassVar

from taskmint.errors import EnvironmentBuildError
from taskmint.languages.base import LanguageProfile, register
from taskmint.languages.grammars import RUST
from taskmint.languages.rust.adapter import CargoAdapter, parse_cargo_report, split_id
from taskmint.languages.rust.detect import (
    RustSourceError,
    detect_manifest,
    has_tests,
    is_rust_tree,
    prepare_tree,
)
from taskmint.languages.rust.environment import build_environment, environment_id
from taskmint.languages.rust.toolchain import Toolchain, ToolchainMissing, find_toolchain
from taskmint.languages.treesitter import TreeSitterSyntax
from taskmint.records import Environment, Language, SeedManifest, Strategy

__all__ = [
    "PROFILE",
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
    """Rust seeds run by cargo (see the package docstring): the runner's, environment's and
    detection's part; the code's part (strategies, statements, Harbor) is the syntax's
    defaults for now."""

    name: ClassVar[Language] = "rust"
    runner: ClassVar[str] = "cargo"
    extensions: ClassVar[tuple[str, ...]] = RUST.extensions
    engine: ClassVar[str] = "tree-sitter"
    syntax: ClassVar[TreeSitterSyntax | None] = RUST
    strategies: ClassVar[tuple[Strategy, ...]] = ("stub_body",)
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

    def test_command(self, manifest: SeedManifest) -> str:
        """nextest over the workspace, then the doctests."""
        return "cargo nextest run --workspace && cargo test --doc --workspace"

    def environment_id(self, manifest: SeedManifest) -> str:
        """Not from a manifest: a Rust environment is the snapshot's (its warm build), see
        `environment.environment_id(seed)`."""
        raise EnvironmentBuildError(
            "a Rust environment is made from the seed's snapshot, not its manifest: use "
            "taskmint.languages.rust.environment_id(seed)"
        )

    def build_environment(self, manifest: SeedManifest, *, cache_dir: Path) -> Environment:
        """Not from a manifest: a Rust environment needs the seed's tree (its Cargo.lock and
        vendored dependencies) and a sandbox for the warm build, see
        `environment.build_environment(seed, cache_dir=, sandbox=)`."""
        raise EnvironmentBuildError(
            "a Rust environment is built from the seed itself, in the sandbox: use "
            "taskmint.languages.rust.build_environment(seed, cache_dir=..., sandbox=...)"
        )


PROFILE = register(RustProfile())
