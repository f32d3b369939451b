"""Choosing which edits to make: the `excise` verb over every strategy and language."""

from __future__ import annotations

import random
from collections.abc import Iterator
from dataclasses import dataclass

from taskmint.excise.knobs import Knobs, matches
from taskmint.excise.strategy import STRATEGIES, build_context, candidates_for
from taskmint.excise.treesitter_edits import treesitter_candidates
from taskmint.index.coverage import CoverageMap
from taskmint.records import Candidate, CodeIndex, SeedApp, SkippedFile

__all__ = ["DEFAULT_STRATEGIES", "ExciseResult", "excise"]

DEFAULT_STRATEGIES = STRATEGIES


@dataclass(frozen=True, slots=True, kw_only=True)
class ExciseResult:
    """The candidates of one seed, plus the units left out and why."""

    candidates: tuple[Candidate, ...]
    skipped: tuple[SkippedFile, ...]


def excise(
    seed: SeedApp,
    index: CodeIndex,
    *,
    max_candidates: int,
    min_body_lines: int = 2,
    random_seed: int = 0,
    strategies: tuple[str, ...] = DEFAULT_STRATEGIES,
    knobs: Knobs | None = None,
    coverage: CoverageMap | None = None,
) -> ExciseResult:
    """The `excise` verb: up to `max_candidates` candidates, taken in turn from each strategy.

    Python goes through libcst (`excise.strategy`: stub a body, remove a function or method,
    remove a class or most of its methods, remove a block, stub a feature cluster found from
    the coverage map); other languages through tree-sitter byte-range edits
    (`excise.treesitter_edits`). Each strategy's stream is seeded by `random_seed` and the
    snapshot, so the same inputs give the same candidate ids. Candidates outside `knobs` are
    dropped.
    """
    if knobs is not None and knobs.strategies is not None:
        strategies = tuple(s for s in strategies if s in knobs.strategies)
    if seed.manifest.language != "python":
        found, left_out = treesitter_candidates(
            seed,
            index.units,
            max_candidates=max_candidates if knobs is None else max_candidates * 20,
            random_seed=random_seed,
            min_body_lines=min_body_lines,
        )
        kept = [c for c in found if c.strategy in strategies or c.strategy not in STRATEGIES]
        if knobs is not None:
            kept = [c for c in kept if matches(c, knobs)]
        return ExciseResult(candidates=tuple(kept[:max_candidates]), skipped=tuple(left_out))
    ctx = build_context(seed, index, coverage=coverage, min_body_lines=min_body_lines)
    streams: list[Iterator[Candidate | SkippedFile]] = [
        candidates_for(name, ctx, rng=random.Random(f"{random_seed}:{seed.snapshot_id}:{name}"))
        for name in strategies
    ]
    candidates: list[Candidate] = []
    skipped: list[SkippedFile] = list(ctx.skipped_files)
    seen: set[str] = set()
    live = list(streams)
    while live and len(candidates) < max_candidates:
        for stream in list(live):
            if len(candidates) >= max_candidates:
                break
            for item in stream:  # advance this stream to its next usable candidate
                if isinstance(item, SkippedFile):
                    skipped.append(item)
                    continue
                if item.candidate_id in seen or (knobs is not None and not matches(item, knobs)):
                    continue
                seen.add(item.candidate_id)
                candidates.append(item)
                break
            else:
                live.remove(stream)
    return ExciseResult(candidates=tuple(candidates), skipped=tuple(skipped))
