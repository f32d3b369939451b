"""Reading Rust with tree-sitter for the Rust edits: parsing, the functions and methods of a
file, their doc comments and attributes, and reading source files.

The language profiles sit below the stages, so this module cannot use the index's locator
(`index.treesitter_defs`); it names units exactly as that locator does for Rust (a test
compares them on every fixture and seed): "Type.method" for inherent and trait impls alike,
"Trait.method" for default methods, "module.function", "outer.inner" for a function inside a
function, "#2", "#3" for a repeated name. Definitions are found with one query and nested by
a sweep over byte ranges, without recursion.
"""

from __future__ import annotations

import functools
from dataclasses import dataclass
from pathlib import Path

import tree_sitter_rust
from tree_sitter import Language as TSLanguage
from tree_sitter import Node, Parser, Query, QueryCursor, Tree

from taskmint.languages.treesitter import field_text, jsdoc, node_text, type_name

__all__ = [
    "MAX_NESTED",
    "MAX_SOURCE_BYTES",
    "Fn",
    "RustSourceError",
    "attributes_before",
    "functions",
    "functions_in",
    "inner_attributes",
    "parse",
    "read_rust",
    "signature_text",
]

MAX_NESTED = 100  # nested definitions deeper than this are generated code
MAX_SOURCE_BYTES = 1_000_000
_DEFINITIONS = "(function_item) @def [(impl_item) (trait_item) (mod_item)] @scope"
_LEADING = ("attribute_item", "line_comment", "block_comment")


class RustSourceError(ValueError):
    """A Rust file that cannot be read or parsed; the message says why."""


@functools.cache
def _language() -> TSLanguage:
    return TSLanguage(tree_sitter_rust.language())


@functools.cache
def _query() -> Query:
    return Query(_language(), _DEFINITIONS)


def parse(data: bytes, path: str = "") -> Tree:
    """The tree of `data`; `RustSourceError` naming the first syntax error's line if any."""
    tree = Parser(_language()).parse(data)
    if tree.root_node.has_error:
        node = tree.root_node
        while True:  # iteratively: the tree may be very deep
            if node.is_error or node.is_missing:
                break
            nxt = next((c for c in node.children if c.has_error or c.is_missing), None)
            if nxt is None:
                break
            node = nxt
        where = f"{path}: " if path else ""
        raise RustSourceError(
            f"{where}does not parse: syntax error at line {node.start_point.row + 1}"
        )
    return tree


def read_rust(path: Path) -> bytes:
    """The bytes of a Rust source file; `RustSourceError` when it is unreadable, over
    `MAX_SOURCE_BYTES` or binary."""
    try:
        data = path.read_bytes()
    except OSError as exc:
        raise RustSourceError(f"unreadable: {exc.strerror or exc}") from exc
    if len(data) > MAX_SOURCE_BYTES:
        raise RustSourceError(f"too large ({len(data)} bytes > {MAX_SOURCE_BYTES})")
    if b"\0" in data:
        raise RustSourceError("binary content (NUL bytes)")
    return data


def attributes_before(data: bytes, item: Node) -> list[str]:
    """The outer attributes of an item (the text inside `#[...]`, whitespace normalized),
    read back over the attributes and comments before it."""
    out: list[str] = []
    prev = item.prev_named_sibling
    while prev is not None and prev.type in _LEADING:
        if prev.type == "attribute_item":
            text = data[prev.start_byte : prev.end_byte].decode("utf-8", "replace")
            out.append(" ".join(text[2:-1].split()))
        prev = prev.prev_named_sibling
    return out


def inner_attributes(data: bytes, holder: Node) -> list[str]:
    """The inner attributes (`#![...]`, the text inside) at the start of a file or a body."""
    out: list[str] = []
    for child in holder.named_children:
        if child.type == "inner_attribute_item":
            text = data[child.start_byte : child.end_byte].decode("utf-8", "replace")
            out.append(" ".join(text[3:-1].split()))
        elif child.type not in ("line_comment", "block_comment"):
            break
    return out


@dataclass(frozen=True, slots=True)
class Fn:
    """A function or method of one parsed file (live tree nodes: not a record).

    `lead_start` is its first byte with its attributes, `doc` the first node of its doc
    comment, `attributes` its attributes as written (`#[inline]`).
    """

    qualname: str
    name: str
    kind: str  # "function" | "method"
    node: Node
    body: Node | None
    doc: Node | None
    docstring: str | None
    lead_start: int
    attributes: tuple[str, ...]


