"""Rust test code inside source files: which items are test-only, where they are, and putting
the pristine ones back into a patched file.

Rust keeps unit tests next to the code (`#[cfg(test)] mod tests { ... }`, `#[test] fn`), so a
policy's patch to a source file can reach them. The grader therefore splices the pristine test
items back into every patched source file (`restore_test_modules`) and restores whole files
that only test builds compile (`test_module_files`: the targets of `#[cfg(test)] mod x;`,
files starting with `#![cfg(test)]`).

An item is test-only when one of its attributes is a test attribute (`#[test]`,
`#[tokio::test]`, `#[bench]`, `#[rstest]`...) or a `#[cfg(P)]` whose predicate is false
whenever `test` is (`test`, `all(test, ...)`; not `any(test, ...)`, not `not(test)`). The
predicate is evaluated with three values: atoms other than `test` are unknown.

Items are named by their module path and kind ("mod tests", "outer::fn helper",
"impl Parser", "use super::*"), repeated names get "#2", so the same item is found again in
the patched file whatever the policy did to its attributes.
"""

from __future__ import annotations

import re
from collections.abc import Iterator, Mapping
from dataclasses import dataclass
from pathlib import PurePosixPath

from tree_sitter import Node

from taskmint.languages.rust.tree import (
    RustSourceError,
    attributes_before,
    inner_attributes,
    parse,
)

__all__ = [
    "RestoreError",
    "TestItem",
    "cfg_value",
    "is_test_attribute",
    "never_in_tests",
    "restore_test_modules",
    "test_code_edits",
    "test_items",
    "test_module_files",
    "test_only",
]

# Attribute paths that make a function a test (or a benchmark): the last path segment.
_TEST_ATTRS = frozenset(
    {
        "test",
        "bench",
        "rstest",
        "test_case",
        "test_matrix",
        "quickcheck",
        "proptest",
        "wasm_bindgen_test",
        "test_log",
        "serial_test",
        "sqlx_test",
    }
)
_TOKEN = re.compile(r'"(?:[^"\\]|\\.)*"|[A-Za-z_][A-Za-z0-9_]*|::|\S')
_ITEM_TYPES = frozenset(
    {
        "function_item",
        "function_signature_item",
        "mod_item",
        "impl_item",
        "trait_item",
        "struct_item",
        "enum_item",
        "union_item",
        "const_item",
        "static_item",
        "type_item",
        "use_declaration",
        "extern_crate_declaration",
        "macro_definition",
        "macro_invocation",
        "foreign_mod_item",
        "associated_type",
        "empty_statement",
    }
)
_LEADING = ("attribute_item", "line_comment", "block_comment")


class RestoreError(ValueError):
    """The patched file cannot be read, so its test code cannot be restored: reject the patch."""


def _tokens(text: str) -> list[str]:
    return _TOKEN.findall(text)


def cfg_value(predicate: str, *, test: bool) -> bool | None:
    """The value of a `cfg` predicate (`all(test, feature = "x")`) for a build with `test` as
    given: True, False, or None when it depends on other options (or does not parse)."""
    toks = _tokens(predicate)
    pos = 0

    def pred() -> bool | None:
        nonlocal pos
        if pos >= len(toks):
            raise ValueError("empty predicate")
        name = toks[pos]
        pos += 1
        if pos < len(toks) and toks[pos] == "(" and name in ("all", "any", "not"):
            pos += 1
            values: list[bool | None] = []
            while pos < len(toks) and toks[pos] != ")":
                values.append(pred())
                if pos < len(toks) and toks[pos] == ",":
                    pos += 1
            if pos >= len(toks):
                raise ValueError("unbalanced")
            pos += 1
            if name == "not":
                if len(values) != 1:
                    raise ValueError("not() takes one predicate")
                return None if values[0] is None else not values[0]
            if name == "all":
                if False in values:
                    return False
                return None if None in values else True
            if True in values:
                return True
            return None if None in values else False
        if pos < len(toks) and toks[pos] == "=":
            pos += 2  # key = "value": an option other than `test`
            return None
        return test if name == "test" else None

    try:
        value = pred()
    except (ValueError, IndexError):
        return None
    return value if pos == len(toks) else None


def _cfg_predicates(attrs: list[str]) -> Iterator[str]:
    for attr in attrs:
        if attr.startswith("cfg(") and attr.endswith(")"):
            yield attr[4:-1]


