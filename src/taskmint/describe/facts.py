"""What a problem statement may say about a task, gathered from everything except the answer.

`gather_facts` collects, for an accepted candidate: where the missing code belongs (module,
class, signature, docstring of every removed unit), who calls it (from the rest of the seed's
sources, never from the removed spans), the failing tests and the assertion messages they fail
with on the broken tree, and a coarse structural reading of the removed code (loops, branches,
raised exceptions, helpers it calls, names it uses) that the hints turn into words. The
templates and the LLM rewriter only ever see a `Facts` record; `removed_code` itself is read
only here (the structural reading), by the hints' outline and by the leak check.
"""

from __future__ import annotations

import dataclasses
import functools
import re
from dataclasses import dataclass, field
from pathlib import Path

from taskmint.index import units_of_file
from taskmint.index.python import SourceSkipped
from taskmint.languages import Shape, profile
from taskmint.records import Candidate, Language, SeedApp, Strategy, Unit, Verdict

__all__ = ["Facts", "Shape", "UnitFacts", "gather_facts", "shape_of"]

_FROZEN = {"frozen": True, "slots": True, "kw_only": True}
_MAX_CALLERS = 8
_MAX_MESSAGES = 6
_MAX_MESSAGE_CHARS = 300
_ADDRESS = re.compile(r"\b0x[0-9a-fA-F]{4,}\b")
# Words that are never a project helper or data structure worth naming in a hint.
# fmt: off
KEYWORDS = frozenset((
    "and", "as", "assert", "async", "await", "break", "class", "continue", "def", "del", "elif",
    "else", "except", "False", "finally", "for", "from", "global", "if", "import", "in", "is",
    "lambda", "None", "nonlocal", "not", "or", "pass", "raise", "return", "True", "try", "while",
    "with", "yield", "self", "cls", "const", "let", "var", "function", "new", "this", "throw",
    "undefined", "null", "typeof", "instanceof", "of", "case", "switch", "default", "catch",
    "true", "false", "static", "get", "set", "super", "void", "delete", "do", "export",
))
# fmt: on
_IDENT = re.compile(r"[A-Za-z_$][A-Za-z0-9_$]*")
_JS_CALL = re.compile(r"([A-Za-z_$][A-Za-z0-9_$]*)\s*\(")
_JS_THROW = re.compile(r"\bthrow\s+new\s+([A-Za-z_$][A-Za-z0-9_$]*)")
_JS_LOOP = re.compile(r"^\s*(?:for|while|do)\b")
_JS_BRANCH = re.compile(r"^\s*(?:\}\s*)?(?:if|else if|switch|case)\b")


@dataclass(**_FROZEN)
class UnitFacts:
    """One removed or stubbed unit: where it lives and how it is called."""

    file: str
    qualname: str
    kind: str  # "function", "method" or "class"
    signature: str
    docstring: str | None = None
    decorators: tuple[str, ...] = ()  # as written, without the "@"

    @property
    def name(self) -> str:
        """The unit's own name (the last part of the qualified name)."""
        return self.qualname.rsplit(".", 1)[-1]

    @property
    def owner(self) -> str | None:
        """The class a method belongs to, if any."""
        return self.qualname.rsplit(".", 1)[0] if "." in self.qualname else None


@dataclass(**_FROZEN)
class Facts:
    """Everything a statement or a hint may draw on."""

    strategy: Strategy
    language: Language
    units: tuple[UnitFacts, ...]
    source_paths: tuple[str, ...]
    test_paths: tuple[str, ...] = ()
    fail_to_pass: tuple[str, ...] = ()
    failure_messages: tuple[tuple[str, str], ...] = ()  # (test id, message), a few
    callers: tuple[str, ...] = ()  # "file: name" of code that uses the missing units
    shape: Shape = field(default_factory=Shape)
    removed_lines: int = 0
    # (file, first line, last line) of the removed code in the original, for remove_block hints
    spans: tuple[tuple[str, int, int], ...] = ()
    # remove_class: the whole class went (False: the class stayed, most of its methods went)
    whole_class: bool = True
    # the failing tests' own first docstring lines ((test id, line), a few) and the removed
    # public names the failing test files use: what a level-2 statement is written from
    test_docs: tuple[tuple[str, str], ...] = ()
    entry_points: tuple[str, ...] = ()

    @property
    def main(self) -> UnitFacts:
        """The unit the statement is mostly about."""
        return self.units[0]


