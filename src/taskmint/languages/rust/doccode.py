"""Doctests live in doc comments of source files, which a policy's patch may edit: put the
pristine doc comments back where they hold a doctest.

For every item of the pristine file (at every module and impl level, `testcode`'s item names)
and for the file and each inline module's inner docs, when the pristine or the patched doc
comment holds a code block (a fence, three backticks or tildes), the patched item's doc
comments (`///`, `/** */`, `#[doc = ...]`; `//!`, `/*! */`, `#![doc = ...]`) are replaced by
the pristine ones: the expected doctests are the original's, and a doctest the patch slipped
in front of one cannot take its id (` #2`). Attributes other than `doc` and every other byte of
the patched file stay. Items the pristine file lacks keep their docs: their doctests are not
expected.
"""

from __future__ import annotations

from tree_sitter import Node

from taskmint.languages.rust.testcode import RestoreError, _walk_items
from taskmint.languages.rust.tree import RustSourceError, parse

__all__ = ["restore_doc_tests"]

_FENCES = (b"```", b"~~~")


def _whole_lines(data: bytes, start: int, end: int) -> tuple[int, int]:
    """[start, end) widened to whole lines (its newline included) where nothing else shares
    them (a line comment's node may or may not hold its newline)."""
    line_start = data.rfind(b"\n", 0, start) + 1
    if not data[line_start:start].strip():
        start = line_start
    if end == 0 or data[end - 1 : end] != b"\n":
        line_end = data.find(b"\n", end)
        line_end = len(data) if line_end == -1 else line_end + 1
        if not data[end:line_end].strip():
            end = line_end
    return start, end


def _is_outer_doc(data: bytes, node: Node) -> bool:
    text = data[node.start_byte : node.end_byte]
    if node.type == "line_comment":
        return text.startswith(b"///") and not text.startswith(b"////")
    if node.type == "block_comment":
        return text.startswith(b"/**") and not text.startswith((b"/***", b"/**/"))
    if node.type == "attribute_item":
        return _doc_attr(text[2:])
    return False


def _is_inner_doc(data: bytes, node: Node) -> bool:
    text = data[node.start_byte : node.end_byte]
    if node.type == "line_comment":
        return text.startswith(b"//!")
    if node.type == "block_comment":
        return text.startswith(b"/*!")
    if node.type == "inner_attribute_item":
        return _doc_attr(text[3:])
    return False


def _doc_attr(inside: bytes) -> bool:
    """Whether an attribute's text (after `#[` or `#![`) is `doc = ...` or `doc(...)` with a
    string, the forms that add documentation."""
    squeezed = b"".join(inside.split())
    return squeezed.startswith((b"doc=", b"cfg_attr(")) and b"doc" in squeezed


def _outer_docs(data: bytes, item: Node) -> list[Node]:
    out: list[Node] = []
    prev = item.prev_named_sibling
    while prev is not None and prev.type in ("attribute_item", "line_comment", "block_comment"):
        if _is_outer_doc(data, prev):
            out.append(prev)
        prev = prev.prev_named_sibling
    return out[::-1]


def _inner_docs(data: bytes, body: Node) -> list[Node]:
    out: list[Node] = []
    for child in body.named_children:
        if child.type in ("line_comment", "block_comment", "inner_attribute_item"):
            if _is_inner_doc(data, child):
                out.append(child)
            continue
        break
    return out


def _text(data: bytes, nodes: list[Node]) -> bytes:
    """The whole lines the nodes are on, in order."""
    out = b""
    for node in nodes:
        start, end = _whole_lines(data, node.start_byte, node.end_byte)
        piece = data[start:end]
        out += piece if piece.endswith(b"\n") else piece + b"\n"
    return out


def _fenced(data: bytes, nodes: list[Node]) -> bool:
    return any(f in data[n.start_byte : n.end_byte] for n in nodes for f in _FENCES)


def _replace(
    old: bytes, old_docs: list[Node], new: bytes, new_docs: list[Node], at: int
) -> list[tuple[int, int, bytes]]:
    """Edits of `new` that remove its doc nodes and put `old`'s in at `at` (a line start)."""
    edits = [(*_whole_lines(new, n.start_byte, n.end_byte), b"") for n in new_docs]
    if old_docs:
        edits.append((at, at, _text(old, old_docs)))
    return edits


def _line_start(data: bytes, at: int) -> int:
    start = data.rfind(b"\n", 0, at) + 1
    return start if not data[start:at].strip() else at


def restore_doc_tests(pristine_src: str, patched_src: str) -> str:
    """`patched_src` with the pristine doc comments back wherever either side's holds a code
    block (see the module docstring). Raises `RestoreError` when a file does not parse."""
    old = pristine_src.encode("utf-8")
    new = patched_src.encode("utf-8")
    try:
        old_root = parse(old).root_node
        new_root = parse(new).root_node
    except RustSourceError as exc:
        raise RestoreError(f"a file {exc}; its doctests cannot be restored") from exc
    old_items, old_holders = _walk_items(old, old_root)
    new_items, new_holders = _walk_items(new, new_root)
    by_key = {i.key: i for i in new_items}
    edits: list[tuple[int, int, bytes]] = []
    for item in old_items:
        if item.key == "<file>" or item.key not in by_key:
            continue
        target = by_key[item.key]
        old_docs = _outer_docs(old, item.node)
        new_docs = _outer_docs(new, target.node)
        if not (_fenced(old, old_docs) or _fenced(new, new_docs)):
            continue
        if _text(old, old_docs) == _text(new, new_docs):
            continue
        at = _line_start(new, target.start)
        edits += _replace(old, old_docs, new, new_docs, at)
    for key, holder in old_holders.items():
        other = new_holders.get(key)
        if other is None:
            continue
        old_docs = _inner_docs(old, holder.body)
        new_docs = _inner_docs(new, other.body)
        if not (_fenced(old, old_docs) or _fenced(new, new_docs)):
            continue
        if _text(old, old_docs) == _text(new, new_docs):
            continue
        if new_docs:
            at = _line_start(new, new_docs[0].start_byte)
        else:
            first = next((c for c in other.body.named_children), None)
            at = _line_start(new, first.start_byte) if first is not None else other.insert_at
            if key == "" and first is None:
                at = 0
        edits += _replace(old, old_docs, new, new_docs, at)
    return _apply(new, edits).decode("utf-8") if edits else patched_src


def _apply(data: bytes, edits: list[tuple[int, int, bytes]]) -> bytes:
    """Non-overlapping removals and insertions; an insertion goes before a removal that starts
    where it is."""
    out = bytearray()
    pos = 0
    for start, end, text in sorted(edits, key=lambda e: (e[0], e[1] != e[0], e[1])):
        if start < pos:
            continue
        out += data[pos:start] + text
        pos = end
    out += data[pos:]
    return bytes(out)
