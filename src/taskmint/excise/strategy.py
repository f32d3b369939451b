"""The interface every excision strategy shares, and the machinery they share.

A strategy is a module with `STRATEGY = "<name>"`, an edit function turning source bytes and a
target into new bytes (raising `LookupError` for an unknown target), and a generator

    candidates(ctx: ExciseContext, *, rng: random.Random) -> Iterator[Candidate | SkippedFile]

that yields one `Candidate` per edit it can make, or a `SkippedFile` (path "file::target" and
the reason) for each target it deliberately leaves alone. Generators never raise for a bad
target: a target that cannot be edited is a `SkippedFile`. The order is the seeded `rng`'s, so
two runs with the same seed yield the same candidates in the same order.

`ExciseContext` is built once per seed (`build_context`): the source bytes of every Python file
of the seed (sources and tests, for import analysis), the call graph (for the `callers`
feature) and, when available, the per-test coverage map (which `feature_cluster` needs and
`remove_block` uses to prefer blocks some test runs). `make_candidate` turns an edit into a
`Candidate` with both diffs, the removed code, the spans and the static difficulty features
(`knobs.static_features`), so every strategy records the same features the same way.

Also here: locating definitions the way the indexer names them (`locate_defs`), the analysis of
which names are bound at import time (`ImportUses`), and `Splice`, a libcst transformer that
replaces or removes statements of blocks while keeping every other byte (a removed statement's
detached comment lines move to the next statement; an emptied block gets `pass`).
"""

from __future__ import annotations

import importlib
import random
from collections.abc import Callable, Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from types import CodeType

import libcst as cst
from libcst.metadata import MetadataWrapper, PositionProvider

from taskmint.index.coverage import CoverageMap
from taskmint.index.python import SourceSkipped, parse_module, read_source
from taskmint.patches import unified_diff
from taskmint.records import Candidate, CodeIndex, SeedApp, SkippedFile, Unit, stable_id

__all__ = [
    "STRATEGIES",
    "DefSite",
    "ExciseContext",
    "ImportUses",
    "Located",
    "NodeEdit",
    "Splice",
    "StatementEdit",
    "apply_splice",
    "block_statements",
    "build_context",
    "candidates_for",
    "check_valid",
    "compile_edit",
    "import_time_reason",
    "locate_defs",
    "make_candidate",
    "removed_lines",
    "stub_body_candidates",
    "unit_key",
]

# every strategy, in the order a mixed batch should try them
STRATEGIES = ("stub_body", "remove_function", "remove_class", "remove_block", "feature_cluster")

CandidateStream = Iterator[Candidate | SkippedFile]


def unit_key(unit: Unit) -> str:
    """How candidates name a unit: "path::Qual.name"."""
    return f"{unit.file}::{unit.qualname}"


@dataclass(frozen=True, slots=True, kw_only=True)
class ExciseContext:
    """Everything a strategy needs about one seed, computed once (see `build_context`)."""

    seed: SeedApp
    index: CodeIndex
    sources: Mapping[str, bytes]  # every readable Python file of the seed (sources and tests)
    callers: Mapping[str, frozenset[str]]  # unit key -> keys of the units that call it
    coverage: CoverageMap | None = None
    min_body_lines: int = 2
    skipped_files: tuple[SkippedFile, ...] = ()
    _uses: dict[str, ImportUses] = field(default_factory=dict, repr=False, compare=False)
    _imports: dict[str, list[cst.ImportFrom]] = field(
        default_factory=dict, repr=False, compare=False
    )
    _located: dict[str, Located] = field(default_factory=dict, repr=False, compare=False)

    def units_of(self, file: str) -> list[Unit]:
        """The indexed units of one file, in source order."""
        return [u for u in self.index.units if u.file == file]

    def import_uses(self, file: str) -> ImportUses:
        """What `file` binds or loads at import time (cached per context)."""
        if file not in self._uses:
            self._uses[file] = ImportUses.of(self, file)
        return self._uses[file]

    def located(self, file: str) -> Located:
        """`file` parsed, with every definition located (cached per context; the trees are
        immutable, so edits can share them). Raises `SourceSkipped` or `KeyError`."""
        if file not in self._located:
            self._located[file] = locate_defs(self.sources[file])
        return self._located[file]

    def imports_of(self, file: str) -> list[cst.ImportFrom]:
        """The `from ... import ...` statements of `file` that run (cached per context)."""
        if file not in self._imports:
            self._imports[file] = _imports_of(self.sources[file])
        return self._imports[file]


