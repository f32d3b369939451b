"""Excision for Rust seeds: edits that remove a feature and leave a tree that still compiles.

Rust must build before a single test runs, so an edit here never deletes what other code
names: a removed function keeps its signature and gets `todo!()` as its body (a concrete
return type accepts it), and only private helpers that nothing else names are deleted. The
tests that need the code then fail at run time, one by one, instead of the whole build.

Units (`excisable`): the functions and methods the index finds (`index.treesitter`, qualnames
"Type.method", "module.function"; `languages.rust.tree` finds the same ones by the same
names, as this package sits below the index), in the crate's own sources (not `tests/`, `benches/`,
`examples/`, `build.rs`, nor files that only test builds compile), leaving out test-only items
(`#[cfg(test)]` modules, `#[test]` functions; `cfg(not(test))` code, which tests never run),
`const fn` (a `todo!()` there fails the build as soon as a constant calls it), functions
returning `impl Trait` (`todo!()` has no type to stand for it), bodies that declare `impl`
blocks or exported macros (visible outside the body), and proc-macro crates (a `todo!()`
there fails every build that expands the macro).

Edits (each a function over one file's bytes; `languages.rust.candidates` plans them over a
seed, and adds strategy `feature`):
- `stub_body`: the body becomes `todo!()`; signature and doc comment stay (`stub_edit`: the
  same bytes as `excise.treesitter_edits.stub_body` for Rust; `removal_range` the same range
  as its removals).
- `remove_function` (free functions, in any module) and `remove_method` (methods of inherent
  and trait impls): the body becomes `todo!()`, the doc comment goes, and so do the private
  helpers (free functions and inherent methods, not `pub`) that only the removed code named,
  transitively. Over a seed, a private function nothing else names goes whole instead, its
  callers stubbed.
- `remove_impl` (strategy `remove_class`): every method of one `impl` block is stubbed (or
  deleted, when it is a private helper only the block used), with their doc comments.

"Nothing else names it" counts identifiers over every `.rs` file of the package, comments and
strings included (`RustSeed.counts`).

Lints: a crate that denies lints (`#![deny(warnings)]`, `[lints]` in Cargo.toml,
`-D warnings` in `.cargo/config.toml`) fails to build on the warnings an edit causes. For
those, a stub first uses its parameters (`let _ = (&a, &mut b);`), doc comments of `pub`
items stay when `missing_docs` is denied, and an edit that leaves an import or a definition
unused is refused with the name.
"""

from __future__ import annotations

import re
from collections import Counter
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path

from tree_sitter import Node

from taskmint.languages.edits import stub_block, whole_lines
from taskmint.languages.rust.crates import Crate, crates_of, home_of, is_source_file
from taskmint.languages.rust.testcode import never_in_tests, test_module_files, test_only
from taskmint.languages.rust.tree import (
    Fn,
    RustSourceError,
    attributes_before,
    functions,
    inner_attributes,
    read_rust,
)
from taskmint.records import SeedApp, SkippedFile, Unit

__all__ = [
    "IDENT",
    "STUB",
    "Plan",
    "RustSeed",
    "Target",
    "apply_edits",
    "count_in",
    "deletable",
    "excisable",
    "impl_of",
    "impls",
    "plan_edits",
    "refusal",
    "removal_range",
    "remove_function",
    "remove_impl",
    "remove_method",
    "stub_body",
    "stub_edit",
]

STUB = "todo!()"
# Lints whose denial turns an edit's side effects into build errors.
_PARAM_LINTS = frozenset({"warnings", "unused", "unused_variables", "unused_mut"})
_ORPHAN_LINTS = frozenset({"warnings", "unused", "dead_code", "unused_imports"})
# Attributes a deleted helper may carry (anything else may register or export it).
_BENIGN_ATTRS = re.compile(
    r"^(inline|cold|must_use|track_caller|allow|warn|expect|doc|rustfmt::|cfg|cfg_attr|"
    r"deprecated|optimize)\b"
)
IDENT = re.compile(rb"[A-Za-z_][A-Za-z0-9_]*")
_KEYWORDS = frozenset(
    b"as async await break const continue crate dyn else enum extern false fn for if impl in "
    b"let loop match mod move mut pub ref return self Self static struct super trait true type "
    b"unsafe use where while todo".split()
)
_NESTED_GLOBAL = frozenset({"impl_item", "trait_item", "macro_definition"})


# -- units -------------------------------------------------------------------------------------


def _ancestors(node: Node) -> Iterable[Node]:
    cur = node.parent
    while cur is not None:
        yield cur
        cur = cur.parent


