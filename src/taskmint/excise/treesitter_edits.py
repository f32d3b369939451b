"""Excision for JavaScript, TypeScript, Go and Rust: byte-range edits located with tree-sitter.

The `excise` stage's counterpart of the libcst strategies. Every edit replaces or deletes one
byte range of the file and keeps every other byte as it was: a UTF-8 byte-order mark, CRLF line
endings, tabs and a missing final newline all survive. Definitions are found by
`taskmint.index.treesitter.definitions`, so a qualname from the index always names the same code.

Strategies:
- `stub_body`: the body becomes a single statement that fails loudly, on its own line one
  indentation level deeper than the definition, the closing brace at the definition's
  indentation. JavaScript/TypeScript `throw new Error("not implemented");`, Go
  `panic("not implemented")`, Rust `todo!()` (the macro meant for code still to be written;
  it type-checks in any function whose return type is a concrete type). Signature and doc
  comment stay.
- `remove_function`, `remove_method`, `remove_class`: the whole definition goes, with its doc
  comment, decorators/attributes, `export` keyword and one blank line that separated it.

`treesitter_candidates` turns these edits into `Candidate` records for a seed.
"""

from __future__ import annotations

import random
import re
from collections import Counter
from collections.abc import Iterable, Sequence
from pathlib import Path

from taskmint.index.python import SourceSkipped, read_source
from taskmint.index.treesitter import Definition, definitions, language_of, signature_text
from taskmint.patches import unified_diff
from taskmint.records import Candidate, SeedApp, SkippedFile, Unit, stable_id

__all__ = [
    "STRATEGIES",
    "STUB_STATEMENTS",
    "edit_range",
    "js_candidates",
    "remove_class",
    "remove_function",
    "remove_method",
    "stub_body",
    "treesitter_candidates",
]

STUB_STATEMENTS = {
    "javascript": 'throw new Error("not implemented");',
    "typescript": 'throw new Error("not implemented");',
    "go": 'panic("not implemented")',
    "rust": "todo!()",
}
_DEFAULT_INDENT = {"javascript": "  ", "typescript": "  ", "go": "\t", "rust": "    "}
_BOM = b"\xef\xbb\xbf"

STRATEGIES = ("stub_body", "remove_function", "remove_method", "remove_class")
# The share of candidates each strategy gets; what a strategy cannot fill goes to the others.
STUB_SHARE = 0.6


def _find(
    language: str, data: bytes, qualname: str, kinds: tuple[str, ...], what: str, path: str
) -> Definition:
    try:
        found = definitions(language, data, path)
    except SourceSkipped as exc:
        raise LookupError(f"cannot look up {qualname!r}: {exc}") from exc
    for d in found:
        if d.qualname == qualname and d.kind in kinds:
            return d
    raise LookupError(f"no {what} {qualname!r} in this file")


def _line_start(data: bytes, offset: int) -> int:
    start = data.rfind(b"\n", 0, offset) + 1
    if start == 0 and data.startswith(_BOM):
        start = len(_BOM)
    return start


def _indent_at(data: bytes, offset: int) -> bytes:
    start = _line_start(data, offset)
    end = start
    while end < len(data) and data[end : end + 1] in (b" ", b"\t"):
        end += 1
    return data[start:end]


def _newline_of(data: bytes, offset: int) -> bytes:
    end = data.find(b"\n", offset)
    if end == -1:
        end = data.rfind(b"\n")  # no newline after it: the file's last line break decides
    return b"\r\n" if end > 0 and data[end - 1 : end] == b"\r" else b"\n"


def stub_body(language: str, data: bytes, qualname: str, *, path: str = "") -> bytes:
    """`data` with the body of function or method `qualname` replaced by a failing stub.

    Raises `LookupError` if the file has no such function. `path` picks the TSX grammar for
    `.tsx` files. Every byte outside the body is unchanged.
    """
    return _apply(data, _stub_edit(language, data, qualname, path))


def _apply(data: bytes, edit: tuple[int, int, bytes]) -> bytes:
    start, end, replacement = edit
    return data[:start] + replacement + data[end:]


def _stub_edit(language: str, data: bytes, qualname: str, path: str) -> tuple[int, int, bytes]:
    d = _find(language, data, qualname, ("function", "method"), "function or method", path)
    body = d.body
    if body is None:
        raise LookupError(f"{qualname!r} has no body to stub")
    own = d.statement or d.node
    indent = _indent_at(data, own.start_byte)
    unit = _DEFAULT_INDENT[language].encode()
    if b"\t" in indent:
        unit = b"\t"
    first = next(
        (c for c in body.named_children if "comment" not in c.type), None
    )  # the body's own indentation style wins when it shows one
    if first is not None and first.start_point.row > body.start_point.row:
        inner = _indent_at(data, first.start_byte)
        if inner.startswith(indent) and len(inner) > len(indent):
            unit = inner[len(indent) :]
    nl = _newline_of(data, body.start_byte)
    stub = STUB_STATEMENTS[language].encode()
    new = b"{" + nl + indent + unit + stub + nl + indent + b"}"
    return body.start_byte, body.end_byte, new