def _gap_ok(data: bytes, end: int, start: int) -> bool:
    gap = data[end:start]
    return not gap.strip() and gap.count(b"\n") <= 1


def _is_doc(text: bytes) -> bool:
    return jsdoc(text) or (text.startswith(b"///") and not text.startswith(b"////"))


def _clean_doc(texts: list[bytes]) -> str | None:
    lines: list[str] = []
    for raw in texts:
        text = raw.decode("utf-8", "replace").strip()
        if text.startswith("/*"):
            text = text[3:] if text.startswith("/**") else text[2:]
            for line in text.removesuffix("*/").splitlines():
                line = line.strip()
                line = line[1:] if line.startswith("*") else line
                lines.append(line[1:] if line.startswith(" ") else line)
        else:
            for line in text.splitlines():
                line = line.strip()
                line = line[3:] if line.startswith("///") else line[2:]
                lines.append(line[1:] if line.startswith(" ") else line)
    cleaned = "\n".join(line.rstrip() for line in lines).strip("\n")
    return cleaned or None


def _leading(data: bytes, node: Node) -> tuple[int, tuple[str, ...], Node | None, str | None]:
    lead = node.start_byte
    attrs: list[str] = []
    prev = node.prev_named_sibling
    while prev is not None and prev.type == "attribute_item" and _gap_ok(data, prev.end_byte, lead):
        attrs.insert(0, node_text(data, prev).strip())
        lead = prev.start_byte
        prev = prev.prev_named_sibling
    docs: list[Node] = []
    start = lead
    while prev is not None and prev.type in ("line_comment", "block_comment"):
        text = data[prev.start_byte : prev.end_byte]
        if not _is_doc(text) or not _gap_ok(data, prev.end_byte, start):
            break
        docs.insert(0, prev)
        start = prev.start_byte
        if text.startswith(b"/*"):
            break
        prev = prev.prev_named_sibling
    if not docs:
        return lead, tuple(attrs), None, None
    return lead, tuple(attrs), docs[0], _clean_doc([data[d.start_byte : d.end_byte] for d in docs])


def functions(data: bytes, path: str = "") -> list[Fn]:
    """Every function and method of a Rust file, in source order, with unique qualnames.

    Raises `RustSourceError` for a file that does not parse or nests absurdly deep."""
    return functions_in(data, parse(data, path))


def functions_in(data: bytes, tree: Tree) -> list[Fn]:
    """`functions` of a file already parsed."""
    captured = QueryCursor(_query()).captures(tree.root_node)
    items = sorted(
        ((node, role) for role, nodes in captured.items() for node in nodes),
        key=lambda item: (item[0].start_byte, -item[0].end_byte),
    )
    stack: list[tuple[int, str, str]] = []  # (end byte, name, node type)
    seen: dict[str, int] = {}
    found: list[Fn] = []
    for node, role in items:
        while stack and stack[-1][0] <= node.start_byte:
            stack.pop()
        if role == "scope":
            if node.type == "impl_item":
                name = type_name(data, node.child_by_field_name("type"))
            else:
                name = field_text(data, node, "name") or "?"
        else:
            name = field_text(data, node, "name") or ""
            if not name:
                continue
        if len(stack) >= MAX_NESTED:
            raise RustSourceError(f"too deeply nested (over {MAX_NESTED} nested definitions)")
        kind = "method" if stack and stack[-1][2] in ("impl_item", "trait_item") else "function"
        stack.append((node.end_byte, name, node.type))
        if role == "scope":
            continue
        qual = ".".join(frame[1] for frame in stack)
        n = seen.get(qual, 0) + 1
        seen[qual] = n
        if n > 1:
            qual = f"{qual}#{n}"
        lead, attrs, doc, docstring = _leading(data, node)
        found.append(
            Fn(
                qualname=qual,
                name=name,
                kind=kind,
                node=node,
                body=node.child_by_field_name("body"),
                doc=doc,
                docstring=docstring,
                lead_start=lead,
                attributes=attrs,
            )
        )
    return found


def signature_text(data: bytes, fn: Fn) -> str:
    """The text from the function's start (attributes excluded) to its body, normalized."""
    end = fn.body.start_byte if fn.body is not None else fn.node.end_byte
    return " ".join(data[fn.node.start_byte : end].decode("utf-8", "replace").split())
