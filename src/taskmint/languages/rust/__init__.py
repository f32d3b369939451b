"""Rust seeds: the cargo runner, the environment, and acquisition.

The pieces a Rust language profile calls:

- `CargoAdapter` (runner "cargo"): the harness command, its input, its report
  (`parse_cargo_report`), test ids (see `adapter`); importing this package registers it for
  `runners.adapter_for`;
- `build_environment(seed, cache_dir=, sandbox=)`: the toolchain, the offline cargo home, the
  vendored dependencies and the warm target folder (see `environment`);
- `acquire_crate`, `acquire_git`, `acquire_folder`, `detect_manifest`, `is_rust_tree`
  (see `acquire`);
- `RUST_PROTECTED_NAMES`: the files that configure a Rust build or test run, which no patch
  may change and which stay read-only in every run.

docs/rust.md says how it works, what it costs, and what a policy can still forge.
"""

from taskmint.languages.rust.acquire import (
    acquire_crate,
    acquire_folder,
    acquire_git,
    detect_manifest,
    has_tests,
    is_rust_tree,
)
from taskmint.languages.rust.adapter import CargoAdapter, parse_cargo_report, split_id
from taskmint.languages.rust.environment import build_environment, environment_id
from taskmint.languages.rust.toolchain import Toolchain, ToolchainMissing, find_toolchain
from taskmint.runners.adapters import EXTRA_ADAPTERS

__all__ = [
    "RUST_PROTECTED_NAMES",
    "CargoAdapter",
    "Toolchain",
    "ToolchainMissing",
    "acquire_crate",
    "acquire_folder",
    "acquire_git",
    "build_environment",
    "detect_manifest",
    "environment_id",
    "find_toolchain",
    "has_tests",
    "is_rust_tree",
    "parse_cargo_report",
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

EXTRA_ADAPTERS.setdefault("cargo", CargoAdapter)
