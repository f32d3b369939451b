"""What the tree-sitter machinery needs to know about one language: its `TreeSitterSyntax`.

The `index`, `excise` and `strength` stages read and edit JavaScript (and every other
tree-sitter language) with one set of functions (`index.treesitter_defs`,
`excise.treesitter_edits`, `strength.mutants`); everything in them that differs between
languages comes from here: the grammar, the queries that find definitions, decision points
and comments, how a captured node becomes a unit (`classify`), what a doc comment is, the
statement a stubbed body holds, the indentation a stub gets when the body shows none, which
units `remove_function` deletes, whether the language has classes, and the node kinds the
mutation operators rewrite (`MutationSyntax`).

A profile holds its syntax (`LanguageProfile.syntax`); the grammars of languages that have no
profile yet (TypeScript, Go, Rust) are in `languages.grammars`. `syntax(name)` and
`syntax_for_file(path)` look them all up.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass, field

from tree_sitter import Language as TSLanguage
from tree_sitter import Node, Query

from taskmint.records import Language

__all__ = [
    "Classification",
    "Grammar",
    "MutationSyntax",
    "TreeSitterSyntax",
    "field_text",
    "jsdoc",
    "node_text",
    "type_name",
]

# (name, or None to ignore the capture; kind: "function", "method", "class" or "scope"; the
# node with the parameters and body; the statement a removal deletes, None if it cannot go alone)
Classification = tuple[str | None, str, Node, Node | None]
# classify(data, node, role, enclosing): `role` is the capture's name in the definitions query
# ("def", "decl", "default", "scope"), `enclosing` the node types of the definitions around it,
# outermost first.
Classify = Callable[[bytes, Node, str, Sequence[str]], Classification]


@dataclass(frozen=True, slots=True)
class Grammar:
    """A syntax's grammar with its compiled queries (what the indexer runs)."""

    language: TSLanguage
    definitions: Query
    decisions: Query
    comments: Query


@dataclass(frozen=True, slots=True, kw_only=True)
class MutationSyntax:
    """The node kinds and texts the mutation operators of `strength.mutants` rewrite.

    The operators are the same for every tree-sitter language (see `strength.mutants`); the
    node kinds that carry them and the texts they write are the language's.
    """

    functions: frozenset[str]  # function nodes: only code inside their bodies is mutated
    body: str  # the node kind of a function body that `early_return` can start
    blocks: frozenset[str]  # nodes whose children are statements
    statements: frozenset[str]  # statements `drop` replaces (unless a plain assignment)
    assignment: str  # an expression statement holding one is never dropped
    comment: str = "comment"
    drop: bytes  # what a dropped statement becomes
    early_return: bytes  # put before a body's first statement
    binary: str = "binary_expression"
    unary: str = "unary_expression"
    flip: dict[str, str] = field(default_factory=dict)  # comparison operator -> its negation
    and_or: tuple[str, str] = ("&&", "||")
    negation: bytes = b"!"
    number: str = "number"
    not_inside: str = "subscript_expression"  # numbers here are left alone (indices)
    booleans: dict[str, bytes] = field(default_factory=dict)  # node kind -> the other value
    call: str = "call_expression"
    arguments: str = "arguments"
    spread: str = "spread_element"
    # callees symmetric in their first two arguments (`Math.max`): `swap_args` leaves them be
    symmetric: frozenset[str] = frozenset()
    branch: str = "if_statement"
    never: bytes  # a condition that is always false
    empty_block: bytes  # an emptied `else` body


@dataclass(frozen=True, slots=True, kw_only=True, eq=False)
class TreeSitterSyntax:
    """One language as tree-sitter reads it (see the module docstring)."""

    name: Language
    extensions: tuple[str, ...]
    # suffixes of files that match an extension but hold no implementation (`.d.ts`, `_test.go`)
    excluded: tuple[str, ...] = ()
    grammar: Callable[[], object]  # the grammar package's `language()` capsule
    # (path suffix, capsule): another grammar for some files (TSX for `.tsx`)
    variants: tuple[tuple[str, Callable[[], object]], ...] = ()
    definitions: str  # query: captures @def, @decl, @default, @scope
    decisions: str  # query: decision points, for complexity
    comments: str  # query: every comment
    classify: Classify
    doc_comment: Callable[[bytes], bool]  # whether a comment's text documents what follows
    stacked_docs: bool = False  # line doc comments in a row form one doc (Go, Rust)
    attributes: tuple[str, ...] = ()  # sibling nodes before a definition that belong to it
    stub: str  # the statement a stubbed body holds
    indent: str  # one indentation level, when the code shows none
    removable_functions: tuple[str, ...] = ("function",)  # unit kinds `remove_function` takes
    classes: bool = False  # whether `remove_class` applies
    mutation: MutationSyntax | None = None  # None: no mutants (the strength gate skips it)
    _compiled: dict[str, Grammar] = field(default_factory=dict, repr=False)

    def owns(self, path: str) -> bool:
        """Whether `path` is a source file of this syntax with code to excise."""
        return path.endswith(self.extensions) and not path.endswith(self.excluded)

    def compiled(self, path: str = "") -> Grammar:
        """The grammar for `path` (a variant's when its suffix matches), compiled on first use."""
        key, capsule = "", self.grammar
        for suffix, other in self.variants:
            if path.endswith(suffix):
                key, capsule = suffix, other
                break
        found = self._compiled.get(key)
        if found is None:
            lang = TSLanguage(capsule())
            found = Grammar(
                language=lang,
                definitions=Query(lang, self.definitions),
                decisions=Query(lang, self.decisions),
                comments=Query(lang, self.comments),
            )
            self._compiled[key] = found
        return found


# -- helpers the classify functions share ---------------------------------------------------


def node_text(data: bytes, node: Node) -> str:
    """The source text of `node`."""
    return data[node.start_byte : node.end_byte].decode("utf-8", "replace")


def field_text(data: bytes, node: Node, name: str) -> str | None:
    """The text of `node`'s field `name`, whitespace normalized (None when it has none)."""
    child = node.child_by_field_name(name)
    return None if child is None else " ".join(node_text(data, child).split())


def type_name(data: bytes, node: Node | None) -> str:
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


def jsdoc(text: bytes) -> bool:
    """A `/** ... */` block (not `/***` or the empty `/**/`)."""
    return text.startswith(b"/**") and not text.startswith((b"/***", b"/**/"))
