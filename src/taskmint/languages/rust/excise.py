"""Excision for Rust seeds: edits that remove a feature and leave a tree that still compiles.

Rust must build before a single test runs, so an edit here never deletes what other code
names: a removed function keeps its signature and gets `todo!()` as its body (a concrete
return type accepts it), and only private helpers that nothing else names are deleted. The
tests that need the code then fail at run time, one by one, instead of the whole build.

Units (`excisable`): the functions and methods the index finds (`index.treesitter`, qualnames
"Type.method", "module.function"), in the crate's own sources (not `tests/`, `benches/`,
`examples/`, `build.rs`, nor files that only test builds compile), leaving out test-only items
(`#[cfg(test)]` modules, `#[test]` functions; `cfg(not(test))` code, which tests never run),
`const fn` (a `todo!()` there fails the build as soon as a constant calls it), functions
returning `impl Trait` (`todo!()` has no type to stand for it), bodies that declare `impl`
blocks or exported macros (visible outside the body), and proc-macro crates (a `todo!()`
there fails every build that expands the macro).

Strategies (each a function over one file's bytes, and `rust_candidates` over a seed):
- `stub_body`: the body becomes `todo!()`; signature and doc comment stay (the same edit as
  `excise.treesitter_edits.stub_body` for Rust).
- `remove_function` (free functions, in any module) and `remove_method` (methods of inherent
  and trait impls): the body becomes `todo!()`, the doc comment goes, and so do the private
  helpers (free functions and inherent methods, not `pub`) that only the removed code named,
  transitively.
- `remove_class`, Rust's `remove_impl`: every method of one `impl` block is stubbed (or
  deleted, when it is a private helper only the block used), with their doc comments.
- `feature`: a unit and every unit that only it (and what joined) names, across the files of
  the crate, stubbed or deleted together; it must span at least two files.

Lints: a crate that denies lints (`#![deny(warnings)]`, `[lints]` in Cargo.toml,
`-D warnings` in `.cargo/config.toml`) fails to build on the warnings an edit causes. For
those, a stub first uses its parameters (`let _ = (&a, &mut b);`), doc comments of `pub`
items stay when `missing_docs` is named, and an edit that leaves an import or a definition
unused is refused with the name.
"""

from __future__ import annotations

import random
import re
import tomllib
from collections import Counter
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path, PurePosixPath

from tree_sitter import Node

from taskmint.config import FeatureSize
from taskmint.excise.treesitter_edits import edit_range
from taskmint.index.python import SourceSkipped, read_source
from taskmint.index.treesitter import index_files
from taskmint.index.treesitter_defs import Definition, definitions, signature_text
from taskmint.languages.rust.testcode import never_in_tests, test_module_files, test_only
from taskmint.patches import unified_diff
from taskmint.records import Candidate, Features, SeedApp, SkippedFile, Strategy, Unit, stable_id

__all__ = [
    "STRATEGIES",
    "STUB",
    "STUB_SHARE",
    "Crate",
    "RustSeed",
    "crates_of",
    "denied_lints",
    "excisable",
    "remove_function",
    "remove_impl",
    "remove_method",
    "rust_candidates",
    "rust_units",
    "stub_body",
]

STUB = "todo!()"
STRATEGIES: tuple[Strategy, ...] = (
    "stub_body",
    "remove_function",
    "remove_method",
    "remove_class",
    "feature",
)
# The share of candidates `stub_body` gets; the other strategies split the rest evenly.
STUB_SHARE = 0.6
# Lints whose denial turns an edit's side effects into build errors.
_PARAM_LINTS = frozenset({"warnings", "unused", "unused_variables", "unused_mut"})
_ORPHAN_LINTS = frozenset({"warnings", "unused", "dead_code", "unused_imports"})
# Attributes a deleted helper may carry (anything else may register or export it).
_BENIGN_ATTRS = re.compile(
    r"^(inline|cold|must_use|track_caller|allow|warn|expect|doc|rustfmt::|cfg|cfg_attr|"
    r"deprecated|optimize)\b"
)
_IDENT = re.compile(rb"[A-Za-z_][A-Za-z0-9_]*")
_KEYWORDS = frozenset(
    b"as async await break const continue crate dyn else enum extern false fn for if impl in "
    b"let loop match mod move mut pub ref return self Self static struct super trait true type "
    b"unsafe use where while todo".split()
)
_NOT_SOURCE_DIRS = frozenset({"tests", "benches", "examples", "target", "fuzz"})
_NESTED_GLOBAL = frozenset({"impl_item", "trait_item", "macro_definition"})


# -- crates ------------------------------------------------------------------------------------


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
            if f.endswith(".rs") and f.startswith(prefix) and _home_of(f, homes) == home
        ]
        sources: list[bytes] = []
        for f in own:
            try:
                sources.append(read_source(base / f))
            except SourceSkipped:
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


def _home_of(rel: str, homes: Sequence[str]) -> str | None:
    """The innermost package folder holding `rel`."""
    best: str | None = None
    for home in homes:
        inside = home == "" or rel.startswith(home + "/")
        if inside and (best is None or len(home) > len(best)):
            best = home
    return best


def _is_source_file(rel: str, crate: Crate) -> bool:
    inner = rel[len(crate.root) + 1 :] if crate.root else rel
    parts = PurePosixPath(inner).parts
    if not parts or parts[-1] == "build.rs":
        return False
    return not (set(parts[:-1]) & _NOT_SOURCE_DIRS)


# -- units -------------------------------------------------------------------------------------


