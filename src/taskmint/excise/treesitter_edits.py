"""Excision for tree-sitter languages: byte-range edits located with tree-sitter.

The `excise` stage's counterpart of the libcst strategies. Every edit replaces or deletes one
byte range of the file and keeps every other byte as it was: a UTF-8 byte-order mark, CRLF line
endings, tabs and a missing final newline all survive. Definitions are found by
`taskmint.index.treesitter_defs.definitions`, so a qualname from the index always names the
same code.

Strategies:
- `stub_body`: the body becomes a single statement that fails loudly (the language's
  `TreeSitterSyntax.stub`: JavaScript/TypeScript `throw new Error("not implemented");`, Go
  `panic("not implemented")`, Rust `todo!()`), on its own line one indentation level deeper
  than the definition (the body's own indentation, else the syntax's `indent`), the closing
  brace at the definition's indentation. Signature and doc comment stay.
- `remove_function`, `remove_method`, `remove_class`: the whole definition goes, with its doc
  comment, decorators/attributes, `export` keyword and one blank line that separated it.

`excise.treesitter_candidates` chooses targets and turns these edits into `Candidate` records.
"""

from __future__ import annotations

from taskmint.index.python import SourceSkipped
from taskmint.index.treesitter_defs import Definition, definitions
from taskmint.languages import syntax
from taskmint.records import Language, Strategy

__all__ = [
    "STRATEGIES",
    "edit_range",
    "remove_class",
    "remove_function",
    "remove_method",
    "stub_body",
]

_BOM = b"\xef\xbb\xbf"

STRATEGIES: tuple[Strategy, ...] = ("stub_body", "remove_function", "remove_method", "remove_class")


def _find(
    language: Language, data: bytes, qualname: str, kinds: tuple[str, ...], what: str, path: str
) -> Definition:
    try:
        found = definitions(language, data, path)
    except SourceSkipped as exc:
        raise LookupError(f"cannot look up {qualname!r}: {exc}") from exc
    for d in found:
        if d.qualname == qualname and d.kind in kinds:
            return d
    raise LookupError(f"no {what} {qualname!r} in this file")


def _line_start(data: bytes, offset: int) -> int:
    start = data.rfind(b"\n", 0, offset) + 1
    if start == 0 and data.startswith(_BOM):
        start = len(_BOM)
    return start


def _indent_at(data: bytes, offset: int) -> bytes:
    start = _line_start(data, offset)
    end = start
    while end < len(data) and data[end : end + 1] in (b" ", b"\t"):
        end += 1
    return data[start:end]


def _newline_of(data: bytes, offset: int) -> bytes:
    end = data.find(b"\n", offset)
    if end == -1:
        end = data.rfind(b"\n")  # no newline after it: the file's last line break decides
    return b"\r\n" if end > 0 and data[end - 1 : end] == b"\r" else b"\n"


def stub_body(language: Language, data: bytes, qualname: str, *, path: str = "") -> bytes:
    """`data` with the body of function or method `qualname` replaced by a failing stub.

    Raises `LookupError` if the file has no such function. `path` picks the TSX grammar for
    `.tsx` files. Every byte outside the body is unchanged.
    """
    return _apply(data, _stub_edit(language, data, qualname, path))


def _apply(data: bytes, edit: tuple[int, int, bytes]) -> bytes:
    start, end, replacement = edit
    return data[:start] + replacement + data[end:]


def _stub_edit(language: Language, data: bytes, qualname: str, path: str) -> tuple[int, int, bytes]:
    d = _find(language, data, qualname, ("function", "method"), "function or method", path)
    body = d.body
    if body is None:
        raise LookupError(f"{qualname!r} has no body to stub")
    own = d.statement or d.node
    indent = _indent_at(data, own.start_byte)
    lang = syntax(language)
    unit = lang.indent.encode()
    if b"\t" in indent:
        unit = b"\t"
    first = next(
        (c for c in body.named_children if "comment" not in c.type), None
    )  # the body's own indentation style wins when it shows one
    if first is not None and first.start_point.row > body.start_point.row:
        inner = _indent_at(data, first.start_byte)
        if inner.startswith(indent) and len(inner) > len(indent):
            unit = inner[len(indent) :]
    nl = _newline_of(data, body.start_byte)
    stub = lang.stub.encode()
    new = b"{" + nl + indent + unit + stub + nl + indent + b"}"
    return body.start_byte, body.end_byte, new


