"""What one test leaves behind for the next, in the coverage run (runs INSIDE the sandbox).

The coverage map says which tests executed which lines, and selection trusts that a test that
never executed a line cannot observe a change to it. Within one process that holds only if no
test reads what an earlier test computed: a memo (`functools.lru_cache`, a module-level dict
filled on demand, a mutable default argument, a cache held in a closure), a lazily built
global, a registry filled by calls. The first test to call `wcwidth("a")` runs its body; every
later one gets the cached value and executes nothing, yet on a broken tree it gets the broken
value (the full suite fails it; a selection built from this map would not run it).

The coverage run handles that in two ways, per test (`Watch.before` / `Watch.after` around
each test's setup, call and teardown):

1. The `functools` caches of the workspace's code (`lru_cache`, `cache`) that were empty once
   the tests were collected are emptied again before each test. Each test then computes what it
   uses, so its own context holds the lines that compute it, as when it runs first. A cache
   that already held entries after collection is never cleared (its entries are part of the
   state every test starts from); it is watched like any other state below.
2. The mutable objects reachable from the workspace's modules (their globals, the classes and
   functions they define with their dicts, defaults and closures, and the containers and
   objects under them, to `MAX_DEPTH` levels and `MAX_NODES` objects) are found once
   (`discover`), and the ids they hold are compared before and after each test (`quick`). A
   test after which they differ (it bound, added, removed or replaced something: a memo entry,
   a lazily built table, a new workspace module) may have left values computed by its lines
   for later tests to read, so every line it executed is marked as shared (any edit to them
   runs the full suite), and what became reachable through the objects it changed is watched
   too (`_extend`: a walk from those objects only; the whole walk again when a module came or
   went, or when the watched objects doubled). So is any test while they cannot be found whole
   (more than `MAX_NODES` objects reachable). On click 8.4.2, whose tests fill a weak-keyed
   cache of stream wrappers (904 of its 1593 tests change it), the coverage run took 42 s with
   a whole walk after each such test and 33 s with `_extend`, marking the same tests.

What this does not see: state kept outside the workspace's modules (a third-party registry, the
logging tree, the environment, files). Such a leak also makes the later test's outcome depend
on the order, which the original's shuffled runs are there to catch.
"""

from __future__ import annotations

import collections
import functools
import os
import sys
import types
from typing import Any

MAX_DEPTH = 5  # levels below a module's globals
MAX_NODES = 200_000  # objects `discover` visits; past this every test counts as leaking

_LRU = getattr(functools, "_lru_cache_wrapper", None)
_LEAVES = (int, float, complex, str, bytes, bool, type(None), range, slice, type(Ellipsis))
_SEQUENCES = (list, tuple, set, frozenset, collections.deque)
# A module's import machinery (its loader may be pytest's assertion rewriter, with state of its
# own), the builtins, and the registry `warnings` keeps of what the module warned (it only
# decides whether a repeated warning shows, and pytest's warning capture resets it): not the
# module's state.
_WARNED = "__warningregistry__"
_MODULE_PLUMBING = frozenset({"__builtins__", "__loader__", "__spec__", _WARNED})
# What the runtime writes on a class between tests: unittest's `doClassCleanups` sets a new
# `tearDown_exceptions` list after every TestCase class, and `copyreg` caches `__slotnames__`
# on a class the first time one of its instances is copied or pickled. Bookkeeping, not state.
_BOOKKEEPING = frozenset(
    {"tearDown_exceptions", "_classSetupFailed", "_class_cleanups", "__slotnames__"}
)


def _under(path: object, root: str) -> bool:
    return isinstance(path, str) and os.path.abspath(path).startswith(root)