def _removal_range(data: bytes, d: Definition) -> tuple[int, int]:
    """The bytes a removal deletes: doc comment to end, whole lines when the definition has
    its lines to itself, plus one blank line that separated it from its neighbours."""
    statement = d.statement
    if statement is None:
        raise LookupError(
            f"{d.qualname!r} is declared together with other names; it cannot be removed alone"
        )
    start = d.doc.start_byte if d.doc is not None else d.lead_start
    end = statement.end_byte
    rest_end = data.find(b"\n", end)
    rest_end = len(data) if rest_end == -1 else rest_end
    if data[end:rest_end].strip(b" \t\r") == b";":  # a stray `;` after a class member
        end = end + data[end:rest_end].index(b";") + 1
    line_start = _line_start(data, start)
    if data[line_start:start].strip(b" \t") or data[end:rest_end].strip(b" \t\r"):
        return start, end  # shares a line with other code: remove only its own bytes
    start = line_start
    end = min(rest_end + 1, len(data))
    next_end = data.find(b"\n", end)
    if next_end != -1 and not data[end:next_end].strip(b" \t\r"):
        return start, next_end + 1  # the blank line after it
    if end == len(data) and not data.endswith(b"\n"):
        # the last line of a file without a final newline: take the line break before it
        # (and a blank line before that) so the file still ends without one
        if start > 0 and data[start - 1 : start] == b"\n":
            start -= 1
            if start > 0 and data[start - 1 : start] == b"\r":
                start -= 1
            prev = _line_start(data, start)
            if prev > 0 and not data[prev:start].strip(b" \t\r"):
                start = prev - 1
                if start > 0 and data[start - 1 : start] == b"\r":
                    start -= 1
        return start, end
    prev_end = start - 1  # the "\n" ending the previous line
    if prev_end > 0:
        prev_start = _line_start(data, prev_end)
        if not data[prev_start:prev_end].strip(b" \t\r") and prev_start > 0:
            return prev_start, end  # no blank line after it: take the one before
    return start, end


def _removal(
    language: str, data: bytes, qualname: str, strategy: str, path: str
) -> tuple[int, int, bytes]:
    kinds: tuple[str, ...]
    if strategy == "remove_class":
        kinds, what = ("class",), "class"
    elif strategy == "remove_method":
        kinds, what = ("method",), "method"
    else:
        kinds, what = ("function", "method") if language == "go" else ("function",), "function"
    start, end = _removal_range(data, _find(language, data, qualname, kinds, what, path))
    return start, end, b""


def edit_range(
    strategy: str, language: str, data: bytes, qualname: str, *, path: str = ""
) -> tuple[int, int, bytes]:
    """The edit a strategy makes, as (start byte, end byte, replacement bytes)."""
    if strategy == "stub_body":
        return _stub_edit(language, data, qualname, path)
    if strategy not in STRATEGIES:
        raise ValueError(f"unknown strategy {strategy!r}; choose from {', '.join(STRATEGIES)}")
    return _removal(language, data, qualname, strategy, path)


def remove_function(language: str, data: bytes, qualname: str, *, path: str = "") -> bytes:
    """`data` without function `qualname` (its doc comment, `export`, attributes included).

    For `export function f` or `export const f = () => ...` the whole export statement goes.
    Go methods count as functions here too (they are top-level declarations). Raises
    `LookupError` if there is no such function or it cannot be removed on its own.
    """
    return _apply(data, _removal(language, data, qualname, "remove_function", path))


def remove_method(language: str, data: bytes, qualname: str, *, path: str = "") -> bytes:
    """`data` without method `qualname` ("Class.method"), with its doc comment and decorators.

    Raises `LookupError` if there is no such method.
    """
    return _apply(data, _removal(language, data, qualname, "remove_method", path))


def remove_class(language: str, data: bytes, qualname: str, *, path: str = "") -> bytes:
    """`data` without class `qualname`: the declaration, its JSDoc and its `export`.

    Only JavaScript and TypeScript have classes; for Go and Rust this raises `LookupError`
    like any unknown name.
    """
    return _apply(data, _removal(language, data, qualname, "remove_class", path))


_IDENT = re.compile(r"[A-Za-z_$][A-Za-z0-9_$]*")
_DUPLICATE = re.compile(r"#[0-9]+$")  # the "#2" of a repeated qualname


