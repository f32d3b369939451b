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
- `RUST_PROTECTED_NAMES` (`RustProfile.protected_names`): the files that configure a Rust
  build or test run, which no patch may change and which stay read-only in every run;
- verify: the files only test builds compile are test code (`test_code_files`), and the
  pristine `#[cfg(test)]` modules and `#[test]` functions, and the doc comments that hold
  doctests, are put back into every source file a patch touched (`restore_test_code`); a
  patch whose remaining code changes what compiles under test (`cfg(test)`, `cfg!(test)`,
  `cfg_attr(test, ...)` outside test code, in lines the original does not have) is rewarded 0;
  `fatal_findings`: what the static scan finds that the runner cannot tell from a result (a
  printed libtest line, an exit) costs the reward;
- hidden tests: integration tests (`tests/<target>.rs`) held out of the policy's view
  (`hidden.choose_hidden`, `hidden.strip_hidden`).

`languages/__init__.py` registers the profile. docs/rust.md says how it works, what it costs,
and what a policy can still forge.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any, ClassVar

from tree_sitter import Node

from taskmint.config import FeatureSize, SandboxConfig
from taskmint.errors import EnvironmentBuildError
from taskmint.languages.base import LanguageProfile
from taskmint.languages.grammars import RUST
from taskmint.languages.mutation import Mutant
from taskmint.languages.rust.adapter import CargoAdapter, parse_cargo_report, split_id
from taskmint.languages.rust.candidates import STRATEGIES, rust_candidates
from taskmint.languages.rust.detect import (
    RustSourceError,
    detect_manifest,
    has_tests,
    is_rust_tree,
    prepare_tree,
)
from taskmint.languages.rust.doccode import restore_doc_tests
from taskmint.languages.rust.environment import build_environment, environment_id
from taskmint.languages.rust.harbor import harbor_spec, harbor_tools
from taskmint.languages.rust.hidden import choose_hidden
from taskmint.languages.rust.hidden import strip_hidden as strip_hidden_tests
from taskmint.languages.rust.hidden import test_file as integration_test_file
from taskmint.languages.rust.mutants import rust_mutants
from taskmint.languages.rust.testcode import (
    RestoreError,
    restore_test_modules,
    test_items,
    test_module_files,
)
from taskmint.languages.rust.toolchain import Toolchain, ToolchainMissing, find_toolchain
from taskmint.languages.rust.tree import RustSourceError as _ParseError
from taskmint.languages.rust.tree import parse
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
from taskmint.sandbox.local import LocalSandbox

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


# Where a `cfg` predicate starts: `#[cfg(`, `#![cfg(`, `#[cfg_attr(`, `cfg!(`. Integration
# tests build the library without `cfg(test)` and unit tests with it, so a predicate naming
# `test` (or a macro's `$metavariable`, which can stand for it) lets the library answer its unit
# tests differently from everyone else.
_CFG_START = re.compile(r"#\s*!?\s*\[\s*cfg(_attr)?\s*\(|\bcfg\s*!\s*[(\[{]")
_CLOSE = {"(": ")", "[": "]", "{": "}"}


def _blank_comments(data: bytes, root: Node) -> bytes:
    """`data` with every comment's bytes turned into spaces (newlines kept)."""
    out = bytearray(data)
    stack = [root]
    while stack:
        node = stack.pop()
        if node.type in ("line_comment", "block_comment"):
            for i in range(node.start_byte, node.end_byte):
                if out[i] != 0x0A:
                    out[i] = 0x20
            continue
        stack.extend(node.children)
    return bytes(out)


