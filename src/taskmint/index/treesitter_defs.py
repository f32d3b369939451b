"""Locating the functions, methods and classes of a file of a tree-sitter language.

`definitions` is the locator that the index (`index.treesitter`) and the tree-sitter edits of
`excise` share, so an edit finds exactly the unit the index named. Nothing here recurses in
Python: definitions are found with one tree-sitter query per file and nested by a sweep over
their byte ranges, so pathological nesting (10,000 brackets) cannot blow the stack.

Which captures are units, and of which kind, is the language's (`TreeSitterSyntax.classify`,
from its profile or `languages.grammars`), as are its doc comments and attributes. Qualnames
nest through classes, functions and scopes ("Class.method", "outer.inner", a TypeScript
namespace, a Rust module or impl); a repeated qualname gets "#2", "#3". Each `Definition`
carries its doc comment and its decorators or attributes.
"""

from __future__ import annotations

from dataclasses import dataclass

from tree_sitter import Node, QueryCursor, Tree

from taskmint.index.python import SourceSkipped
from taskmint.index.treesitter_grammars import Grammar, node_text, parse
from taskmint.languages import TreeSitterSyntax, syntax
from taskmint.records import Language

__all__ = [
    "MAX_NESTED_DEFINITIONS",
    "Definition",
    "definitions",
    "definitions_in",
    "signature_text",
]

# Deeper nesting of named definitions than this is generated code; the qualnames alone would
# grow quadratically.
MAX_NESTED_DEFINITIONS = 100


@dataclass(frozen=True, slots=True)
class Definition:
    """A function, method or class found in one parsed file (live tree nodes: not a record).

    `node` is the definition itself (for `const f = () => {}` the declarator), `func` the node
    with the parameters and body, `statement` the outermost node a removal deletes (the
    `export` statement, the `const` declaration), `lead_start` the first byte of the definition
    including decorators and Rust attributes, `doc` the first doc-comment node before it.
    """

    qualname: str
    name: str
    kind: str  # "function" | "method" | "class"
    node: Node
    func: Node
    statement: Node | None  # None: declared together with other names, cannot be removed alone
    body: Node | None
    doc: Node | None
    docstring: str | None
    lead_start: int
    attributes: tuple[str, ...]


@dataclass(slots=True)
class _Frame:
    end: int
    name: str
    role: str  # "unit", "class", "scope"
    node_type: str


def _gap_ok(data: bytes, end: int, start: int) -> bool:
    """Only whitespace, at most one line break, between a comment and what it documents."""
    gap = data[end:start]
    return not gap.strip() and gap.count(b"\n") <= 1


def _clean_doc(texts: list[bytes]) -> str | None:
    lines: list[str] = []
    for raw in texts:
        text = raw.decode("utf-8", "replace").strip()
        if text.startswith("/*"):
            text = text[3:] if text.startswith("/**") else text[2:]
            text = text.removesuffix("*/")
            for line in text.splitlines():
                line = line.strip()
                if line.startswith("*"):
                    line = line[1:]
                lines.append(line[1:] if line.startswith(" ") else line)
        else:
            for line in text.splitlines():
                line = line.strip()
                line = line[3:] if line.startswith("///") else line[2:]
                lines.append(line[1:] if line.startswith(" ") else line)
    cleaned = "\n".join(line.rstrip() for line in lines).strip("\n")
    return cleaned or None


def _leading(
    syntax: TreeSitterSyntax, data: bytes, anchor: Node
) -> tuple[int, tuple[str, ...], Node | None, str | None]:
    """(first byte with attributes, attributes, first doc comment node, cleaned doc)."""
    lead = anchor.start_byte
    attrs: list[str] = []
    prev = anchor.prev_named_sibling
    # Rust attributes and TypeScript member decorators are siblings before the definition.
    while (
        prev is not None and prev.type in syntax.attributes and _gap_ok(data, prev.end_byte, lead)
    ):
        attrs.insert(0, node_text(data, prev).removeprefix("@").strip())
        lead = prev.start_byte
        prev = prev.prev_named_sibling
    docs: list[Node] = []
    start = lead
    comment_types = ("line_comment", "block_comment", "comment")
    while prev is not None and prev.type in comment_types:
        text = data[prev.start_byte : prev.end_byte]
        if not syntax.doc_comment(text) or not _gap_ok(data, prev.end_byte, start):
            break
        docs.insert(0, prev)
        start = prev.start_byte
        if not syntax.stacked_docs or text.startswith(b"/*"):
            break  # one JSDoc block; Go and Rust stack line comments
        prev = prev.prev_named_sibling
    if not docs:
        return lead, tuple(attrs), None, None
    cleaned = _clean_doc([data[d.start_byte : d.end_byte] for d in docs])
    return lead, tuple(attrs), docs[0], cleaned


def definitions(language: Language, data: bytes, path: str = "") -> list[Definition]:
    """Every function, method and class of one file, in source order, with unique qualnames.

    Raises `SourceSkipped` for a file that does not parse or nests definitions absurdly deep.
    """
    tree, grammar = parse(language, data, path)
    return definitions_in(language, data, tree, grammar)


def definitions_in(
    language: Language, data: bytes, tree: Tree, grammar: Grammar
) -> list[Definition]:
    """`definitions` of a file already parsed (`tree`, with its `grammar`)."""
    lang = syntax(language)
    captured = QueryCursor(grammar.definitions).captures(tree.root_node)
    items = sorted(
        ((node, role) for role, nodes in captured.items() for node in nodes),
        key=lambda item: (item[0].start_byte, -item[0].end_byte),
    )
    stack: list[_Frame] = []
    seen: dict[tuple[bool, str], int] = {}
    found: list[Definition] = []
    for node, role in items:
        while stack and stack[-1].end <= node.start_byte:
            stack.pop()
        name, kind, func, statement = lang.classify(data, node, role, [f.node_type for f in stack])
        if name is None:
            continue
        if len(stack) >= MAX_NESTED_DEFINITIONS:
            raise SourceSkipped(
                f"too deeply nested (over {MAX_NESTED_DEFINITIONS} nested definitions)"
            )
        frame_role = "scope" if kind == "scope" else ("class" if kind == "class" else "unit")
        stack.append(_Frame(end=node.end_byte, name=name, role=frame_role, node_type=node.type))
        if kind == "scope":
            continue
        qual = ".".join(f.name for f in stack)
        key = (kind == "class", qual)
        n = seen.get(key, 0) + 1
        seen[key] = n
        if n > 1:
            qual = f"{qual}#{n}"
        anchor = statement if statement is not None else node
        lead, attrs, doc, docstring = _leading(lang, data, anchor)
        body = func.child_by_field_name("body")
        found.append(
            Definition(
                qualname=qual,
                name=name,
                kind=kind,
                node=node,
                func=func,
                statement=statement,
                body=body,
                doc=doc,
                docstring=docstring,
                lead_start=lead,
                attributes=attrs,
            )
        )
    return found


def signature_text(data: bytes, definition: Definition) -> str:
    """The text from the definition's start (after decorators) to its body, normalized.

    For JavaScript it includes `export` and the `const f =` of an arrow function, which is how
    the definition must be written back.
    """
    holder = definition.statement or definition.node
    start = holder.start_byte
    for parent in (definition.statement, definition.node):
        for child in parent.children if parent is not None else ():
            if child.type == "decorator":
                start = max(start, child.end_byte)
    end = definition.body.start_byte if definition.body is not None else definition.func.end_byte
    return " ".join(data[start:end].decode("utf-8", "replace").split())
