"""What an exported Harbor task of a Rust seed tells its grader (`RustProfile.harbor_runner`).

The grader (`taskmint/harbor/inside/grade.py`) runs taskmint's cargo harness
(`runners/inside/cargo_runner.py`) over the expected ids, under the image's standard-library
venv, on the report channel, as the local sandbox runs it. The environment image
(`taskmint.harbor.rust_image`) holds what the environment fixes, at the sandbox's
paths: `HARBOR_INPUT` (cargo, nextest, the tools' environment, the target folder, the
original's test ids, the targets never built) and `HARBOR_WARM` (the warm target's path, root's
alone: only the grader, as root, reads it and hands it to the harness). The task's own part
is the limits; the grader adds the nonce, the selection and the workspace per run.

The environment digests (shared verifier mode) cover the Rust tools: cargo, rustc, rustdoc,
cargo-nextest, the linker and `ld` (each with the shared libraries it loads, rustc's driver and
LLVM among them), the harness's input and the offline cargo configuration.
"""

from __future__ import annotations

import os
import subprocess
from collections.abc import Iterable
from typing import Any

from taskmint.languages.rust.adapter import CargoAdapter
from taskmint.languages.rust.toolchain import CARGO_HOME, NEXTEST, TOOLCHAIN, find_toolchain
from taskmint.records import SeedManifest
from taskmint.runners.protect import PROTECTED_NAMES

__all__ = ["HARBOR_INPUT", "HARBOR_WARM", "harbor_spec", "harbor_tools"]

HARBOR_INPUT = "/opt/rust/harbor/input.json"  # 0644: the harness's input the image fixes
HARBOR_WARM = "/opt/rust/harbor/warm.json"  # 0600, root's: the warm target's path


def _collect2(linker: str) -> str | None:
    """The linker's own link driver (gcc's collect2), which runs `ld`."""
    try:
        proc = subprocess.run(
            [linker, "-print-prog-name=collect2"], capture_output=True, text=True, timeout=30
        )
    except (OSError, subprocess.SubprocessError):
        return None
    path = proc.stdout.strip()
    return os.path.realpath(path) if proc.returncode == 0 and path.startswith("/") else None


def harbor_spec(manifest: SeedManifest, protected_names: Iterable[str] = ()) -> dict[str, Any]:
    """The runner's part of task.json: the harness's own environment, the run's limits, where
    the image keeps the rest, the tools the digests cover, and the names no agent change may
    touch (taskmint's and `protected_names`, the Rust build's: Cargo.toml, build.rs, ...)."""
    linker = find_toolchain().linker
    collect2 = _collect2(linker)
    tools = [
        f"{TOOLCHAIN}/bin/cargo",
        f"{TOOLCHAIN}/bin/rustc",
        f"{TOOLCHAIN}/bin/rustdoc",
        NEXTEST,
        linker,
        *([collect2] if collect2 else []),
        "/usr/bin/ld",
        HARBOR_INPUT,
        f"{CARGO_HOME}/config.toml",
    ]
    return {
        "protected_names": sorted({*PROTECTED_NAMES, *protected_names}),
        "env": [list(kv) for kv in CargoAdapter.base_env()],
        "cargo_input": {
            "test_timeout": manifest.test_timeout,
            "timeout": manifest.timeout,
            "jobs": 0,
            "keep_target": False,
        },
        "rust_input": HARBOR_INPUT,
        "rust_warm": HARBOR_WARM,
        "rust_tools": tools,
    }


def harbor_tools(spec: dict[str, Any]) -> tuple[str, ...]:
    """The Rust tools and files the environment digests cover (`harbor_spec`'s)."""
    return tuple(str(t) for t in spec.get("rust_tools") or ())
