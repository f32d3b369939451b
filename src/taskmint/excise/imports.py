"""Which names a Python file binds or loads at import time, and who imports them by name.

Removing a top-level definition must not break importing: `ImportUses` records every load that
runs at import time (module and class bodies, decorators, defaults, annotations, bases), the
file's `__all__`, and the files that import each name from it; `import_time_reason` says why
removing a name would break importing. Imports and code under `if TYPE_CHECKING:` never run
and are left out.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass

import libcst as cst

from taskmint.index.locate import Located, is_type_checking
from taskmint.index.python import SourceSkipped, parse_module

__all__ = ["ImportUses", "import_time_reason", "importers", "imports_in"]


@dataclass(frozen=True, slots=True, kw_only=True)
class ImportUses:
    """What must keep existing for `file` and its importers to import.

    `loads`: a name -> (line, what uses it) for every load that runs at import time: module
    and class bodies, decorators, default values, annotations and base classes, everywhere
    except inside function bodies and lambdas (which run later). `attr_loads`: the same for
    attribute names (`x.name`).
    `exported`: the names in the file's `__all__`. `imported_by`: a name -> the files that
    import it by name from this file (`from mod import name`, `import *` for public names);
    imports under `if TYPE_CHECKING:` are left out, they never run.
    """

    file: str
    loads: dict[str, list[tuple[int, str]]]
    attr_loads: dict[str, list[tuple[int, str]]]
    exported: frozenset[str]
    imported_by: dict[str, list[str]]

    @staticmethod
    def of(file: str, located: Located, *, imported_by: dict[str, list[str]]) -> ImportUses:
        """The import-time uses of `file` (parsed as `located`); `imported_by` as `importers`
        finds it."""
        collector = _LoadCollector(located.positions, lazy_annotations=_future_annotations(located))
        located.module.visit(collector)
        return ImportUses(
            file=file,
            loads=collector.loads,
            attr_loads=collector.attr_loads,
            exported=frozenset(collector.exported),
            imported_by=imported_by,
        )

    def uses_outside(
        self, name: str, spans: Sequence[tuple[int, int]], *, attribute: bool = False
    ) -> list[tuple[int, str]]:
        """Import-time loads of `name` (or of attribute `.name`) not on the lines of `spans`
        (the code being removed)."""
        table = self.attr_loads if attribute else self.loads
        return [
            (line, why)
            for line, why in table.get(name, [])
            if not any(first <= line <= last for first, last in spans)
        ]


def _future_annotations(located: Located) -> bool:
    for stmt in located.module.body:
        if isinstance(stmt, cst.SimpleStatementLine):
            for small in stmt.body:
                if (
                    isinstance(small, cst.ImportFrom)
                    and isinstance(small.module, cst.Name)
                    and small.module.value == "__future__"
                    and not isinstance(small.names, cst.ImportStar)
                    and any(
                        isinstance(a.name, cst.Name) and a.name.value == "annotations"
                        for a in small.names
                    )
                ):
                    return True
    return False


class _LoadCollector(cst.CSTVisitor):
    """Import-time loads; with `from __future__ import annotations`, annotations are strings
    that nothing evaluates at import, so they are left out."""

    def __init__(self, positions: Mapping[cst.CSTNode, object], *, lazy_annotations: bool) -> None:
        self.positions = positions
        self.lazy_annotations = lazy_annotations
        self.loads: dict[str, list[tuple[int, str]]] = {}
        self.attr_loads: dict[str, list[tuple[int, str]]] = {}
        self.exported: list[str] = []
        self.context: list[str] = ["module level"]

    def _line(self, node: cst.CSTNode) -> int:
        return self.positions[node].start.line  # type: ignore[attr-defined]

    def _add(self, name: str, node: cst.CSTNode, *, attribute: bool = False) -> None:
        table = self.attr_loads if attribute else self.loads
        table.setdefault(name, []).append((self._line(node), self.context[-1]))

    def visit_FunctionDef(self, node: cst.FunctionDef) -> bool:
        self.context.append("a decorator")
        for deco in node.decorators:
            deco.visit(self)
        self.context[-1] = "a default value or annotation"
        node.params.visit(self)
        if node.returns is not None and not self.lazy_annotations:
            node.returns.visit(self)
        self.context.pop()
        return False  # the body runs when called, not at import

    def visit_Annotation(self, node: cst.Annotation) -> bool:
        return not self.lazy_annotations

    def visit_Lambda(self, node: cst.Lambda) -> bool:
        node.params.visit(self)
        return False

    def visit_ClassDef(self, node: cst.ClassDef) -> bool:
        self.context.append("a class decorator")
        for deco in node.decorators:
            deco.visit(self)
        self.context[-1] = f"the bases of class {node.name.value}"
        for arg in (*node.bases, *node.keywords):
            arg.visit(self)
        self.context[-1] = f"the body of class {node.name.value}"
        node.body.visit(self)
        self.context.pop()
        return False

    def visit_If(self, node: cst.If) -> bool:
        if is_type_checking(node.test):  # never runs
            if node.orelse is not None:
                node.orelse.visit(self)
            return False
        return True

    def visit_Name(self, node: cst.Name) -> None:
        self._add(node.value, node)

    def visit_Attribute(self, node: cst.Attribute) -> bool:
        node.value.visit(self)
        self._add(node.attr.value, node.attr, attribute=True)
        return False

    def visit_Import(self, node: cst.Import) -> bool:
        return False

    def visit_ImportFrom(self, node: cst.ImportFrom) -> bool:
        return False

    def visit_Param(self, node: cst.Param) -> bool:
        if node.annotation is not None and not self.lazy_annotations:
            node.annotation.visit(self)
        if node.default is not None:
            node.default.visit(self)
        return False

    def visit_Assign(self, node: cst.Assign) -> None:
        for target in node.targets:
            if isinstance(target.target, cst.Name) and target.target.value == "__all__":
                self.exported.extend(_strings(node.value))

    def visit_AugAssign(self, node: cst.AugAssign) -> None:
        if isinstance(node.target, cst.Name) and node.target.value == "__all__":
            self.exported.extend(_strings(node.value))

    def visit_AssignTarget(self, node: cst.AssignTarget) -> bool:
        # the bound name is not a load; subscripts and attributes load their base
        return not isinstance(node.target, cst.Name)


def _strings(node: cst.BaseExpression) -> list[str]:
    out: list[str] = []
    if isinstance(node, cst.List | cst.Tuple | cst.Set):
        for el in node.elements:
            if isinstance(el.value, cst.SimpleString):
                value = el.value.evaluated_value
                if isinstance(value, str):
                    out.append(value)
    return out


def _module_name(path: str) -> tuple[str, bool]:
    parts = path[: -len(".py")].split("/")
    is_package = parts[-1] == "__init__"
    if is_package:
        parts = parts[:-1]
    return ".".join(parts), is_package


def _absolute(importer: str, node: cst.ImportFrom) -> str:
    mod = cst.Module(body=[]).code_for_node(node.module) if node.module is not None else ""
    dots = len(node.relative)
    if not dots:
        return mod
    own, is_package = _module_name(importer)
    base = own.split(".") if own else []
    drop = dots - 1 if is_package else dots
    base = base[: len(base) - drop] if drop <= len(base) else []
    return ".".join([*base, mod] if mod else base)


def _same_module(a: str, b: str) -> bool:
    return bool(a) and bool(b) and (a == b or a.endswith("." + b) or b.endswith("." + a))


class _ImportFinder(cst.CSTVisitor):
    def __init__(self) -> None:
        self.found: list[cst.ImportFrom] = []

    def visit_If(self, node: cst.If) -> bool:
        if is_type_checking(node.test):
            if node.orelse is not None:
                node.orelse.visit(self)
            return False
        return True

    def visit_ImportFrom(self, node: cst.ImportFrom) -> None:
        self.found.append(node)


def imports_in(data: bytes) -> list[cst.ImportFrom]:
    """The `from ... import ...` statements of a file that run (not under `TYPE_CHECKING`)."""
    if b"import" not in data:
        return []
    try:
        module = parse_module(data)
    except SourceSkipped:
        return []
    finder = _ImportFinder()
    module.visit(finder)
    return finder.found


def importers(
    file: str, paths: Iterable[str], imports_of: Callable[[str], Sequence[cst.ImportFrom]]
) -> dict[str, list[str]]:
    """A name -> the files among `paths` that import it from `file` by name ("*" for a star
    import); `imports_of(path)` gives a file's imports (see `imports_in`)."""
    target, _ = _module_name(file)
    out: dict[str, list[str]] = {}
    for path in paths:
        if path == file:
            continue
        for node in imports_of(path):
            if not _same_module(_absolute(path, node), target):
                continue
            if isinstance(node.names, cst.ImportStar):
                out.setdefault("*", []).append(path)
                continue
            for alias in node.names:
                name = cst.Module(body=[]).code_for_node(alias.name)
                out.setdefault(name, []).append(path)
    return out


def import_time_reason(
    uses: ImportUses,
    name: str,
    spans: Sequence[tuple[int, int]],
    *,
    allowed_importers: frozenset[str] = frozenset(),
) -> str | None:
    """Why removing top-level `name` would break importing (None: it would not).

    `allowed_importers`: files that may stop importing (strategy `feature`: the test files
    whose every test belongs to the feature; their tests fail, which is the feature)."""
    if name in uses.exported:
        return f"{name} is listed in __all__ (`from {uses.file} import *` would fail)"
    blocking = sorted(set(uses.imported_by.get(name, ())) - allowed_importers)
    if blocking:
        return f"{name} is imported by name in {', '.join(blocking[:3])}: importing would fail"
    stars = [f for f in uses.imported_by.get("*", ()) if f not in allowed_importers]
    if stars and not name.startswith("_") and not uses.exported:
        return f"{name} is public and {stars[0]} star-imports this module"
    outside = uses.uses_outside(name, spans)
    if outside:
        line, why = outside[0]
        return f"{name} is used at import time, in {why} (line {line})"
    return None
