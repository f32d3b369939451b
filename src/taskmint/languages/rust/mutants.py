"""Mutants of Rust gold code, read with tree-sitter: small edits that still type-check.

The counterpart of `strength.mutants.treesitter_mutants` (the same `languages.mutation.Mutant`
records, same rules: only inside function bodies, only on the lines given, each a byte-range
replacement of the original file). A Rust mutant must compile, or the whole build fails and
every test with it, so each operator keeps the types as they were:

- `compare`: `<` -> `>=`, `>` -> `<=`, `<=` -> `>`, `>=` -> `<`, `==` <-> `!=` (the same trait
  answers both);
- `boolean`: `&&` <-> `||`, a `!` dropped (`!x` -> `x`, bool or integer alike; parentheses
  kept where the precedence needs them, dropped where `unused_parens` would fire);
- `arithmetic`: `+` <-> `-` and `+=` <-> `-=` when one side is an integer literal, a `.len()`
  or an `as` cast (numbers, not strings);
- `constant`: an integer literal n -> n + 1 (0 -> 1, 1 -> 0, and n - 1 where n + 1 or n is a
  power of two, so that a type's maximum does not overflow), `true` <-> `false`; never an
  array length, an index, a tuple field, a shift amount, a divisor 1, a pattern or a macro's
  tokens;
- `drop`: a statement that is a call, a method call, a macro call, a `?` on one, or a compound
  assignment, replaced by `{}` (not `;`: `redundant_semicolons`); never a diverging one
  (`panic!`, `process::exit`), whose type the block may need;
- `early_return`: `if true { return <value>; }` before a body's first statement (a bare
  `return` would make the rest `unreachable_code`), where the return type
  names the value: nothing for `()`, `false` for `bool`, `None` for `Option<..>`, `Ok(())` for
  `Result<(), ..>` and `fmt::Result`, `0` for integers, `String::new()`, `Vec::new()`;
- `branch`: an `if` condition negated (`if !(c)`), an `else` block emptied when neither
  branch gives a value and it assigns no plain variable (a `let x;` may wait for it).

Compiling is not checked here (that needs cargo); `rust_mutants` keeps those whose tree
parses without an error. On semver, smallvec, strsim and heck every sampled mutant compiled
(docs/rust-excision.md).
"""

from __future__ import annotations

import re

from tree_sitter import Node

from taskmint.languages.mutation import Mutant, Mutants, end_row, row
from taskmint.languages.rust.testcode import test_only
from taskmint.languages.rust.tree import RustSourceError, attributes_before, parse

__all__ = ["RUST_OPERATORS", "rust_mutants"]

RUST_OPERATORS = (
    "compare",
    "boolean",
    "arithmetic",
    "constant",
    "drop",
    "early_return",
    "branch",
)
_FLIP = {"<": ">=", ">=": "<", ">": "<=", "<=": ">", "==": "!=", "!=": "=="}
_INTEGERS = frozenset(
    ["u8", "u16", "u32", "u64", "u128", "usize", "i8", "i16", "i32", "i64", "i128", "isize"]
)
_DECIMAL = re.compile(r"([0-9][0-9_]*)([iu](8|16|32|64|128|size))?")
_STATEMENT_CALLS = frozenset(
    {"call_expression", "macro_invocation", "compound_assignment_expr", "await_expression"}
)
_BLOCK_HOLDERS = frozenset({"block", "source_file", "declaration_list"})
_TAIL_OK = frozenset({"return_expression", "break_expression", "continue_expression"})


def _in_pattern_or_type(node: Node) -> bool:
    """Inside a pattern, a type, a macro's token tree, or an attribute."""
    cur = node.parent
    while cur is not None and cur.type not in _BLOCK_HOLDERS:
        t = cur.type
        if (
            "pattern" in t
            or t.endswith("_type")
            or t
            in (
                "token_tree",
                "type_arguments",
                "attribute_item",
                "match_pattern",
                "let_condition",
            )
        ):
            return True
        cur = cur.parent
    return False


