"""Acquiring Rust seeds: a published crate at a version, a git repository at a commit, or a
folder; and detecting a Rust seed's manifest.

Every source ends the same way: the tree (without any `target/` build folder) gets a Cargo.lock
if it has none (`cargo generate-lockfile`, resolved once, here), its dependencies are vendored
(`environment.vendor_dependencies`: dev-dependencies included, keyed by the lock, so every later
build is offline), it gets a detected `taskmint.toml` unless it has one, and it is snapshotted
like any seed. The network is needed here and nowhere after.

- `acquire_crate(name, version)`: the package as the Rust crate registry serves it, fetched by
  cargo itself (a throw-away project depending on `name = "=version"`, vendored). A package
  that ships no tests (no `tests/` file, no `#[test]`, no doctest) is refused: registry
  packages often leave them out; take a git commit then.
- `acquire_git(url, commit)`: taskmint's git fetching (`acquire.sources`), a full commit hash.
- `acquire_folder(path)`: a copy of a local folder (the folder itself is never written to).

Refusals are `SourceError`s that say what to do: cargo missing, a version that does not exist,
a dependency that cannot be resolved, no tests. A seed that does not build is refused when its
environment is built (`build_environment`), where it is first compiled.
"""

from __future__ import annotations

import json
import os
import re
import shutil
import subprocess
from collections.abc import Callable
from pathlib import Path, PurePosixPath
from typing import Any

from taskmint.acquire.detect import render_manifest
from taskmint.acquire.manifest import MANIFEST_NAME
from taskmint.acquire.snapshot import snapshot_tree
from taskmint.acquire.sources import SeedSource, SourceError, _fetch_git
from taskmint.errors import EnvironmentBuildError
from taskmint.files import list_tree, tree_digest
from taskmint.languages.rust.environment import vendor_dependencies
from taskmint.languages.rust.toolchain import Toolchain, find_toolchain
from taskmint.records import SeedApp, SeedManifest, stable_id
from taskmint.scratch import make_staging

__all__ = [
    "DETECTED_TIMEOUT",
    "acquire_crate",
    "acquire_folder",
    "acquire_git",
    "detect_manifest",
    "has_tests",
    "is_rust_tree",
]

DETECTED_TIMEOUT = 900.0  # [run] timeout of a detected manifest (a cold build included)
_RECIPE = 1  # bumped when the way trees are prepared changes
_NAME = re.compile(r"^[A-Za-z0-9_-]+$")
_VERSION = re.compile(r"^[0-9A-Za-z.+-]+$")
_SKIP = {"target", ".git"}


def is_rust_tree(root: Path) -> bool:
    """Whether the tree at `root` is a Rust seed: a Cargo.toml at its root."""
    return (Path(root) / "Cargo.toml").is_file()


def _toolchain() -> Toolchain:
    try:
        return find_toolchain()
    except EnvironmentBuildError as exc:
        raise SourceError(str(exc)) from exc


def _cargo(argv: list[str], toolchain: Toolchain, cwd: Path, what: str, hint: str) -> str:
    try:
        proc = subprocess.run(
            argv, cwd=cwd, env=toolchain.host_env(), capture_output=True, text=True, timeout=1800
        )
    except (OSError, subprocess.SubprocessError) as exc:
        raise SourceError(f"could not {what}: {exc}") from exc
    if proc.returncode != 0:
        raise SourceError(f"could not {what}: {hint}\n{proc.stderr.strip()[-1500:]}")
    return proc.stdout


# --- detection -----------------------------------------------------------------------------