def build_context(
    seed: SeedApp,
    index: CodeIndex,
    *,
    coverage: CoverageMap | None = None,
    min_body_lines: int = 2,
) -> ExciseContext:
    """Read the seed's Python files and compute the call graph, once for every strategy."""
    from taskmint.excise.knobs import call_graph

    root = Path(seed.root)
    sources: dict[str, bytes] = {}
    skipped: list[SkippedFile] = []
    for rel in sorted(seed.files):
        if not rel.endswith(".py"):
            continue
        try:
            sources[rel] = read_source(root / rel)
        except SourceSkipped as exc:
            skipped.append(SkippedFile(path=rel, reason=str(exc)))
    located: dict[str, Located] = {}
    return ExciseContext(
        seed=seed,
        index=index,
        sources=sources,
        callers=call_graph(sources, index.units, located=located),
        coverage=coverage,
        min_body_lines=min_body_lines,
        skipped_files=tuple(skipped),
        _located=located,
    )


def candidates_for(name: str, ctx: ExciseContext, *, rng: random.Random) -> CandidateStream:
    """The candidate stream of strategy `name` (one of `STRATEGIES`)."""
    if name == "stub_body":
        return stub_body_candidates(ctx, rng=rng)
    if name not in STRATEGIES:
        raise LookupError(f"unknown strategy {name!r}; choose one of {', '.join(STRATEGIES)}")
    module = importlib.import_module(f"taskmint.excise.{name}")
    stream: CandidateStream = module.candidates(ctx, rng=rng)
    return stream


def removed_lines(breaking_patch: str) -> str:
    """The lines a patch removes, each ending in a newline (for leak checks)."""
    return "".join(
        line[1:] + "\n"
        for line in breaking_patch.splitlines()
        if line.startswith("-") and not line.startswith("---")
    )


def make_candidate(
    ctx: ExciseContext,
    *,
    strategy: str,
    target: str,
    units: Sequence[str],
    edits: Mapping[str, bytes],
    spans: Sequence[tuple[str, int, int]],
    complexity: int,
    callers: int,
    has_docstring: bool,
    signature: str = "",
    docstring: str | None = None,
    extra_features: Sequence[tuple[str, float]] = (),
) -> Candidate:
    """A `Candidate` from new file contents (`edits`: path -> new bytes).

    `target` distinguishes edits of the same units (a block's line, a class's mode) in the id.
    Raises `UnicodeDecodeError` for a file that is not UTF-8 (the diffs are text).
    """
    from taskmint.excise.knobs import static_features

    files = tuple(sorted(edits))
    breaking_parts, gold_parts = [], []
    for rel in files:
        old, new = ctx.sources[rel].decode("utf-8"), edits[rel].decode("utf-8")
        breaking_parts.append(unified_diff(rel, old, new))
        gold_parts.append(unified_diff(rel, new, old))
    breaking = "".join(breaking_parts)
    removed = removed_lines(breaking)
    features = static_features(
        lines_removed=removed.count("\n"),
        units=len(units),
        files=len(files),
        complexity=complexity,
        callers=callers,
        has_docstring=has_docstring,
    ) + tuple(extra_features)
    seed = ctx.seed
    return Candidate(
        candidate_id=stable_id(seed.snapshot_id, strategy, target, *sorted(units)),
        snapshot_id=seed.snapshot_id,
        seed=seed.name,
        language=seed.manifest.language,
        strategy=strategy,
        units=tuple(units),
        files=files,
        breaking_patch=breaking,
        gold_patch="".join(gold_parts),
        removed_code=removed,
        signature=signature,
        docstring=docstring,
        features=features,
        spans=tuple(spans),
    )


def check_valid(new: bytes) -> str | None:
    """None if `new` compiles (CPython re-parses it), else why not."""
    code = compile_edit(new)
    return code if isinstance(code, str) else None


def compile_edit(new: bytes) -> CodeType | str:
    """`new` compiled (its code object), or why it does not compile."""
    try:
        return compile(new, "<excised>", "exec", dont_inherit=True)
    except (SyntaxError, ValueError) as exc:
        return f"the edited file does not compile: {exc}"


