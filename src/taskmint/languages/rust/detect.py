"""Rust trees: detecting a Rust seed and its manifest, and making a fetched tree a seed.

A tree with a Cargo.toml at its root is a Rust seed (`is_rust_tree`); `detect_manifest` reads
its packages with `cargo metadata` (which runs none of the seed's code). `prepare_tree` makes a
fetched tree ready to snapshot: no `target/` build folder, a test somewhere (`has_tests`), a
Cargo.lock (`cargo generate-lockfile`, resolved once, here, when the tree has none) and its
dependencies vendored (`environment.vendor_dependencies`: dev-dependencies included, keyed by
the lock, so every later build is offline). The network is needed here and nowhere after.
`taskmint.acquire.rust` fetches crates, git commits and folders with it.

Refusals are `RustSourceError`s that say what to do: cargo missing, a dependency that cannot be
resolved, no tests. A seed that does not build is refused when its environment is built
(`build_environment`), where it is first compiled.
"""

from __future__ import annotations

import json
import os
import re
import shutil
import subprocess
from pathlib import Path, PurePosixPath
from typing import Any

from taskmint.errors import EnvironmentBuildError, ManifestError
from taskmint.languages.rust.environment import vendor_dependencies
from taskmint.languages.rust.toolchain import Toolchain, find_toolchain
from taskmint.records import SeedManifest

__all__ = [
    "DETECTED_TIMEOUT",
    "RustSourceError",
    "detect_manifest",
    "has_tests",
    "is_rust_tree",
    "prepare_tree",
    "run_cargo",
    "toolchain_or_refuse",
]

DETECTED_TIMEOUT = 900.0  # [run] timeout of a detected manifest (a cold build included)
_SKIP = {"target", ".git"}


class RustSourceError(ManifestError):
    """A Rust tree cannot be a seed (no toolchain, no tests, an unresolvable dependency)."""


def is_rust_tree(root: Path) -> bool:
    """Whether the tree at `root` is a Rust seed: a Cargo.toml at its root."""
    return (Path(root) / "Cargo.toml").is_file()


def toolchain_or_refuse() -> Toolchain:
    """The host's toolchain, or `RustSourceError` saying what to install."""
    try:
        return find_toolchain()
    except EnvironmentBuildError as exc:
        raise RustSourceError(str(exc)) from exc


def run_cargo(argv: list[str], toolchain: Toolchain, cwd: Path, what: str, hint: str) -> str:
    """cargo's standard output of `argv` run on the host in `cwd`; `RustSourceError` saying
    what could not be done (`what`), what to do (`hint`) and cargo's last words."""
    try:
        proc = subprocess.run(
            argv, cwd=cwd, env=toolchain.host_env(), capture_output=True, text=True, timeout=1800
        )
    except (OSError, subprocess.SubprocessError) as exc:
        raise RustSourceError(f"could not {what}: {exc}") from exc
    if proc.returncode != 0:
        raise RustSourceError(f"could not {what}: {hint}\n{proc.stderr.strip()[-1500:]}")
    return proc.stdout


# --- detection -----------------------------------------------------------------------------


def _metadata(root: Path, toolchain: Toolchain) -> dict[str, Any]:
    text = run_cargo(
        [toolchain.cargo, "metadata", "--no-deps", "--format-version", "1", "--offline"],
        toolchain,
        root,
        "read Cargo.toml",
        "fix the seed's Cargo.toml (a path dependency outside the tree, a workspace it "
        "inherits from above, or invalid TOML)",
    )
    data = json.loads(text)
    return data if isinstance(data, dict) else {}


