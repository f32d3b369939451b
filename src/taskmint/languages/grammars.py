"""The tree-sitter syntaxes of languages that have no profile yet: TypeScript, Go and Rust.

Their files are indexed and edited like JavaScript's (`index.treesitter`,
`excise.treesitter_edits`), and TypeScript files get mutants, but no seed of theirs can run
until a profile (detection, environment, runner) adopts the syntax: a profile's module then
holds it, as `languages.javascript` holds JavaScript's.

- typescript: JavaScript's units, plus abstract classes and namespaces (a scope in the
  qualname); overload signatures and abstract methods have no body and no unit. `.tsx` files
  use the TSX grammar; declaration files (`.d.ts`) hold no implementation.
- go: functions, and methods as "Receiver.Method" (pointer and type parameters dropped);
  `remove_function` takes methods too (they are top-level declarations). `_test.go` files are
  tests, never units.
- rust: functions and methods as "Type.method" for inherent and trait impls alike, trait
  default methods as "Trait.method", and module nesting ("tests.helper"). Attributes
  (`#[inline]`) count like Python decorators. A stubbed body is `todo!()`, which type-checks
  in any function whose return type is a concrete type.
"""

from __future__ import annotations

from collections.abc import Sequence

import tree_sitter_go
import tree_sitter_rust
import tree_sitter_typescript
from tree_sitter import Node

from taskmint.languages.javascript.syntax import DECISIONS as JS_DECISIONS
from taskmint.languages.javascript.syntax import DEFINITIONS as JS_DEFINITIONS
from taskmint.languages.javascript.syntax import MUTATION as JS_MUTATION
from taskmint.languages.javascript.syntax import classify as js_classify
from taskmint.languages.treesitter import (
    Classification,
    TreeSitterSyntax,
    field_text,
    jsdoc,
    type_name,
)

__all__ = ["GO", "RUST", "TYPESCRIPT"]

TYPESCRIPT = TreeSitterSyntax(
    name="typescript",
    extensions=(".ts", ".tsx", ".mts", ".cts"),
    excluded=(".d.ts", ".d.mts", ".d.cts"),
    grammar=tree_sitter_typescript.language_typescript,
    variants=((".tsx", tree_sitter_typescript.language_tsx),),
    definitions=JS_DEFINITIONS
    + """
(abstract_class_declaration) @def
[(internal_module) (module)] @scope
""",
    decisions=JS_DECISIONS,
    comments="(comment) @c",
    classify=js_classify,
    doc_comment=jsdoc,
    attributes=("decorator",),
    stub='throw new Error("not implemented");',
    indent="  ",
    classes=True,
    mutation=JS_MUTATION,
)


def _go_classify(data: bytes, node: Node, role: str, enclosing: Sequence[str]) -> Classification:
    if node.type == "method_declaration":
        recv = type_name(data, node.child_by_field_name("receiver"))
        return f"{recv}.{field_text(data, node, 'name')}", "method", node, node
    return field_text(data, node, "name"), "function", node, node


def _go_doc(text: bytes) -> bool:
    return jsdoc(text) or text.startswith((b"//", b"/*"))


GO = TreeSitterSyntax(
    name="go",
    extensions=(".go",),
    excluded=("_test.go",),
    grammar=tree_sitter_go.language,
    definitions="[(function_declaration) (method_declaration)] @def",
    decisions="""
    [(if_statement) (for_statement) (expression_case) (type_case) (communication_case)] @d
    (binary_expression operator: ["&&" "||"]) @d
    """,
    comments="(comment) @c",
    classify=_go_classify,
    doc_comment=_go_doc,
    stacked_docs=True,
    stub='panic("not implemented")',
    indent="\t",
    removable_functions=("function", "method"),
)


def _rust_classify(data: bytes, node: Node, role: str, enclosing: Sequence[str]) -> Classification:
    if role == "scope":
        if node.type == "impl_item":
            return type_name(data, node.child_by_field_name("type")), "scope", node, node
        return field_text(data, node, "name") or "?", "scope", node, node
    kind = "method" if enclosing and enclosing[-1] in ("impl_item", "trait_item") else "function"
    return field_text(data, node, "name"), kind, node, node


def _rust_doc(text: bytes) -> bool:
    return jsdoc(text) or (text.startswith(b"///") and not text.startswith(b"////"))


RUST = TreeSitterSyntax(
    name="rust",
    extensions=(".rs",),
    grammar=tree_sitter_rust.language,
    definitions="(function_item) @def [(impl_item) (trait_item) (mod_item)] @scope",
    decisions="""
    [(if_expression) (while_expression) (for_expression) (match_arm)] @d
    (binary_expression operator: ["&&" "||"]) @d
    """,
    comments="[(line_comment) (block_comment)] @c",
    classify=_rust_classify,
    doc_comment=_rust_doc,
    stacked_docs=True,
    attributes=("attribute_item",),
    stub="todo!()",
    indent="    ",
)