def apply_splice(
    located: Located, splice: Splice, node: cst.CSTNode, ancestors: Sequence[cst.CSTNode]
) -> bytes:
    """The module's bytes after `splice`, touching only what holds the edits.

    `node` is either a block (Module or IndentedBlock) whose own statements are edited, or a
    statement whose subtree holds every edit (it alone is visited); `ancestors` lead from the
    Module down to it. Only the ancestors are rebuilt, not the whole tree re-visited.
    """
    if isinstance(node, cst.Module | cst.IndentedBlock):
        new: cst.CSTNode = splice._splice(node, node)
    else:
        visited = node.visit(splice)
        assert isinstance(visited, cst.CSTNode)
        new = visited
    child = node
    for parent in reversed(ancestors):
        if isinstance(parent, cst.Module | cst.IndentedBlock):
            body = [new if stmt is child else stmt for stmt in parent.body]
            new = parent.with_changes(body=body)
        elif isinstance(parent, cst.ClassDef | cst.FunctionDef) and parent.body is child:
            new = parent.with_changes(body=new)
        else:  # a less common holder (if, try, with): visit the whole top statement
            top = ancestors[1] if len(ancestors) > 1 else node
            splice.applied = 0
            return apply_splice(located, splice, top, ancestors[:1])
        child = parent
    assert isinstance(new, cst.Module)
    return new.bytes


# --- stub_body behind the uniform interface ------------------------------------------------

_ABSTRACT = ("overload", "typing.overload", "abstractmethod", "abc.abstractmethod")


def stub_body_candidates(ctx: ExciseContext, *, rng: random.Random) -> CandidateStream:
    """Strategy 1 (`excise.stub_body`) as a candidate stream: one candidate per eligible unit."""
    from taskmint.excise.stub_body import STRATEGY, stub_body

    pool = sorted(ctx.index.units, key=lambda u: u.unit_id)
    rng.shuffle(pool)
    for unit in pool:
        key = unit_key(unit)
        if unit.body_lines < ctx.min_body_lines:
            yield SkippedFile(path=key, reason=f"body has {unit.body_lines} line(s)")
            continue
        if any(d.split("(")[0] in _ABSTRACT for d in unit.decorators):
            yield SkippedFile(path=key, reason="an abstract or @overload declaration")
            continue
        if unit.file not in ctx.sources:
            yield SkippedFile(path=key, reason="source file was skipped")
            continue
        try:
            new = stub_body(ctx.sources[unit.file], unit.qualname)
            yield make_candidate(
                ctx,
                strategy=STRATEGY,
                target="body",
                units=(key,),
                edits={unit.file: new},
                spans=((unit.file, unit.body_start_line, unit.end_line),),
                complexity=unit.complexity,
                callers=len(ctx.callers.get(key, ())),
                has_docstring=unit.docstring is not None,
                signature=unit.signature,
                docstring=unit.docstring,
            )
        except (SourceSkipped, LookupError, UnicodeDecodeError) as exc:
            yield SkippedFile(path=key, reason=str(exc))


# --- locating definitions as the indexer names them ------------------------------------------


@dataclass(frozen=True, slots=True, kw_only=True)
class DefSite:
    """A `def` or `class` statement, its indexer-style qualified name and its ancestors."""

    qualname: str
    node: cst.FunctionDef | cst.ClassDef
    ancestors: tuple[cst.CSTNode, ...]  # outermost first, the Module included
    start_line: int  # first line, decorators included
    end_line: int

    @property
    def owner(self) -> cst.CSTNode:
        """The nearest enclosing `def`/`class`, or the Module."""
        for node in reversed(self.ancestors):
            if isinstance(node, cst.FunctionDef | cst.ClassDef | cst.Module):
                return node
        raise AssertionError("a definition outside any module")

    @property
    def under_type_checking(self) -> bool:
        """Defined in an `if TYPE_CHECKING:` block (never runs)."""
        return any(
            isinstance(a, cst.If) and _is_type_checking(a.test) and _in_body(a, self.ancestors)
            for a in self.ancestors
        )

    @property
    def direct_parent_is_owner(self) -> bool:
        """Defined directly in its owner's body (not inside an `if`, `try`, `with`...)."""
        owner = self.owner
        idx = self.ancestors.index(owner)
        rest = self.ancestors[idx + 1 :]
        if isinstance(owner, cst.Module):
            return rest == ()
        return len(rest) == 1 and isinstance(rest[0], cst.IndentedBlock)


def _in_body(node: cst.If, ancestors: tuple[cst.CSTNode, ...]) -> bool:
    idx = ancestors.index(node)
    return idx + 1 < len(ancestors) and ancestors[idx + 1] is node.body


def _is_type_checking(test: cst.BaseExpression) -> bool:
    if isinstance(test, cst.Name):
        return test.value == "TYPE_CHECKING"
    return isinstance(test, cst.Attribute) and test.attr.value == "TYPE_CHECKING"