def _cfg_test_lines(data: bytes, path: str) -> list[int]:
    """1-based lines of a Rust file, outside its test-only items, where a `cfg` predicate that
    names `test` (or a macro metavariable) starts, whatever its spacing and comments."""
    try:
        tree = parse(data, path)
        inside = [(i.start, i.end) for i in test_items(data, path)]
        text = _blank_comments(data, tree.root_node).decode("utf-8", "replace")
    except _ParseError:
        inside, text = [], data.decode("utf-8", "replace")
    out: list[int] = []
    for m in _CFG_START.finditer(text):
        opener = text[m.end() - 1]
        depth, end = 0, len(text)
        for i in range(m.end() - 1, len(text)):
            if text[i] == opener:
                depth += 1
            elif text[i] == _CLOSE[opener]:
                depth -= 1
                if depth == 0:
                    end = i
                    break
        predicate = text[m.end() : end]
        if not re.search(r"\btest\b|\$", predicate):
            continue
        at = len(text[: m.start()].encode("utf-8"))
        if not any(a <= at < b for a, b in inside):
            out.append(text.count("\n", 0, m.start()) + 1)
    return out


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
    class_noun: ClassVar[str] = "impl block"
    owner_noun: ClassVar[str] = "type"
    protected_names: ClassVar[frozenset[str]] = RUST_PROTECTED_NAMES
    # docs/rust.md, "What a policy can still forge": what runs in a test's own process can
    # print libtest's result line and exit 0, or reach the runner's output
    fatal_findings: ClassVar[frozenset[str]] = frozenset(
        {
            "exits the process",
            "prints test-runner result lines",
            "replaces the panic hook",
            "replaces the test harness",
            "exports symbols or runs code at start-up",
            "reads /proc or descriptors",
            "reaches into the build output",
            "is a procedural macro",
            "shadows a standard macro",
        }
    )
    harbor: ClassVar[bool] = True

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
        """The toolchain, the vendored dependencies and the snapshot's warm build, made in the
        local sandbox with `sandbox`'s limits (the only backend Rust runs in); see
        `environment.build_environment`."""
        config = sandbox or SandboxConfig()
        if config.backend != "local":
            raise EnvironmentBuildError(
                f"{seed.name}: Rust seeds run in the local (bubblewrap) sandbox only, not "
                f'{config.backend!r}; set [sandbox] backend = "local"'
            )
        with LocalSandbox(config) as box:
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

    def mutants(self, path: str, data: bytes, lines: set[int]) -> list[Mutant]:
        """`mutants.rust_mutants`."""
        return rust_mutants(path, data, lines)

    def test_code_files(self, root: Path, files: Sequence[str]) -> tuple[str, ...]:
        """The `.rs` files only test builds compile (`testcode.test_module_files`: the targets
        of `#[cfg(test)] mod x;` and what is below them, files starting with `#![cfg(test)]`)."""
        sources = {f: (root / f).read_bytes() for f in files if f.endswith(".rs")}
        return tuple(sorted(test_module_files(sources)))

    def restore_test_code(self, pristine_root: Path, ws: Path, files: Sequence[str]) -> str | None:
        """Every `.rs` file among `files` gets the pristine test-only items back
        (`testcode.restore_test_modules`; test-only items a patch added are removed, a new
        file's all of them) and the pristine doc comments that hold doctests
        (`doccode.restore_doc_tests`); None, or why the patch is rewarded 0: a file that does
        not parse or became test-only, or a line outside test code, not in the original file,
        that depends on `cfg(test)` (the library would answer its unit tests differently)."""
        for rel in sorted(set(files)):
            path = ws / rel
            if not rel.endswith(".rs") or path.is_symlink() or not path.is_file():
                continue
            original = pristine_root / rel
            pristine = original.read_text(encoding="utf-8") if original.is_file() else ""
            patched = path.read_text(encoding="utf-8", errors="surrogateescape")
            try:
                restored = restore_test_modules(pristine, patched)
                if pristine:
                    restored = restore_doc_tests(pristine, restored)
            except RestoreError as exc:
                return f"{rel}: {exc}"
            except UnicodeEncodeError:
                return f"{rel}: not UTF-8; its test code cannot be restored"
            if restored != patched:
                path.write_text(restored, encoding="utf-8")
            data = restored.encode("utf-8")
            known = {" ".join(x.split()) for x in pristine.splitlines()}
            lines = restored.splitlines()
            new = [
                n for n in _cfg_test_lines(data, rel) if " ".join(lines[n - 1].split()) not in known
            ]
            if new:
                return (
                    f"{rel}:{new[0]}: code outside the tests depends on cfg(test) "
                    f"({lines[new[0] - 1].strip()[:80]}): the library would answer its unit "
                    "tests differently"
                )
        return None

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
        """Integration tests at the top of `tests/<target>.rs` (`hidden.choose_hidden`)."""
        return choose_hidden(
            fail_to_pass,
            pass_to_pass,
            seed=seed,
            fraction=fraction,
            pass_fraction=pass_fraction,
            source_of=source_of,
        )

    def strip_hidden(self, path: str, text: str, hidden: tuple[str, ...]) -> str:
        """The hidden `#[test]` functions cut out of `tests/<target>.rs`."""
        return strip_hidden_tests(path, text, hidden)

    def test_file(self, test_id: str) -> str | None:
        """`tests/<target>.rs` of an integration test; None for unit tests and doctests (in
        source files, never hidden)."""
        return integration_test_file(test_id)

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

    def harbor_runner(
        self, manifest: SeedManifest, *, env_id: str, expected: Sequence[str]
    ) -> dict[str, Any]:
        """The cargo harness over the expected ids (`harbor.harbor_spec`): the limits here, the
        rest from the environment image (`harbor.rust_image`), the warm target's path
        readable by the grader (root) alone; `RUST_PROTECTED_NAMES` refused in the agent's
        tree."""
        return harbor_spec(manifest, RUST_PROTECTED_NAMES)

    def interface_lines(self, code: str) -> set[int] | None:
        """Doc comments, attributes and item headers (`fn`, `impl`, `struct`, `enum`, `trait`,
        `mod`, `type`, `const`, `static`, with their visibility), a header that runs over
        several lines up to the one that opens its body: what a statement may repeat."""
        out: set[int] = set()
        open_header = False
        for i, line in enumerate(code.splitlines()):
            stripped = line.strip()
            if open_header:
                out.add(i)
                open_header = not stripped.endswith(("{", ";", "}"))
                continue
            if stripped.startswith(("///", "//!", "#[", "#![")):
                out.add(i)
            elif _ITEM_HEAD.match(line):
                out.add(i)
                open_header = not stripped.endswith(("{", ";", "}"))
        return out

    def test_code_regions(self, path: str, data: bytes) -> list[tuple[int, int]]:
        """The test-only items (`#[cfg(test)]` modules, `#[test]` functions, with their
        attributes and doc comments) and the doc comments that hold a code block (doctests)."""
        if not path.endswith(".rs"):
            return []
        try:
            items = test_items(data, path)
        except (RestoreError, _ParseError, ValueError):
            return [(1, data.count(b"\n") + 1)]  # cannot be read: the whole file is guarded
        out = [(data.count(b"\n", 0, i.start) + 1, data.count(b"\n", 0, i.end) + 1) for i in items]
        return sorted(out + _doctest_blocks(data))

    def harbor_tools(self, spec: dict[str, Any]) -> tuple[str, ...]:
        """cargo, rustc, rustdoc, cargo-nextest, the linker and ld, the harness's input and the
        offline cargo configuration (`harbor.harbor_tools`)."""
        return harbor_tools(spec)


_DOC_LINE = re.compile(rb"^\s*(///|//!)")
_ITEM_HEAD = re.compile(
    r"^\s*(pub(\s*\([^)]*\))?\s+)?(default\s+)?((const|async|unsafe)\s+|extern\s+\"[^\"]*\"\s+)*"
    r"(fn|impl|struct|enum|trait|mod|type|union|const|static)\b"
)


def _doctest_blocks(data: bytes) -> list[tuple[int, int]]:
    """Runs of `///` or `//!` lines that hold a fenced block (1-based, inclusive)."""
    out: list[tuple[int, int]] = []
    first = 0
    fenced = False
    lines = data.split(b"\n")
    for number, line in enumerate([*lines, b""], start=1):
        if _DOC_LINE.match(line):
            first = first or number
            fenced = fenced or b"```" in line
            continue
        if first and fenced:
            out.append((first, number - 1))
        first, fenced = 0, False
    return out