def is_test_attribute(attr: str) -> bool:
    """Whether an attribute (the text inside `#[...]`) marks a test or benchmark function."""
    path = attr.split("(", 1)[0].strip()
    last = path.rsplit("::", 1)[-1].strip()
    return last in _TEST_ATTRS or path in ("tokio::test", "async_std::test", "test_log::test")


def test_only(attrs: list[str]) -> bool:
    """Whether attributes (texts inside `#[...]`) make an item compile only in test builds."""
    if any(is_test_attribute(a) for a in attrs):
        return True
    return any(cfg_value(p, test=False) is False for p in _cfg_predicates(attrs))


def never_in_tests(attrs: list[str]) -> bool:
    """Whether attributes make an item compile only outside test builds (`cfg(not(test))`)."""
    return any(cfg_value(p, test=True) is False for p in _cfg_predicates(attrs))


@dataclass(frozen=True, slots=True)
class TestItem:
    """A test-only item of one file: `key` names it (module path and kind), [`start`, `end`)
    are its bytes from its first attribute or doc comment to its end; `container` is the key
    of the module or impl holding it ("" for the file)."""

    __test__ = False  # not a pytest test class

    key: str
    start: int
    end: int
    container: str
    test: bool


@dataclass(frozen=True, slots=True)
class _Holder:
    key: str
    body: Node  # source_file or declaration_list
    insert_at: int  # where an item missing from it is put back


def _item_key(data: bytes, node: Node) -> str:
    def field(name: str) -> str:
        child = node.child_by_field_name(name)
        if child is None:
            return "?"
        return " ".join(data[child.start_byte : child.end_byte].decode("utf-8", "replace").split())

    t = node.type
    if t in ("function_item", "function_signature_item"):
        return f"fn {field('name')}"
    if t == "mod_item":
        return f"mod {field('name')}"
    if t == "impl_item":
        trait = node.child_by_field_name("trait")
        head = f"impl {field('trait')} for {field('type')}" if trait else f"impl {field('type')}"
        return head
    if t in ("trait_item", "struct_item", "enum_item", "union_item", "const_item", "static_item"):
        return f"{t.removesuffix('_item')} {field('name')}"
    if t == "type_item":
        return f"type {field('name')}"
    if t == "macro_definition":
        return f"macro {field('name')}"
    text = " ".join(data[node.start_byte : node.end_byte].decode("utf-8", "replace").split())
    return f"{t} {text[:200]}"


def _lead_start(node: Node) -> int:
    start = node.start_byte
    prev = node.prev_named_sibling
    while prev is not None and prev.type in _LEADING:
        start = prev.start_byte
        prev = prev.prev_named_sibling
    return start


@dataclass(frozen=True, slots=True)
class _Item:
    key: str
    start: int
    end: int
    container: str
    test: bool
    node: Node


def _walk_items(data: bytes, root: Node) -> tuple[list[_Item], dict[str, _Holder]]:
    """Every item of the file at every module and impl level (not inside test-only items or
    function bodies), with unique keys, and the holders by key."""
    items: list[_Item] = []
    holders: dict[str, _Holder] = {"": _Holder("", root, len(data))}
    file_test = test_only(inner_attributes(data, root))
    stack: list[tuple[Node, str, bool]] = [(root, "", file_test)]
    while stack:
        body, prefix, inherited = stack.pop()
        seen: dict[str, int] = {}
        for child in body.named_children:
            if child.type not in _ITEM_TYPES:
                continue
            key = prefix + _item_key(data, child)
            n = seen.get(key, 0) + 1
            seen[key] = n
            if n > 1:
                key = f"{key}#{n}"
            attrs = attributes_before(data, child)
            inner = child.child_by_field_name("body")
            own = test_only(attrs)
            if inner is not None and child.type == "mod_item":
                own = own or test_only(inner_attributes(data, inner))
            items.append(_Item(key, _lead_start(child), child.end_byte, prefix, own, child))
            if inner is not None and inner.type == "declaration_list":
                close = (
                    inner.end_byte - 1
                    if data[inner.end_byte - 1 : inner.end_byte] == b"}"
                    else inner.end_byte
                )
                holders[key] = _Holder(key, inner, close)
                if not own and not inherited:
                    stack.append((inner, key + "::", False))
    items.sort(key=lambda i: i.start)
    if file_test:  # the whole file is test code: one item covering it
        return [_Item("<file>", 0, len(data), "", True, root)], holders
    return items, holders


