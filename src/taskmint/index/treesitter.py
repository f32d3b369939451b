"""Indexing JavaScript, TypeScript, Go and Rust sources with tree-sitter.

The `index` stage's reader for every language but Python. It produces the same `Unit` records
as the libcst indexer: functions and methods with their spans, signature, doc comment,
complexity and body size. `definitions` is the shared locator that the tree-sitter edits in
`taskmint.excise.treesitter_edits` also use, so an edit finds exactly the unit the index named.

Nothing here recurses in Python: definitions are found with one tree-sitter query per file and
nested by a sweep over their byte ranges, so pathological nesting (10,000 brackets) cannot blow
the stack. Files that cannot be used (syntax errors, minified, huge, binary, generated) raise
`SourceSkipped` with a reason, which `index_files` turns into a `SkippedFile`.

Units per language:
- javascript/typescript: function and generator declarations, class methods (getters, setters,
  static and private ones; object-literal methods are left out), arrow functions and function
  expressions assigned to a module-level const/let/var, and `export default function`.
  Qualnames nest through classes and functions ("Class.method", "outer.inner"); a TypeScript
  namespace adds its name. Overload signatures and abstract methods have no body and no unit.
- go: functions, and methods as "Receiver.Method" (pointer and type parameters dropped).
- rust: functions and methods as "Type.method" for inherent and trait impls alike, trait default
  methods as "Trait.method", and module nesting ("tests.helper"). Attributes (`#[inline]`)
  count like Python decorators: they are in `decorators` and in the span.
"""

from __future__ import annotations

import functools
from collections.abc import Iterable
from dataclasses import dataclass
from pathlib import Path

from tree_sitter import Language, Node, Parser, Query, QueryCursor, Tree

from taskmint.index.python import SourceSkipped, read_source
from taskmint.records import SkippedFile, Unit, stable_id

__all__ = [
    "EXTENSIONS",
    "LANGUAGES",
    "MAX_LINE_CHARS",
    "MAX_NESTED_DEFINITIONS",
    "Definition",
    "check_text",
    "definitions",
    "index_files",
    "index_source",
    "language_of",
]

LANGUAGES = ("javascript", "typescript", "go", "rust")
EXTENSIONS: dict[str, tuple[str, ...]] = {
    "javascript": (".js", ".mjs", ".cjs", ".jsx"),
    "typescript": (".ts", ".tsx", ".mts", ".cts"),
    "go": (".go",),
    "rust": (".rs",),
}
# Files that match an extension but hold no implementation to excise.
_EXCLUDED_SUFFIXES = (".d.ts", ".d.mts", ".d.cts", "_test.go")

MAX_LINE_CHARS = 2000
# Deeper nesting of named definitions than this is generated code; the qualnames alone would
# grow quadratically.
MAX_NESTED_DEFINITIONS = 100

_JS_DEFS = """
[(function_declaration) (generator_function_declaration) (method_definition)
 (class_declaration) (class)] @def
(variable_declarator name: (identifier)
  value: [(arrow_function) (function_expression) (generator_function)]) @decl
(export_statement value: [(function_expression) (arrow_function) (generator_function)] @default)
"""
_TS_DEFS = (
    _JS_DEFS
    + """
(abstract_class_declaration) @def
[(internal_module) (module)] @scope
"""
)
_JS_DECISIONS = """
[(if_statement) (for_statement) (for_in_statement) (while_statement) (do_statement)
 (switch_case) (catch_clause) (ternary_expression)] @d
(binary_expression operator: ["&&" "||"]) @d
"""


@dataclass(frozen=True, slots=True)
class _Grammar:
    """What the indexer needs to know about one tree-sitter grammar."""

    language: Language
    definitions: Query
    decisions: Query
    comments: Query


def _load(name: str) -> Language:
    if name == "javascript":
        import tree_sitter_javascript as grammar

        return Language(grammar.language())
    if name in ("typescript", "tsx"):
        import tree_sitter_typescript as ts

        return Language(ts.language_tsx() if name == "tsx" else ts.language_typescript())
    if name == "go":
        import tree_sitter_go as go

        return Language(go.language())
    import tree_sitter_rust as rust

    return Language(rust.language())