def _attrs_of(data: bytes, item: Node) -> list[str]:
    out: list[str] = []
    prev = item.prev_named_sibling
    while prev is not None and prev.type in ("attribute_item", "line_comment", "block_comment"):
        if prev.type == "attribute_item":
            text = data[prev.start_byte : prev.end_byte].decode("utf-8", "replace")
            out.append(" ".join(text[2:-1].split()))
        prev = prev.prev_named_sibling
    return out


def _ancestors(node: Node) -> Iterable[Node]:
    cur = node.parent
    while cur is not None:
        yield cur
        cur = cur.parent


def _inner_attrs(data: bytes, holder: Node) -> list[str]:
    out: list[str] = []
    for child in holder.named_children:
        if child.type == "inner_attribute_item":
            text = data[child.start_byte : child.end_byte].decode("utf-8", "replace")
            out.append(" ".join(text[3:-1].split()))
        elif child.type not in ("line_comment", "block_comment"):
            break
    return out


def refusal(data: bytes, d: Definition) -> str | None:
    """None if unit `d` can be stubbed and still compile, else why not."""
    node = d.node
    if d.body is None:
        return "no body"
    mods = next((c for c in node.children if c.type == "function_modifiers"), None)
    if mods is not None and any(c.type == "const" for c in mods.children):
        return "const fn (a constant may evaluate it at compile time)"
    ret = node.child_by_field_name("return_type")
    if ret is not None and _contains(ret, "abstract_type"):
        return "returns impl Trait (todo!() has no type for it)"
    for holder in (node, *_ancestors(node)):
        if holder.type in ("function_item", "mod_item", "impl_item", "trait_item"):
            attrs = _attrs_of(data, holder)
            if holder.type == "mod_item":
                inner = holder.child_by_field_name("body")
                if inner is not None:
                    attrs += _inner_attrs(data, inner)
            if test_only(attrs):
                return "test code"
            if never_in_tests(attrs):
                return "compiled only outside tests (cfg(not(test)))"
            if any(a.startswith("proc_macro") for a in attrs):
                return "a procedural macro"
        elif holder.type == "source_file":
            attrs = _inner_attrs(data, holder)
            if test_only(attrs):
                return "test code"
        elif holder.type in ("macro_invocation", "token_tree"):
            return "inside a macro invocation"
    if _contains(d.body, *_NESTED_GLOBAL):
        return "the body declares an impl, a trait or a macro"
    return None


_DECLARES = re.compile(
    rb"\b(?:fn|struct|enum|union|trait|type|const|static|mod|macro_rules!)\s+(?:mut\s+)?"
    rb"([A-Za-z_][A-Za-z0-9_]*)"
)
_FIELD = re.compile(rb"^\s*(?:pub(?:\([^)]*\))?\s+)?([A-Za-z_][A-Za-z0-9_]*)\s*:(?!:)", re.M)
_USE = re.compile(rb"\buse\s+([^;]*);")


def _declared_names(data: bytes) -> set[bytes]:
    """Names a file declares (items, fields and variants on lines of their own, `use`
    bindings): a cheap over-approximation, used to tell a removed use of a crate's own name
    from a use of the standard library's."""
    names = {m.group(1) for m in _DECLARES.finditer(data)}
    names |= {m.group(1) for m in _FIELD.finditer(data)}
    for m in _USE.finditer(data):
        names |= set(_IDENT.findall(m.group(1)))
    return names


def _contains(node: Node, *types: str) -> bool:
    stack = [node]
    while stack:
        cur = stack.pop()
        if cur.type in types:
            return True
        stack.extend(cur.children)
    return False


@dataclass(slots=True)
class RustSeed:
    """What the strategies read about one seed, computed once: its crates, the bytes of every
    `.rs` file, identifier counts per crate, parsed definitions per file (cached)."""

    seed: SeedApp
    crates: dict[str, Crate]
    sources: dict[str, bytes]
    skipped: list[SkippedFile] = field(default_factory=list)
    test_files: set[str] = field(default_factory=set)
    _counts: dict[str, Counter[bytes]] = field(default_factory=dict)
    _defs: dict[str, list[Definition]] = field(default_factory=dict)
    _declared: dict[str, frozenset[bytes]] = field(default_factory=dict)
    _bodies: dict[tuple[str, str], Counter[bytes]] = field(default_factory=dict)

    @classmethod
    def of(cls, seed: SeedApp) -> RustSeed:
        root = Path(seed.root)
        sources: dict[str, bytes] = {}
        skipped: list[SkippedFile] = []
        for rel in sorted(seed.files):
            if rel.endswith(".rs"):
                try:
                    sources[rel] = read_source(root / rel)
                except SourceSkipped as exc:
                    skipped.append(SkippedFile(path=rel, reason=str(exc)))
        crates = crates_of(root, seed.files)
        return cls(
            seed=seed,
            crates=crates,
            sources=sources,
            skipped=skipped,
            test_files=test_module_files(sources),
        )

    def crate(self, rel: str) -> Crate | None:
        home = _home_of(rel, sorted(self.crates))
        return None if home is None else self.crates.get(home)

    def declared(self, crate: Crate) -> frozenset[bytes]:
        """The names the crate declares: items, fields, variants, and what `use` binds."""
        if crate.root not in self._declared:
            names: set[bytes] = set()
            for rel in crate.files:
                data = self.sources.get(rel)
                if data is not None:
                    names |= _declared_names(data)
            self._declared[crate.root] = frozenset(names)
        return self._declared[crate.root]

    def counts(self, crate: Crate) -> Counter[bytes]:
        """Identifier occurrences over every `.rs` file of the crate (comments and strings
        included: a name that occurs there is in use, as far as deleting goes)."""
        if crate.root not in self._counts:
            total: Counter[bytes] = Counter()
            for rel in crate.files:
                data = self.sources.get(rel)
                if data is not None:
                    total.update(_IDENT.findall(data))
            self._counts[crate.root] = total
        return self._counts[crate.root]

    def body_counts(self, rel: str, d: Definition) -> Counter[bytes]:
        """Identifier occurrences in the body of definition `d` of `rel` (cached)."""
        key = (rel, d.qualname)
        if key not in self._bodies:
            body = d.body
            text = b"" if body is None else self.sources[rel][body.start_byte : body.end_byte]
            self._bodies[key] = Counter(_IDENT.findall(text))
        return self._bodies[key]

    def defs(self, rel: str) -> list[Definition]:
        """The definitions of one file (raises `SourceSkipped`)."""
        if rel not in self._defs:
            self._defs[rel] = definitions("rust", self.sources[rel], rel)
        return self._defs[rel]

    def where(self, rel: str) -> str | None:
        """None if units of `rel` may be excised, else why not."""
        crate = self.crate(rel)
        if crate is None:
            return "not in a Cargo package"
        if crate.proc_macro:
            return "a proc-macro crate (a todo!() there breaks every build that expands it)"
        if not _is_source_file(rel, crate):
            return "not the crate's sources (tests, benches, examples, build script)"
        if rel in self.test_files:
            return "a test-only module file"
        return None


