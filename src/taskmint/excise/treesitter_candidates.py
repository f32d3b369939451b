"""Candidates for seeds of tree-sitter languages, from the tree-sitter edits.

`treesitter_candidates` plans every target of each strategy of `excise.treesitter_edits`
(`stub_body` for functions and methods with bodies of at least `min_body_lines` lines,
`remove_function` for top-level functions, `remove_method`, `remove_class` for the classes,
with their methods, of a language that has them: `TreeSitterSyntax.classes`), orders them
deterministically, and fills each strategy's share of `max_candidates`, a unit going to one
strategy at most. Each edit becomes a `Candidate` with both diffs, the removed lines, the span
and the static `Features`; `callers` is approximated by how often the name occurs elsewhere
in the seed's files of the language.
"""

from __future__ import annotations

import random
import re
from collections import Counter
from collections.abc import Iterable, Sequence
from pathlib import Path

from taskmint.excise.treesitter_edits import STRATEGIES, edit_range
from taskmint.index.python import SourceSkipped, read_source
from taskmint.index.treesitter_defs import Definition, definitions, signature_text
from taskmint.index.treesitter_grammars import language_of
from taskmint.languages import find_syntax
from taskmint.patches import unified_diff
from taskmint.records import (
    Candidate,
    Features,
    Language,
    SeedApp,
    SkippedFile,
    Strategy,
    Unit,
    stable_id,
)

__all__ = ["STUB_SHARE", "js_candidates", "treesitter_candidates"]

# The share of candidates each strategy gets; what a strategy cannot fill goes to the others.
STUB_SHARE = 0.6

_IDENT = re.compile(r"[A-Za-z_$][A-Za-z0-9_$]*")
_DUPLICATE = re.compile(r"#[0-9]+$")  # the "#2" of a repeated qualname


def _name_counts(seed: SeedApp, language: Language) -> Counter[str]:
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
) -> dict[Strategy, list[tuple[str, str, tuple[Unit, ...]]]]:
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


def _quotas(n: int) -> dict[Strategy, int]:
    stub = round(n * STUB_SHARE)
    rest = n - stub
    others = STRATEGIES[1:]
    quotas: dict[Strategy, int] = {"stub_body": stub}
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
    all_units = [u for u in units if find_syntax(u.language) is not None]
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
        lang = find_syntax(language)
        if data is None or lang is None or not lang.classes:
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
    picked: dict[Strategy, list[Candidate]] = {s: [] for s in STRATEGIES}
    counts: Counter[str] | None = None

    def fill(strategy: Strategy, limit: int) -> None:
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
    strategy: Strategy,
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
        complexity = sum(m.complexity for m in members)
        unit_names = (f"{rel}::{qual}", *(f"{rel}::{m.qualname}" for m in members))
    else:
        assert first_unit is not None
        signature, docstring = first_unit.signature, first_unit.docstring
        complexity = first_unit.complexity
        unit_names = (f"{rel}::{qual}",)
    name = _DUPLICATE.sub("", qual).rsplit(".", 1)[-1].lstrip("#")
    features = Features(
        lines_removed=removed.count("\n"),
        units=max(len(members), 1),
        files=1,
        complexity=complexity,
        callers=max(counts.get(name, 1) - 1, 0),
        has_docstring=bool(docstring),
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