class Watch:
    """The state the workspace's modules hold, between the tests of one coverage run."""

    def __init__(self, root: str) -> None:
        self.root = os.path.abspath(root).rstrip(os.sep) + os.sep
        self.caches: list[object] = []  # cache wrappers emptied before each test
        self.kept: set[int] = set()  # ids of cache wrappers that held entries after collection
        self.known: set[int] = set()
        self.groups: dict[str, list[Any]] = {}  # what `discover` found that a test could change
        self.leaked: list[str] = []  # the tests that left state behind (the plugin fills it)
        self._modules_key: tuple[int, ...] = ()
        self._module_names: tuple[str, ...] = ()
        self.whole = True  # whether `discover` saw everything (not past MAX_NODES)
        self._names_now: set[str] = set()  # the workspace's module names at the last walk
        self._found = 0  # objects the last whole walk kept
        self.last: object = None

    def _modules(self) -> list[tuple[str, types.ModuleType]]:
        found = []
        for name, mod in list(sys.modules.items()):
            if isinstance(mod, types.ModuleType):
                try:
                    path = mod.__dict__.get("__file__")
                except Exception:  # a module object that hides its dict
                    continue
                if _under(path, self.root):
                    found.append((name, mod))
        return sorted(found, key=lambda pair: pair[0])

    def _cache(self, wrapper: object) -> None:
        key = id(wrapper)
        if key in self.known:
            return
        self.known.add(key)
        try:
            size = wrapper.cache_info().currsize  # type: ignore[attr-defined]
        except Exception:
            self.kept.add(key)
            return
        if size:
            self.kept.add(key)
        else:
            self.caches.append(wrapper)

    def discover(self) -> bool:
        """Walk everything reachable from the workspace's modules (see the module doc) and keep
        the mutable objects met on the way (`quick` reads them); find the cache wrappers
        (`_cache`). False when there were more than MAX_NODES objects."""
        modules = self._modules()
        self._names_now = {name for name, _ in modules}
        seen: set[int] = {id(mod.__dict__) for _, mod in modules}
        stack: list[tuple[object, int]] = []
        for _, mod in reversed(modules):
            stack.extend((v, 1) for v in _module_values(mod.__dict__))
        mutable: list[object] = []
        if not self._walk(stack, seen, mutable, MAX_NODES):
            self.groups = _group([], modules)
            return False
        self.groups = _group(mutable, modules)
        self._found = sum(len(v) for v in self.groups.values())
        return True

    def _walk(
        self, stack: list[tuple[object, int]], seen: set[int], mutable: list[object], budget: int
    ) -> bool:
        """Visit what `stack` reaches (to MAX_DEPTH levels), skipping `seen`; append the
        mutable objects met to `mutable`. False past `budget` objects."""
        visited = 0
        while stack:
            obj, depth = stack.pop()
            key = id(obj)
            if key in seen:
                continue
            seen.add(key)
            visited += 1
            if visited > budget:
                return False
            keep, children = self._expand(obj)
            if keep:
                mutable.append(obj)
            if depth < MAX_DEPTH:
                stack.extend(
                    (child, depth + 1)
                    for child in reversed(children)
                    if child is not None and not isinstance(child, _LEAVES)
                )
        return True

    def _expand(self, obj: object) -> tuple[bool, list[object]]:
        """Whether `obj` is state a test can change (kept for `quick`), and what it holds."""
        if isinstance(obj, dict):
            children: list[object] = []
            for k, v in list(dict.items(obj)):
                children.append(k)
                children.append(v)
            return True, children
        if isinstance(obj, _SEQUENCES):
            return not isinstance(obj, (tuple, frozenset)), _elements(obj)
        if isinstance(obj, bytearray):
            return True, []
        if _LRU is not None and isinstance(obj, _LRU):
            self._cache(obj)
            return id(obj) in self.kept, [getattr(obj, "__wrapped__", None), _own_dict(obj)]
        if isinstance(obj, types.FunctionType):
            children = [obj.__defaults__, obj.__kwdefaults__, obj.__dict__ or None]
            children.extend(_cell(c) for c in obj.__closure__ or ())
            return True, children
        if isinstance(obj, (classmethod, staticmethod)):
            return False, [obj.__func__]
        if isinstance(obj, property):
            return False, [obj.fget, obj.fset, obj.fdel]
        if isinstance(obj, type):
            # classes defined in the workspace: their attributes; other classes are shared
            # library state this does not watch (see the module doc)
            own = type.__getattribute__(obj, "__dict__")
            if own.get("__module__") in self._names_now:
                return True, list(own.values())
            return False, []
        if isinstance(obj, (types.ModuleType, *_LEAVES)):
            return False, []  # modules are roots of their own; leaves are seen through ids
        slots = _slot_values(obj, type(obj))
        return bool(slots), [_own_dict(obj), *slots]

    def _extend(self, last: tuple[Any, ...], now: tuple[Any, ...]) -> bool:
        """After a test changed some of the watched objects (and no module came or went):
        watch what became reachable through them, walking from those objects only. The
        objects already watched stay watched (they are held, so their ids stay theirs). False
        when that cannot be done within the budget: then everything is found again."""
        g = self.groups
        changed: list[object] = []
        modules = {id(d) for d in g["modules"]}
        for i, kind in enumerate(("modules", *_KINDS), start=1):
            for j, (before, after) in enumerate(zip(last[i], now[i], strict=True)):
                if before != after:
                    changed.append(g[kind][j])
        watched = {id(o) for objects in g.values() for o in objects}
        stack: list[tuple[object, int]] = []
        for obj in changed:
            if id(obj) in modules:
                stack.extend((v, 1) for v in _module_values(obj))  # type: ignore[arg-type]
            elif isinstance(obj, types.CellType):
                stack.append((_cell(obj), 1))
            else:
                stack.extend((c, 1) for c in self._expand(obj)[1])
        mutable: list[object] = []
        stack = [(o, d) for o, d in stack if o is not None and not isinstance(o, _LEAVES)]
        if not self._walk(stack, watched, mutable, MAX_NODES):
            return False
        for kind, objects in _group(mutable, []).items():
            g[kind].extend(objects)
        # Watched objects are held, so what tests add and drop would pile up: past twice what
        # the last whole walk found, walk again from the modules (which lets go of the rest).
        return sum(len(v) for v in g.values()) <= min(MAX_NODES, 2 * self._found)

    def quick(self) -> object:
        """The ids and sizes held by the mutable objects `discover` found: anything new that
        became reachable did so through one of them, so it changes this. One comprehension per
        kind of object (`_group`): this runs after every test."""
        g = self.groups
        return (
            self._names(),
            [_globals(d) for d in g["modules"]],
            [(tuple(map(id, dict.keys(d))), tuple(map(id, dict.values(d)))) for d in g["dicts"]],
            [tuple(map(id, _elements(e))) for e in g["seqs"]],
            [bytes(b) for b in g["bytes"]],
            [w.cache_info().currsize for w in g["lru"]],
            [(id(f.__defaults__), id(f.__kwdefaults__), len(f.__dict__)) for f in g["funcs"]],
            [id(_cell(c)) for c in g["cells"]],
            [_namespace(t) for t in g["types"]],
            [tuple(map(id, _slot_values(o, type(o)))) for o in g["other"]],
        )

    def _names(self) -> tuple[str, ...]:
        """The workspace's module names (recomputed only when sys.modules changed)."""
        key = tuple(map(id, list(sys.modules.values())))
        if key != self._modules_key:
            self._modules_key = key
            self._module_names = tuple(name for name, _ in self._modules())
        return self._module_names

    def before(self) -> None:
        """Empty the workspace's caches that were empty after collection; note the state (as
        the previous test left it: nothing of the workspace runs between two tests)."""
        if self.last is None:
            self.whole = self.discover()
            self.last = self.quick()
        for wrapper in self.caches:
            wrapper.cache_clear()  # type: ignore[attr-defined]

    def after(self) -> bool:
        """Whether the test since `before` changed the state (or it could not be told)."""
        for wrapper in self.caches:
            wrapper.cache_clear()  # type: ignore[attr-defined]
        now = self.quick()
        if now == self.last and self.whole:
            return False
        last = self.last
        if not (
            self.whole
            and isinstance(last, tuple)
            and last[0] == now[0]  # type: ignore[index]
            and self._extend(last, now)  # type: ignore[arg-type]
        ):
            self.whole = self.discover()
        self.last = self.quick()
        return True


