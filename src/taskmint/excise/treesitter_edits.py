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
from taskmint.languages.edits import stub_block, whole_lines
from taskmint.records import Language, Strategy

__all__ = [
    "STRATEGIES",
    "edit_range",
    "remove_class",
    "remove_function",
    "remove_method",
    "stub_body",
]

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
    lang = syntax(language)
    return stub_block(data, own.start_byte, body, lang.stub.encode(), lang.indent.encode())


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
    return whole_lines(data, start, end)


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
