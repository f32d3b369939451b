"""Hidden tests: part of a task's tests that the policy never sees, graded with the rest.

A seeded fraction of the FAIL_TO_PASS test functions (and a smaller one of PASS_TO_PASS) is
held out: the policy view's test files lack them, while the verifier restores the full test
files from the task and grades every expected id. A patch that special-cases the visible tests
or hard-codes their outputs then fails the hidden ones. Whole test functions are hidden (every
parametrization of one), Python test files only, and at least one FAIL_TO_PASS function always
stays visible so the policy knows what to fix. This is the Python profile's `hidden_tests` and
`strip_hidden`; a language without them hides nothing.
"""

from __future__ import annotations

import ast
import functools
import hashlib
import math
import random
import re
import threading
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

    Each test file is parsed once per text (`_spans`, cached), however many tasks of a seed
    ask: the cost per task is one look-up per test function, and one cut of each file that
    loses a function (`_cut_cleanly`).
    """
    rng = random.Random(f"hidden|{seed}")
    f2p = _groups(fail_to_pass)
    p2p = {k: v for k, v in _groups(pass_to_pass).items() if k not in f2p}
    texts: dict[str, str | None] = {}
    if source_of is not None:

        def text(path: str) -> str | None:
            if path not in texts:
                texts[path] = source_of(path)
            return texts[path]

        f2p = {k: v for k, v in f2p.items() if _defined(k, text(k[0]))}
        p2p = {k: v for k, v in p2p.items() if _defined(k, text(k[0]))}
    chosen: list[tuple[str, tuple[str, ...]]] = []
    f2p_keys = sorted(f2p)
    if fraction > 0 and len(f2p_keys) > 1:
        count = min(len(f2p_keys) - 1, math.ceil(fraction * len(f2p_keys)))
        chosen += rng.sample(f2p_keys, count)
    p2p_keys = sorted(p2p)
    count = math.floor(pass_fraction * len(p2p_keys))
    chosen += rng.sample(p2p_keys, count) if count else []
    if source_of is not None:
        chosen = _cut_cleanly(chosen, texts)
    ids: list[str] = []
    by_key = _groups(pass_to_pass)
    for key in chosen:
        ids += f2p.get(key, []) + by_key.get(key, [])
    return tuple(sorted(set(ids)))


def _defined(key: tuple[str, tuple[str, ...]], source: str | None) -> bool:
    """Whether the test file's text defines the function `key` names, where a cut can reach
    it (module level, or in classes)."""
    if source is None:
        return False
    spans = _spans(source)
    return spans is not None and key[1] in spans


def _cut_cleanly(
    chosen: list[tuple[str, tuple[str, ...]]], texts: dict[str, str | None]
) -> list[tuple[str, tuple[str, ...]]]:
    """The chosen functions, less those of any file that would not parse once they are all
    cut from it (rare: a cut is whole statements)."""
    by_file: dict[str, list[tuple[str, ...]]] = defaultdict(list)
    for path, qual in chosen:
        by_file[path].append(qual)
    bad = set()
    for path, quals in by_file.items():
        ids = tuple(f"{path}::{'::'.join(q)}" for q in quals)
        try:
            strip_hidden(path, texts[path] or "", ids)
        except (SyntaxError, ValueError, RecursionError):
            bad.add(path)
    return [k for k in chosen if k[0] not in bad]


_SPANS: dict[bytes, dict[tuple[str, ...], tuple[int, int]] | None] = {}
_SPANS_MAX = 4096  # test files whose spans are kept (the oldest go first)
_SPANS_LOCK = threading.Lock()


def _spans(source: str) -> dict[tuple[str, ...], tuple[int, int]] | None:
    """The lines (decorators included) of every function and class a hidden id can name, by
    qualified name: module level, and inside classes at any depth (the first definition of
    a name wins). None if the file does not parse. Cached by the hash of the file's text: a
    seed's test files are parsed once, whatever the number of its tasks."""
    key = hashlib.sha256(source.encode("utf-8", "surrogatepass")).digest()
    if key in _SPANS:
        return _SPANS[key]
    try:
        tree = pyast.parse(source)
    except (SyntaxError, ValueError, RecursionError):
        tree = None
    out: dict[tuple[str, ...], tuple[int, int]] | None = None if tree is None else {}

    def walk(body: list[ast.stmt], prefix: tuple[str, ...]) -> None:
        assert out is not None
        for node in body:
            if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef | ast.ClassDef):
                name = (*prefix, node.name)
                if name in out:
                    continue
                out[name] = _span(node)
                if isinstance(node, ast.ClassDef):
                    walk(node.body, name)

    if tree is not None:
        walk(tree.body, ())
    with _SPANS_LOCK:  # mint tasks run on threads
        while len(_SPANS) >= _SPANS_MAX:
            _SPANS.pop(next(iter(_SPANS)), None)
        _SPANS[key] = out
    return out


def _span(node: ast.stmt) -> tuple[int, int]:
    first = min([node.lineno, *(d.lineno for d in getattr(node, "decorator_list", []))])
    assert node.end_lineno is not None
    return first, node.end_lineno


@functools.lru_cache(maxsize=1024)
def strip_hidden(path: str, source: str, hidden: tuple[str, ...]) -> str:
    """`source` of test file `path` without the functions of the `hidden` ids in it.

    Raises SyntaxError if the result would not parse; `choose_hidden(source_of=...)` picks
    only functions that cut out cleanly. Cached: the verifier restores the same files for
    every grading of a task."""
    names = {k[1] for k in (_function_key(t) for t in hidden) if k is not None and k[0] == path}
    if not names:
        return source
    spans = _spans(source)
    if spans is None:
        pyast.parse(source)  # raises the file's own SyntaxError
        raise SyntaxError(f"{path} does not parse")
    lines = source.splitlines(keepends=True)
    cuts = sorted({spans[q] for q in names if q in spans}, reverse=True)
    for first, last in cuts:
        if any(a <= first and last <= b and (a, b) != (first, last) for a, b in cuts):
            continue  # inside a class that goes as a whole
        indent = lines[first - 1][: len(lines[first - 1]) - len(lines[first - 1].lstrip())]
        del lines[first - 1 : last]
        if indent:  # a method: keep the class body valid
            lines.insert(first - 1, f"{indent}pass\n")
    # no telltale gap where a function was cut out
    out = re.sub(r"\n[ \t]*\n(?:[ \t]*\n)+", "\n\n\n", "".join(lines))
    pyast.parse(out)
    return out
