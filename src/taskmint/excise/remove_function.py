"""Strategy `remove_function`: a whole top-level function or method disappears.

The `def`, its decorators, its body and the comment lines directly above it go; a comment
separated from it by a blank line (a section comment) stays, moved to the next statement. A
class whose last statement was the method gets `pass`. Unlike `stub_body`, the name itself is
gone, so the solver must also restore the signature from the call sites and the tests.

What is removed and what is skipped, deliberately:

- Only top-level functions and methods defined directly in a top-level class are removed;
  nested functions, nested classes' methods and conditional definitions (under `if`, `try`)
  are skipped: removing them changes the enclosing code or only one branch of a definition.
- Code under `if TYPE_CHECKING:` never runs: skipped.
- A name that importing needs is skipped: listed in `__all__` (`import *` would fail),
  imported by name by another file of the seed, sources or tests (`from mod import f` would
  fail, and with it every test of the importing file), star-imported when public, or used at
  import time in its module (a decorator `@f.register`, a registry `{"SUM": fn_sum}`, a
  default value, a base class, `alias = f` in a class body). Such removals break everything
  that imports the module, not the feature. Uses inside function bodies are fine: they fail
  when called, which is the feature.
- Decorators: `staticmethod`, `classmethod`, `property` and its accessors, `functools` caches
  and `singledispatch` registrations (`@f.register`: the registration for that type goes, the
  dispatcher stays) are removed with the function. Any other decorator may register or wrap
  the function at import, with effects beyond its behaviour: skipped.
- A property getter goes together with its `@x.setter`/`@x.deleter` accessors (the accessors
  would otherwise reference a name that no longer exists, and the class would not build);
  removing an accessor alone leaves a read-only (or undeletable) property.
- `@overload` declarations carry no behaviour: skipped; the implementation goes together with
  its overload declarations.
- Methods that run at class creation (`__init_subclass__`, `__set_name__`,
  `__class_getitem__`, any method of a metaclass) and a module's `__getattr__`/`__dir__`
  change importing itself: skipped.

Test selection cannot be exact for a removed definition (attribute look-ups, `hasattr`,
`dir()`): validation runs the full suite.
"""

from __future__ import annotations

import random
from collections.abc import Iterator, Sequence
from typing import Final

import libcst as cst

from taskmint.excise.candidate import check_valid, make_candidate
from taskmint.excise.context import ExciseContext, unit_key
from taskmint.excise.imports import import_time_reason
from taskmint.excise.splice import Splice, apply_splice
from taskmint.index.locate import DefSite, Located, locate_defs
from taskmint.index.python import SourceSkipped
from taskmint.records import Candidate, SkippedFile, Unit

__all__ = [
    "STRATEGY",
    "candidates",
    "check_function",
    "decorator_names",
    "function_group",
    "remove_function",
    "removed_from",
]

STRATEGY: Final = "remove_function"

_SAFE_DECORATORS = {
    "staticmethod",
    "classmethod",
    "property",
    "cached_property",
    "functools.cached_property",
    "cache",
    "functools.cache",
    "lru_cache",
    "functools.lru_cache",
    "singledispatch",
    "functools.singledispatch",
    "singledispatchmethod",
    "functools.singledispatchmethod",
}
_PROPERTY = {"property", "cached_property", "functools.cached_property"}
_ABSTRACT = {"overload", "typing.overload", "abstractmethod", "abc.abstractmethod"}
_CLASS_CREATION = {"__init_subclass__", "__set_name__", "__class_getitem__", "__prepare__"}
_MODULE_HOOKS = {"__getattr__", "__dir__"}


def _code(node: cst.CSTNode) -> str:
    return cst.Module(body=[]).code_for_node(node).strip()


def decorator_names(node: cst.FunctionDef | cst.ClassDef) -> list[str]:
    """Each decorator as written, without its call arguments ("functools.lru_cache")."""
    out = []
    for deco in node.decorators:
        expr = deco.decorator
        if isinstance(expr, cst.Call):
            expr = expr.func
        out.append(_code(expr))
    return out


def _body_of(owner: cst.CSTNode) -> Sequence[cst.BaseStatement]:
    if isinstance(owner, cst.Module):
        return owner.body
    assert isinstance(owner, cst.ClassDef | cst.FunctionDef)
    body = owner.body
    return body.body if isinstance(body, cst.IndentedBlock) else ()


def function_group(located: Located, site: DefSite) -> list[DefSite]:
    """The definitions that go together with `site`: itself, plus a property getter's
    accessors, or an implementation's `@overload` declarations."""
    node = site.node
    assert isinstance(node, cst.FunctionDef)
    name = node.name.value
    siblings = [
        s
        for s in located.functions.values()
        if s.node is not node
        and s.node.name.value == name
        and s.ancestors == site.ancestors
        and any(st is s.node for st in _body_of(site.owner))
    ]
    group = [site]
    decos = decorator_names(node)
    if any(d in _PROPERTY for d in decos):
        accessors = {f"{name}.setter", f"{name}.deleter", f"{name}.getter"}
        group += [s for s in siblings if accessors & set(decorator_names(s.node))]
    elif not any(d in _ABSTRACT for d in decos):
        group += [
            s
            for s in siblings
            if s.start_line < site.start_line
            and any(d in ("overload", "typing.overload") for d in decorator_names(s.node))
        ]
    return sorted(group, key=lambda s: s.start_line)


def _find(located: Located, qualname: str) -> DefSite:
    site = located.functions.get(qualname)
    if site is None:
        raise LookupError(f"no function {qualname!r} in this file")
    return site