def _shifted(text: str, node: Node) -> str | None:
    """The integer literal one step away, or None when no safe step exists."""
    m = _DECIMAL.fullmatch(text)
    if m is None:
        return None  # hex, octal, binary: masks and bit patterns
    value = int(m.group(1).replace("_", ""))
    suffix = m.group(2) or ""
    if value == 0:
        new = 1
    elif value == 1:
        new = 0
    elif (value + 1) & value == 0 or value & (value - 1) == 0:
        new = value - 1  # 2^k - 1 (a type's maximum) or 2^k (a signed minimum's magnitude)
    else:
        new = value + 1
    parent = node.parent
    if parent is not None and parent.type == "binary_expression" and new == 0:
        op = parent.child_by_field_name("operator")
        right = parent.child_by_field_name("right")
        if op is not None and op.type in ("/", "%") and right is not None and right.id == node.id:
            new = 2  # never a division by zero
    return f"{new}{suffix}"


def _numeric_side(data: bytes, node: Node | None) -> bool:
    """An operand that is surely a number: an integer literal, `x.len()`, an `as` cast."""
    if node is None:
        return False
    while node.type == "parenthesized_expression" and node.named_children:
        node = node.named_children[0]
    if node.type == "integer_literal":
        return True
    if node.type == "type_cast_expression":
        kind = node.child_by_field_name("type")
        return kind is not None and data[kind.start_byte : kind.end_byte].decode() in _INTEGERS
    if node.type == "call_expression":
        fn = node.child_by_field_name("function")
        if fn is not None and fn.type == "field_expression":
            field = fn.child_by_field_name("field")
            return field is not None and data[field.start_byte : field.end_byte] in (
                b"len",
                b"count",
                b"count_ones",
                b"leading_zeros",
                b"trailing_zeros",
            )
    return False


def _early_value(data: bytes, func: Node) -> bytes | None:
    """What `return` gives for this function's return type, or None when no value is sure."""
    ret = func.child_by_field_name("return_type")
    if ret is None:
        return b""
    text = " ".join(data[ret.start_byte : ret.end_byte].decode("utf-8", "replace").split())
    text = text.replace(" ", "")
    if text in ("()",):
        return b""
    if text == "bool":
        return b" false"
    if text in _INTEGERS:
        return b" 0"
    if text == "String":
        return b" String::new()"
    if re.fullmatch(r"(std::|alloc::)?(vec::)?Vec<.*>", text):
        return b" Vec::new()"
    if re.fullmatch(r"(std::|core::)?(option::)?Option<.*>", text):
        return b" None"
    if re.fullmatch(r"((std::|core::)?(fmt|io)::)?Result<\(\)(,.*)?>", text) or text in (
        "fmt::Result",
        "std::fmt::Result",
        "core::fmt::Result",
    ):
        return b" Ok(())"
    return None


def _has_tail(block: Node) -> bool:
    """A block whose value may be its last expression: anything but a statement ending in
    `;`, a `let`, an item or `return`/`break`/`continue` (tree-sitter wraps a block-like tail,
    `unsafe { .. }` or `match`, in an expression statement without the `;`)."""
    kids = [c for c in block.named_children if "comment" not in c.type]
    if not kids:
        return False
    last = kids[-1]
    if last.type == "expression_statement":
        return not (last.text or b"").rstrip().endswith(b";")
    if last.type in ("let_declaration", "empty_statement"):
        return False
    return not (last.type.endswith("_item") or last.type in _TAIL_OK)