def _removal_range(data: bytes, d: Definition) -> tuple[int, int]:
    """The bytes a removal deletes: doc comment to end, whole lines when the definition has
    its lines to itself, plus one blank line that separated it from its neighbours."""
    statement = d.statement
    if statement is None:
        raise LookupError(
            f"{d.qualname!r} is declared together with other names; it cannot be removed alone"
        )
    start = d.doc.start_byte if d.doc is not None else d.lead_start
    end = statement.end_byte
    rest_end = data.find(b"\n", end)
    rest_end = len(data) if rest_end == -1 else rest_end
    if data[end:rest_end].strip(b" \t\r") == b";":  # a stray `;` after a class member
        end = end + data[end:rest_end].index(b";") + 1
    line_start = _line_start(data, start)
    if data[line_start:start].strip(b" \t") or data[end:rest_end].strip(b" \t\r"):
        return start, end  # shares a line with other code: remove only its own bytes
    start = line_start
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
            prev = _line_start(data, start)
            if prev > 0 and not data[prev:start].strip(b" \t\r"):
                start = prev - 1
                if start > 0 and data[start - 1 : start] == b"\r":
                    start -= 1
        return start, end
    prev_end = start - 1  # the "\n" ending the previous line
    if prev_end > 0:
        prev_start = _line_start(data, prev_end)
        if not data[prev_start:prev_end].strip(b" \t\r") and prev_start > 0:
            return prev_start, end  # no blank line after it: take the one before
    return start, end


def _removal(
    language: Language, data: bytes, qualname: str, strategy: str, path: str
) -> tuple[int, int, bytes]:
    kinds: tuple[str, ...]
    if strategy == "remove_class":
        kinds, what = ("class",), "class"
    elif strategy == "remove_method":
        kinds, what = ("method",), "method"
    else:
        kinds, what = syntax(language).removable_functions, "function"
    start, end = _removal_range(data, _find(language, data, qualname, kinds, what, path))
    return start, end, b""


def edit_range(
    strategy: str, language: Language, data: bytes, qualname: str, *, path: str = ""
) -> tuple[int, int, bytes]:
    """The edit a strategy makes, as (start byte, end byte, replacement bytes)."""
    if strategy == "stub_body":
        return _stub_edit(language, data, qualname, path)
    if strategy not in STRATEGIES:
        raise ValueError(f"unknown strategy {strategy!r}; choose from {', '.join(STRATEGIES)}")
    return _removal(language, data, qualname, strategy, path)


def remove_function(language: Language, data: bytes, qualname: str, *, path: str = "") -> bytes:
    """`data` without function `qualname` (its doc comment, `export`, attributes included).

    For `export function f` or `export const f = () => ...` the whole export statement goes.
    The unit kinds it takes are the syntax's `removable_functions` (Go methods count as
    functions: they are top-level declarations). Raises
    `LookupError` if there is no such function or it cannot be removed on its own.
    """
    return _apply(data, _removal(language, data, qualname, "remove_function", path))


def remove_method(language: Language, data: bytes, qualname: str, *, path: str = "") -> bytes:
    """`data` without method `qualname` ("Class.method"), with its doc comment and decorators.

    Raises `LookupError` if there is no such method.
    """
    return _apply(data, _removal(language, data, qualname, "remove_method", path))


def remove_class(language: Language, data: bytes, qualname: str, *, path: str = "") -> bytes:
    """`data` without class `qualname`: the declaration, its JSDoc and its `export`.

    Only languages with classes (`TreeSitterSyntax.classes`: JavaScript and TypeScript) have
    them; for Go and Rust this raises `LookupError` like any unknown name.
    """
    return _apply(data, _removal(language, data, qualname, "remove_class", path))