def _name_counts(seed: SeedApp, language: str) -> Counter[str]:
    """How often each identifier occurs across the seed's files of this language."""
    counts: Counter[str] = Counter()
    root = Path(seed.root)
    for rel in seed.files:
        if language_of(rel) == language:
            try:
                counts.update(_IDENT.findall(read_source(root / rel).decode("utf-8", "replace")))
            except SourceSkipped:
                continue
    return counts


def _removed_lines(breaking: str) -> str:
    return "".join(
        line[1:] + "\n"
        for line in breaking.split("\n")
        if line.startswith("-") and not line.startswith("---")
    )


def _whole_lines(data: bytes, start: int, end: int) -> str:
    first = data.rfind(b"\n", 0, start) + 1
    last = data.find(b"\n", max(end - 1, start))
    text = data[first : len(data) if last == -1 else last + 1].decode("utf-8")
    return text if text.endswith("\n") else text + "\n"


def _span(data: bytes, start: int, end: int) -> tuple[int, int]:
    first = data.count(b"\n", 0, start) + 1
    last = data.count(b"\n", 0, max(end - 1, start)) + 1
    return first, last


def _plan(
    units: Sequence[Unit],
    classes: Sequence[tuple[str, str, tuple[Unit, ...]]],
    *,
    min_body_lines: int,
) -> dict[str, list[tuple[str, str, tuple[Unit, ...]]]]:
    """Per strategy, every (file, qualname, units) it could be applied to."""
    big = [u for u in units if u.body_lines >= min_body_lines]
    return {
        "stub_body": [(u.file, u.qualname, (u,)) for u in big],
        "remove_function": [
            (u.file, u.qualname, (u,))
            for u in big
            if u.kind == "function" and "." not in u.qualname
        ],
        "remove_method": [(u.file, u.qualname, (u,)) for u in big if u.kind == "method"],
        "remove_class": [c for c in classes if c[2]],
    }


def _quotas(n: int) -> dict[str, int]:
    stub = round(n * STUB_SHARE)
    rest = n - stub
    others = STRATEGIES[1:]
    quotas = {"stub_body": stub}
    for i, name in enumerate(others):
        quotas[name] = rest // len(others) + (1 if i < rest % len(others) else 0)
    return quotas


def treesitter_candidates(
    seed: SeedApp,
    units: Iterable[Unit],
    *,
    max_candidates: int,
    random_seed: int = 0,
    min_body_lines: int = 2,
) -> tuple[list[Candidate], list[SkippedFile]]:
    """Candidates for a tree-sitter language seed, plus the targets left out and why.

    About 60% `stub_body`, the rest split evenly between `remove_function`, `remove_method` and
    `remove_class`; a strategy that runs out of targets leaves its share to the others. Each
    strategy's targets are sorted by candidate id and shuffled with
    `random.Random(f"{random_seed}:{snapshot_id}")`, so reruns give the same candidates. A unit
    is used by one strategy at most. Never raises for a bad target.
    """
    all_units = [u for u in units if u.language != "python"]
    root = Path(seed.root)
    skipped: list[SkippedFile] = []
    sources: dict[str, bytes | None] = {}

    def source(rel: str) -> bytes | None:
        if rel not in sources:
            try:
                sources[rel] = read_source(root / rel)
            except SourceSkipped as exc:
                skipped.append(SkippedFile(path=rel, reason=str(exc)))
                sources[rel] = None
        return sources[rel]

    classes: list[tuple[str, str, tuple[Unit, ...]]] = []
    class_defs: dict[tuple[str, str], Definition] = {}
    by_file: dict[str, list[Unit]] = {}
    for u in all_units:
        by_file.setdefault(u.file, []).append(u)
    for rel in sorted(by_file):
        language = by_file[rel][0].language
        data = source(rel)
        if data is None or language not in ("javascript", "typescript"):
            continue
        try:
            found = definitions(language, data, rel)
        except SourceSkipped as exc:
            skipped.append(SkippedFile(path=rel, reason=str(exc)))
            continue
        for d in found:
            if d.kind == "class":
                prefix = d.qualname.split("#")[0] + "."
                members = tuple(
                    u
                    for u in by_file[rel]
                    if u.kind == "method"
                    and u.qualname.startswith(prefix)
                    and "." not in u.qualname[len(prefix) :]
                )
                classes.append((rel, d.qualname, members))
                class_defs[(rel, d.qualname)] = d

    plan = _plan(all_units, classes, min_body_lines=min_body_lines)
    rng = random.Random(f"{random_seed}:{seed.snapshot_id}")
    for strategy in STRATEGIES:
        ids = {t[:2]: stable_id(seed.snapshot_id, strategy, t[0], t[1]) for t in plan[strategy]}
        plan[strategy].sort(key=lambda t: ids[t[:2]])
        rng.shuffle(plan[strategy])
    quotas = _quotas(max_candidates)
    cursor = dict.fromkeys(STRATEGIES, 0)
    used: set[tuple[str, str]] = set()
    picked: dict[str, list[Candidate]] = {s: [] for s in STRATEGIES}
    counts: Counter[str] | None = None

    def fill(strategy: str, limit: int) -> None:
        nonlocal counts
        pool = plan[strategy]
        while len(picked[strategy]) < limit and cursor[strategy] < len(pool):
            rel, qual, members = pool[cursor[strategy]]
            cursor[strategy] += 1
            if (rel, qual) in used or any((rel, m.qualname) in used for m in members):
                continue
            if counts is None:
                counts = _name_counts(seed, members[0].language)
            made = _candidate(
                seed, strategy, rel, qual, members, source(rel), counts, class_defs, skipped
            )
            if made is not None:
                picked[strategy].append(made)
                used.add((rel, qual))
                used.update((rel, m.qualname) for m in members)

    for strategy in STRATEGIES:
        fill(strategy, quotas[strategy])
    for strategy in STRATEGIES:  # shares a strategy could not use go to the others, in order
        missing = max_candidates - sum(len(v) for v in picked.values())
        if missing <= 0:
            break
        fill(strategy, len(picked[strategy]) + missing)
    return [c for s in STRATEGIES for c in picked[s]], skipped