def test_items(data: bytes, path: str = "") -> list[TestItem]:
    """The outermost test-only items of a Rust file, in source order.

    Raises `RustSourceError` when the file does not parse.
    """
    tree = parse(data, path)
    items, _ = _walk_items(data, tree.root_node)
    return [TestItem(i.key, i.start, i.end, i.container, True) for i in items if i.test]


def restore_test_modules(pristine_src: str, patched_src: str) -> str:
    """`patched_src` with every test-only item of `pristine_src` put back as it was.

    Each pristine test item (`#[cfg(test)] mod tests {...}`, a `#[test] fn`, a `#[cfg(test)]`
    impl or use) replaces the item of the same name in the patched file, whatever its
    attributes became; an item the patch deleted is put back at the end of the module (or
    impl) that held it, or of the file. Test-only items the patch added are removed. Every
    other byte of the patched file stays. Raises `RestoreError` when either file does not
    parse (the grader should then reject the patch: its tests cannot be restored).
    """
    old = pristine_src.encode("utf-8")
    new = patched_src.encode("utf-8")
    try:
        old_tree = parse(old)
    except RustSourceError as exc:
        raise RestoreError(f"the pristine file {exc}") from exc
    try:
        new_tree = parse(new)
    except RustSourceError as exc:
        raise RestoreError(f"the patched file {exc}; its test code cannot be restored") from exc
    old_items, _ = _walk_items(old, old_tree.root_node)
    new_items, holders = _walk_items(new, new_tree.root_node)
    if old_items and old_items[0].key == "<file>":
        return pristine_src  # a test-only file: all of it is test code
    wanted = {i.key: i for i in old_items if i.test}
    by_key = {i.key: i for i in new_items}
    edits: list[tuple[int, int, bytes]] = []
    if new_items and new_items[0].key == "<file>":  # the patch made the whole file test-only
        raise RestoreError("the patched file became test-only (`#![cfg(test)]`)")
    for key, item in wanted.items():
        text = old[item.start : item.end]
        if key in by_key:
            target = by_key[key]
            edits.append((target.start, target.end, text))
            continue
        # deleted: after the nearest item before it that the patched file still has
        before = [i for i in old_items if i.container == item.container and i.end <= item.start]
        anchor = next((by_key[i.key] for i in reversed(before) if i.key in by_key), None)
        if anchor is not None:
            edits.append((anchor.end, anchor.end, b"\n\n" + text))
            continue
        holder = holders.get(item.container.removesuffix("::"), holders[""])
        at = holder.insert_at
        lead = b"\n" if at > 0 and new[at - 1 : at] != b"\n" else b""
        edits.append((at, at, lead + text + b"\n"))
    for item in new_items:
        if item.test and item.key not in wanted:
            edits.append((*_whole_lines(new, item.start, item.end), b""))
    return _apply(new, edits).decode("utf-8")


def _whole_lines(data: bytes, start: int, end: int) -> tuple[int, int]:
    """[start, end) widened to whole lines when nothing else shares them."""
    line_start = data.rfind(b"\n", 0, start) + 1
    line_end = data.find(b"\n", end)
    line_end = len(data) if line_end == -1 else line_end + 1
    if data[line_start:start].strip() or data[end:line_end].strip():
        return start, end
    return line_start, line_end


def _apply(data: bytes, edits: list[tuple[int, int, bytes]]) -> bytes:
    """Apply non-overlapping edits; an edit inside another's range is dropped; insertions at
    the same point keep their order."""
    ordered = sorted(enumerate(edits), key=lambda e: (e[1][0], -e[1][1], e[0]))
    kept: list[tuple[int, int, bytes]] = []
    for _, (start, end, text) in ordered:
        if kept and start < kept[-1][1] and end <= kept[-1][1] and kept[-1][0] < kept[-1][1]:
            continue  # inside an edit already made (a replaced outer item)
        kept.append((start, end, text))
    out = bytearray()
    pos = 0
    for start, end, text in kept:
        out += data[pos:start] + text
        pos = max(pos, end)
    out += data[pos:]
    return bytes(out)


# -- files that only test builds compile -------------------------------------------------------

_ROOT_NAMES = ("lib.rs", "main.rs", "mod.rs", "build.rs")


def _module_dir(path: PurePosixPath) -> PurePosixPath:
    """Where the files of `mod x;` declared in `path` live."""
    if path.name in _ROOT_NAMES or path.parent.name == "bin":
        return path.parent
    return path.parent / path.stem