def rust_mutants(path: str, data: bytes, lines: set[int]) -> list[Mutant]:
    """Every Rust mutant of `data` inside `lines` whose tree parses without an error, in file
    order. Only code inside function bodies is mutated; test-only code never."""
    try:
        tree = parse(data, path)
    except (RustSourceError, ValueError):
        return []
    found = Mutants(path, data, lines, _BLOCK_HOLDERS)
    add = found.add

    def mutate(node: Node, unit: str) -> None:
        kind = node.type
        if kind == "binary_expression":
            op = node.child_by_field_name("operator")
            if op is None:
                return
            text = data[op.start_byte : op.end_byte].decode()
            if text in _FLIP:
                add(op.start_byte, op.end_byte, _FLIP[text].encode(), "compare", node, unit)
            elif text in ("&&", "||"):
                other = b"||" if text == "&&" else b"&&"
                add(op.start_byte, op.end_byte, other, "boolean", node, unit)
            elif text in ("+", "-") and (
                _numeric_side(data, node.child_by_field_name("left"))
                or _numeric_side(data, node.child_by_field_name("right"))
            ):
                other = b"-" if text == "+" else b"+"
                add(op.start_byte, op.end_byte, other, "arithmetic", node, unit)
        elif kind == "compound_assignment_expr":
            op = node.child_by_field_name("operator")
            right = node.child_by_field_name("right")
            if op is not None and _numeric_side(data, right):
                op_text = data[op.start_byte : op.end_byte]
                if op_text in (b"+=", b"-="):
                    other = b"-=" if op_text == b"+=" else b"+="
                    add(op.start_byte, op.end_byte, other, "arithmetic", node, unit)
        elif kind == "unary_expression":
            first = node.children[0] if node.children else None
            operand = node.named_children[0] if node.named_children else None
            if first is not None and first.type == "!" and operand is not None:
                add(
                    node.start_byte,
                    node.end_byte,
                    _without_not(data, node, operand),
                    "boolean",
                    node,
                    unit,
                )
        elif kind == "integer_literal":
            parent = node.parent
            if parent is None or _in_pattern_or_type(node):
                return
            if parent.type == "field_expression":
                return  # `pair.0`
            if parent.type == "index_expression":
                return
            if parent.type == "array_expression" and parent.child_by_field_name("length") == node:
                return
            if parent.type == "binary_expression":
                op = parent.child_by_field_name("operator")
                right = parent.child_by_field_name("right")
                if (
                    op is not None
                    and op.type in ("<<", ">>")
                    and right is not None
                    and right.id == node.id
                ):
                    return
            if parent.type == "compound_assignment_expr":
                op = parent.child_by_field_name("operator")
                if op is not None and op.type in ("<<=", ">>="):
                    return
            new = _shifted(data[node.start_byte : node.end_byte].decode(), node)
            if new is not None:
                add(node.start_byte, node.end_byte, new.encode(), "constant", node, unit)
        elif kind == "boolean_literal":
            if _in_pattern_or_type(node):
                return
            value = data[node.start_byte : node.end_byte]
            add(
                node.start_byte,
                node.end_byte,
                b"false" if value == b"true" else b"true",
                "constant",
                node,
                unit,
            )
        elif kind == "expression_statement":
            expr = node.named_children[0] if node.named_children else None
            if expr is None or not data[node.start_byte : node.end_byte].rstrip().endswith(b";"):
                return
            inner = expr
            if inner.type == "try_expression" and inner.named_children:
                inner = inner.named_children[0]
            if inner.type in _STATEMENT_CALLS and not _diverges(data, inner):
                # `{}`, not `;`: an empty statement is `redundant_semicolons`
                add(node.start_byte, node.end_byte, b"{}", "drop", node, unit)
        elif kind == "if_expression":
            cond = node.child_by_field_name("condition")
            if cond is not None and cond.type not in ("let_condition", "let_chain"):
                code = data[cond.start_byte : cond.end_byte]
                negated = b"!" + code if cond.type in _PRIMARY else b"!(" + code + b")"
                add(
                    cond.start_byte,
                    cond.end_byte,
                    negated,
                    "branch",
                    node,
                    unit,
                    first=row(node),
                    last=end_row(cond),
                )
            alt = node.child_by_field_name("alternative")
            cons = node.child_by_field_name("consequence")
            parent = node.parent
            statement = parent is not None and parent.type == "expression_statement"
            if alt is not None and cons is not None and statement:
                block = next((c for c in alt.named_children if c.type == "block"), None)
                filled = block is not None and any(
                    "comment" not in c.type for c in block.named_children
                )
                if (
                    block is not None
                    and filled
                    and not _has_tail(cons)
                    and not _has_tail(block)
                    and not _initializes(block)
                ):
                    add(
                        block.start_byte,
                        block.end_byte,
                        b"{}",
                        "branch",
                        block,
                        unit,
                        first=row(block),
                        last=end_row(block),
                    )

    def function(func: Node, unit: str) -> None:
        body = func.child_by_field_name("body")
        if body is None:
            return
        stmts = [c for c in body.named_children if "comment" not in c.type]
        value = _early_value(data, func)
        if stmts and value is not None:
            s = stmts[0]
            # behind `if true`: a bare `return` first makes the rest `unreachable_code`
            add(
                s.start_byte,
                s.start_byte,
                b"if true { return" + value + b"; } ",
                "early_return",
                s,
                unit,
                first=row(s),
                last=row(s),
            )

    # walk without recursion; a function's own name is the unit of what is inside it
    stack: list[tuple[Node, bool, str]] = [(tree.root_node, False, "")]
    while stack:
        node, in_body, unit = stack.pop()
        kind = node.type
        if _test_only_item(data, node):
            continue
        if kind == "function_item":
            name_node = node.child_by_field_name("name")
            name = data[name_node.start_byte : name_node.end_byte].decode() if name_node else "?"
            unit = name
            if not _is_const_fn(node):
                function(node, unit)
            body = node.child_by_field_name("body")
            for child in reversed(node.children):
                inner = (body is not None and child.id == body.id) and not _is_const_fn(node)
                stack.append((child, inner, unit))
            continue
        if kind in ("const_item", "static_item", "attribute_item", "macro_definition"):
            continue  # evaluated at compile time, or not code
        if in_body:
            mutate(node, unit)
        for child in reversed(node.children):
            stack.append((child, in_body, unit))
    return found.parsing(lambda text: parse(text, path), RustSourceError)


