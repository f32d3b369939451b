"""The Cargo packages of a Rust seed: where they are, which files are their own sources,
and which lints they deny (an edit's warnings fail the build of a crate that denies them).
"""

from __future__ import annotations

import re
import tomllib
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from pathlib import Path, PurePosixPath

from taskmint.languages.rust.tree import RustSourceError, read_rust

__all__ = ["Crate", "crates_of", "denied_lints", "home_of", "is_source_file"]

_NOT_SOURCE_DIRS = frozenset({"tests", "benches", "examples", "target", "fuzz"})


@dataclass(frozen=True, slots=True)
class Crate:
    """One Cargo package of a seed: its folder (relative, "" for the seed root), the lints it
    denies crate-wide, whether it is a proc-macro crate, and its `.rs` files."""

    root: str
    denied: frozenset[str]
    proc_macro: bool
    files: tuple[str, ...]
    docs_linted: bool = False  # a missing doc comment fails the build (`missing_docs` denied)


def _lint_names(text: str) -> set[str]:
    """The rustc lints named in a lint attribute's arguments (tool lints, `clippy::x`, are
    not rustc's and `cargo build` does not run them)."""
    return {n for n in re.findall(r"[A-Za-z_][A-Za-z0-9_:]*", text) if "::" not in n}


_INNER_LINT = re.compile(r"#!\[\s*(?:cfg_attr\s*\(.*?,\s*)?(deny|forbid)\s*\(([^\]]*)\)")


def denied_lints(
    rust_sources: Iterable[bytes], manifest: str = "", configs: Iterable[str] = ()
) -> frozenset[str]:
    """The lints a crate denies or forbids: inner attributes of its files (`#![deny(...)]`,
    also under `cfg_attr`), the `[lints.rust]` table of its Cargo.toml (and the workspace's),
    and `-D`/`--deny`/`-F` rustflags in cargo configuration texts."""
    names: set[str] = set()
    for data in rust_sources:
        text = data.decode("utf-8", "replace")
        for m in _INNER_LINT.finditer(text):
            names |= _lint_names(m.group(2))
    try:
        doc = tomllib.loads(manifest) if manifest else {}
    except tomllib.TOMLDecodeError:
        doc = {}
    tables = [doc.get("lints", {}), doc.get("workspace", {}).get("lints", {})]
    for table in tables:
        if not isinstance(table, dict):
            continue
        for tool, lints in table.items():
            if tool != "rust" or not isinstance(lints, dict):
                continue
            for name, level in lints.items():
                level = level.get("level") if isinstance(level, dict) else level
                if level in ("deny", "forbid"):
                    names.add(name.replace("-", "_"))
    for config in configs:
        for m in re.finditer(r"(?:-D|--deny|-F|--forbid)[\s\"',=]*([A-Za-z_][\w:-]*)", config):
            if "::" not in m.group(1):
                names.add(m.group(1).replace("-", "_"))
    return frozenset(names)


def crates_of(root: str | Path, files: Iterable[str]) -> dict[str, Crate]:
    """Every Cargo package among `files` (paths relative to `root`), by folder."""
    base = Path(root)
    files = sorted(files)
    homes = sorted(
        (str(PurePosixPath(f).parent) if "/" in f else "")
        for f in files
        if PurePosixPath(f).name == "Cargo.toml"
    )
    configs: list[str] = []
    for f in files:
        if f.startswith(".cargo/config") or "/.cargo/config" in f:
            try:
                configs.append((base / f).read_text("utf-8", "replace"))
            except OSError:
                continue
    crates: dict[str, Crate] = {}
    for home in homes:
        manifest_path = base / home / "Cargo.toml"
        try:
            manifest = manifest_path.read_text("utf-8", "replace")
        except OSError:
            continue
        try:
            doc = tomllib.loads(manifest)
        except tomllib.TOMLDecodeError:
            doc = {}
        if "package" not in doc:
            continue  # a virtual workspace manifest
        prefix = f"{home}/" if home else ""
        own = [
            f
            for f in files
            if f.endswith(".rs") and f.startswith(prefix) and home_of(f, homes) == home
        ]
        sources: list[bytes] = []
        for f in own:
            try:
                sources.append(read_rust(base / f))
            except RustSourceError:
                continue
        workspace = _workspace_manifest(base, home)
        lib = doc.get("lib", {})
        proc_macro = isinstance(lib, dict) and bool(lib.get("proc-macro") or lib.get("proc_macro"))
        denied = denied_lints(sources, manifest, configs) | denied_lints((), workspace)
        named = any(b"missing_docs" in s for s in sources) or "missing_docs" in manifest
        docs_linted = "missing_docs" in denied or ("warnings" in denied and named)
        crates[home] = Crate(
            root=home,
            denied=denied,
            proc_macro=proc_macro,
            files=tuple(own),
            docs_linted=docs_linted,
        )
    return crates


def _workspace_manifest(base: Path, home: str) -> str:
    parts = PurePosixPath(home).parts if home else ()
    for n in range(len(parts) - 1, -1, -1):
        path = base.joinpath(*parts[:n], "Cargo.toml")
        try:
            text = path.read_text("utf-8", "replace")
        except OSError:
            continue
        if "[workspace" in text:
            return text
    return ""


def home_of(rel: str, homes: Sequence[str]) -> str | None:
    """The innermost package folder holding `rel`."""
    best: str | None = None
    for home in homes:
        inside = home == "" or rel.startswith(home + "/")
        if inside and (best is None or len(home) > len(best)):
            best = home
    return best


def is_source_file(rel: str, crate: Crate) -> bool:
    inner = rel[len(crate.root) + 1 :] if crate.root else rel
    parts = PurePosixPath(inner).parts
    if not parts or parts[-1] == "build.rs":
        return False
    return not (set(parts[:-1]) & _NOT_SOURCE_DIRS)