class _Locator(cst.CSTVisitor):
    METADATA_DEPENDENCIES = (PositionProvider,)

    def __init__(self) -> None:
        self.stack: list[cst.CSTNode] = []
        self.names: list[str] = []
        self.seen: dict[str, int] = {}
        self.found: list[tuple[str, cst.FunctionDef | cst.ClassDef, tuple[cst.CSTNode, ...]]] = []

    def on_visit(self, node: cst.CSTNode) -> bool:
        if isinstance(node, cst.FunctionDef | cst.ClassDef):
            qual = ".".join([*self.names, node.name.value])
            n = self.seen.get(qual, 0) + 1
            self.seen[qual] = n
            self.found.append((qual if n == 1 else f"{qual}#{n}", node, tuple(self.stack)))
            self.names.append(node.name.value)
        self.stack.append(node)
        return True

    def on_leave(self, original_node: cst.CSTNode) -> None:
        self.stack.pop()
        if isinstance(original_node, cst.FunctionDef | cst.ClassDef):
            self.names.pop()


@dataclass(frozen=True, slots=True, kw_only=True)
class Located:
    """A parsed file: its module (positions resolved) and every definition in it."""

    module: cst.Module
    functions: dict[str, DefSite]
    classes: dict[str, DefSite]
    positions: Mapping[cst.CSTNode, object]

    def lines(self, node: cst.CSTNode) -> tuple[int, int]:
        """First and last line of `node` (leading blank lines and comments not included)."""
        pos = self.positions[node]
        return pos.start.line, pos.end.line  # type: ignore[attr-defined]


def locate_defs(source: bytes) -> Located:
    """Parse `source` and name every def/class as the indexer does ("C.m", "f#2").

    Functions and classes are counted separately, so a class and a function of the same
    qualified name do not shift each other's "#n". Raises `SourceSkipped`.
    """
    module = parse_module(source)
    wrapper = MetadataWrapper(module, unsafe_skip_copy=True)
    locator = _Locator()
    wrapper.visit(locator)
    positions = wrapper.resolve(PositionProvider)
    functions: dict[str, DefSite] = {}
    classes: dict[str, DefSite] = {}
    fn_seen: dict[str, int] = {}
    cls_seen: dict[str, int] = {}
    for qual, node, ancestors in locator.found:
        base = qual.split("#")[0]
        seen = fn_seen if isinstance(node, cst.FunctionDef) else cls_seen
        seen[base] = seen.get(base, 0) + 1
        name = base if seen[base] == 1 else f"{base}#{seen[base]}"
        start = positions[node].start.line
        for deco in node.decorators:
            start = min(start, positions[deco].start.line)
        site = DefSite(
            qualname=name,
            node=node,
            ancestors=ancestors,
            start_line=start,
            end_line=positions[node].end.line,
        )
        (functions if isinstance(node, cst.FunctionDef) else classes)[name] = site
    return Located(module=module, functions=functions, classes=classes, positions=positions)