@functools.cache
def _grammar(name: str) -> _Grammar:
    lang = _load(name)
    if name == "go":
        defs = "[(function_declaration) (method_declaration)] @def"
        decisions = """
        [(if_statement) (for_statement) (expression_case) (type_case) (communication_case)] @d
        (binary_expression operator: ["&&" "||"]) @d
        """
        comments = "(comment) @c"
    elif name == "rust":
        defs = "(function_item) @def [(impl_item) (trait_item) (mod_item)] @scope"
        decisions = """
        [(if_expression) (while_expression) (for_expression) (match_arm)] @d
        (binary_expression operator: ["&&" "||"]) @d
        """
        comments = "[(line_comment) (block_comment)] @c"
    else:
        defs = _JS_DEFS if name == "javascript" else _TS_DEFS
        decisions = _JS_DECISIONS
        comments = "(comment) @c"
    return _Grammar(
        language=lang,
        definitions=Query(lang, defs),
        decisions=Query(lang, decisions),
        comments=Query(lang, comments),
    )


def _grammar_name(language: str, path: str) -> str:
    if language not in LANGUAGES:
        raise ValueError(f"tree-sitter indexing supports {', '.join(LANGUAGES)}, not {language!r}")
    if language == "typescript" and path.endswith(".tsx"):
        return "tsx"
    return language


def language_of(path: str) -> str | None:
    """The tree-sitter language a file belongs to by its name, or None."""
    if path.endswith(_EXCLUDED_SUFFIXES):
        return None
    for language, exts in EXTENSIONS.items():
        if path.endswith(exts):
            return language
    return None


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


def parse(language: str, data: bytes, path: str = "") -> tuple[Tree, _Grammar]:
    """Parse `data` with the grammar for `language` (TSX for .tsx paths).

    Raises `SourceSkipped` when the tree has syntax errors, naming the first one's line.
    """
    grammar = _grammar(_grammar_name(language, path))
    tree = Parser(grammar.language).parse(data)
    if tree.root_node.has_error:
        raise SourceSkipped(f"does not parse: syntax error at line {_first_error_line(tree)}")
    return tree, grammar


def _first_error_line(tree: Tree) -> int:
    node = tree.root_node
    while True:  # descend iteratively: the tree may be 10,000 levels deep
        if node.is_error or node.is_missing:
            return node.start_point.row + 1
        nxt = next((c for c in node.children if c.has_error or c.is_missing), None)
        if nxt is None:
            return node.start_point.row + 1
        node = nxt


def _text(data: bytes, node: Node) -> str:
    return data[node.start_byte : node.end_byte].decode("utf-8", "replace")


def _field_text(data: bytes, node: Node, field: str) -> str | None:
    child = node.child_by_field_name(field)
    return None if child is None else " ".join(_text(data, child).split())


def _type_name(data: bytes, node: Node | None) -> str:
    """The bare type name of a Go receiver or Rust impl type (`*Stack[T]` -> `Stack`)."""
    while node is not None:
        if node.type in ("type_identifier", "identifier", "primitive_type"):
            return _text(data, node)
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
            return " ".join(_text(data, node).split())
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


def _is_doc(language: str, text: bytes) -> bool:
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
    language: str, data: bytes, anchor: Node
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
        attrs.insert(0, _text(data, prev).removeprefix("@").strip())
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


def definitions(language: str, data: bytes, path: str = "") -> list[Definition]:
    """Every function, method and class of one file, in source order, with unique qualnames.

    Raises `SourceSkipped` for a file that does not parse or nests definitions absurdly deep.
    """
    tree, grammar = parse(language, data, path)
    return _definitions(language, data, tree, grammar)


def _definitions(language: str, data: bytes, tree: Tree, grammar: _Grammar) -> list[Definition]:
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
    language: str, data: bytes, node: Node, role: str, stack: list[_Frame]
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


def _blank_comments(data: bytes, tree: Tree, grammar: _Grammar) -> bytes:
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


def _complexities(units: list[Definition], tree: Tree, grammar: _Grammar) -> list[int]:
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


def index_source(language: str, path: str, data: bytes, *, snapshot_id: str = "") -> list[Unit]:
    """Every function and method of one file (raises `SourceSkipped` for unusable files)."""
    check_text(data)
    tree, grammar = parse(language, data, path)
    defs = [d for d in _definitions(language, data, tree, grammar) if d.kind != "class"]
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
        _text(data, c).lstrip("@").strip() for c in d.node.children if c.type == "decorator"
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
    language: str, root: str | Path, files: Iterable[str], *, snapshot_id: str = ""
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
