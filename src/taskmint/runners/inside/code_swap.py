"""Swapping a changed file's code into the live functions of a collected pytest process.

Runs INSIDE the sandbox, under the seed's interpreter, in a fork of the batch's collection
(`forked_runs`); imports nothing of taskmint. `hot_patch` points every live function of a file
at the code its broken version compiles to, and refuses (`Unforkable`) whenever that would not
be what importing the broken file does: the module and class bodies must compile to the same
code up to line numbers and the functions defined in them, and a function may change in any way
that keeps its name and its free variables.
"""

from __future__ import annotations

import gc
import types
from collections.abc import Iterator

__all__ = ["Unforkable", "function_index", "hot_patch", "pair_code"]

_CO_NEWLOCALS = 0x0002  # a function's code (module and class bodies lack it)


class Unforkable(Exception):
    """This candidate cannot be run as a fork of the original's collection."""


def _qualname(code: types.CodeType) -> str:
    return str(getattr(code, "co_qualname", code.co_name))  # co_qualname: Python 3.11+


def _codes(code: types.CodeType) -> Iterator[types.CodeType]:
    yield code
    for const in code.co_consts:
        if isinstance(const, types.CodeType):
            yield from _codes(const)


def _nested(code: types.CodeType) -> list[types.CodeType]:
    return [c for c in code.co_consts if isinstance(c, types.CodeType)]


def _same_but_nested(a: types.CodeType, b: types.CodeType) -> bool:
    """Whether `a` and `b` do the same thing, up to line numbers and the code of what they
    define (their nested code objects, compared separately)."""
    if (a.co_code, a.co_names, a.co_varnames, a.co_freevars, a.co_cellvars, a.co_flags) != (
        b.co_code,
        b.co_names,
        b.co_varnames,
        b.co_freevars,
        b.co_cellvars,
        b.co_flags,
    ):
        return False
    if (a.co_argcount, a.co_posonlyargcount, a.co_kwonlyargcount) != (
        b.co_argcount,
        b.co_posonlyargcount,
        b.co_kwonlyargcount,
    ):
        return False
    if len(a.co_consts) != len(b.co_consts):
        return False
    for x, y in zip(a.co_consts, b.co_consts, strict=True):
        if isinstance(x, types.CodeType) or isinstance(y, types.CodeType):
            if not (isinstance(x, types.CodeType) and isinstance(y, types.CodeType)):
                return False
            if _qualname(x) != _qualname(y):
                return False
        elif type(x) is not type(y) or x != y:
            return False
    return True


def pair_code(
    old: types.CodeType, new: types.CodeType
) -> tuple[dict[types.CodeType, types.CodeType], set[types.CodeType]]:
    """The code objects of the original module (`old`) that a live function must swap, each
    with its replacement from the broken module (`new`), and the original ones that have no
    replacement (nested in a changed function whose nested definitions changed shape: a live
    function holding one of them makes the candidate unforkable).

    Module and class bodies ran when the original was imported: they must be the same up to
    line numbers and nested code, or `Unforkable`. A function may change in any way that keeps
    its name and its free variables (its closure cells are the live function's)."""
    swap: dict[types.CodeType, types.CodeType] = {}
    orphans: set[types.CodeType] = set()

    def walk(a: types.CodeType, b: types.CodeType) -> None:
        function = bool(a.co_flags & _CO_NEWLOCALS)
        if _qualname(a) != _qualname(b) or function != bool(b.co_flags & _CO_NEWLOCALS):
            raise Unforkable(f"{_qualname(a)} does not line up with {_qualname(b)}")
        if a == b:
            return
        if not function:
            if not _same_but_nested(a, b):
                raise Unforkable(f"the edit changes code that runs at import ({_qualname(a)})")
        else:
            if a.co_freevars != b.co_freevars:
                raise Unforkable(f"the edit changes the closure of {_qualname(a)}")
            swap[a] = b
        na, nb = _nested(a), _nested(b)
        if len(na) == len(nb) and all(
            _qualname(x) == _qualname(y) for x, y in zip(na, nb, strict=True)
        ):
            for x, y in zip(na, nb, strict=True):
                walk(x, y)
        elif function:
            for x in na:
                orphans.update(_codes(x))
        else:  # pragma: no cover - _same_but_nested already compared them
            raise Unforkable(f"the definitions in {_qualname(a)} changed")

    walk(old, new)
    return swap, orphans


def function_index(root: str) -> dict[types.CodeType, list[types.FunctionType]]:
    """Every live function defined in a file under `root`, by its code object (code objects
    compare by value, so two imports of one file share a key)."""
    index: dict[types.CodeType, list[types.FunctionType]] = {}
    prefix = root.rstrip("/") + "/"
    for obj in gc.get_objects():
        if type(obj) is types.FunctionType and obj.__code__.co_filename.startswith(prefix):
            index.setdefault(obj.__code__, []).append(obj)
    return index


def hot_patch(
    path: str,
    old_source: bytes,
    new_source: bytes,
    index: dict[types.CodeType, list[types.FunctionType]],
) -> int:
    """Point the live functions of `path` at the code `new_source` compiles to; the number of
    functions changed. `Unforkable` when that would not be what importing `new_source` does."""
    try:
        old = compile(old_source, path, "exec", dont_inherit=True)
    except (SyntaxError, ValueError) as exc:
        raise Unforkable(f"the original {path} does not compile here: {exc}") from exc
    try:
        new = compile(new_source, path, "exec", dont_inherit=True)
    except (SyntaxError, ValueError) as exc:
        raise Unforkable(f"the broken {path} does not compile: {exc}") from exc
    live = [c for c in index if c.co_filename == path]
    known = set(_codes(old))
    strangers = [_qualname(c) for c in live if c not in known]
    if strangers:
        # rewritten on import (pytest's assertion rewriting), or made at run time
        raise Unforkable(f"live code of {path} is not what its source compiles to: {strangers[0]}")
    swap, orphans = pair_code(old, new)
    held = [_qualname(c) for c in orphans if c in index]
    if held:
        raise Unforkable(f"a live function holds code the edit reshaped: {held[0]}")
    changed = 0
    for code, functions in index.items():
        if code.co_filename != path or code not in swap:
            continue
        for function in functions:
            doc = code.co_consts[0] if code.co_consts else None
            function.__code__ = swap[code]
            new_doc = swap[code].co_consts[0] if swap[code].co_consts else None
            text = new_doc is None or isinstance(new_doc, str)
            if doc != new_doc and function.__doc__ == doc and text:
                function.__doc__ = new_doc
            changed += 1
    return changed
