"""JavaScript as tree-sitter reads it: `JAVASCRIPT`, the syntax of the JavaScript profile.

Units: function and generator declarations, class methods (getters, setters, static and
private ones; object-literal methods are left out), arrow functions and function expressions
assigned to a module-level const/let/var, and `export default function`. Qualnames nest
through classes and functions ("Class.method", "outer.inner"). TypeScript
(`languages.grammars`) shares the classification and the mutation operators.
"""

from __future__ import annotations

from collections.abc import Sequence

import tree_sitter_javascript
from tree_sitter import Node

from taskmint.languages.treesitter import (
    Classification,
    MutationSyntax,
    TreeSitterSyntax,
    field_text,
    jsdoc,
)

__all__ = ["DECISIONS", "DEFINITIONS", "JAVASCRIPT", "MUTATION", "classify"]

DEFINITIONS = """
[(function_declaration) (generator_function_declaration) (method_definition)
 (class_declaration) (class)] @def
(variable_declarator name: (identifier)
  value: [(arrow_function) (function_expression) (generator_function)]) @decl
(export_statement value: [(function_expression) (arrow_function) (generator_function)] @default)
"""
DECISIONS = """
[(if_statement) (for_statement) (for_in_statement) (while_statement) (do_statement)
 (switch_case) (catch_clause) (ternary_expression)] @d
(binary_expression operator: ["&&" "||"]) @d
"""


def _is_module_level(node: Node) -> bool:
    decl = node.parent
    if decl is None or decl.type not in ("lexical_declaration", "variable_declaration"):
        return False
    up = decl.parent
    if up is not None and up.type == "export_statement":
        up = up.parent
    return up is not None and up.type == "program"


def _is_statement_alone(node: Node) -> bool:
    decl = node.parent
    return decl is not None and sum(c.type == "variable_declarator" for c in decl.children) == 1


def _outer_statement(node: Node) -> Node:
    parent = node.parent
    if parent is not None and parent.type == "export_statement":
        return parent
    return node


def classify(data: bytes, node: Node, role: str, enclosing: Sequence[str]) -> Classification:
    """JavaScript's (and TypeScript's) units: see the module docstring."""
    t = node.type
    if role == "scope":  # a TypeScript namespace
        return field_text(data, node, "name") or "?", "scope", node, node
    if role == "decl":
        value = node.child_by_field_name("value")
        if value is None or not _is_module_level(node):
            return None, "", node, None
        decl = node.parent
        alone = decl is not None and _is_statement_alone(node)
        found = _outer_statement(decl) if decl is not None and alone else None
        return field_text(data, node, "name"), "function", value, found
    if role == "default":
        return field_text(data, node, "name") or "default", "function", node, node.parent
    if t in ("class_declaration", "abstract_class_declaration", "class"):
        name = field_text(data, node, "name")
        statement: Node | None = _outer_statement(node)
        parent = node.parent
        if t == "class" and parent is not None and parent.type == "variable_declarator":
            name = name or field_text(data, parent, "name")
            alone = _is_module_level(parent) and _is_statement_alone(parent)
            holder = parent.parent
            statement = _outer_statement(holder) if alone and holder is not None else None
        elif t == "class" and (parent is None or parent.type != "export_statement"):
            statement = None  # a class expression inside some other expression
        return name or "default", "class", node, statement
    if t == "method_definition":
        parent = node.parent
        if parent is None or parent.type != "class_body":
            return None, "", node, None  # object-literal methods are not units
        return field_text(data, node, "name"), "method", node, node
    return field_text(data, node, "name"), "function", node, _outer_statement(node)


MUTATION = MutationSyntax(
    functions=frozenset(
        {
            "function_declaration",
            "generator_function_declaration",
            "method_definition",
            "function_expression",
            "function",
            "arrow_function",
            "generator_function",
        }
    ),
    body="statement_block",
    blocks=frozenset({"statement_block", "program", "switch_case", "switch_default", "class_body"}),
    statements=frozenset(
        {"expression_statement", "throw_statement", "break_statement", "continue_statement"}
    ),
    assignment="assignment_expression",
    drop=b";",
    early_return=b"return; ",
    flip={
        "<": ">=",
        ">=": "<",
        ">": "<=",
        "<=": ">",
        "==": "!=",
        "!=": "==",
        "===": "!==",
        "!==": "===",
    },
    booleans={"true": b"false", "false": b"true"},
    symmetric=frozenset({"Math.max", "Math.min", "Math.hypot"}),
    never=b"(false)",
    empty_block=b"{}",
)

JAVASCRIPT = TreeSitterSyntax(
    name="javascript",
    extensions=(".js", ".mjs", ".cjs", ".jsx"),
    grammar=tree_sitter_javascript.language,
    definitions=DEFINITIONS,
    decisions=DECISIONS,
    comments="(comment) @c",
    classify=classify,
    doc_comment=jsdoc,
    attributes=("decorator",),
    stub='throw new Error("not implemented");',
    indent="  ",
    classes=True,
    mutation=MUTATION,
)