def refusal(data: bytes, d: Fn) -> str | None:
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
            attrs = attributes_before(data, holder)
            if holder.type == "mod_item":
                inner = holder.child_by_field_name("body")
                if inner is not None:
                    attrs += inner_attributes(data, inner)
            if test_only(attrs):
                return "test code"
            if never_in_tests(attrs):
                return "compiled only outside tests (cfg(not(test)))"
            if any(a.startswith("proc_macro") for a in attrs):
                return "a procedural macro"
        elif holder.type == "source_file":
            attrs = inner_attributes(data, holder)
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
        names |= set(IDENT.findall(m.group(1)))
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
    _defs: dict[str, list[Fn]] = field(default_factory=dict)
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
                    sources[rel] = read_rust(root / rel)
                except RustSourceError as exc:
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
        home = home_of(rel, sorted(self.crates))
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
                    total.update(IDENT.findall(data))
            self._counts[crate.root] = total
        return self._counts[crate.root]

    def body_counts(self, rel: str, d: Fn) -> Counter[bytes]:
        """Identifier occurrences in the body of definition `d` of `rel` (cached)."""
        key = (rel, d.qualname)
        if key not in self._bodies:
            body = d.body
            text = b"" if body is None else self.sources[rel][body.start_byte : body.end_byte]
            self._bodies[key] = Counter(IDENT.findall(text))
        return self._bodies[key]

    def defs(self, rel: str) -> list[Fn]:
        """The definitions of one file (raises `RustSourceError`)."""
        if rel not in self._defs:
            self._defs[rel] = functions(self.sources[rel], rel)
        return self._defs[rel]

    def where(self, rel: str) -> str | None:
        """None if units of `rel` may be excised, else why not."""
        crate = self.crate(rel)
        if crate is None:
            return "not in a Cargo package"
        if crate.proc_macro:
            return "a proc-macro crate (a todo!() there breaks every build that expands it)"
        if not is_source_file(rel, crate):
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
            except RustSourceError as exc:
                why = str(exc)
            else:
                why = "not found" if d is None else refusal(rs.sources[u.file], d)
        if why is None:
            kept.append(u)
        else:
            skipped.append(SkippedFile(path=f"{u.file}::{u.qualname}", reason=why))
    return kept, skipped


# -- edits -------------------------------------------------------------------------------------

Edit = tuple[int, int, bytes]


def _line_start(data: bytes, offset: int) -> int:
    return data.rfind(b"\n", 0, offset) + 1


def _params(data: bytes, d: Fn) -> list[bytes]:
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


def stub_edit(data: bytes, d: Fn) -> Edit:
    """The edit replacing `d`'s body with `todo!()` on a line of its own, one level deeper
    than the definition (the body's own indentation style wins when it shows one), the brace
    at the definition's indentation: the same edit as `excise.treesitter_edits.stub_body`."""
    body = d.body
    if body is None:
        raise LookupError(f"{d.qualname!r} has no body to stub")
    return stub_block(data, d.node.start_byte, body, STUB.encode(), b"    ")


def removal_range(data: bytes, d: Fn) -> tuple[int, int]:
    """The bytes deleting `d` takes: doc comment and attributes to its end, whole lines when
    it has its lines to itself, and one blank line that separated it from its neighbours
    (the same range as `excise.treesitter_edits`' removals)."""
    start = d.doc.start_byte if d.doc is not None else d.lead_start
    return whole_lines(data, start, d.node.end_byte)


def _stub(data: bytes, d: Fn, rel: str, *, discard: bool) -> Edit:
    start, end, text = stub_edit(data, d)
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


def _doc_edit(data: bytes, d: Fn) -> Edit | None:
    """Deleting the doc comment lines before a definition (None if it has none or shares a
    line with other code)."""
    if d.doc is None:
        return None
    start = _line_start(data, d.doc.start_byte)
    end = _line_start(data, d.lead_start)
    if data[start : d.doc.start_byte].strip() or data[end : d.lead_start].strip():
        return None
    return (start, end, b"") if end > start else None


def _is_pub(d: Fn) -> bool:
    vis = next((c for c in d.node.children if c.type == "visibility_modifier"), None)
    return vis is not None


def _is_plain_pub(data: bytes, d: Fn) -> bool:
    vis = next((c for c in d.node.children if c.type == "visibility_modifier"), None)
    return vis is not None and data[vis.start_byte : vis.end_byte].strip() == b"pub"


def impl_of(d: Fn) -> Node | None:
    parent = d.node.parent
    if parent is not None and parent.type == "declaration_list":
        holder = parent.parent
        if holder is not None and holder.type in ("impl_item", "trait_item"):
            return holder
    return None


def deletable(data: bytes, d: Fn) -> bool:
    """A private helper that may be deleted when nothing names it."""
    if d.body is None or _is_plain_pub(data, d):
        return False
    holder = impl_of(d)
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
class Target:
    rel: str
    d: Fn


def _merge(ranges: Iterable[tuple[int, int]]) -> list[tuple[int, int]]:
    out: list[tuple[int, int]] = []
    for s, e in sorted(ranges):
        if out and s <= out[-1][1]:
            out[-1] = (out[-1][0], max(out[-1][1], e))
        else:
            out.append((s, e))
    return out


def count_in(data: bytes, ranges: Iterable[tuple[int, int]]) -> Counter[bytes]:
    total: Counter[bytes] = Counter()
    for s, e in _merge(ranges):
        total.update(IDENT.findall(data[s:e]))
    return total