def excisable(
    seed: SeedApp | RustSeed, units: Iterable[Unit]
) -> tuple[list[Unit], list[SkippedFile]]:
    """The Rust units an edit may target, and the others ("path::qualname") with the reason."""
    rs = seed if isinstance(seed, RustSeed) else RustSeed.of(seed)
    kept: list[Unit] = []
    skipped: list[SkippedFile] = []
    for u in units:
        if u.language != "rust":
            continue
        why = rs.where(u.file) if u.file in rs.sources else "unreadable"
        d = None
        if why is None:
            try:
                d = next((x for x in rs.defs(u.file) if x.qualname == u.qualname), None)
            except SourceSkipped as exc:
                why = str(exc)
            else:
                why = "not found" if d is None else refusal(rs.sources[u.file], d)
        if why is None:
            kept.append(u)
        else:
            skipped.append(SkippedFile(path=f"{u.file}::{u.qualname}", reason=why))
    return kept, skipped


def rust_units(seed: SeedApp) -> tuple[list[Unit], list[SkippedFile]]:
    """The seed's Rust units that an edit may target (see `excisable`), and the files and
    units left out with the reason."""
    units, skipped = index_files("rust", seed.root, seed.files, snapshot_id=seed.snapshot_id)
    kept, left = excisable(seed, units)
    return kept, skipped + left


# -- edits -------------------------------------------------------------------------------------

Edit = tuple[int, int, bytes]


def _line_start(data: bytes, offset: int) -> int:
    return data.rfind(b"\n", 0, offset) + 1


def _params(data: bytes, d: Definition) -> list[bytes]:
    """`&name` / `&mut name` for each named parameter binding (not `_x`, not `self` unless
    `mut self`)."""
    params = d.node.child_by_field_name("parameters")
    out: list[bytes] = []
    if params is None:
        return out
    for p in params.named_children:
        if p.type == "self_parameter":
            by_value = not any(c.type in ("&", "lifetime") for c in p.children)
            if by_value and any(c.type == "mutable_specifier" for c in p.children):
                out.append(b"&mut self")  # `mut self` unused would be `unused_mut`
            continue
        if p.type != "parameter":
            continue
        pattern = p.child_by_field_name("pattern")
        if pattern is None:
            continue
        top_mut = any(c.type == "mutable_specifier" for c in p.children)
        stack = [(pattern, top_mut)]
        while stack:
            node, mut = stack.pop()
            if node.type in ("identifier", "shorthand_field_identifier", "self"):
                name = data[node.start_byte : node.end_byte]
                if not name.startswith(b"_"):
                    out.append((b"&mut " if mut else b"&") + name)
                continue
            if node.type in ("field_pattern",):
                value = node.child_by_field_name("pattern")
                name_node = node.child_by_field_name("name")
                if value is None and name_node is not None:
                    stack.append(
                        (name_node, any(c.type == "mutable_specifier" for c in node.children))
                    )
                elif value is not None:
                    stack.append((value, False))
                continue
            if node.type == "mut_pattern":
                stack.extend((c, True) for c in node.named_children)
                continue
            if node.type in ("type_identifier", "scoped_type_identifier", "scoped_identifier"):
                continue  # the struct's name in `Foo { a, b }`
            stack.extend((c, mut) for c in reversed(node.named_children))
    return out


def _stub(data: bytes, d: Definition, rel: str, *, discard: bool) -> Edit:
    start, end, text = edit_range("stub_body", "rust", data, d.qualname, path=rel)
    if discard:
        used = _params(data, d)
        if used:
            # the stub's own indentation: between its first line break and `todo!()`
            head, _, rest = text.partition(STUB.encode())
            nl_at = head.rfind(b"\n")
            indent = head[nl_at + 1 :]
            nl = b"\r\n" if head[nl_at - 1 : nl_at] == b"\r" else b"\n"
            tuple_ = b", ".join(used)
            value = tuple_ if len(used) == 1 else b"(" + tuple_ + b")"
            text = head + b"let _ = " + value + b";" + nl + indent + STUB.encode() + rest
    return start, end, text


def _doc_edit(data: bytes, d: Definition) -> Edit | None:
    """Deleting the doc comment lines before a definition (None if it has none or shares a
    line with other code)."""
    if d.doc is None:
        return None
    start = _line_start(data, d.doc.start_byte)
    end = _line_start(data, d.lead_start)
    if data[start : d.doc.start_byte].strip() or data[end : d.lead_start].strip():
        return None
    return (start, end, b"") if end > start else None


