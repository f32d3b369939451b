"""Acquiring Rust seeds: a published crate at a version, a git repository at a commit, or a
folder.

Every source ends the same way: the fetched tree is prepared by the Rust profile
(`languages.rust.detect.prepare_tree`: no `target/` folder, a test somewhere, a Cargo.lock,
the dependencies vendored, dev-dependencies included, so every later build is offline), it gets
a detected `taskmint.toml` unless it has one, and it is snapshotted like any seed. The network
is needed here and nowhere after.

- `acquire_crate(name, version)`: the package as the Rust crate registry serves it, fetched by
  cargo itself (a throw-away project depending on `name = "=version"`, vendored). A package
  that ships no tests (no `tests/` file, no `#[test]`, no doctest) is refused: registry
  packages often leave them out; take a git commit then.
- `acquire_git(url, commit)`: taskmint's git fetching (`acquire.sources`), a full commit hash.
- `acquire_folder(path)`: a copy of a local folder (the folder itself is never written to).

Refusals are `SourceError`s that say what to do: cargo missing, a version that does not exist,
a dependency that cannot be resolved, no tests. A seed that does not build is refused when its
environment is built (`languages.rust.build_environment`), where it is first compiled.
"""

from __future__ import annotations

import os
import re
import shutil
from collections.abc import Callable
from pathlib import Path, PurePosixPath

from taskmint.acquire.manifest import MANIFEST_NAME, parse_manifest, render_manifest
from taskmint.acquire.snapshot import snapshot_tree
from taskmint.acquire.sources import SeedSource, SourceError, _fetch_git
from taskmint.files import list_tree, tree_digest
from taskmint.languages.rust.detect import (
    RustSourceError,
    detect_manifest,
    prepare_tree,
    run_cargo,
    toolchain_or_refuse,
)
from taskmint.languages.rust.toolchain import Toolchain
from taskmint.records import SeedApp, stable_id
from taskmint.scratch import make_staging

__all__ = ["acquire_crate", "acquire_folder", "acquire_git", "crate_tree"]

_RECIPE = 1  # bumped when the way trees are prepared changes
_NAME = re.compile(r"^[A-Za-z0-9_-]+$")
_VERSION = re.compile(r"^[0-9A-Za-z.+-]+$")
_SKIP = {"target", ".git"}


def _toolchain() -> Toolchain:
    try:
        return toolchain_or_refuse()
    except RustSourceError as exc:
        raise SourceError(str(exc)) from exc


def _prepare(tree: Path, cache_dir: Path, *, name: str, label: str) -> None:
    """The profile's preparation, and a detected taskmint.toml."""
    prepare_tree(tree, cache_dir, label=label)
    if not (tree / MANIFEST_NAME).is_file():
        manifest = detect_manifest(tree, name=name, description="")
        (tree / MANIFEST_NAME).write_text(render_manifest(manifest, origin=label), "utf-8")


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
        try:
            fetch(tree, tmp)
            prepare(tree)
        except RustSourceError as exc:
            raise SourceError(str(exc)) from exc
        try:
            os.rename(tmp, final)
        except OSError:
            if not (final / "tree").is_dir():
                raise
    finally:
        shutil.rmtree(tmp, ignore_errors=True)
    return final / "tree"


def acquire_crate(
    name: str, version: str, *, cache_dir: Path, seed_name: str = "", manifest: str = ""
) -> SeedApp:
    """A published crate at an exact version, with its dependencies vendored (see the module
    docstring); `manifest`, a pinned taskmint.toml to use instead of the detected one."""
    tree = crate_tree(name, version, cache_dir=cache_dir, seed_name=seed_name, manifest=manifest)
    return snapshot_tree(tree, cache_dir, name=seed_name)


def crate_tree(
    name: str, version: str, *, cache_dir: Path, seed_name: str = "", manifest: str = ""
) -> Path:
    """The prepared tree of a published crate (`cache/sources/<key>/tree`, fetched once):
    what `acquire_crate` snapshots, and a seeds manifest's `crate = "..."` entry fetches."""
    if not _NAME.match(name) or not _VERSION.match(version):
        raise SourceError(f"{name!r} {version!r} is not a crate name and an exact version")
    toolchain = _toolchain()
    label = f"{name} {version}"
    seed = seed_name or name.lower()
    pinned = _pinned_text(manifest)

    def fetch(tree: Path, work: Path) -> None:
        project = work / "fetch"
        (project / "src").mkdir(parents=True)
        (project / "src" / "lib.rs").write_text("")
        (project / "Cargo.toml").write_text(
            '[package]\nname = "taskmint-fetch"\nversion = "0.0.0"\nedition = "2021"\n'
            "publish = false\n\n[workspace]\n\n"
            f'[dependencies]\n{name} = "={version}"\n'
        )
        run_cargo(
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
        if pinned:
            (tree / MANIFEST_NAME).write_text(pinned, encoding="utf-8")

    def prepare(tree: Path) -> None:
        _prepare(tree, cache_dir, name=seed, label=label)

    key = stable_id("rust-crate", _RECIPE, name, version, seed, *([pinned] if pinned else []))
    return _fetched(key, cache_dir, fetch, prepare)


def _pinned_text(manifest: str) -> str:
    """The text of a pinned taskmint.toml (checked), or "" without one."""
    if not manifest:
        return ""
    try:
        text = Path(manifest).read_text(encoding="utf-8")
    except OSError as exc:
        raise SourceError(f"pinned manifest {manifest} cannot be read: {exc}") from exc
    parse_manifest(text, where=manifest)
    return text


def acquire_git(
    url: str, commit: str, *, cache_dir: Path, subdir: str = "", name: str = ""
) -> SeedApp:
    """A git repository at a full commit hash (taskmint's git fetching), prepared as a Rust
    seed."""
    _toolchain()
    source = SeedSource(kind="git", location=url, ref=commit, subdir=subdir, name=name)
    if not re.match(r"^[0-9a-f]{40}$", commit):
        raise SourceError(f"{url}: pin a full 40-hex commit hash, not {commit!r}")

    def fetch(tree: Path, work: Path) -> None:
        _fetch_git(source, tree, work)

    def prepare(tree: Path) -> None:
        _prepare(tree, cache_dir, name=source.name, label=source.label)

    key = stable_id("rust-git", _RECIPE, url, commit, subdir, source.name)
    tree = _fetched(key, cache_dir, fetch, prepare)
    return snapshot_tree(tree, cache_dir, name=name)


def acquire_folder(path: Path, *, cache_dir: Path, name: str = "") -> SeedApp:
    """A local folder (copied; never written to), prepared as a Rust seed."""
    path = Path(path).resolve()
    if not path.is_dir():
        raise SourceError(f"seed folder {path} does not exist")
    _toolchain()
    seed = name or path.name
    files = [f for f in list_tree(path) if PurePosixPath(f).parts[0] not in _SKIP]

    def fetch(tree: Path, work: Path) -> None:
        tree.mkdir()
        for rel in files:
            (tree / rel).parent.mkdir(parents=True, exist_ok=True)
            shutil.copy2(path / rel, tree / rel)

    def prepare(tree: Path) -> None:
        _prepare(tree, cache_dir, name=seed, label=str(path))

    key = stable_id("rust-path", _RECIPE, str(path), tree_digest(path, files), seed)
    tree = _fetched(key, cache_dir, fetch, prepare)
    return snapshot_tree(tree, cache_dir, name=name)
