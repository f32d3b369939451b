"""Locating the functions, methods and classes of a JavaScript, TypeScript, Go or Rust file.

`definitions` is the locator that the index (`index.treesitter`) and the tree-sitter edits of
`excise` share, so an edit finds exactly the unit the index named. Nothing here recurses in
Python: definitions are found with one tree-sitter query per file and nested by a sweep over
their byte ranges, so pathological nesting (10,000 brackets) cannot blow the stack.

Qualnames nest through classes, functions and scopes ("Class.method", "outer.inner", a
TypeScript namespace, a Rust module or impl); a repeated qualname gets "#2", "#3". Each
`Definition` carries its doc comment (JSDoc, Go and Rust line comments) and its decorators or
Rust attributes.
"""

from __future__ import annotations

from dataclasses import dataclass

from tree_sitter import Node, QueryCursor, Tree

from taskmint.index.python import SourceSkipped
from taskmint.index.treesitter_grammars import Grammar, node_text, parse
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


def _field_text(data: bytes, node: Node, field: str) -> str | None:
    child = node.child_by_field_name(field)
    return None if child is None else " ".join(node_text(data, child).split())


def _type_name(data: bytes, node: Node | None) -> str:
    """The bare type name of a Go receiver or Rust impl type (`*Stack[T]` -> `Stack`)."""
    while node is not None:
        if node.type in ("type_identifier", "identifier", "primitive_type"):
            return node_text(data, node)
        if node.type == "scoped_type_identifier":
            node = node.child_by_field_name("name")
        elif node.type in ("generic_type", "reference_type", "pointer_type"):
            inner = node.child_by_field_name("type")
            kids = node.named_children
            node = inner if inner is not None else (kids[-1] if kids else None)
        elif node.type == "parameter_list":
            decl = next((c for c in node.named_children if c.type == "parameter_declaration"), None)
            node = None if decl is None else decl.child_by_field_name("type")
        else:
            return " ".join(node_text(data, node).split())
    return "?"


def _is_module_level(node: Node) -> bool:
    decl = node.parent
    if decl is None or decl.type not in ("lexical_declaration", "variable_declaration"):
        return False
    up = decl.parent
    if up is not None and up.type == "export_statement":
        up = up.parent
    return up is not None and up.type == "program"


def _is_js_statement_alone(node: Node) -> bool:
    decl = node.parent
    return decl is not None and sum(c.type == "variable_declarator" for c in decl.children) == 1


def _outer_statement(node: Node) -> Node:
    parent = node.parent
    if parent is not None and parent.type == "export_statement":
        return parent
    return node


def _gap_ok(data: bytes, end: int, start: int) -> bool:
    """Only whitespace, at most one line break, between a comment and what it documents."""
    gap = data[end:start]
    return not gap.strip() and gap.count(b"\n") <= 1


def _is_doc(language: Language, text: bytes) -> bool:
    if text.startswith(b"/**") and not text.startswith((b"/***", b"/**/")):
        return True
    if language == "go":
        return text.startswith((b"//", b"/*"))
    if language == "rust":
        return text.startswith(b"///") and not text.startswith(b"////")
    return False


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
    language: Language, data: bytes, anchor: Node
) -> tuple[int, tuple[str, ...], Node | None, str | None]:
    """(first byte with attributes, attributes, first doc comment node, cleaned doc)."""
    lead = anchor.start_byte
    attrs: list[str] = []
    prev = anchor.prev_named_sibling
    # Rust attributes and TypeScript member decorators are siblings before the definition.
    while (
        prev is not None
        and prev.type in ("attribute_item", "decorator")
        and _gap_ok(data, prev.end_byte, lead)
    ):
        attrs.insert(0, node_text(data, prev).removeprefix("@").strip())
        lead = prev.start_byte
        prev = prev.prev_named_sibling
    docs: list[Node] = []
    start = lead
    comment_types = ("line_comment", "block_comment", "comment")
    while prev is not None and prev.type in comment_types:
        text = data[prev.start_byte : prev.end_byte]
        if not _is_doc(language, text) or not _gap_ok(data, prev.end_byte, start):
            break
        docs.insert(0, prev)
        start = prev.start_byte
        if language not in ("go", "rust") or text.startswith(b"/*"):
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
        name, kind, func, statement = _classify(language, data, node, role, stack)
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
        lead, attrs, doc, docstring = _leading(language, data, anchor)
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


def _classify(
    language: Language, data: bytes, node: Node, role: str, stack: list[_Frame]
) -> tuple[str | None, str, Node, Node | None]:
    """(name or None to ignore, kind, node with the body, statement removed with it)."""
    t = node.type
    if role == "scope":
        if t == "impl_item":
            return _type_name(data, node.child_by_field_name("type")), "scope", node, node
        return _field_text(data, node, "name") or "?", "scope", node, node
    if language == "go":
        if t == "method_declaration":
            recv = _type_name(data, node.child_by_field_name("receiver"))
            return f"{recv}.{_field_text(data, node, 'name')}", "method", node, node
        return _field_text(data, node, "name"), "function", node, node
    if language == "rust":
        kind = "function"
        if stack and stack[-1].node_type in ("impl_item", "trait_item"):
            kind = "method"
        return _field_text(data, node, "name"), kind, node, node
    # javascript / typescript
    if role == "decl":
        value = node.child_by_field_name("value")
        if value is None or not _is_module_level(node):
            return None, "", node, None
        decl = node.parent
        alone = decl is not None and _is_js_statement_alone(node)
        found = _outer_statement(decl) if decl is not None and alone else None
        return _field_text(data, node, "name"), "function", value, found
    if role == "default":
        return _field_text(data, node, "name") or "default", "function", node, node.parent
    if t in ("class_declaration", "abstract_class_declaration", "class"):
        name = _field_text(data, node, "name")
        statement: Node | None = _outer_statement(node)
        parent = node.parent
        if t == "class" and parent is not None and parent.type == "variable_declarator":
            name = name or _field_text(data, parent, "name")
            alone = _is_module_level(parent) and _is_js_statement_alone(parent)
            holder = parent.parent
            statement = _outer_statement(holder) if alone and holder is not None else None
        elif t == "class" and (parent is None or parent.type != "export_statement"):
            statement = None  # a class expression inside some other expression
        return name or "default", "class", node, statement
    if t == "method_definition":
        parent = node.parent
        if parent is None or parent.type != "class_body":
            return None, "", node, None  # object-literal methods are not units
        return _field_text(data, node, "name"), "method", node, node
    return _field_text(data, node, "name"), "function", node, _outer_statement(node)


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
