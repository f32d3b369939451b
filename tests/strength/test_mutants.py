"""Mutant generation: every operator, in Python and JavaScript; each mutant compiles (parses),
stays inside the gold code's lines and inside function bodies; the choice is deterministic."""

from __future__ import annotations

import ast

import pytest

from taskmint.index.treesitter_grammars import parse as ts_parse
from taskmint.patches import unified_diff
from taskmint.strength import gold_lines, mutants_of, sample_mutants
from taskmint.strength.mutants import OPERATORS

PY = b'''"""A module."""

LIMIT = 10


def check(items, low=3):
    """Docstring."""
    total = 0
    for item in items:
        if item < low and item is not None:
            total += 1
        elif item in (5, 6):
            log("five", item)
        else:
            total -= 2
    if not total:
        raise ValueError("empty")
    return total == LIMIT


def other(x):
    return x > 1
'''

JS = b"""export function check(items, low) {
  let total = 0;
  for (const item of items) {
    if (item < low && item !== null) {
      total += 1;
    } else {
      log("x", item);
    }
  }
  if (!total) throw new Error("empty");
  return total === 10 ? true : false;
}

export class Box {
  size = 3;
  grow(n) {
    return Math.max(n, this.size) >= 2;
  }
}
"""


def _lines(first: int, last: int) -> set[int]:
    return set(range(first, last + 1))


def test_python_operators_compile_and_stay_in_the_gold_lines() -> None:
    gold = _lines(8, 18)  # check's body after its docstring
    found = mutants_of("pkg/mod.py", PY, gold)
    assert {m.operator for m in found} == set(OPERATORS)
    for m in found:
        mutated = m.apply(PY)
        compile(mutated, "pkg/mod.py", "exec")
        assert mutated != PY
        assert m.line in gold and m.first <= m.line <= m.last
        changed = PY[m.start : m.end].count(b"\n")
        assert all(n in gold for n in range(m.line, m.line + changed + 1))
    shown = {m.description for m in found}
    assert "pkg/mod.py:10 `<` -> `>=`" in shown
    assert "pkg/mod.py:10 `is not` -> `is`" in shown
    assert "pkg/mod.py:10 `and` -> `or`" in shown
    assert "pkg/mod.py:12 `in` -> `not in`" in shown
    assert "pkg/mod.py:16 `not total` -> `( total)`" in shown
    assert "pkg/mod.py:8 `0` -> `1`" in shown
    assert "pkg/mod.py:11 `total += 1` -> `pass`" in shown
    assert 'pkg/mod.py:13 `"five", item` -> `item, "five"`' in shown
    assert "pkg/mod.py:10 `item < low and item is not None` -> `False`" in shown
    assert "pkg/mod.py:15 `total -= 2` -> `pass`" in {
        m.description for m in found if m.operator == "branch"
    }
    assert "pkg/mod.py:8 `return` at the start of check" in shown
    # nothing outside the gold lines: not `other`, not the module's constant, not the default
    assert all(m.unit == "check" for m in found)


def test_python_leaves_import_time_code_alone() -> None:
    """A default, a decorator, a class attribute and a module constant run at import: never
    mutated, even inside the gold lines."""
    src = b"""import functools

RATE = 2


class Shop:
    discount = 5

    @functools.lru_cache(maxsize=8)
    def price(self, n=1):
        return n * RATE
"""
    found = mutants_of("shop.py", src, _lines(1, 11))
    assert found
    assert {m.line for m in found} == {11}


def test_a_dropped_only_assignment_widens_the_span_to_the_body() -> None:
    src = b"""def f(xs):
    seen = []
    for x in xs:
        seen.append(x)
    acc = 0
    acc += len(seen)
    return acc
"""
    found = {m.description: m for m in mutants_of("f.py", src, _lines(2, 7))}
    dropped = found["f.py:4 `seen.append(x)` -> `pass`"]
    assert (dropped.first, dropped.last) == (4, 4)  # `seen` stays local
    early = found["f.py:2 `return` at the start of f"]
    assert (early.first, early.last) == (2, 2)


def test_python_mutants_only_where_a_statement_can_be_dropped_cleanly() -> None:
    src = b"def f(a):\n    g(a,\n      1); h(a)\n    return a\n"
    for m in mutants_of("f.py", src, _lines(2, 4)):
        ast.parse(m.apply(src))