def remove_function(source: bytes, qualname: str) -> bytes:
    """`source` without function `qualname` ("f", "Class.method", "f#2") and its group (see
    `function_group`). Raises `LookupError` if there is no such function, or if it is not a
    statement of a module or class body. It does not check that removing it is safe: see
    `check_function`."""
    return removed_from(locate_defs(source), qualname)


def removed_from(located: Located, qualname: str) -> bytes:
    """`remove_function` on an already located file."""
    site = _find(located, qualname)
    if not site.direct_parent_is_owner or isinstance(site.owner, cst.FunctionDef):
        raise LookupError(f"{qualname!r} is not defined directly in a module or class body")
    group = function_group(located, site)
    splice = Splice(statements={s.node: lambda _: [] for s in group})
    # the owner's block: the Module, or the class body (the last ancestor)
    new = apply_splice(located, splice, site.ancestors[-1], site.ancestors[:-1])
    if splice.applied != len(group):
        raise LookupError(f"could not remove {qualname!r}: not a statement of its owner")
    return new


def check_function(
    ctx: ExciseContext,
    unit: Unit,
    located: Located | None = None,
    *,
    allowed_importers: frozenset[str] = frozenset(),
) -> str | None:
    """None if `unit` can be removed, else the reason it is skipped (see the module doc;
    `allowed_importers` as for `import_time_reason`)."""
    if unit.file not in ctx.sources:
        return "source file was skipped"
    if located is None:
        located = ctx.located(unit.file)
    site = _find(located, unit.qualname)
    node = site.node
    assert isinstance(node, cst.FunctionDef)
    name = node.name.value
    owner = site.owner
    if site.under_type_checking:
        return "defined under `if TYPE_CHECKING:`; it never runs"
    if isinstance(owner, cst.FunctionDef):
        return "a nested function: removing it breaks the enclosing function; stub that instead"
    if not site.direct_parent_is_owner:
        return "a conditional definition (under if/try/with): only one branch would go"
    decos = decorator_names(node)
    for deco in decos:
        if deco in _ABSTRACT:
            return f"an @{deco} declaration: it has no behaviour to remove"
    if unit.body_lines < ctx.min_body_lines:
        return f"body has {unit.body_lines} line(s), fewer than {ctx.min_body_lines}"
    dispatchers = {
        s.node.name.value
        for s in located.functions.values()
        if {"singledispatch", "functools.singledispatch", "singledispatchmethod"}
        & set(decorator_names(s.node))
    }
    for deco in decos:
        head, _, tail = deco.rpartition(".")
        if deco in _SAFE_DECORATORS or tail in ("setter", "deleter", "getter"):
            continue
        if tail == "register" and head in dispatchers:
            continue
        return (
            f"decorated with @{deco}, which may register or wrap it at import: removing it "
            "could break more than its own behaviour"
        )
    group = function_group(located, site)
    spans = [(s.start_line, s.end_line) for s in group]
    uses = ctx.import_uses(unit.file)
    if isinstance(owner, cst.Module):
        if name in _MODULE_HOOKS:
            return f"module-level {name} takes part in importing the module"
        return import_time_reason(uses, name, spans, allowed_importers=allowed_importers)
    assert isinstance(owner, cst.ClassDef)
    if owner.name.value != unit.qualname.split(".")[0] or not isinstance(
        site.ancestors[0], cst.Module
    ):
        return "a method of a nested class"
    owner_idx = site.ancestors.index(owner)
    if owner_idx != 1:
        return "a method of a class that is not at module level"
    if name in _CLASS_CREATION:
        return f"{name} runs when classes are created, at import"
    if any(_code(b.value) in ("type", "ABCMeta", "abc.ABCMeta") for b in owner.bases):
        return "a metaclass method: it runs when classes are created, at import"
    cls_first, cls_last = located.lines(owner)
    for line, _ in uses.uses_outside(name, spans):
        if cls_first <= line <= cls_last:
            return f"{name} is used in the body of class {owner.name.value} (line {line})"
    outside = uses.uses_outside(name, spans, attribute=True)
    if outside:
        line, why = outside[0]
        return f".{name} is looked up at import time, in {why} (line {line})"
    return None


def candidates(ctx: ExciseContext, *, rng: random.Random) -> Iterator[Candidate | SkippedFile]:
    """One candidate per removable function or method, in a seeded order."""
    pool = sorted(ctx.index.units, key=lambda u: u.unit_id)
    rng.shuffle(pool)
    for unit in pool:
        key = unit_key(unit)
        try:
            why = check_function(ctx, unit)
            if why is not None:
                yield SkippedFile(path=key, reason=why)
                continue
            located = ctx.located(unit.file)
            new = removed_from(located, unit.qualname)
            invalid = check_valid(new)
            if invalid is not None:
                yield SkippedFile(path=key, reason=invalid)
                continue
            group = function_group(located, located.functions[unit.qualname])
            group_keys = {f"{unit.file}::{s.qualname}" for s in group}
            units = [u for u in ctx.units_of(unit.file) if f"{u.file}::{u.qualname}" in group_keys]
            callers = set().union(*(ctx.callers.get(k, frozenset()) for k in group_keys))
            yield make_candidate(
                ctx,
                strategy=STRATEGY,
                target="def",
                units=sorted(group_keys),
                edits={unit.file: new},
                spans=[(unit.file, s.start_line, s.end_line) for s in group],
                complexity=sum(u.complexity for u in units) or unit.complexity,
                callers=len(callers - group_keys),
                has_docstring=unit.docstring is not None,
                signature=unit.signature,
                docstring=unit.docstring,
            )
        except (SourceSkipped, LookupError, UnicodeDecodeError) as exc:
            yield SkippedFile(path=key, reason=str(exc))