# The kinds of watched objects, in the order `quick` lists them after the module names and
# the module dicts.
_KINDS = ("dicts", "seqs", "bytes", "lru", "funcs", "cells", "types", "other")


def _module_values(module_dict: dict[str, Any]) -> list[object]:
    """What a module's globals hold that could be state (its import plumbing aside)."""
    return [
        v
        for k, v in list(module_dict.items())
        if k not in _MODULE_PLUMBING and not isinstance(v, _LEAVES)
    ]


def _group(
    mutable: list[object], modules: list[tuple[str, types.ModuleType]]
) -> dict[str, list[Any]]:
    """The module dicts and the mutable objects `discover` found, by kind, for `quick`."""
    groups: dict[str, list[Any]] = {k: [] for k in _KINDS}
    groups["modules"] = [mod.__dict__ for _, mod in modules]
    for obj in mutable:
        if isinstance(obj, dict):
            groups["dicts"].append(obj)
        elif isinstance(obj, (list, set, collections.deque)):
            groups["seqs"].append(obj)
        elif isinstance(obj, bytearray):
            groups["bytes"].append(obj)
        elif _LRU is not None and isinstance(obj, _LRU):
            groups["lru"].append(obj)
        elif isinstance(obj, types.FunctionType):
            groups["funcs"].append(obj)
            groups["cells"].extend(obj.__closure__ or ())
        elif isinstance(obj, type):
            groups["types"].append(obj)
        else:
            groups["other"].append(obj)
    return groups