def _unit_kind(candidate: Candidate, qual: str) -> str:
    if candidate.strategy == "remove_class" and qual == _class_of(candidate):
        return "class"
    return "method" if "." in qual else "function"


def _class_of(candidate: Candidate) -> str:
    """The removed class's name for `remove_class` (the common prefix of its units)."""
    quals = [u.partition("::")[2].split("#")[0] for u in candidate.units]
    first = quals[0].split(".")[0]
    return first


def _index_file(seed: SeedApp | None, file: str, language: Language) -> tuple[Unit, ...]:
    if seed is None:
        return ()
    return _index_snapshot_file(seed.root, seed.snapshot_id, file, language)


# Snapshots are content-addressed and immutable, so a file's units can be kept: describing
# the candidates of one seed parses each of its files once instead of once per candidate.
@functools.lru_cache(maxsize=128)
def _index_snapshot_file(
    root: str, snapshot_id: str, file: str, language: Language
) -> tuple[Unit, ...]:
    try:
        data = (Path(root) / file).read_bytes()
        # as the index stage did (the language's engine): its units are reused
        return tuple(units_of_file(language, file, data, snapshot_id=snapshot_id))
    except (OSError, SourceSkipped, ValueError, RecursionError, UnicodeDecodeError):
        return ()


def _units(candidate: Candidate, seed: SeedApp | None) -> tuple[UnitFacts, ...]:
    by_qual: dict[tuple[str, str], Unit] = {}
    for file in dict.fromkeys(candidate.files):
        for u in _index_file(seed, file, candidate.language):
            by_qual[(u.file, u.qualname)] = u
    out: list[UnitFacts] = []
    if candidate.strategy == "remove_class":
        cls = _class_of(candidate)
        header = (candidate.signature or f"class {cls}").splitlines()[0]
        written = re.search(
            rf"^[ \t]*((?:export\s+)?class\s+{re.escape(cls)}\b[^\n{{]*)",
            candidate.removed_code,
            re.M,
        )
        if written:  # the header as written (bases included), an interface line
            header = written.group(1).rstrip().rstrip(":").rstrip()
        out.append(
            UnitFacts(
                file=candidate.units[0].partition("::")[0],
                qualname=cls,
                kind="class",
                signature=header,
                docstring=candidate.docstring,
            )
        )
    for i, ref in enumerate(candidate.units):
        file, _, qual = ref.partition("::")
        qual = qual.split("#")[0]
        if candidate.strategy == "remove_class" and qual == _class_of(candidate):
            continue  # the class itself (JavaScript lists it as a unit)
        unit = by_qual.get((file, qual))
        class_line = _class_header(candidate, qual) if unit is None else None
        if unit is not None:
            signature, doc, decorators = unit.signature, unit.docstring, unit.decorators
        elif class_line is not None:  # strategy `feature` lists the classes it removed whole
            doc = (
                profile(candidate.language).class_docstring(Path(seed.root), file, qual)
                if seed is not None
                else None
            )
            out.append(
                UnitFacts(
                    file=file, qualname=qual, kind="class", signature=class_line, docstring=doc
                )
            )
            continue
        elif i == 0 and candidate.strategy != "remove_class":
            signature, doc, decorators = candidate.signature or qual, candidate.docstring, ()
        else:
            signature, doc, decorators = qual.rsplit(".", 1)[-1], None, ()
        out.append(
            UnitFacts(
                file=file,
                qualname=qual,
                kind=_unit_kind(candidate, qual),
                signature=signature,
                docstring=doc,
                decorators=decorators,
            )
        )
    if candidate.strategy == "remove_class" and len(out) == 1:
        # the whole class went and the candidate names only the class: list its own methods
        owner = out[0]
        for (file, qual), unit in sorted(by_qual.items()):
            if file == owner.file and qual.rpartition(".")[0] == owner.qualname:
                out.append(
                    UnitFacts(
                        file=file,
                        qualname=qual,
                        kind="method",
                        signature=unit.signature,
                        docstring=unit.docstring,
                        decorators=unit.decorators,
                    )
                )
    if candidate.strategy == "feature_cluster":
        # the unit with the candidate's signature (the largest) first
        out.sort(key=lambda u: (u.signature != candidate.signature, u.file, u.qualname))
    return tuple(out)


