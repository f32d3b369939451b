"""Indexing sources with tree-sitter: the `index` stage's reader for the tree-sitter engine.

The reader of every language whose profile reads code with tree-sitter (JavaScript; and the
files of TypeScript, Go and Rust). It produces the same `Unit` records
as the libcst indexer: functions and methods with their spans, signature, doc comment,
complexity and body size. Grammars and parsing live in `index.treesitter_grammars`; the
definition locator, which the tree-sitter edits of `excise` share, in `index.treesitter_defs`.

Complexity is counted by a sweep over decision points, without recursion. Files that cannot be
used (syntax errors, minified, huge, binary, generated) raise `SourceSkipped` with a reason,
which `index_files` turns into a `SkippedFile`.

Which nodes are units, per language, is the language's syntax (`TreeSitterSyntax.classify`:
JavaScript's in `languages.javascript.syntax`, TypeScript's, Go's and Rust's in
`languages.grammars`).
"""

from __future__ import annotations

from collections.abc import Iterable
from pathlib import Path

from tree_sitter import Node, QueryCursor, Tree

from taskmint.index.python import SourceSkipped, read_source
from taskmint.index.treesitter_defs import Definition, definitions_in, signature_text
from taskmint.index.treesitter_grammars import Grammar, language_of, node_text, parse
from taskmint.records import Language, SkippedFile, Unit, stable_id

__all__ = ["MAX_LINE_CHARS", "check_text", "index_files", "index_source"]

MAX_LINE_CHARS = 2000


def _blank_comments(data: bytes, tree: Tree, grammar: Grammar) -> bytes:
    """`data` with every comment's bytes (but not its line breaks) replaced by spaces."""
    out = bytearray(data)
    for nodes in QueryCursor(grammar.comments).captures(tree.root_node).values():
        for node in nodes:
            chunk = out[node.start_byte : node.end_byte]
            out[node.start_byte : node.end_byte] = bytes(
                b if b in (0x0A, 0x0D) else 0x20 for b in chunk
            )
    return bytes(out)


def _first_statement(body: Node) -> Node | None:
    for child in body.named_children:
        if child.type in ("comment", "line_comment", "block_comment"):
            continue
        if child.type == "statement_list":  # Go wraps a block's statements
            return _first_statement(child)
        return child
    return None


def _complexities(units: list[Definition], tree: Tree, grammar: Grammar) -> list[int]:
    """1 + decision points in each unit's body, not counting those of nested units."""
    counts = [1] * len(units)
    order = sorted(
        range(len(units)), key=lambda i: (units[i].func.start_byte, -units[i].func.end_byte)
    )
    points = sorted(
        node.start_byte
        for nodes in QueryCursor(grammar.decisions).captures(tree.root_node).values()
        for node in nodes
    )
    stack: list[int] = []
    i = 0
    for pos in points:
        while i < len(order) and units[order[i]].func.start_byte <= pos:
            start = units[order[i]].func.start_byte
            while stack and units[stack[-1]].func.end_byte <= start:
                stack.pop()
            stack.append(order[i])
            i += 1
        while stack and units[stack[-1]].func.end_byte <= pos:
            stack.pop()
        if stack:
            body = units[stack[-1]].body
            if body is not None and body.start_byte <= pos < body.end_byte:
                counts[stack[-1]] += 1
    return counts


def index_source(
    language: Language, path: str, data: bytes, *, snapshot_id: str = ""
) -> list[Unit]:
    """Every function and method of one file (raises `SourceSkipped` for unusable files)."""
    check_text(data)
    tree, grammar = parse(language, data, path)
    defs = [d for d in definitions_in(language, data, tree, grammar) if d.kind != "class"]
    if not defs:
        return []
    blank = _blank_comments(data, tree, grammar)
    complexities = _complexities(defs, tree, grammar)
    units: list[Unit] = []
    for d, complexity in zip(defs, complexities, strict=True):
        outer = d.statement or d.node
        if d.body is None:
            continue
        first = _first_statement(d.body) if d.body.type in _BLOCKS else d.body
        body_start = (first or d.body).start_point.row + 1
        if first is None:
            body_start = d.body.end_point.row + 1
        inner = (
            blank[d.body.start_byte + 1 : d.body.end_byte - 1]
            if d.body.type in _BLOCKS
            else blank[d.body.start_byte : d.body.end_byte]
        )
        body_lines = sum(1 for line in inner.split(b"\n") if line.strip())
        units.append(
            Unit(
                unit_id=stable_id(snapshot_id, path, d.qualname),
                file=path,
                qualname=d.qualname,
                kind=d.kind,  # type: ignore[arg-type]
                start_line=_line_of(data, d.lead_start),
                end_line=max(outer.end_point.row, d.func.end_point.row) + 1,
                body_start_line=body_start,
                signature=signature_text(data, d),
                docstring=d.docstring,
                complexity=complexity,
                body_lines=body_lines,
                is_async=_is_async(d.func),
                decorators=d.attributes + _decorators(data, d),
                language=language,
            )
        )
    return units


_BLOCKS = ("statement_block", "block")


def _line_of(data: bytes, offset: int) -> int:
    return data.count(b"\n", 0, offset) + 1


def _is_async(func: Node) -> bool:
    return any(c.type == "async" for c in func.children) or any(
        c.type == "function_modifiers" and b"async" in (c.text or b"") for c in func.children
    )


def _decorators(data: bytes, d: Definition) -> tuple[str, ...]:
    return tuple(
        node_text(data, c).lstrip("@").strip() for c in d.node.children if c.type == "decorator"
    )


def check_text(data: bytes) -> None:
    """Refuse minified sources (a line over `MAX_LINE_CHARS` characters) and invalid UTF-8."""
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError as exc:
        raise SourceSkipped(f"not valid UTF-8 (byte {exc.start})") from exc
    lengths = [len(line) for line in text.split("\n")]
    if max(lengths) > MAX_LINE_CHARS:
        line = next(i for i, n in enumerate(lengths, 1) if n > MAX_LINE_CHARS)
        raise SourceSkipped(
            f"minified or generated (line {line} is over {MAX_LINE_CHARS} characters)"
        )


def index_files(
    language: Language, root: str | Path, files: Iterable[str], *, snapshot_id: str = ""
) -> tuple[list[Unit], list[SkippedFile]]:
    """Index the files of `language` among `files` (paths relative to `root`).

    Files of other languages, TypeScript declaration files and Go `_test.go` files are passed
    over silently; files that cannot be used are returned as `SkippedFile`s with the reason
    (parse errors, over 1 MB, a line over 2,000 characters, NUL bytes, a generated-code marker
    in the header). Never raises for a bad file.
    """
    base = Path(root)
    units: list[Unit] = []
    skipped: list[SkippedFile] = []
    for rel in files:
        if language_of(rel) != language:
            continue
        try:
            data = read_source(base / rel)
            units.extend(index_source(language, rel, data, snapshot_id=snapshot_id))
        except SourceSkipped as exc:
            skipped.append(SkippedFile(path=rel, reason=str(exc)))
        except (RecursionError, MemoryError) as exc:  # defensive: never kill the batch
            skipped.append(SkippedFile(path=rel, reason=f"cannot index ({type(exc).__name__})"))
    return units, skipped