def _globals(module_dict: dict[str, Any]) -> tuple[tuple[int, ...], tuple[int, ...]]:
    """The ids of a module's global names and values, its `__warningregistry__` aside."""
    if _WARNED in module_dict:
        module_dict = {k: v for k, v in dict.items(module_dict) if k != _WARNED}
    return tuple(map(id, dict.keys(module_dict))), tuple(map(id, dict.values(module_dict)))


def _namespace(cls: type) -> tuple[tuple[int, ...], tuple[int, ...]]:
    """The ids of a class's attribute names and values, bookkeeping aside (`_BOOKKEEPING`)."""
    own = type.__getattribute__(cls, "__dict__")
    if not _BOOKKEEPING.isdisjoint(own):
        own = {k: v for k, v in own.items() if k not in _BOOKKEEPING}
    return tuple(map(id, own.keys())), tuple(map(id, own.values()))


def _elements(obj: object) -> list[object]:
    """The elements of a (subclass of a) builtin sequence or set, read by the builtin's own
    iterator: a subclass's `__iter__` is seed code, and reading must run none of it."""
    for base in _SEQUENCES:
        if isinstance(obj, base):
            return list(base.__iter__(obj))  # type: ignore[arg-type]
    return []


def _own_dict(obj: object) -> object:
    try:
        own = object.__getattribute__(obj, "__dict__")
    except Exception:
        return None
    return own if isinstance(own, dict) else None


def _cell(cell: object) -> object:
    try:
        return cell.cell_contents  # type: ignore[attr-defined]
    except ValueError:  # an empty cell
        return None


def _slot_values(obj: object, kind: type) -> list[object]:
    """The values in `obj`'s `__slots__` (read through the slots' own descriptors)."""
    values = []
    for base in kind.__mro__:
        slots = base.__dict__.get("__slots__", ())
        for name in (slots,) if isinstance(slots, str) else slots:
            member = base.__dict__.get(name)
            if isinstance(member, types.MemberDescriptorType):
                try:
                    values.append(member.__get__(obj, kind))
                except AttributeError:  # not set
                    values.append(None)
    return values