@dataclass(slots=True)
class Plan:
    """The edits of one candidate: per file, the ranges replaced; the units stubbed and the
    helpers deleted."""

    edits: dict[str, list[Edit]] = field(default_factory=dict)
    stubbed: list[Target] = field(default_factory=list)
    deleted: list[Target] = field(default_factory=list)


def _removed_ranges(plan: Plan, rel: str) -> list[tuple[int, int]]:
    return [(s, e) for s, e, _ in plan.edits.get(rel, [])]


def plan_edits(
    rs: RustSeed,
    crate: Crate,
    targets: Sequence[Target],
    *,
    drop_docs: bool,
    helpers: bool,
) -> Plan | str:
    """Stub `targets` (dropping their doc comments when `drop_docs`), then delete the private
    helpers of the touched files that nothing else names; or why this cannot compile."""
    plan = Plan()
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


def _delete_one_helper(rs: RustSeed, crate: Crate, plan: Plan) -> bool:
    """Delete one private helper of the touched files that only the removed code names (a
    stubbed target too, when the others were its only users); False when there is none."""
    counts = rs.counts(crate)
    per_file = {rel: count_in(rs.sources[rel], _removed_ranges(plan, rel)) for rel in plan.edits}
    inside = sum(per_file.values(), Counter())
    gone = {(t.rel, t.d.qualname) for t in plan.deleted}
    for rel in sorted(plan.edits):
        data = rs.sources[rel]
        ranges = _removed_ranges(plan, rel)
        for d in rs.defs(rel):
            name = d.name.encode()
            if (rel, d.qualname) in gone or inside[name] == 0 or not deletable(data, d):
                continue
            if any(s <= d.node.start_byte and d.node.end_byte <= e for s, e in ranges):
                continue  # inside code already removed
            start, end = removal_range(data, d)
            here = count_in(data, [*ranges, (start, end)])
            if counts[name] - (inside[name] - per_file[rel][name]) - here[name] > 0:
                continue  # named somewhere that stays
            plan.edits[rel] = [e for e in plan.edits[rel] if not (start <= e[0] and e[1] <= end)]
            plan.edits[rel].append((start, end, b""))
            plan.stubbed = [
                t
                for t in plan.stubbed
                if not (t.rel == rel and start <= t.d.node.start_byte and t.d.node.end_byte <= end)
            ]
            plan.deleted.append(Target(rel, d))
            return True
    return False


def _orphan(rs: RustSeed, crate: Crate, plan: Plan) -> str | None:
    """A name the edits leave with a single occurrence (its definition or import): unused."""
    counts = rs.counts(crate)
    declared = rs.declared(crate)
    removed: Counter[bytes] = Counter()
    added: Counter[bytes] = Counter()
    for rel, edits in plan.edits.items():
        data = rs.sources[rel]
        removed += count_in(data, [(s, e) for s, e, _ in edits])
        for _, _, text in edits:
            added.update(IDENT.findall(text))
    for name in sorted(removed):
        if name in _KEYWORDS or name not in declared:
            continue
        left = counts[name] - removed[name] + added[name]
        if left == 1:
            return name.decode()
    return None


def apply_edits(data: bytes, edits: Sequence[Edit]) -> bytes:
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


def _find(rs: RustSeed, rel: str, qualname: str, kinds: tuple[str, ...]) -> Fn:
    try:
        found = rs.defs(rel)
    except RustSourceError as exc:
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
    found = [Target(rel, _find(rs, rel, q, kinds)) for q in targets]
    plan = plan_edits(rs, crate, found, drop_docs=drop_docs, helpers=helpers)
    if isinstance(plan, str):
        raise LookupError(plan)
    return apply_edits(data, plan.edits.get(rel, []))


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
    methods: tuple[Fn, ...]


def _type_text(data: bytes, node: Node | None) -> str:
    if node is None:
        return "?"
    if node.type == "generic_type":
        node = node.child_by_field_name("type") or node
    if node.type == "scoped_type_identifier":
        node = node.child_by_field_name("name") or node
    return " ".join(data[node.start_byte : node.end_byte].decode("utf-8", "replace").split())


def impls(data: bytes, defs: Sequence[Fn]) -> list[_Impl]:
    """The impl blocks of a file that hold methods, named "impl Type" or "impl Trait for Type"."""
    holders: dict[int, tuple[Node, list[Fn]]] = {}
    for d in defs:
        holder = impl_of(d)
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
    except RustSourceError as exc:
        raise LookupError(f"cannot look up {name!r}: {exc}") from exc
    targets = [Target(rel, d) for d in found.methods if refusal(data, d) is None]
    if not targets:
        raise LookupError(f"{name!r} has no method that can be stubbed")
    plan = plan_edits(rs, crate, targets, drop_docs=True, helpers=True)
    if isinstance(plan, str):
        raise LookupError(plan)
    return apply_edits(data, plan.edits.get(rel, []))
