"""Parsing with the tree-sitter grammar of a file's language.

Which language a file is by its name (`language_of`; TypeScript declaration files and Go test
files hold no implementation to excise and have none), and `parse`, which refuses a tree with
syntax errors. The grammars and their queries come from the languages' syntaxes
(`taskmint.languages.syntax`: a profile's, or `languages.grammars` for a language with no
profile yet); each is compiled on first use.
"""

from __future__ import annotations

from tree_sitter import Parser, Tree

from taskmint.index.python import SourceSkipped
from taskmint.languages import Grammar, syntax, syntax_for_file
from taskmint.languages.treesitter import node_text
from taskmint.records import Language

__all__ = ["Grammar", "language_of", "node_text", "parse"]


def language_of(path: str) -> Language | None:
    """The tree-sitter language a file belongs to by its name, or None."""
    found = syntax_for_file(path)
    return None if found is None else found.name


def parse(language: str, data: bytes, path: str = "") -> tuple[Tree, Grammar]:
    """Parse `data` with the grammar for `language` (a variant's, such as TSX, when `path`
    names one).

    Raises `SourceSkipped` when the tree has syntax errors, naming the first one's line, and
    `ValueError` for a language with no tree-sitter syntax.
    """
    grammar = syntax(language).compiled(path)
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