def _is_pub(d: Definition) -> bool:
    vis = next((c for c in d.node.children if c.type == "visibility_modifier"), None)
    return vis is not None


def _is_plain_pub(data: bytes, d: Definition) -> bool:
    vis = next((c for c in d.node.children if c.type == "visibility_modifier"), None)
    return vis is not None and data[vis.start_byte : vis.end_byte].strip() == b"pub"


def _impl_of(d: Definition) -> Node | None:
    parent = d.node.parent
    if parent is not None and parent.type == "declaration_list":
        holder = parent.parent
        if holder is not None and holder.type in ("impl_item", "trait_item"):
            return holder
    return None


def _deletable(data: bytes, d: Definition) -> bool:
    """A private helper that may be deleted when nothing names it."""
    if d.body is None or _is_plain_pub(data, d):
        return False
    holder = _impl_of(d)
    if holder is not None and (holder.type == "trait_item" or holder.child_by_field_name("trait")):
        return False  # trait items: the trait's shape is not ours to change
    parent = d.node.parent
    if (
        holder is None
        and parent is not None
        and parent.type not in ("source_file", "declaration_list")
    ):
        return False  # a function nested in a body goes with its body
    return all(
        _BENIGN_ATTRS.match(a.removeprefix("#[").removesuffix("]").strip()) for a in d.attributes
    )


@dataclass(frozen=True, slots=True)
class _Target:
    rel: str
    d: Definition


def _merge(ranges: Iterable[tuple[int, int]]) -> list[tuple[int, int]]:
    out: list[tuple[int, int]] = []
    for s, e in sorted(ranges):
        if out and s <= out[-1][1]:
            out[-1] = (out[-1][0], max(out[-1][1], e))
        else:
            out.append((s, e))
    return out


def _count_in(data: bytes, ranges: Iterable[tuple[int, int]]) -> Counter[bytes]:
    total: Counter[bytes] = Counter()
    for s, e in _merge(ranges):
        total.update(_IDENT.findall(data[s:e]))
    return total


@dataclass(slots=True)
class _Plan:
    """The edits of one candidate: per file, the ranges replaced; the units stubbed and the
    helpers deleted."""

    edits: dict[str, list[Edit]] = field(default_factory=dict)
    stubbed: list[_Target] = field(default_factory=list)
    deleted: list[_Target] = field(default_factory=list)


def _removed_ranges(plan: _Plan, rel: str) -> list[tuple[int, int]]:
    return [(s, e) for s, e, _ in plan.edits.get(rel, [])]


def _plan(
    rs: RustSeed,
    crate: Crate,
    targets: Sequence[_Target],
    *,
    drop_docs: bool,
    helpers: bool,
) -> _Plan | str:
    """Stub `targets` (dropping their doc comments when `drop_docs`), then delete the private
    helpers of the touched files that nothing else names; or why this cannot compile."""
    plan = _Plan()
    discard = bool(crate.denied & _PARAM_LINTS)
    keep_pub_docs = crate.docs_linted
    for t in targets:
        data = rs.sources[t.rel]
        try:
            plan.edits.setdefault(t.rel, []).append(_stub(data, t.d, t.rel, discard=discard))
        except LookupError as exc:
            return str(exc)
        plan.stubbed.append(t)
        if drop_docs and not (keep_pub_docs and _is_pub(t.d)):
            doc = _doc_edit(data, t.d)
            if doc is not None:
                plan.edits[t.rel].append(doc)
    if helpers:
        while _delete_one_helper(rs, crate, plan):
            pass
    if crate.denied & _ORPHAN_LINTS:
        orphan = _orphan(rs, crate, plan)
        if orphan is not None:
            denied = ", ".join(sorted(crate.denied & _ORPHAN_LINTS))
            return f"would leave `{orphan}` unused, and the crate denies {denied}"
    return plan


def _delete_one_helper(rs: RustSeed, crate: Crate, plan: _Plan) -> bool:
    """Delete one private helper of the touched files that only the removed code names (a
    stubbed target too, when the others were its only users); False when there is none."""
    counts = rs.counts(crate)
    per_file = {rel: _count_in(rs.sources[rel], _removed_ranges(plan, rel)) for rel in plan.edits}
    inside = sum(per_file.values(), Counter())
    gone = {(t.rel, t.d.qualname) for t in plan.deleted}
    for rel in sorted(plan.edits):
        data = rs.sources[rel]
        ranges = _removed_ranges(plan, rel)
        for d in rs.defs(rel):
            name = d.name.encode()
            if (rel, d.qualname) in gone or inside[name] == 0 or not _deletable(data, d):
                continue
            if any(s <= d.node.start_byte and d.node.end_byte <= e for s, e in ranges):
                continue  # inside code already removed
            try:
                start, end, _ = edit_range(
                    "remove_method" if d.kind == "method" else "remove_function",
                    "rust",
                    data,
                    d.qualname,
                    path=rel,
                )
            except LookupError:
                continue
            here = _count_in(data, [*ranges, (start, end)])
            if counts[name] - (inside[name] - per_file[rel][name]) - here[name] > 0:
                continue  # named somewhere that stays
            plan.edits[rel] = [e for e in plan.edits[rel] if not (start <= e[0] and e[1] <= end)]
            plan.edits[rel].append((start, end, b""))
            plan.stubbed = [
                t
                for t in plan.stubbed
                if not (t.rel == rel and start <= t.d.node.start_byte and t.d.node.end_byte <= end)
            ]
            plan.deleted.append(_Target(rel, d))
            return True
    return False