def js_candidates(
    seed: SeedApp,
    units: Iterable[Unit],
    *,
    max_candidates: int,
    random_seed: int,
    min_body_lines: int = 2,
) -> list[Candidate]:
    """`treesitter_candidates` for a JavaScript seed, candidates only."""
    found, _ = treesitter_candidates(
        seed,
        units,
        max_candidates=max_candidates,
        random_seed=random_seed,
        min_body_lines=min_body_lines,
    )
    return found


def _candidate(
    seed: SeedApp,
    strategy: str,
    rel: str,
    qual: str,
    members: tuple[Unit, ...],
    data: bytes | None,
    counts: Counter[str],
    class_defs: dict[tuple[str, str], Definition],
    skipped: list[SkippedFile],
) -> Candidate | None:
    if data is None:
        return None
    if strategy == "remove_class":
        language = members[0].language
        first_unit = None
    else:
        first_unit = members[0]
        language = first_unit.language
    try:
        start, end, replacement = edit_range(strategy, language, data, qual, path=rel)
        broken = data[:start] + replacement + data[end:]
        old_text, new_text = data.decode("utf-8"), broken.decode("utf-8")
    except (LookupError, UnicodeDecodeError) as exc:
        skipped.append(SkippedFile(path=f"{rel}::{qual}", reason=f"{strategy}: {exc}"))
        return None
    breaking = unified_diff(rel, old_text, new_text)
    gold = unified_diff(rel, new_text, old_text)
    if first_unit is not None and strategy == "stub_body":
        removed = _removed_lines(breaking)
        span = (first_unit.body_start_line, first_unit.end_line)
    else:  # the exact lines deleted (a diff may align a shared `}` or blank line differently)
        removed = _whole_lines(data, start, end)
        span = _span(data, start, end)
    if strategy == "remove_class":
        d = class_defs[(rel, qual)]
        header = signature_text(data, d)
        signature = "\n".join([header, *("  " + m.signature for m in members)])
        docstring = d.docstring
        complexity = float(sum(m.complexity for m in members))
        unit_names = (f"{rel}::{qual}", *(f"{rel}::{m.qualname}" for m in members))
    else:
        assert first_unit is not None
        signature, docstring = first_unit.signature, first_unit.docstring
        complexity = float(first_unit.complexity)
        unit_names = (f"{rel}::{qual}",)
    name = _DUPLICATE.sub("", qual).rsplit(".", 1)[-1].lstrip("#")
    features = (
        ("lines_removed", float(removed.count("\n"))),
        ("units", float(max(len(members), 1))),
        ("files", 1.0),
        ("complexity", complexity),
        ("callers", float(max(counts.get(name, 1) - 1, 0))),
        ("has_docstring", 1.0 if docstring else 0.0),
    )
    return Candidate(
        candidate_id=stable_id(seed.snapshot_id, strategy, rel, qual),
        snapshot_id=seed.snapshot_id,
        seed=seed.name,
        language=language,
        strategy=strategy,
        units=unit_names,
        files=(rel,),
        breaking_patch=breaking,
        gold_patch=gold,
        removed_code=removed,
        signature=signature,
        docstring=docstring,
        features=features,
        spans=((rel, *span),),
    )
