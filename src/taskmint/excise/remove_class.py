"""Strategy `remove_class`: a whole class disappears, or most of its methods do.

Two modes, each a candidate of its own:

- `whole`: the `class` statement goes, with its decorators and the comment lines directly
  above it. Skipped (with the reason) when the class is needed at import: a base class of
  another class of the module, used in a decorator, a registry or any other module-level code
  below, listed in `__all__`, imported by name by another file (sources or tests), defined
  under `if TYPE_CHECKING:` or conditionally, nested, or decorated with anything but the known
  side-effect-free class decorators (`dataclass`, `total_ordering`, ...), since an unknown one
  may register it.
- `methods`: the class stays with its `__init__` and every other dunder method (so it still
  builds, prints and compares), its class attributes and its docstring; every other method
  defined directly in its body goes (an emptied body gets `pass`). Kept too: `@overload` and
  abstract declarations, and methods the kept code of the class body or any module-level code
  uses at import (`alias = method`, `@method.setter` of a kept property, `Cls.method` in a
  registry). At least two methods must go, else the class is left to `remove_function`.
  Because the class name stays, this mode works for exported classes too.

Test selection cannot be exact for removed definitions: validation runs the full suite.
"""

from __future__ import annotations

import random
from collections.abc import Iterator
from typing import Final

import libcst as cst

from taskmint.excise.candidate import check_valid, make_candidate
from taskmint.excise.context import ExciseContext
from taskmint.excise.imports import import_time_reason
from taskmint.excise.remove_function import decorator_names
from taskmint.excise.splice import Splice, apply_splice
from taskmint.index.locate import DefSite, Located, locate_defs
from taskmint.index.python import SourceSkipped
from taskmint.records import Candidate, SkippedFile

__all__ = [
    "MODES",
    "STRATEGY",
    "candidates",
    "check_class",
    "class_removed_from",
    "methods_to_remove",
    "remove_class",
]

STRATEGY: Final = "remove_class"
MODES = ("whole", "methods")

_SAFE_CLASS_DECORATORS = {
    "dataclass",
    "dataclasses.dataclass",
    "total_ordering",
    "functools.total_ordering",
    "final",
    "typing.final",
    "runtime_checkable",
    "typing.runtime_checkable",
}
_KEEP_DECORATORS = {"overload", "typing.overload", "abstractmethod", "abc.abstractmethod"}


def _class_site(located: Located, qualname: str) -> DefSite:
    site = located.classes.get(qualname)
    if site is None:
        raise LookupError(f"no class {qualname!r} in this file")
    return site


def _is_dunder(name: str) -> bool:
    return name.startswith("__") and name.endswith("__") and len(name) > 4


def _methods(located: Located, site: DefSite) -> list[DefSite]:
    node = site.node
    assert isinstance(node, cst.ClassDef)
    body = node.body.body if isinstance(node.body, cst.IndentedBlock) else ()
    direct = {id(stmt) for stmt in body}
    return sorted(
        (s for s in located.functions.values() if id(s.node) in direct),
        key=lambda s: s.start_line,
    )


def methods_to_remove(located: Located, qualname: str) -> list[DefSite]:
    """The methods mode `methods` removes from class `qualname` (see the module doc)."""
    site = _class_site(located, qualname)
    candidates = [
        m
        for m in _methods(located, site)
        if not _is_dunder(m.node.name.value)
        and not (_KEEP_DECORATORS & set(decorator_names(m.node)))
    ]
    module = located.module
    # names the kept code loads at import: the class body outside the removed methods, and
    # module level outside the class (attribute look-ups `Cls.method`)
    while True:  # keeping a method can make other names needed (its decorators)
        needed = _import_time_names(module, {id(m.node) for m in candidates})
        keep = [m for m in candidates if m.node.name.value in needed]
        if not keep:
            return candidates
        candidates = [m for m in candidates if m not in keep]


class _ImportTimeNames(cst.CSTVisitor):
    """Names and attribute names loaded at import time, skipping some removed defs."""

    def __init__(self, skip: set[int]) -> None:
        self.skip = skip
        self.names: set[str] = set()

    def visit_FunctionDef(self, node: cst.FunctionDef) -> bool:
        if id(node) in self.skip:
            return False
        for deco in node.decorators:
            deco.visit(self)
        node.params.visit(self)
        return False

    def visit_Lambda(self, node: cst.Lambda) -> bool:
        return False

    def visit_Name(self, node: cst.Name) -> None:
        self.names.add(node.value)

    def visit_Attribute(self, node: cst.Attribute) -> bool:
        node.value.visit(self)
        self.names.add(node.attr.value)
        return False

    def visit_ClassDef(self, node: cst.ClassDef) -> bool:
        for deco in node.decorators:
            deco.visit(self)
        for arg in (*node.bases, *node.keywords):
            arg.visit(self)
        node.body.visit(self)
        return False  # the class's own name is a binding, not a load


def _import_time_names(module: cst.Module, removed: set[int]) -> set[str]:
    visitor = _ImportTimeNames(removed)
    module.visit(visitor)
    return visitor.names


def remove_class(source: bytes, qualname: str, *, mode: str = "whole") -> bytes:
    """`source` without class `qualname` (mode "whole") or without the methods
    `methods_to_remove` picks (mode "methods"). Raises `LookupError` for an unknown class, a
    class that is not a statement of a module or class body, or (methods mode) one with no
    method to remove. Safety is `check_class`'s business."""
    return class_removed_from(locate_defs(source), qualname, mode=mode)


