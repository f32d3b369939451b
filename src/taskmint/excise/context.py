"""What every excision strategy reads about one seed: the `ExciseContext`, built once.

A strategy is a module with `STRATEGY = "<name>"`, an edit function turning source bytes and a
target into new bytes (raising `LookupError` for an unknown target), and a generator

    candidates(ctx: ExciseContext, *, rng: random.Random) -> Iterator[Candidate | SkippedFile]

that yields one `Candidate` per edit it can make (see `excise.candidate.make_candidate`), or a
`SkippedFile` (path "file::target" and the reason) for each target it deliberately leaves
alone. Generators never raise for a bad target: a target that cannot be edited is a
`SkippedFile`. The order is the seeded `rng`'s, so two runs with the same seed yield the same
candidates in the same order. `excise.select` holds the registry of strategies.

`build_context` reads the source bytes of every Python file of the seed (sources and tests, for
import analysis) and computes the call graph (for the `callers` feature); with a per-test
coverage map, `feature_cluster` finds clusters and `remove_block` prefers blocks some test
runs. Parsed files and their import-time analysis are cached on the context.
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping
from dataclasses import dataclass, field
from pathlib import Path

import libcst as cst

from taskmint.excise.imports import ImportUses, importers, imports_in
from taskmint.index.callgraph import call_graph
from taskmint.index.coverage import CoverageMap
from taskmint.index.locate import Located, locate_defs
from taskmint.index.python import SourceSkipped, read_source
from taskmint.records import Candidate, CodeIndex, SeedApp, SkippedFile, Unit

__all__ = ["CandidateStream", "ExciseContext", "build_context", "unit_key"]

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
            self._uses[file] = ImportUses.of(
                file, self.located(file), imported_by=importers(file, self.sources, self.imports_of)
            )
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
            self._imports[file] = imports_in(self.sources[file])
        return self._imports[file]


def build_context(
    seed: SeedApp,
    index: CodeIndex,
    *,
    coverage: CoverageMap | None = None,
    min_body_lines: int = 2,
) -> ExciseContext:
    """Read the seed's Python files and compute the call graph, once for every strategy."""
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
