"""The call graph of a Python seed: which units call which, resolved by name.

Computed with libcst: within each unit's body (nested definitions excluded, they are units of
their own), a call `f(...)` resolves by name to the seed's top-level functions named `f` and to
`f.__init__` of classes named `f`; a call `x.f(...)` resolves to every method named `f` (and
module functions named `f`, for `module.f(...)`). Resolution is by name only, so it
over-approximates (two classes' `parse` methods share callers); it is a difficulty signal (the
`callers` feature of `excise`), not a proof.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping

import libcst as cst

from taskmint.index.locate import Located, locate_defs
from taskmint.index.python import SourceSkipped
from taskmint.records import Unit

__all__ = ["call_graph"]


class _Calls(cst.CSTVisitor):
    def __init__(self) -> None:
        self.names: set[str] = set()
        self.attrs: set[str] = set()

    def visit_FunctionDef(self, node: cst.FunctionDef) -> bool:
        return False

    def visit_ClassDef(self, node: cst.ClassDef) -> bool:
        return False

    def visit_Call(self, node: cst.Call) -> None:
        func = node.func
        if isinstance(func, cst.Name):
            self.names.add(func.value)
        elif isinstance(func, cst.Attribute):
            self.attrs.add(func.attr.value)


def call_graph(
    sources: Mapping[str, bytes],
    units: Iterable[Unit],
    *,
    located: dict[str, Located] | None = None,
) -> dict[str, frozenset[str]]:
    """Unit key ("path::Qual") -> keys of the units whose bodies call it (see module doc).

    `located` caches parsed files across calls (filled in as files are parsed).
    """
    cache: dict[str, Located] = {} if located is None else located

    units = list(units)
    by_function: dict[str, set[str]] = {}
    by_method: dict[str, set[str]] = {}
    for u in units:
        key = f"{u.file}::{u.qualname}"
        parts = u.qualname.split("#")[0].split(".")
        if len(parts) == 1 and u.kind == "function":
            by_function.setdefault(parts[0], set()).add(key)
        elif u.kind == "method":
            by_method.setdefault(parts[-1], set()).add(key)
            if parts[-1] == "__init__" and len(parts) == 2:
                by_function.setdefault(parts[0], set()).add(key)  # Class(...) runs __init__
    callers: dict[str, set[str]] = {}
    for file in sorted({u.file for u in units}):
        if file not in sources:
            continue
        try:
            if file not in cache:
                cache[file] = locate_defs(sources[file])
        except SourceSkipped:
            continue
        for qual, site in cache[file].functions.items():
            caller = f"{file}::{qual}"
            visitor = _Calls()
            site.node.body.visit(visitor)
            callees: set[str] = set()
            for name in visitor.names:
                callees |= by_function.get(name, set())
            for name in visitor.attrs:
                callees |= by_method.get(name, set()) | by_function.get(name, set())
            for callee in callees - {caller}:
                callers.setdefault(callee, set()).add(caller)
    return {k: frozenset(v) for k, v in callers.items()}
