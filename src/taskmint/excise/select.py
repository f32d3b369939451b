"""Choosing which units to excise and turning each edit into a `Candidate`."""

from __future__ import annotations

import random
import re
from collections import Counter
from dataclasses import dataclass
from pathlib import Path

from taskmint.excise.stub_body import STRATEGY, stub_body
from taskmint.excise.treesitter_edits import treesitter_candidates
from taskmint.index.python import SourceSkipped, read_source
from taskmint.patches import unified_diff
from taskmint.records import Candidate, CodeIndex, SeedApp, SkippedFile, Unit, stable_id

__all__ = ["ExciseResult", "eligible", "excise"]

_NAME = re.compile(r"[A-Za-z_][A-Za-z0-9_]*")
_SKIP_DECORATORS = ("overload", "abstractmethod", "abc.abstractmethod", "typing.overload")


@dataclass(frozen=True, slots=True, kw_only=True)
class ExciseResult:
    """The candidates of one seed, plus the units left out and why."""

    candidates: tuple[Candidate, ...]
    skipped: tuple[SkippedFile, ...]


def eligible(unit: Unit, *, min_body_lines: int) -> str | None:
    """None if `unit` can be stubbed, else the reason it cannot."""
    if unit.body_lines < min_body_lines:
        return f"body has {unit.body_lines} line(s), fewer than {min_body_lines}"
    for deco in unit.decorators:
        if deco.split("(")[0] in _SKIP_DECORATORS:
            return f"decorated with @{deco}: no body to remove"
    return None


def _callers(seed: SeedApp) -> Counter[str]:
    """How often each name is used across the seed's source files (a cheap centrality)."""
    counts: Counter[str] = Counter()
    root = Path(seed.root)
    for rel in seed.files:
        if rel.endswith((".py", ".js", ".mjs")):
            try:
                counts.update(_NAME.findall(read_source(root / rel).decode("utf-8", "replace")))
            except SourceSkipped:
                continue
    return counts


def excise(
    seed: SeedApp,
    index: CodeIndex,
    *,
    max_candidates: int,
    min_body_lines: int = 2,
    random_seed: int = 0,
) -> ExciseResult:
    """The `excise` verb: candidates for up to `max_candidates` eligible units.

    Python: `stub_body` through libcst. Other languages: tree-sitter byte-range edits (stub a
    body, remove a function, a method or a class; see `excise.treesitter_edits`).
    """
    if seed.manifest.language != "python":
        found, left_out = treesitter_candidates(
            seed,
            index.units,
            max_candidates=max_candidates,
            random_seed=random_seed,
            min_body_lines=min_body_lines,
        )
        return ExciseResult(candidates=tuple(found), skipped=tuple(left_out))
    skipped: list[SkippedFile] = []
    pool: list[Unit] = []
    for unit in index.units:
        why = eligible(unit, min_body_lines=min_body_lines)
        if why is None:
            pool.append(unit)
        else:
            skipped.append(SkippedFile(path=f"{unit.file}::{unit.qualname}", reason=why))
    pool.sort(key=lambda u: u.unit_id)
    random.Random(f"{random_seed}:{seed.snapshot_id}").shuffle(pool)
    callers = _callers(seed)
    root = Path(seed.root)
    candidates: list[Candidate] = []
    for unit in pool:
        if len(candidates) >= max_candidates:
            break
        try:
            original = read_source(root / unit.file)
            broken = stub_body(original, unit.qualname)
            old_text, new_text = original.decode("utf-8"), broken.decode("utf-8")
        except (SourceSkipped, LookupError, UnicodeDecodeError) as exc:
            skipped.append(SkippedFile(path=f"{unit.file}::{unit.qualname}", reason=str(exc)))
            continue
        breaking = unified_diff(unit.file, old_text, new_text)
        gold = unified_diff(unit.file, new_text, old_text)
        removed = "".join(
            line[1:] + "\n"
            for line in breaking.splitlines()
            if line.startswith("-") and not line.startswith("---")
        )
        name = unit.qualname.split("#")[0].rsplit(".", 1)[-1]
        features = (
            ("lines_removed", float(removed.count("\n"))),
            ("units", 1.0),
            ("files", 1.0),
            ("complexity", float(unit.complexity)),
            ("callers", float(max(callers.get(name, 1) - 1, 0))),
            ("has_docstring", 1.0 if unit.docstring else 0.0),
        )
        candidates.append(
            Candidate(
                candidate_id=stable_id(seed.snapshot_id, STRATEGY, unit.file, unit.qualname),
                snapshot_id=seed.snapshot_id,
                seed=seed.name,
                language=seed.manifest.language,
                strategy=STRATEGY,
                units=(f"{unit.file}::{unit.qualname}",),
                files=(unit.file,),
                breaking_patch=breaking,
                gold_patch=gold,
                removed_code=removed,
                signature=unit.signature,
                docstring=unit.docstring,
                features=features,
                spans=((unit.file, unit.body_start_line, unit.end_line),),
            )
        )
    return ExciseResult(candidates=tuple(candidates), skipped=tuple(skipped))