# --- names bound or loaded at import time ----------------------------------------------------


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
    def of(ctx: ExciseContext, file: str) -> ImportUses:
        """The import-time uses of `file` in `ctx`'s seed."""
        located = ctx.located(file)
        collector = _LoadCollector(located.positions, lazy_annotations=_future_annotations(located))
        located.module.visit(collector)
        return ImportUses(
            file=file,
            loads=collector.loads,
            attr_loads=collector.attr_loads,
            exported=frozenset(collector.exported),
            imported_by=_importers(ctx, file),
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
        if _is_type_checking(node.test):  # never runs
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
        if _is_type_checking(node.test):
            if node.orelse is not None:
                node.orelse.visit(self)
            return False
        return True

    def visit_ImportFrom(self, node: cst.ImportFrom) -> None:
        self.found.append(node)


def _imports_of(data: bytes) -> list[cst.ImportFrom]:
    if b"import" not in data:
        return []
    try:
        module = parse_module(data)
    except SourceSkipped:
        return []
    finder = _ImportFinder()
    module.visit(finder)
    return finder.found


def _importers(ctx: ExciseContext, file: str) -> dict[str, list[str]]:
    target, _ = _module_name(file)
    out: dict[str, list[str]] = {}
    for path in ctx.sources:
        if path == file:
            continue
        for node in ctx.imports_of(path):
            if not _same_module(_absolute(path, node), target):
                continue
            if isinstance(node.names, cst.ImportStar):
                out.setdefault("*", []).append(path)
                continue
            for alias in node.names:
                name = cst.Module(body=[]).code_for_node(alias.name)
                out.setdefault(name, []).append(path)
    return out


def import_time_reason(uses: ImportUses, name: str, spans: Sequence[tuple[int, int]]) -> str | None:
    """Why removing top-level `name` would break importing (None: it would not)."""
    if name in uses.exported:
        return f"{name} is listed in __all__ (`from {uses.file} import *` would fail)"
    if name in uses.imported_by:
        files = sorted(set(uses.imported_by[name]))
        return f"{name} is imported by name in {', '.join(files[:3])}: importing would fail"
    if "*" in uses.imported_by and not name.startswith("_") and not uses.exported:
        return f"{name} is public and {uses.imported_by['*'][0]} star-imports this module"
    outside = uses.uses_outside(name, spans)
    if outside:
        line, why = outside[0]
        return f"{name} is used at import time, in {why} (line {line})"
    return None


# --- editing blocks --------------------------------------------------------------------------

StatementEdit = Callable[[cst.BaseStatement], Sequence[cst.BaseStatement]]
NodeEdit = Callable[[cst.CSTNode], cst.CSTNode | cst.RemovalSentinel]

_PASS = cst.SimpleStatementLine(body=[cst.Pass()])


class Splice(cst.CSTTransformer):
    """Replace statements of blocks (`statements`: original statement -> edit of its updated
    form, returning the replacement statements, none to remove it) and other nodes (`nodes`:
    original node -> edit of its updated form, or `RemovalSentinel.REMOVE`).

    A removed statement's comment lines that are separated from it by a blank line (a section
    comment, not its own) move to the next statement of the block; an emptied indented block
    becomes `pass`. `applied` counts the edits made.
    """

    def __init__(
        self,
        statements: Mapping[cst.CSTNode, StatementEdit] | None = None,
        nodes: Mapping[cst.CSTNode, NodeEdit] | None = None,
    ) -> None:
        super().__init__()
        self.statements = dict(statements or {})
        self.nodes = dict(nodes or {})
        self.applied = 0

    def on_leave(  # type: ignore[override]
        self, original_node: cst.CSTNode, updated_node: cst.CSTNode
    ) -> cst.CSTNode | cst.RemovalSentinel | cst.FlattenSentinel[cst.CSTNode]:
        result = super().on_leave(original_node, updated_node)
        if original_node in self.nodes and isinstance(result, cst.CSTNode):
            self.applied += 1
            return self.nodes[original_node](result)
        if isinstance(result, cst.IndentedBlock | cst.Module) and isinstance(
            original_node, cst.IndentedBlock | cst.Module
        ):
            return self._splice(original_node, result)
        return result

    def _splice(
        self, original: cst.IndentedBlock | cst.Module, updated: cst.IndentedBlock | cst.Module
    ) -> cst.IndentedBlock | cst.Module:
        if not any(s in self.statements for s in original.body):
            return updated
        out: list[cst.BaseStatement] = []
        carry: list[cst.EmptyLine] = []
        strip_blank = False
        for orig, upd in zip(original.body, updated.body, strict=True):
            if orig in self.statements:
                self.applied += 1
                repl = list(self.statements[orig](upd))
                if not repl:
                    carry += _detached_comments(_leading(upd))
                    strip_blank = strip_blank or not out
                    continue
                upd, rest = repl[0], repl[1:]
                out += [self._with_carry(upd, carry, strip_blank), *rest]
            else:
                out.append(self._with_carry(upd, carry, strip_blank))
            carry, strip_blank = [], False
        if isinstance(updated, cst.IndentedBlock) and not out:
            out = [_PASS]
        return updated.with_changes(body=out)

    @staticmethod
    def _with_carry(
        stmt: cst.BaseStatement, carry: list[cst.EmptyLine], strip_blank: bool
    ) -> cst.BaseStatement:
        if not carry and not strip_blank:
            return stmt
        lines = list(_leading(stmt))
        if strip_blank and not carry:
            while lines and lines[0].comment is None:
                lines.pop(0)
        return stmt.with_changes(leading_lines=[*carry, *lines])


def _leading(stmt: cst.BaseStatement) -> Sequence[cst.EmptyLine]:
    lines: Sequence[cst.EmptyLine] = getattr(stmt, "leading_lines", ())
    return lines


def _detached_comments(lines: Sequence[cst.EmptyLine]) -> list[cst.EmptyLine]:
    """The leading lines to keep when their statement goes: comments before the blank line that
    separates them from the statement's own comment block."""
    i = len(lines)
    while i > 0 and lines[i - 1].comment is not None:
        i -= 1
    kept = list(lines[:i])
    while kept and kept[-1].comment is None:
        kept.pop()
    return kept if any(line.comment is not None for line in kept) else []


def block_statements(block: cst.BaseSuite) -> list[cst.BaseStatement]:
    """The statements of a suite; a one-line suite (`else: x`) becomes one statement line."""
    if isinstance(block, cst.IndentedBlock):
        return list(block.body)
    assert isinstance(block, cst.SimpleStatementSuite)
    return [cst.SimpleStatementLine(body=block.body)]