def class_removed_from(located: Located, qualname: str, *, mode: str) -> bytes:
    """`remove_class` on an already located file."""
    if mode not in MODES:
        raise ValueError(f"unknown mode {mode!r}; choose one of {MODES}")
    site = _class_site(located, qualname)
    if mode == "whole":
        if not site.direct_parent_is_owner or isinstance(site.owner, cst.FunctionDef):
            raise LookupError(f"class {qualname!r} is not a statement of a module or class")
        targets: list[cst.CSTNode] = [site.node]
    else:
        targets = [m.node for m in methods_to_remove(located, qualname)]
        if not targets:
            raise LookupError(f"class {qualname!r} has no method to remove")
    splice = Splice(statements={t: lambda _: [] for t in targets})
    if mode == "whole":  # a statement of the owner's block
        new = apply_splice(located, splice, site.ancestors[-1], site.ancestors[:-1])
    else:  # statements of the class body
        node = site.node
        assert isinstance(node, cst.ClassDef)
        new = apply_splice(located, splice, node.body, (*site.ancestors, node))
    if splice.applied != len(targets):
        raise LookupError(f"could not remove from class {qualname!r}")
    return new


def check_class(
    ctx: ExciseContext,
    file: str,
    qualname: str,
    mode: str,
    located: Located | None = None,
    *,
    allowed_importers: frozenset[str] = frozenset(),
) -> str | None:
    """None if class `qualname` of `file` can be edited in `mode`, else why it is skipped
    (`allowed_importers` as for `import_time_reason`)."""
    if file not in ctx.sources:
        return "source file was skipped"
    if located is None:
        located = ctx.located(file)
    site = _class_site(located, qualname)
    node = site.node
    assert isinstance(node, cst.ClassDef)
    if site.under_type_checking:
        return "defined under `if TYPE_CHECKING:`; it never runs"
    if not isinstance(site.owner, cst.Module):
        return "a nested class"
    if not site.direct_parent_is_owner:
        return "a conditional definition (under if/try/with): only one branch would go"
    if mode == "methods":
        gone = methods_to_remove(located, qualname)
        if len(gone) < 2:
            return f"only {len(gone)} non-dunder method(s) to remove; use remove_function"
        return None
    name = node.name.value
    for other in located.classes.values():
        if other.node is node:
            continue
        other_node = other.node
        assert isinstance(other_node, cst.ClassDef)
        for base in other_node.bases:
            if name in _names(base.value):
                return f"a base class of {other_node.name.value} in the same module"
    for deco in decorator_names(node):
        if deco not in _SAFE_CLASS_DECORATORS:
            return f"decorated with @{deco}, which may register it at import"
    return import_time_reason(
        ctx.import_uses(file),
        name,
        [(site.start_line, site.end_line)],
        allowed_importers=allowed_importers,
    )


def _names(expr: cst.CSTNode) -> set[str]:
    found: set[str] = set()

    class _V(cst.CSTVisitor):
        def visit_Name(self, node: cst.Name) -> None:
            found.add(node.value)

    expr.visit(_V())
    return found


def candidates(ctx: ExciseContext, *, rng: random.Random) -> Iterator[Candidate | SkippedFile]:
    """For every top-level class: a `whole` candidate and a `methods` candidate, where safe."""
    targets: list[tuple[str, str, str]] = []
    for file in sorted({u.file for u in ctx.index.units}):
        if file not in ctx.sources:
            continue
        try:
            located = ctx.located(file)
        except SourceSkipped as exc:
            yield SkippedFile(path=file, reason=str(exc))
            continue
        for qual in located.classes:
            targets += [(file, qual, mode) for mode in MODES]
    rng.shuffle(targets)
    for file, qual, mode in targets:
        key = f"{file}::{qual}"
        try:
            located = ctx.located(file)
            why = check_class(ctx, file, qual, mode, located)
            if why is not None:
                yield SkippedFile(path=f"{key} ({mode})", reason=why)
                continue
            new = class_removed_from(located, qual, mode=mode)
            invalid = check_valid(new)
            if invalid is not None:
                yield SkippedFile(path=f"{key} ({mode})", reason=invalid)
                continue
            yield _candidate(ctx, file, qual, mode, located, new)
        except (SourceSkipped, LookupError, UnicodeDecodeError) as exc:
            yield SkippedFile(path=f"{key} ({mode})", reason=str(exc))


def _candidate(
    ctx: ExciseContext, file: str, qual: str, mode: str, located: Located, new: bytes
) -> Candidate:
    site = located.classes[qual]
    node = site.node
    assert isinstance(node, cst.ClassDef)
    units_by_key = {f"{u.file}::{u.qualname}": u for u in ctx.units_of(file)}
    if mode == "whole":
        prefix = f"{file}::{qual}."
        gone_keys = {k for k in units_by_key if k.startswith(prefix)}
        spans = [(file, site.start_line, site.end_line)]
        units = [f"{file}::{qual}"]
    else:
        gone = methods_to_remove(located, qual)
        gone_keys = {f"{file}::{m.qualname}" for m in gone}
        spans = [(file, m.start_line, m.end_line) for m in gone]
        units = sorted(gone_keys)
    callers = set().union(*(ctx.callers.get(k, frozenset()) for k in gone_keys))
    return make_candidate(
        ctx,
        strategy=STRATEGY,
        target=mode,
        units=units,
        edits={file: new},
        spans=spans,
        complexity=sum(units_by_key[k].complexity for k in gone_keys if k in units_by_key),
        callers=len(callers - gone_keys),
        has_docstring=node.get_docstring() is not None,
        signature=f"class {node.name.value}",
        docstring=node.get_docstring(),
        whole_class=mode == "whole",
    )