def _orphan(rs: RustSeed, crate: Crate, plan: _Plan) -> str | None:
    """A name the edits leave with a single occurrence (its definition or import): unused."""
    counts = rs.counts(crate)
    declared = rs.declared(crate)
    removed: Counter[bytes] = Counter()
    added: Counter[bytes] = Counter()
    for rel, edits in plan.edits.items():
        data = rs.sources[rel]
        removed += _count_in(data, [(s, e) for s, e, _ in edits])
        for _, _, text in edits:
            added.update(_IDENT.findall(text))
    for name in sorted(removed):
        if name in _KEYWORDS or name not in declared:
            continue
        left = counts[name] - removed[name] + added[name]
        if left == 1:
            return name.decode()
    return None


def _apply_edits(data: bytes, edits: Sequence[Edit]) -> bytes:
    """`data` with the edits made; deletions that overlap (two neighbours each taking the
    blank line between them) merge. Raises `LookupError` for other overlaps."""
    out = bytearray()
    pos = 0
    last_deleted = False
    for start, end, text in sorted(edits, key=lambda e: (e[0], e[1])):
        if start < pos:
            if not (last_deleted and not text):
                raise LookupError("overlapping edits")
            pos = max(pos, end)
            continue
        out += data[pos:start] + text
        pos = end
        last_deleted = not text
    out += data[pos:]
    return bytes(out)


# -- single-file edit functions (mirroring excise.treesitter_edits) ----------------------------


def _single(
    data: bytes, path: str, others: Mapping[str, bytes], denied: frozenset[str]
) -> tuple[RustSeed, Crate, str]:
    rel = path or "src/lib.rs"
    sources = {rel: data, **{k: v for k, v in others.items() if k != rel}}
    crate = Crate(root="", denied=denied, proc_macro=False, files=tuple(sources))
    rs = RustSeed(seed=None, crates={"": crate}, sources=sources)  # type: ignore[arg-type]
    return rs, crate, rel


def _find(rs: RustSeed, rel: str, qualname: str, kinds: tuple[str, ...]) -> Definition:
    try:
        found = rs.defs(rel)
    except SourceSkipped as exc:
        raise LookupError(f"cannot look up {qualname!r}: {exc}") from exc
    for d in found:
        if d.qualname == qualname and d.kind in kinds:
            why = refusal(rs.sources[rel], d)
            if why is not None:
                raise LookupError(f"{qualname!r} cannot be excised: {why}")
            return d
    raise LookupError(f"no {' or '.join(kinds)} {qualname!r} in this file")


def _run_single(
    data: bytes,
    path: str,
    others: Mapping[str, bytes],
    denied: frozenset[str],
    targets: Sequence[str],
    kinds: tuple[str, ...],
    *,
    drop_docs: bool,
    helpers: bool,
) -> bytes:
    rs, crate, rel = _single(data, path, others, denied)
    found = [_Target(rel, _find(rs, rel, q, kinds)) for q in targets]
    plan = _plan(rs, crate, found, drop_docs=drop_docs, helpers=helpers)
    if isinstance(plan, str):
        raise LookupError(plan)
    return _apply_edits(data, plan.edits.get(rel, []))


def stub_body(
    data: bytes, qualname: str, *, path: str = "", denied: frozenset[str] = frozenset()
) -> bytes:
    """`data` with the body of Rust function or method `qualname` replaced by `todo!()`.

    `denied`: the crate's denied lints (`denied_lints`); with `warnings` or an `unused` lint
    among them the stub uses the parameters first. Raises `LookupError` for an unknown or
    refused unit (see `refusal`).
    """
    return _run_single(
        data, path, {}, denied, [qualname], ("function", "method"), drop_docs=False, helpers=False
    )


def remove_function(
    data: bytes,
    qualname: str,
    *,
    path: str = "",
    others: Mapping[str, bytes] = {},
    denied: frozenset[str] = frozenset(),
) -> bytes:
    """`data` with free function `qualname` removed as far as still compiles: body `todo!()`,
    doc comment gone, and the private helpers of this file that nothing but the removed code
    names (in `data` and in the crate's `others` files, path -> bytes) deleted."""
    return _run_single(
        data, path, others, denied, [qualname], ("function",), drop_docs=True, helpers=True
    )


def remove_method(
    data: bytes,
    qualname: str,
    *,
    path: str = "",
    others: Mapping[str, bytes] = {},
    denied: frozenset[str] = frozenset(),
) -> bytes:
    """`remove_function` for a method ("Type.method") of an inherent or trait impl."""
    return _run_single(
        data, path, others, denied, [qualname], ("method",), drop_docs=True, helpers=True
    )


@dataclass(frozen=True, slots=True)
class _Impl:
    name: str  # "impl Display for Version", "#2" for a repeat
    node: Node
    methods: tuple[Definition, ...]


def _type_text(data: bytes, node: Node | None) -> str:
    if node is None:
        return "?"
    if node.type == "generic_type":
        node = node.child_by_field_name("type") or node
    if node.type == "scoped_type_identifier":
        node = node.child_by_field_name("name") or node
    return " ".join(data[node.start_byte : node.end_byte].decode("utf-8", "replace").split())


def impls(data: bytes, defs: Sequence[Definition]) -> list[_Impl]:
    """The impl blocks of a file that hold methods, named "impl Type" or "impl Trait for Type"."""
    holders: dict[int, tuple[Node, list[Definition]]] = {}
    for d in defs:
        holder = _impl_of(d)
        if holder is not None and holder.type == "impl_item":
            holders.setdefault(holder.id, (holder, []))[1].append(d)
    out: list[_Impl] = []
    seen: Counter[str] = Counter()
    for node, methods in sorted(holders.values(), key=lambda h: h[0].start_byte):
        trait = node.child_by_field_name("trait")
        name = f"impl {_type_text(data, node.child_by_field_name('type'))}"
        if trait is not None:
            name = f"impl {_type_text(data, trait)} for {name[5:]}"
        seen[name] += 1
        if seen[name] > 1:
            name = f"{name}#{seen[name]}"
        out.append(_Impl(name=name, node=node, methods=tuple(methods)))
    return out