def detect_manifest(root: Path, *, name: str, description: str = "") -> SeedManifest:
    """A Rust seed's manifest from its Cargo.toml (read by `cargo metadata`, which runs no
    code of the seed): source paths are the folders of its packages' library and binary
    targets (`src`), test paths the folders of their integration tests (`tests`). Unit tests
    in `#[cfg(test)]` modules and doctests live in the source files; they run, but no path
    rule can tell them apart (see docs/rust.md)."""
    root = Path(root)
    toolchain = toolchain_or_refuse()
    data = _metadata(root, toolchain)
    members = set(data.get("workspace_members") or [])
    sources: list[str] = []
    tests: list[str] = []
    descriptions: list[str] = []
    for package in data.get("packages") or []:
        if not isinstance(package, dict) or package.get("id") not in members:
            continue
        if package.get("description"):
            descriptions.append(" ".join(str(package["description"]).split()))
        for target in package.get("targets") or []:
            kinds = set(target.get("kind") or [])
            rel = _folder_of(root, str(target.get("src_path") or ""))
            if rel is None:
                continue
            if kinds & {"lib", "rlib", "proc-macro", "cdylib", "staticlib", "dylib", "bin"}:
                sources.append(rel)
            elif "test" in kinds:
                tests.append(rel)
    sources = _outermost(sources)
    tests = [t for t in _outermost(tests) if not any(_under(t, s) for s in sources)]
    if not sources:
        raise RustSourceError(
            f"{name}: no library or binary target found in Cargo.toml; write a taskmint.toml "
            "with [seed] source_paths by hand"
        )
    return SeedManifest(
        name=name,
        language="rust",
        description=description or (descriptions[0] if descriptions else ""),
        source_paths=tuple(sources),
        test_paths=tuple(tests) or ("tests",),
        runner="cargo",
        timeout=DETECTED_TIMEOUT,
    )


def _folder_of(root: Path, src_path: str) -> str | None:
    """The folder (relative to `root`) holding a target's root file: `src` for `src/lib.rs`,
    `tests` for `tests/api.rs` or `tests/api/main.rs`."""
    try:
        rel = PurePosixPath(Path(src_path).resolve().relative_to(root.resolve()).as_posix())
    except ValueError:
        return None
    parts = rel.parts[:-1]
    if not parts:
        return rel.as_posix()  # a root file (`lib.rs` at the top)
    for i, part in enumerate(parts):  # the first folder named like cargo's conventions
        if part in ("src", "tests"):
            return "/".join(parts[: i + 1])
    return "/".join(parts)


def _under(path: str, folder: str) -> bool:
    return path == folder or path.startswith(folder.rstrip("/") + "/")


def _outermost(paths: list[str]) -> list[str]:
    out: list[str] = []
    for p in sorted(set(paths), key=lambda x: (x.count("/"), x)):
        if not any(_under(p, o) for o in out):
            out.append(p)
    return sorted(out)


_TEST_MARKS = ("#[test]", "#[cfg(test)]", "#[tokio::test", "```")


def has_tests(root: Path) -> bool:
    """Whether the tree holds any test: a `.rs` file under a `tests` folder, a `#[test]` or
    `#[cfg(test)]`, or a code block in a doc comment (a doctest)."""
    for dirpath, dirnames, filenames in os.walk(root):
        dirnames[:] = [d for d in dirnames if d not in _SKIP]
        in_tests = "tests" in Path(dirpath).relative_to(root).parts
        for name in filenames:
            if not name.endswith(".rs"):
                continue
            if in_tests:
                return True
            try:
                text = Path(dirpath, name).read_text(encoding="utf-8", errors="replace")
            except OSError:
                continue
            if any(mark in text for mark in _TEST_MARKS[:3]):
                return True
            if re.search(r"^\s*(///|//!).*```", text, re.MULTILINE):
                return True
    return False


# --- preparing a fetched tree ---------------------------------------------------------------


def prepare_tree(tree: Path, cache_dir: Path, *, label: str) -> None:
    """Make a fetched tree a Rust seed (see the module docstring); `label` names it in
    refusals."""
    toolchain = toolchain_or_refuse()
    if not is_rust_tree(tree):
        raise RustSourceError(f"{label} has no Cargo.toml at its root: not a Rust project")
    for skip in ("target",):
        shutil.rmtree(tree / skip, ignore_errors=True)
    if not has_tests(tree):
        raise RustSourceError(
            f"{label} ships no tests (no tests/ file, #[test] or doctest): only crates that "
            "ship their tests can be seeds; registry packages often leave them out, so take "
            "the project's git repository at the release's commit instead"
        )
    if not (tree / "Cargo.lock").is_file():
        run_cargo(
            [toolchain.cargo, "generate-lockfile"],
            toolchain,
            tree,
            f"resolve the dependencies of {label}",
            "a dependency cannot be resolved from the Rust crate registry (a version that "
            "does not exist, a yanked release, a path or git dependency outside the tree); "
            "fix Cargo.toml or add a Cargo.lock",
        )
    try:
        vendor_dependencies(tree, cache_dir, toolchain)
    except EnvironmentBuildError as exc:
        raise RustSourceError(f"{label}: {exc}") from exc