def test_module_files(sources: Mapping[str, bytes]) -> set[str]:
    """The files among `sources` (path -> bytes, paths relative to the seed) that only test
    builds compile: those a test-only `mod x;` declares (`x.rs`, `x/mod.rs`, a `#[path]`) and
    every file below them, and files that start with `#![cfg(test)]`. Files that do not
    parse are passed over."""
    found: set[str] = set()
    dirs: set[str] = set()
    for rel, data in sources.items():
        if not rel.endswith(".rs"):
            continue
        try:
            tree = parse(data, rel)
        except RustSourceError:
            continue
        root = tree.root_node
        if test_only(inner_attributes(data, root)):
            found.add(rel)
        items, _ = _walk_items(data, root)
        path = PurePosixPath(rel)
        for item in items:
            node = item.node
            if node.type != "mod_item" or node.child_by_field_name("body") is not None:
                continue
            if not item.test:
                continue
            attrs = attributes_before(data, node)
            name = item.key.rsplit("mod ", 1)[-1].split("#")[0]
            explicit = next(
                (a for a in attrs if a.startswith("path") and "=" in a and '"' in a), None
            )
            if explicit is not None:
                target = path.parent / explicit.split('"')[1]
                found.add(str(target))
                dirs.add(
                    str(target.parent / target.stem)
                    if target.name != "mod.rs"
                    else str(target.parent)
                )
                continue
            nested = item.container.replace("::", "/").replace("mod ", "")
            base = _module_dir(path) / nested if nested else _module_dir(path)
            found.add(str(base / f"{name}.rs"))
            found.add(str(base / name / "mod.rs"))
            dirs.add(str(base / name))
    out = {f for f in found if f in sources}
    for rel in sources:
        if any(rel.startswith(d.rstrip("/") + "/") for d in dirs):
            out.add(rel)
    return out


# -- a patch's edits of test code --------------------------------------------------------------

_HUNK = re.compile(r"^@@ -(\d+)(?:,(\d+))? \+\d+(?:,\d+)? @@")
_GIT_HEADER = re.compile(r'^diff --git "?a/(.+?)"? "?b/(.+?)"?$')


def _touched_old_lines(patch: str) -> dict[str, set[int]]:
    """File -> the lines of the ORIGINAL file a patch removes or inserts before (an insertion
    counts as touching the line after it, and the one before)."""
    out: dict[str, set[int]] = {}
    path: str | None = None
    line = 0
    for raw in patch.splitlines():
        m = _GIT_HEADER.match(raw)
        if m:
            path = m.group(1)
            continue
        if raw.startswith("--- "):
            target = raw[4:].split("\t")[0].strip()
            if target != "/dev/null":
                path = target.removeprefix("a/")
            continue
        if raw.startswith("+++ "):
            continue
        h = _HUNK.match(raw)
        if h:
            line = int(h.group(1))
            if h.group(2) == "0":
                line += 1  # a pure insertion after line N
            continue
        if path is None or not raw:
            continue
        if raw[0] == "-":
            out.setdefault(path, set()).add(line)
            line += 1
        elif raw[0] == "+":
            out.setdefault(path, set()).update({max(line - 1, 1), line})
        elif raw[0] == " ":
            line += 1
    return out


def test_code_edits(patch: str, pristine: Mapping[str, bytes]) -> tuple[str, ...]:
    """`"path:line: edits test code (key)"` for each test-only item of the pristine sources
    (`pristine`: path -> bytes) whose lines the patch removes or inserts inside, and
    `"path:0: edits a test-only module file"` for files only test builds compile. An insertion
    right before or after an item counts as inside it (conservative). Files that do not parse
    are passed over."""
    findings: list[str] = []
    test_files = test_module_files(pristine)
    for path, lines in sorted(_touched_old_lines(patch).items()):
        if path in test_files:
            findings.append(f"{path}:0: edits a test-only module file")
            continue
        data = pristine.get(path)
        if data is None or not path.endswith(".rs"):
            continue
        try:
            items = test_items(data, path)
        except RustSourceError:
            continue
        for item in items:
            first = data.count(b"\n", 0, item.start) + 1
            last = data.count(b"\n", 0, max(item.end - 1, item.start)) + 1
            hit = sorted(n for n in lines if first <= n <= last)
            if hit:
                findings.append(f"{path}:{hit[0]}: edits test code ({item.key})")
    return tuple(findings)