def remove_impl(
    data: bytes,
    name: str,
    *,
    path: str = "",
    others: Mapping[str, bytes] = {},
    denied: frozenset[str] = frozenset(),
) -> bytes:
    """`data` with every method of impl block `name` ("impl Display for Version") stubbed,
    their doc comments gone, and the private helpers only they named deleted."""
    rs, crate, rel = _single(data, path, others, denied)
    try:
        found = next(i for i in impls(data, rs.defs(rel)) if i.name == name)
    except StopIteration:
        raise LookupError(f"no {name!r} in this file") from None
    except SourceSkipped as exc:
        raise LookupError(f"cannot look up {name!r}: {exc}") from exc
    targets = [_Target(rel, d) for d in found.methods if refusal(data, d) is None]
    if not targets:
        raise LookupError(f"{name!r} has no method that can be stubbed")
    plan = _plan(rs, crate, targets, drop_docs=True, helpers=True)
    if isinstance(plan, str):
        raise LookupError(plan)
    return _apply_edits(data, plan.edits.get(rel, []))


# -- candidates (mirroring excise.treesitter_candidates) ---------------------------------------


def _span(data: bytes, start: int, end: int) -> tuple[int, int]:
    first = data.count(b"\n", 0, start) + 1
    last = data.count(b"\n", 0, max(end - 1, start)) + 1
    return first, last


def _removed_lines(breaking: str) -> str:
    return "".join(
        line[1:] + "\n"
        for line in breaking.splitlines()
        if line.startswith("-") and not line.startswith("---")
    )


@dataclass(frozen=True, slots=True)
class _Pick:
    """One target of one strategy: the unit keys it uses up, and how to plan it."""

    strategy: Strategy
    crate: str
    key: str  # "path::qualname", "path::impl X for Y"
    targets: tuple[tuple[str, str], ...]  # (file, qualname) stubbed first


def _candidate(
    rs: RustSeed,
    pick: _Pick,
    plan: _Plan,
    by_key: Mapping[tuple[str, str], Unit],
    feature_size: FeatureSize | None,
) -> Candidate | str:
    seed = rs.seed
    files = tuple(sorted(plan.edits))
    breaking_parts: list[str] = []
    gold_parts: list[str] = []
    spans: list[tuple[str, int, int]] = []
    for rel in files:
        data = rs.sources[rel]
        try:
            new = _apply_edits(data, plan.edits[rel])
            old_text, new_text = data.decode("utf-8"), new.decode("utf-8")
        except (LookupError, UnicodeDecodeError) as exc:
            return str(exc)
        breaking_parts.append(unified_diff(rel, old_text, new_text))
        gold_parts.append(unified_diff(rel, new_text, old_text))
        for s, e, _ in sorted(plan.edits[rel]):
            spans.append((rel, *_span(data, s, e)))
    breaking = "".join(breaking_parts)
    removed = _removed_lines(breaking)
    touched = [*plan.stubbed, *plan.deleted]
    main = pick.targets[0]
    touched.sort(key=lambda t: (t.rel, t.d.qualname) != main)  # the picked unit first
    units = [by_key.get((t.rel, t.d.qualname)) for t in touched]
    names = [f"{t.rel}::{t.d.qualname}" for t in touched]
    if pick.strategy == "remove_class":
        names = [pick.key, *names]
    first = touched[0]
    crate = rs.crates[pick.crate]
    counts = rs.counts(crate)
    if pick.strategy == "remove_class":
        signature = "\n".join(
            [
                pick.key.split("::", 1)[1],
                *("    " + signature_text(rs.sources[t.rel], t.d) for t in plan.stubbed),
            ]
        )
    else:
        signature = signature_text(rs.sources[first.rel], first.d)
    docstring = first.d.docstring
    features = Features(
        lines_removed=removed.count("\n"),
        units=len(touched),
        files=len(files),
        complexity=sum(u.complexity for u in units if u is not None) or 1,
        callers=max(counts.get(first.d.name.encode(), 1) - 1, 0),
        has_docstring=any(t.d.docstring for t in touched),
    )
    if pick.strategy == "feature":
        size = feature_size or FeatureSize()
        if not size.admits(features.lines_removed, features.units, features.files):
            return (
                f"feature of {features.lines_removed} lines, {features.units} units, "
                f"{features.files} files is outside the size bounds"
            )
    return Candidate(
        candidate_id=stable_id(seed.snapshot_id, pick.strategy, pick.key),
        snapshot_id=seed.snapshot_id,
        seed=seed.name,
        language="rust",
        strategy=pick.strategy,
        units=tuple(names),
        files=files,
        breaking_patch=breaking,
        gold_patch="".join(gold_parts),
        removed_code=removed,
        signature=signature,
        docstring=docstring,
        features=features,
        spans=tuple(spans),
    )


