"""The tree-sitter grammars of JavaScript, TypeScript, Go and Rust, and parsing with them.

Which language a file is by its name (`language_of`; TypeScript declaration files and Go test
files hold no implementation to excise and have none), the compiled queries of each grammar
(definitions, decision points, comments), and `parse`, which refuses a tree with syntax errors.
One grammar package per language; each grammar is compiled on first use.
"""

from __future__ import annotations

import functools
from dataclasses import dataclass

import tree_sitter_go
import tree_sitter_javascript
import tree_sitter_rust
import tree_sitter_typescript
from tree_sitter import Language as TSLanguage
from tree_sitter import Node, Parser, Query, Tree

from taskmint.index.python import SourceSkipped
from taskmint.records import Language

__all__ = ["EXTENSIONS", "LANGUAGES", "Grammar", "language_of", "node_text", "parse"]

LANGUAGES: tuple[Language, ...] = ("javascript", "typescript", "go", "rust")
EXTENSIONS: dict[Language, tuple[str, ...]] = {
    "javascript": (".js", ".mjs", ".cjs", ".jsx"),
    "typescript": (".ts", ".tsx", ".mts", ".cts"),
    "go": (".go",),
    "rust": (".rs",),
}
# Files that match an extension but hold no implementation to excise.
_EXCLUDED_SUFFIXES = (".d.ts", ".d.mts", ".d.cts", "_test.go")

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
class Grammar:
    """What the indexer needs to know about one tree-sitter grammar."""

    language: TSLanguage
    definitions: Query
    decisions: Query
    comments: Query


def _load(name: str) -> TSLanguage:
    if name == "javascript":
        return TSLanguage(tree_sitter_javascript.language())
    if name == "tsx":
        return TSLanguage(tree_sitter_typescript.language_tsx())
    if name == "typescript":
        return TSLanguage(tree_sitter_typescript.language_typescript())
    if name == "go":
        return TSLanguage(tree_sitter_go.language())
    return TSLanguage(tree_sitter_rust.language())


@functools.cache
def _grammar(name: str) -> Grammar:
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
    return Grammar(
        language=lang,
        definitions=Query(lang, defs),
        decisions=Query(lang, decisions),
        comments=Query(lang, comments),
    )


def _grammar_name(language: Language, path: str) -> str:
    if language not in LANGUAGES:
        raise ValueError(f"tree-sitter indexing supports {', '.join(LANGUAGES)}, not {language!r}")
    if language == "typescript" and path.endswith(".tsx"):
        return "tsx"
    return language


def language_of(path: str) -> Language | None:
    """The tree-sitter language a file belongs to by its name, or None."""
    if path.endswith(_EXCLUDED_SUFFIXES):
        return None
    for language, exts in EXTENSIONS.items():
        if path.endswith(exts):
            return language
    return None


def parse(language: Language, data: bytes, path: str = "") -> tuple[Tree, Grammar]:
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


def node_text(data: bytes, node: Node) -> str:
    """The source text of `node`."""
    return data[node.start_byte : node.end_byte].decode("utf-8", "replace")