def _class_header(candidate: Candidate, qual: str) -> str | None:
    """The header of class `qual` as the removed code writes it, if it removed the class."""
    if candidate.strategy != "feature" or "." in qual:
        return None
    written = re.search(
        rf"^[ \t]*((?:export\s+)?class\s+{re.escape(qual)}\b[^\n{{]*)", candidate.removed_code, re.M
    )
    return written.group(1).rstrip().rstrip(":").rstrip() if written else None


def _entry_points(
    tests: tuple[str, ...], units: tuple[UnitFacts, ...], seed: SeedApp | None
) -> tuple[str, ...]:
    """The removed public names (classes, functions, methods) the failing test files use."""
    if seed is None:
        return ()
    text = ""
    for path in sorted({t.partition("::")[0] for t in tests}):
        try:
            text += (Path(seed.root) / path).read_text(encoding="utf-8") + "\n"
        except (OSError, UnicodeDecodeError):
            continue
    used = set(_IDENT.findall(text))
    names = [u.name for u in units if not u.name.startswith("_") and u.name in used]
    return tuple(dict.fromkeys(names))


_DEF_LINE = re.compile(
    r"^\s*(?:async\s+def|def|class|(?:export\s+)?(?:async\s+)?function\*?|(?:export\s+)?class)"
    r"\s+([A-Za-z_$][\w$]*)"
)
_JS_METHOD = re.compile(
    r"^\s*(?:static\s+|async\s+|get\s+|set\s+)*([A-Za-z_$#][\w$]*)\s*\(.*\)\s*\{"
)


def _callers(candidate: Candidate, seed: SeedApp | None, units: tuple[UnitFacts, ...]) -> list[str]:
    """Where the rest of the sources use the missing names ("file: enclosing definition")."""
    if seed is None:
        return []
    names = {u.name for u in units if not u.name.startswith("__") and len(u.name) > 2}
    if candidate.strategy == "remove_class" and _whole_class(candidate):
        names = {u.name for u in units if u.kind == "class"}  # used through the class name
    if not names:
        return []
    use = re.compile(
        r"(?:\b|\.)(" + "|".join(re.escape(n) for n in sorted(names)) + r")\b(?!\s*=[^=])"
    )
    # A method name alone (`write`, `close`) is used all over; count a use only in files that
    # name the method's class (or a free function's own name).
    owners = {u.owner or u.name for u in units if u.kind != "class"} | {
        u.name for u in units if u.kind == "class"
    }
    removed = {(f, line) for f, a, b in candidate.spans for line in range(a, b + 1)}
    roots = tuple(p.rstrip("/") + "/" for p in seed.manifest.source_paths)
    language = profile(candidate.language)
    brace_methods = language.brace_methods
    found: list[str] = []
    for rel in seed.files:
        if not rel.startswith(roots) or not rel.endswith(language.extensions):
            continue
        try:
            text = (Path(seed.root) / rel).read_text(encoding="utf-8")
        except (OSError, UnicodeDecodeError):
            continue
        if not any(re.search(rf"\b{re.escape(o)}\b", text) for o in owners):
            continue
        lines = text.splitlines()
        stack: list[tuple[int, str]] = []
        for no, line in enumerate(lines, 1):
            stripped = line.strip()
            if not stripped or stripped.startswith(("#", "//", "*", "/*")):
                continue
            indent = len(line) - len(line.lstrip())
            while stack and stack[-1][0] >= indent and (rel, no) not in removed:
                stack.pop()
            head = _DEF_LINE.match(line)
            if head is None and brace_methods:
                method = _JS_METHOD.match(line)
                if method and method.group(1) not in KEYWORDS | {"if", "for", "while"}:
                    head = method
            if head is not None:
                stack.append((indent, head.group(1)))
                continue
            if (rel, no) in removed or stripped.startswith(("import ", "from ")):
                continue
            if use.search(line) and stack:
                where = ".".join(n for _, n in stack)
                entry = f"`{rel}`: `{where}`"
                if entry not in found:
                    found.append(entry)
    return sorted(found)[:_MAX_CALLERS]