def _closure(
    rs: RustSeed, crate: Crate, roots: Sequence[_Target], pool: Sequence[_Target]
) -> list[_Target]:
    """`roots` and, transitively, every unit of `pool` whose name occurs only inside the
    bodies of the units already taken (and its own definition): what only they call."""
    counts = rs.counts(crate)
    taken = list(roots)
    inside: Counter[bytes] = Counter()
    bodies: dict[str, list[tuple[int, int]]] = {}

    def add(t: _Target) -> None:
        body = t.d.body
        assert body is not None
        bodies.setdefault(t.rel, []).append((body.start_byte, body.end_byte))

    for root in roots:
        add(root)
    changed = True
    while changed:
        changed = False
        inside = Counter()
        for rel, ranges in bodies.items():
            inside += _count_in(rs.sources[rel], ranges)
        have = {(t.rel, t.d.qualname) for t in taken}
        for t in pool:
            if (t.rel, t.d.qualname) in have:
                continue
            holder = _impl_of(t.d)
            if holder is not None and holder.child_by_field_name("trait") is not None:
                continue  # called through the trait, not by name
            name = t.d.name.encode()
            if inside[name] == 0:
                continue
            own = _count_in(rs.sources[t.rel], [(t.d.node.start_byte, t.d.node.end_byte)])
            if counts[name] - inside[name] - own[name] > 0:
                continue
            if any(
                s <= t.d.node.start_byte and t.d.node.end_byte <= e
                for s, e in bodies.get(t.rel, [])
            ):
                continue
            taken.append(t)
            add(t)
            changed = True
    return taken


def _body_ranges(t: _Target) -> tuple[int, int]:
    body = t.d.body
    assert body is not None
    return body.start_byte, body.end_byte


def _only_callers(
    rs: RustSeed, crate: Crate, target: _Target, pool: Sequence[_Target], limit: int = 2
) -> list[_Target]:
    """The units whose bodies hold every use of private `target` (at most `limit` of them,
    none of them inside it), or [] when it is not private or is named anywhere else."""
    data = rs.sources[target.rel]
    if not _deletable(data, target.d):
        return []
    name = target.d.name.encode()
    counts = rs.counts(crate)
    own = _count_in(data, [(target.d.node.start_byte, target.d.node.end_byte)])[name]
    callers: list[_Target] = []
    found = 0
    for t in pool:
        if t.rel == target.rel and t.d.qualname == target.d.qualname:
            continue
        n = rs.body_counts(t.rel, t.d)[name]
        if n:
            inner = t.rel == target.rel and (
                t.d.node.start_byte >= target.d.node.start_byte
                and t.d.node.end_byte <= target.d.node.end_byte
            )
            outer = t.rel == target.rel and (
                t.d.node.start_byte <= target.d.node.start_byte
                and target.d.node.end_byte <= t.d.node.end_byte
            )
            if inner or outer:
                return []  # nested functions: the plain form handles them
            callers.append(t)
            found += n
    if not callers or len(callers) > limit or found + own != counts[name]:
        return []
    return callers


# A name this frequent in the crate is too common to tell who calls what.
_SPECIFIC = 6


def _feature(rs: RustSeed, crate: Crate, root: _Target, pool: Sequence[_Target]) -> list[_Target]:
    """`root`, what only it calls (transitively), and, when that stays in one file, at most
    two units of other files that call one of them: by a name specific enough (at most
    `_SPECIFIC` occurrences in the crate) or by its path (`Version::parse`, `Self::` does not
    count), with what only they call."""
    taken = _closure(rs, crate, [root], pool)
    if len({t.rel for t in taken}) >= 2:
        return taken
    counts = rs.counts(crate)
    names = {t.d.name.encode() for t in taken if counts[t.d.name.encode()] <= _SPECIFIC}
    paths = [
        re.compile(
            rb"\b" + re.escape(t.d.qualname.split("#")[0].replace(".", "::").encode()) + rb"\b"
        )
        for t in taken
        if "." in t.d.qualname
    ]
    have = {(t.rel, t.d.qualname) for t in taken}
    callers: list[_Target] = []
    for t in pool:
        if t.rel == root.rel or (t.rel, t.d.qualname) in have:
            continue
        start, end = _body_ranges(t)
        body = rs.body_counts(t.rel, t.d)
        text = rs.sources[t.rel][start:end]
        if any(body[n] for n in names) or any(p.search(text) for p in paths):
            callers.append(t)
        if len(callers) == 2:
            break
    if not callers:
        return taken
    return _closure(rs, crate, [root, *callers], pool)


def _quotas(n: int, strategies: Sequence[Strategy]) -> dict[Strategy, int]:
    quotas: dict[Strategy, int] = dict.fromkeys(strategies, 0)
    others = [s for s in strategies if s != "stub_body"]
    rest = n
    if "stub_body" in strategies:
        quotas["stub_body"] = n if not others else round(n * STUB_SHARE)
        rest = n - quotas["stub_body"]
    for i, name in enumerate(others):
        quotas[name] = rest // len(others) + (1 if i < rest % len(others) else 0)
    return quotas


