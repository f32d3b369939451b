"""Byte-level edits a brace language's excision shares: a body stubbed on a line of its own,
and the range a removed definition takes (whole lines and one blank line around it).

`excise.treesitter_edits` (every tree-sitter language) and a profile's own excision
(`languages.rust.excise`) make the same edits; they live here, below both.
"""

from __future__ import annotations

from tree_sitter import Node

__all__ = ["indent_at", "line_start", "newline_of", "stub_block", "whole_lines"]

BOM = b"\xef\xbb\xbf"


def line_start(data: bytes, offset: int) -> int:
    """The first byte of the line holding `offset` (after a byte-order mark)."""
    start = data.rfind(b"\n", 0, offset) + 1
    if start == 0 and data.startswith(BOM):
        start = len(BOM)
    return start


def indent_at(data: bytes, offset: int) -> bytes:
    """The spaces and tabs that start the line holding `offset`."""
    start = line_start(data, offset)
    end = start
    while end < len(data) and data[end : end + 1] in (b" ", b"\t"):
        end += 1
    return data[start:end]


def newline_of(data: bytes, offset: int) -> bytes:
    """The line break (`\\r\\n` or `\\n`) of the line holding `offset`."""
    end = data.find(b"\n", offset)
    if end == -1:
        end = data.rfind(b"\n")  # no newline after it: the file's last line break decides
    return b"\r\n" if end > 0 and data[end - 1 : end] == b"\r" else b"\n"


def stub_block(
    data: bytes, definition: int, body: Node, stub: bytes, unit: bytes
) -> tuple[int, int, bytes]:
    """The edit replacing the block `body` with `stub` on a line of its own, one level deeper
    than the line holding byte `definition` (a tab, or `unit`, unless the body's own
    indentation shows its step), and the closing brace at that line's indentation."""
    indent = indent_at(data, definition)
    if b"\t" in indent:
        unit = b"\t"
    first = next(
        (c for c in body.named_children if "comment" not in c.type), None
    )  # the body's own indentation style wins when it shows one
    if first is not None and first.start_point.row > body.start_point.row:
        inner = indent_at(data, first.start_byte)
        if inner.startswith(indent) and len(inner) > len(indent):
            unit = inner[len(indent) :]
    nl = newline_of(data, body.start_byte)
    new = b"{" + nl + indent + unit + stub + nl + indent + b"}"
    return body.start_byte, body.end_byte, new


def whole_lines(data: bytes, start: int, end: int) -> tuple[int, int]:
    """The bytes removing [start, end) takes: only those when they share a line with other
    code, else their whole lines and one blank line that separated them from their
    neighbours (the one after, else the one before)."""
    rest_end = data.find(b"\n", end)
    rest_end = len(data) if rest_end == -1 else rest_end
    first = line_start(data, start)
    if data[first:start].strip(b" \t") or data[end:rest_end].strip(b" \t\r"):
        return start, end  # shares a line with other code: remove only its own bytes
    start = first
    end = min(rest_end + 1, len(data))
    next_end = data.find(b"\n", end)
    if next_end != -1 and not data[end:next_end].strip(b" \t\r"):
        return start, next_end + 1  # the blank line after it
    if end == len(data) and not data.endswith(b"\n"):
        # the last line of a file without a final newline: take the line break before it
        # (and a blank line before that) so the file still ends without one
        if start > 0 and data[start - 1 : start] == b"\n":
            start -= 1
            if start > 0 and data[start - 1 : start] == b"\r":
                start -= 1
            prev = line_start(data, start)
            if prev > 0 and not data[prev:start].strip(b" \t\r"):
                start = prev - 1
                if start > 0 and data[start - 1 : start] == b"\r":
                    start -= 1
        return start, end
    prev_end = start - 1  # the "\n" ending the previous line
    if prev_end > 0:
        prev_start = line_start(data, prev_end)
        if not data[prev_start:prev_end].strip(b" \t\r") and prev_start > 0:
            return prev_start, end  # no blank line after it: take the one before
    return start, end