_PRIMARY = frozenset(
    {
        "identifier",
        "field_expression",
        "call_expression",
        "index_expression",
        "macro_invocation",
        "boolean_literal",
        "integer_literal",
        "scoped_identifier",
        "self",
        "parenthesized_expression",
        "unary_expression",
        "try_expression",
        "await_expression",
    }
)
# Where a parenthesized expression needs no parentheses (`unused_parens` fires there).
_FREE_CONTEXT = frozenset(
    {
        "if_expression",
        "while_expression",
        "let_declaration",
        "arguments",
        "closure_expression",
        "return_expression",
        "block",
        "expression_statement",
        "match_expression",
        "assignment_expression",
    }
)
_DIVERGING = re.compile(
    rb"^(std::|core::)?(process::)?(exit|abort)$|^(panic|unreachable|todo|unimplemented)$"
)


def _without_not(data: bytes, node: Node, operand: Node) -> bytes:
    """`!x` without its `!`: the operand, unwrapped from its parentheses where they would be
    unused and the precedence cannot change."""
    text = data[operand.start_byte : operand.end_byte]
    parent = node.parent
    free = parent is not None and parent.type in _FREE_CONTEXT
    if operand.type == "parenthesized_expression" and free and operand.named_children:
        inner = operand.named_children[0]
        return data[inner.start_byte : inner.end_byte]
    return text


def _diverges(data: bytes, call: Node) -> bool:
    """A call or macro that never returns (`panic!`, `process::exit`): dropping it can change
    the type of the block."""
    if call.type == "macro_invocation":
        head = call.child_by_field_name("macro")
    elif call.type == "call_expression":
        head = call.child_by_field_name("function")
    else:
        return False
    if head is None:
        return False
    return bool(_DIVERGING.search(data[head.start_byte : head.end_byte].replace(b" ", b"")))


def _initializes(block: Node) -> bool:
    """Whether a block assigns a plain variable (`x = ...`): emptying it may leave a `let x;`
    declared before uninitialized."""
    stack = list(block.named_children)
    while stack:
        node = stack.pop()
        if node.type == "assignment_expression":
            left = node.child_by_field_name("left")
            if left is not None and left.type == "identifier":
                return True
        if node.type not in ("closure_expression", "function_item"):
            stack.extend(node.named_children)
    return False


def _is_const_fn(func: Node) -> bool:
    mods = next((c for c in func.children if c.type == "function_modifiers"), None)
    return mods is not None and any(c.type == "const" for c in mods.children)


def _test_only_item(data: bytes, node: Node) -> bool:
    if node.type not in ("function_item", "mod_item", "impl_item"):
        return False
    return test_only(attributes_before(data, node))