def rust_candidates(
    seed: SeedApp,
    units: Iterable[Unit],
    *,
    max_candidates: int,
    random_seed: int = 0,
    min_body_lines: int = 2,
    strategies: Sequence[Strategy] = STRATEGIES,
    feature_size: FeatureSize | None = None,
) -> tuple[list[Candidate], list[SkippedFile]]:
    """Candidates for a Rust seed, plus the targets left out and why.

    The counterpart of `excise.treesitter_candidates.treesitter_candidates`: about 60%
    `stub_body`, the rest split evenly between the other `strategies`; a strategy that runs
    out of targets leaves its share to the others. The strategies choose in reverse order
    (`feature` first, `stub_body` last), so the scarce targets are not used up by stubs.
    Targets are sorted by candidate id and shuffled with
    `random.Random(f"{random_seed}:{snapshot_id}")`; a unit is used by one candidate at most.
    `feature_size` bounds `feature` (default `FeatureSize()`). Never raises for a bad target.
    """
    for s in strategies:
        if s not in STRATEGIES:
            raise ValueError(f"unknown Rust strategy {s!r}; choose from {', '.join(STRATEGIES)}")
    rs = RustSeed.of(seed)
    kept, skipped = excisable(rs, units)
    skipped = [*rs.skipped, *skipped]
    by_key = {(u.file, u.qualname): u for u in kept}
    big = [u for u in kept if u.body_lines >= min_body_lines]
    plans: dict[Strategy, list[_Pick]] = {s: [] for s in strategies}

    def crate_key(rel: str) -> str | None:
        c = rs.crate(rel)
        return None if c is None else c.root

    for u in big:
        home = crate_key(u.file)
        if home is None:
            continue
        one = ((u.file, u.qualname),)
        key = f"{u.file}::{u.qualname}"
        if "stub_body" in plans:
            plans["stub_body"].append(_Pick("stub_body", home, key, one))
        if u.kind == "function" and "remove_function" in plans:
            plans["remove_function"].append(_Pick("remove_function", home, key, one))
        if u.kind == "method" and "remove_method" in plans:
            plans["remove_method"].append(_Pick("remove_method", home, key, one))
        if "feature" in plans:
            plans["feature"].append(_Pick("feature", home, key, one))
    if "remove_class" in plans:
        for rel in sorted({u.file for u in kept}):
            home = crate_key(rel)
            try:
                defs = rs.defs(rel)
            except SourceSkipped:
                continue
            for block in impls(rs.sources[rel], defs):
                members = tuple(
                    (rel, d.qualname) for d in block.methods if (rel, d.qualname) in by_key
                )
                lines = sum(by_key[m].body_lines for m in members)
                if home is not None and len(members) >= 2 and lines >= min_body_lines:
                    plans["remove_class"].append(
                        _Pick("remove_class", home, f"{rel}::{block.name}", members)
                    )
    rng = random.Random(f"{random_seed}:{seed.snapshot_id}")
    for s in strategies:
        ids = {p.key: stable_id(seed.snapshot_id, s, p.key) for p in plans[s]}
        plans[s].sort(key=lambda p: ids[p.key])
        rng.shuffle(plans[s])
    quotas = _quotas(max_candidates, strategies)
    cursor = dict.fromkeys(strategies, 0)
    used: set[tuple[str, str]] = set()
    picked: dict[Strategy, list[Candidate]] = {s: [] for s in strategies}
    pool_cache: dict[str, list[_Target]] = {}

    def pool(home: str) -> list[_Target]:
        if home not in pool_cache:
            out: list[_Target] = []
            for u in kept:
                if crate_key(u.file) != home:
                    continue
                d = next((x for x in rs.defs(u.file) if x.qualname == u.qualname), None)
                if d is not None:
                    out.append(_Target(u.file, d))
            pool_cache[home] = out
        return pool_cache[home]

    def make(pick: _Pick) -> Candidate | str:
        crate = rs.crates[pick.crate]
        try:
            targets = [
                _Target(rel, next(d for d in rs.defs(rel) if d.qualname == q))
                for rel, q in pick.targets
            ]
        except (StopIteration, SourceSkipped) as exc:
            return f"cannot locate: {exc}"
        drop_docs = pick.strategy != "stub_body"
        if pick.strategy == "feature":
            targets = _feature(rs, crate, targets[0], pool(pick.crate))
            if len({t.rel for t in targets}) < 2:
                return "what only it calls, and what calls it, lies in one file"
        elif pick.strategy in ("remove_function", "remove_method"):
            callers = _only_callers(rs, crate, targets[0], pool(pick.crate))
            if callers:  # a private function goes whole; its callers' bodies are stubbed
                plan = _plan(rs, crate, callers, drop_docs=False, helpers=True)
                main = (targets[0].rel, targets[0].d.qualname)
                if isinstance(plan, _Plan) and main in {
                    (t.rel, t.d.qualname) for t in plan.deleted
                }:
                    return _finish(pick, plan)
        plan = _plan(
            rs,
            crate,
            targets,
            drop_docs=drop_docs,
            helpers=pick.strategy != "stub_body",
        )
        if isinstance(plan, str):
            return plan
        if pick.strategy in ("remove_function", "remove_method"):
            only_stub = not plan.deleted and all(len(v) == 1 for v in plan.edits.values())
            if only_stub:
                return "no doc comment or helper to remove beyond stub_body"
        return _finish(pick, plan)

    def _finish(pick: _Pick, plan: _Plan) -> Candidate | str:
        touched = {(t.rel, t.d.qualname) for t in (*plan.stubbed, *plan.deleted)}
        if touched & used:
            return "a unit another candidate already uses"
        return _candidate(rs, pick, plan, by_key, feature_size)

    def fill(strategy: Strategy, limit: int) -> None:
        chosen = plans[strategy]
        while len(picked[strategy]) < limit and cursor[strategy] < len(chosen):
            pick = chosen[cursor[strategy]]
            cursor[strategy] += 1
            if any(t in used for t in pick.targets):
                continue
            made = make(pick)
            if isinstance(made, str):
                skipped.append(SkippedFile(path=pick.key, reason=f"{strategy}: {made}"))
                continue
            picked[strategy].append(made)
            used.update(tuple(u.split("::", 1)) for u in made.units if "::" in u)  # type: ignore[misc]

    # the strategies with the fewest targets first: `stub_body` can use any unit left
    for s in reversed(strategies):
        fill(s, quotas[s])
    for s in strategies:
        missing = max_candidates - sum(len(v) for v in picked.values())
        if missing <= 0:
            break
        fill(s, len(picked[s]) + missing)
    return [c for s in strategies for c in picked[s]], skipped