def test_javascript_operators_parse_and_stay_in_function_bodies() -> None:
    gold = _lines(2, 11) | _lines(17, 17)
    found = mutants_of("src/check.js", JS, gold)
    assert {m.operator for m in found} == set(OPERATORS)
    for m in found:
        tree, _ = ts_parse("javascript", m.apply(JS), "src/check.js")
        assert not tree.root_node.has_error
        assert m.line in gold
    shown = {m.description for m in found}
    assert "src/check.js:4 `<` -> `>=`" in shown
    assert "src/check.js:4 `!==` -> `===`" in shown
    assert "src/check.js:4 `&&` -> `||`" in shown
    assert "src/check.js:10 `!total` -> `(total)`" in shown
    assert "src/check.js:2 `0` -> `1`" in shown
    assert "src/check.js:11 `true` -> `false`" in shown
    assert 'src/check.js:7 `log("x", item);` -> `;`' in shown
    assert 'src/check.js:7 `"x", item` -> `item, "x"`' in shown
    assert "src/check.js:4 `(item < low && item !== null)` -> `(false)`" in shown
    # Math.max is symmetric in its arguments: swapping them would be an equivalent mutant
    assert not any(m.operator == "swap_args" and m.line == 17 for m in found)
    assert "src/check.js:2 `return;` at the start" in shown
    assert not any(m.line == 15 for m in found)  # a class field runs when the class is built
    # an augmented assignment is dropped, a plain one is not (deleting it is a held-out operator)
    assert "src/check.js:5 `total += 1;` -> `;`" in shown
    assert not any(m.operator == "drop" and "total = 0" in m.before for m in found)


def test_no_swap_in_a_call_symmetric_in_its_arguments() -> None:
    code = b"""import math


def spread(a, b, items):
    low = min(a, b)
    high = max(len(a), len(b))
    first = max(a, b, key=len)
    step = math.gcd(a, b)
    return distance(a, b) + low + high + step + first
"""
    found = mutants_of("pkg/m.py", code, _lines(5, 9))
    swapped = {m.line: m.description for m in found if m.operator == "swap_args"}
    # min, max and math.gcd give the same result either way; a key makes order show in ties
    # (the first of two equal keys wins), and a function of the project's own is unknown
    assert swapped == {
        7: "pkg/m.py:7 `a, b` -> `b, a`",
        9: "pkg/m.py:9 `a, b` -> `b, a`",
    }


def test_no_mutant_the_compiler_makes_into_the_same_code() -> None:
    code = b"""class Hooks:
    def accept(self, offer):
        pass

    def finalize(self):
        return None

    def record(self, items):
        items.append(1)
"""
    found = mutants_of("pkg/hooks.py", code, _lines(1, 9))
    early = {m.line for m in found if m.operator == "early_return"}
    # `return` before `pass` or `return None` compiles to what the original compiles to
    assert early == {9}
    assert {m.operator for m in found} == {"early_return", "drop", "constant"}


def test_gold_lines_are_the_lines_the_gold_patch_puts_back() -> None:
    original = PY.decode()
    broken = original.replace(
        '    if not total:\n        raise ValueError("empty")\n', "    pass\n"
    )
    gold = unified_diff("pkg/mod.py", broken, original)
    assert gold_lines(gold) == {"pkg/mod.py": {16, 17}}
    removed = unified_diff("gone.py", "x = 1\n", None)  # a deletion puts nothing back
    assert gold_lines(removed) == {}


def test_sampling_is_deterministic_and_spread_over_operators_and_lines() -> None:
    found = mutants_of("pkg/mod.py", PY, _lines(8, 18))
    first = sample_mutants(found, 7, "task-1")
    assert first == sample_mutants(list(reversed(found)), 7, "task-1")
    assert len(first) == 7
    assert {m.operator for m in first} == set(OPERATORS)  # one of each before any repeats
    assert len({m.line for m in first}) >= 5
    assert sample_mutants(found, 0, "task-1") == []
    assert len(sample_mutants(found, 1000, "task-1")) == len(found)
    others = [sample_mutants(found, 7, f"task-{i}") for i in range(2, 8)]
    assert any(o != first for o in others)


@pytest.mark.parametrize("path", ["notes.txt", "main.go"])
def test_no_mutants_for_other_languages(path: str) -> None:
    assert mutants_of(path, b"func main() { x := 1 < 2 }\n", {1}) == []
