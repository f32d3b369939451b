"""Hidden tests: part of a task's tests that the policy never sees, graded with the rest.

A seeded fraction of the FAIL_TO_PASS test functions (and a smaller one of PASS_TO_PASS) is
held out: the policy view's test files lack them, while the verifier restores the full test
files from the task and grades every expected id. A patch that special-cases the visible tests
or hard-codes their outputs then fails the hidden ones. Whole test functions are hidden (every
parametrization of one), Python test files only, and at least one FAIL_TO_PASS function always
stays visible so the policy knows what to fix.
"""

from __future__ import annotations

import ast
import math
import random
import re
from collections import defaultdict
from collections.abc import Callable

from taskmint import pyast

__all__ = ["choose_hidden", "strip_hidden"]


def _function_key(test_id: str) -> tuple[str, tuple[str, ...]] | None:
    """(file, qualified function name) of a pytest id, None if it is not a Python test."""
    path, sep, rest = test_id.partition("::")
    if not sep or not path.endswith(".py"):
        return None
    parts = tuple(rest.split("[", 1)[0].split("::"))
    return (path, parts) if all(p.isidentifier() for p in parts) else None


def _groups(ids: tuple[str, ...]) -> dict[tuple[str, tuple[str, ...]], list[str]]:
    groups: dict[tuple[str, tuple[str, ...]], list[str]] = defaultdict(list)
    for test_id in ids:
        key = _function_key(test_id)
        if key is not None:
            groups[key].append(test_id)
    return groups


def choose_hidden(
    fail_to_pass: tuple[str, ...],
    pass_to_pass: tuple[str, ...],
    *,
    seed: str,
    fraction: float,
    pass_fraction: float,
    source_of: Callable[[str], str | None] | None = None,
) -> tuple[str, ...]:
    """The ids to hide, the same for the same inputs (`seed` names the task).

    `fraction` of the FAIL_TO_PASS functions (rounded up, one always left visible) and
    `pass_fraction` of the PASS_TO_PASS functions (rounded down) are hidden; a function that
    has ids in both lists counts as FAIL_TO_PASS. With `source_of` (test file -> its text),
    only functions that `strip_hidden` can cut out cleanly are candidates.
    """
    rng = random.Random(f"hidden|{seed}")
    f2p = _groups(fail_to_pass)
    p2p = {k: v for k, v in _groups(pass_to_pass).items() if k not in f2p}
    if source_of is not None:
        f2p = {k: v for k, v in f2p.items() if _cuttable(k, source_of)}
        p2p = {k: v for k, v in p2p.items() if _cuttable(k, source_of)}
    chosen: list[str] = []
    f2p_keys = sorted(f2p)
    if fraction > 0 and len(f2p_keys) > 1:
        count = min(len(f2p_keys) - 1, math.ceil(fraction * len(f2p_keys)))
        for key in rng.sample(f2p_keys, count):
            chosen += f2p[key] + _p2p_ids(pass_to_pass, key)
    p2p_keys = sorted(p2p)
    count = math.floor(pass_fraction * len(p2p_keys))
    for key in rng.sample(p2p_keys, count) if count else []:
        chosen += p2p[key]
    return tuple(sorted(set(chosen)))


def _cuttable(key: tuple[str, tuple[str, ...]], source_of: Callable[[str], str | None]) -> bool:
    source = source_of(key[0])
    if source is None:
        return False
    try:
        tree = pyast.parse(source)
    except (SyntaxError, ValueError, RecursionError):
        return False
    node = _find(tree.body, key[1])
    if node is None:
        return False
    try:
        strip_hidden(key[0], source, (f"{key[0]}::{'::'.join(key[1])}",))
    except (SyntaxError, ValueError):
        return False
    return True


def _p2p_ids(pass_to_pass: tuple[str, ...], key: tuple[str, tuple[str, ...]]) -> list[str]:
    """PASS_TO_PASS ids of the same function (parametrizations that already passed)."""
    return [t for t in pass_to_pass if _function_key(t) == key]


def _span(node: ast.stmt) -> tuple[int, int]:
    first = min([node.lineno, *(d.lineno for d in getattr(node, "decorator_list", []))])
    assert node.end_lineno is not None
    return first, node.end_lineno


def _find(body: list[ast.stmt], names: tuple[str, ...]) -> ast.stmt | None:
    for node in body:
        if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef | ast.ClassDef) and (
            node.name == names[0]
        ):
            if len(names) == 1:
                return node
            return _find(node.body, names[1:]) if isinstance(node, ast.ClassDef) else None
    return None


def strip_hidden(path: str, source: str, hidden: tuple[str, ...]) -> str:
    """`source` of test file `path` without the functions of the `hidden` ids in it.

    Raises SyntaxError if the result would not parse; `choose_hidden(source_of=...)` picks
    only functions that cut out cleanly."""
    names = {k[1] for k in (_function_key(t) for t in hidden) if k is not None and k[0] == path}
    if not names:
        return source
    tree = pyast.parse(source)
    lines = source.splitlines(keepends=True)
    spans = []
    for qual in names:
        node = _find(tree.body, qual)
        if node is not None:
            spans.append(_span(node))
    for first, last in sorted(spans, reverse=True):
        indent = lines[first - 1][: len(lines[first - 1]) - len(lines[first - 1].lstrip())]
        del lines[first - 1 : last]
        if indent:  # a method: keep the class body valid
            lines.insert(first - 1, f"{indent}pass\n")
    # no telltale gap where a function was cut out
    out = re.sub(r"\n[ \t]*\n(?:[ \t]*\n)+", "\n\n\n", "".join(lines))
    pyast.parse(out)
    return out