def _metadata(root: Path, toolchain: Toolchain) -> dict[str, Any]:
    text = _cargo(
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
    toolchain = _toolchain()
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
        raise SourceError(
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


# --- preparing a fetched tree --------------------------------------------------------------


def _prepare(tree: Path, cache_dir: Path, *, name: str, label: str, toolchain: Toolchain) -> None:
    """Make a fetched tree a Rust seed: no build folder, a Cargo.lock, vendored dependencies,
    a taskmint.toml."""
    if not is_rust_tree(tree):
        raise SourceError(f"{label} has no Cargo.toml at its root: not a Rust project")
    for skip in ("target",):
        shutil.rmtree(tree / skip, ignore_errors=True)
    if not has_tests(tree):
        raise SourceError(
            f"{label} ships no tests (no tests/ file, #[test] or doctest): only crates that "
            "ship their tests can be seeds; registry packages often leave them out, so take "
            "the project's git repository at the release's commit instead"
        )
    if not (tree / "Cargo.lock").is_file():
        _cargo(
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
        raise SourceError(f"{label}: {exc}") from exc
    if not (tree / MANIFEST_NAME).is_file():
        manifest = detect_manifest(tree, name=name, description="")
        text = render_manifest(manifest, origin=label)
        (tree / MANIFEST_NAME).write_text(text, encoding="utf-8")


def _fetched(
    key: str,
    cache_dir: Path,
    fetch: Callable[[Path, Path], None],
    prepare: Callable[[Path], None],
) -> Path:
    """`cache/sources/<key>/tree`, fetched and prepared once (written to a staging folder,
    renamed into place)."""
    final = Path(cache_dir) / "sources" / key
    if (final / "tree").is_dir():
        return final / "tree"
    final.parent.mkdir(parents=True, exist_ok=True)
    tmp = make_staging(f".{key}.", final.parent)
    try:
        tree = tmp / "tree"
        fetch(tree, tmp)
        prepare(tree)
        try:
            os.rename(tmp, final)
        except OSError:
            if not (final / "tree").is_dir():
                raise
    finally:
        shutil.rmtree(tmp, ignore_errors=True)
    return final / "tree"


def acquire_crate(name: str, version: str, *, cache_dir: Path, seed_name: str = "") -> SeedApp:
    """A published crate at an exact version, with its dependencies vendored (see the module
    docstring)."""
    if not _NAME.match(name) or not _VERSION.match(version):
        raise SourceError(f"{name!r} {version!r} is not a crate name and an exact version")
    toolchain = _toolchain()
    label = f"{name} {version}"
    seed = seed_name or name.lower()

    def fetch(tree: Path, work: Path) -> None:
        project = work / "fetch"
        (project / "src").mkdir(parents=True)
        (project / "src" / "lib.rs").write_text("")
        (project / "Cargo.toml").write_text(
            '[package]\nname = "taskmint-fetch"\nversion = "0.0.0"\nedition = "2021"\n'
            "publish = false\n\n[workspace]\n\n"
            f'[dependencies]\n{name} = "={version}"\n'
        )
        _cargo(
            [toolchain.cargo, "vendor", "--versioned-dirs", str(work / "vendor")],
            toolchain,
            project,
            f"fetch the crate {label}",
            f"check that the Rust crate registry has {name} at exactly {version} (and that "
            "the network is up)",
        )
        matches = [
            p
            for p in (work / "vendor").glob(f"*-{version}")
            if p.name.lower().replace("_", "-") == f"{name}-{version}".lower().replace("_", "-")
        ]
        if not matches:
            raise SourceError(f"cargo fetched no {label}")
        shutil.copytree(matches[0], tree, ignore=shutil.ignore_patterns(".cargo-checksum.json"))

    def prepare(tree: Path) -> None:
        _prepare(tree, cache_dir, name=seed, label=label, toolchain=toolchain)

    key = stable_id("rust-crate", _RECIPE, name, version, seed)
    tree = _fetched(key, cache_dir, fetch, prepare)
    return snapshot_tree(tree, cache_dir, name=seed_name)


def acquire_git(
    url: str, commit: str, *, cache_dir: Path, subdir: str = "", name: str = ""
) -> SeedApp:
    """A git repository at a full commit hash (taskmint's git fetching), prepared as a Rust
    seed."""
    toolchain = _toolchain()
    source = SeedSource(kind="git", location=url, ref=commit, subdir=subdir, name=name)
    if not re.match(r"^[0-9a-f]{40}$", commit):
        raise SourceError(f"{url}: pin a full 40-hex commit hash, not {commit!r}")

    def fetch(tree: Path, work: Path) -> None:
        _fetch_git(source, tree, work)

    def prepare(tree: Path) -> None:
        _prepare(tree, cache_dir, name=source.name, label=source.label, toolchain=toolchain)

    key = stable_id("rust-git", _RECIPE, url, commit, subdir, source.name)
    tree = _fetched(key, cache_dir, fetch, prepare)
    return snapshot_tree(tree, cache_dir, name=name)


def acquire_folder(path: Path, *, cache_dir: Path, name: str = "") -> SeedApp:
    """A local folder (copied; never written to), prepared as a Rust seed."""
    path = Path(path).resolve()
    if not path.is_dir():
        raise SourceError(f"seed folder {path} does not exist")
    toolchain = _toolchain()
    seed = name or path.name
    files = [f for f in list_tree(path) if PurePosixPath(f).parts[0] not in _SKIP]

    def fetch(tree: Path, work: Path) -> None:
        tree.mkdir()
        for rel in files:
            (tree / rel).parent.mkdir(parents=True, exist_ok=True)
            shutil.copy2(path / rel, tree / rel)

    def prepare(tree: Path) -> None:
        _prepare(tree, cache_dir, name=seed, label=str(path), toolchain=toolchain)

    key = stable_id("rust-path", _RECIPE, str(path), tree_digest(path, files), seed)
    tree = _fetched(key, cache_dir, fetch, prepare)
    return snapshot_tree(tree, cache_dir, name=name)