def _regex_shape(code: str) -> Shape:
    lines = [ln for ln in code.splitlines() if not ln.strip().startswith(("#", "//", "*", "/*"))]
    body = "\n".join(lines)
    raises = list(dict.fromkeys(_JS_THROW.findall(body)))
    raises += [
        m
        for m in dict.fromkeys(re.findall(r"\braise\s+([A-Za-z_][\w.]*)", body))
        if m not in raises
    ]
    calls = [
        c
        for c in dict.fromkeys(_JS_CALL.findall(body))
        if c not in KEYWORDS | {"if", "for", "while", "switch", "catch", "function"}
        and c not in raises
    ]
    idents = {i for i in _IDENT.findall(re.sub(r"(['\"`]).*?\1", "", body))}
    return Shape(
        loops=sum(1 for ln in lines if _JS_LOOP.match(ln)),
        branches=sum(1 for ln in lines if _JS_BRANCH.match(ln)),
        handlers=sum(1 for ln in lines if re.match(r"^\s*(?:\}\s*)?(?:catch|except)\b", ln)),
        returns=bool(re.search(r"\breturn\s+\S", body)),
        yields=bool(re.search(r"\byield\b", body)),
        raises=tuple(raises),
        calls=tuple(calls),
        names=tuple(
            sorted(
                i
                for i in idents - set(calls) - set(raises)
                if i not in KEYWORDS and not i[0].isdigit() and len(i) > 1
            )
        ),
    )


def shape_of(code: str, language: Language) -> Shape:
    """Loops, branches, raised exceptions, calls and names of `code`: read from its syntax
    tree by its language's profile (Python's `ast`), else line by line."""
    parsed = profile(language).shape(code)
    if parsed is None:
        return _regex_shape(code)
    return dataclasses.replace(parsed, names=tuple(n for n in parsed.names if n not in KEYWORDS))


def _messages(verdict: Verdict) -> tuple[tuple[str, str], ...]:
    out: list[tuple[str, str]] = []
    seen: set[str] = set()
    for test_id, message in verdict.failure_messages:
        # memory addresses in reprs differ from run to run; statements must not
        text = _ADDRESS.sub("0x...", " ".join(message.split()))[:_MAX_MESSAGE_CHARS]
        if not text or text in seen:
            continue
        seen.add(text)
        out.append((test_id, text))
        if len(out) >= _MAX_MESSAGES:
            break
    return tuple(out)


def _whole_class(candidate: Candidate) -> bool:
    """Whether the whole class went; only `remove_class` of Python measures it (tree-sitter
    `remove_class` always removes the whole class)."""
    features = candidate.features
    return features is None or features.whole_class is not False


def gather_facts(
    candidate: Candidate,
    verdict: Verdict,
    *,
    source_paths: tuple[str, ...],
    seed: SeedApp | None = None,
) -> Facts:
    """The `Facts` of an accepted candidate; `seed` adds callers and every unit's docstring."""
    units = _units(candidate, seed)
    return Facts(
        strategy=candidate.strategy,
        language=candidate.language,
        units=units,
        source_paths=source_paths,
        test_paths=seed.manifest.test_paths if seed is not None else (),
        fail_to_pass=verdict.fail_to_pass,
        failure_messages=_messages(verdict),
        callers=tuple(_callers(candidate, seed, units)),
        shape=shape_of(candidate.removed_code, candidate.language),
        removed_lines=sum(1 for ln in candidate.removed_code.splitlines() if ln.strip()),
        spans=candidate.spans,
        whole_class=_whole_class(candidate),
        test_docs=(
            profile(candidate.language).test_docs(Path(seed.root), verdict.fail_to_pass)
            if seed is not None
            else ()
        ),
        entry_points=_entry_points(verdict.fail_to_pass, units, seed),
    )
