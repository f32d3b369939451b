"""Choosing which edits to make: the `excise` verb over every strategy and language.

Each language's profile names the engine that edits its code (`LanguageProfile.engine`) and
the strategies that apply. The libcst strategies are registered here (`STRATEGIES`, in the
order a mixed batch tries them; `candidates_for` runs one by name); the tree-sitter engine has
its own (`excise.treesitter_candidates`, with the language's syntax); a profile with `own_edits`
makes its own (`LanguageProfile.candidates`: Rust's).
"""

from __future__ import annotations

import random
from collections.abc import Iterator
from dataclasses import dataclass
from typing import Protocol

from taskmint.config import FeatureSize
from taskmint.excise.context import CandidateStream, ExciseContext, build_context
from taskmint.excise.feature import candidates as feature
from taskmint.excise.feature_cluster import candidates as feature_cluster
from taskmint.excise.knobs import Knobs, matches
from taskmint.excise.remove_block import candidates as remove_block
from taskmint.excise.remove_class import candidates as remove_class
from taskmint.excise.remove_function import candidates as remove_function
from taskmint.excise.stub_body import candidates as stub_body
from taskmint.excise.treesitter_candidates import treesitter_candidates
from taskmint.index.coverage import CoverageMap
from taskmint.languages import profile_for_seed
from taskmint.records import Candidate, CodeIndex, SeedApp, SkippedFile, Strategy, as_strategy

__all__ = ["DEFAULT_STRATEGIES", "STRATEGIES", "ExciseResult", "candidates_for", "excise"]


class _Candidates(Protocol):
    def __call__(self, ctx: ExciseContext, *, rng: random.Random) -> CandidateStream: ...


# each module's `candidates` stream (see `excise.context` for the interface)
_STREAMS: dict[Strategy, _Candidates] = {
    "stub_body": stub_body,
    "remove_function": remove_function,
    "remove_class": remove_class,
    "remove_block": remove_block,
    "feature_cluster": feature_cluster,
    "feature": feature,
}
# every libcst strategy, in the order a mixed batch should try them
STRATEGIES: tuple[Strategy, ...] = tuple(_STREAMS)
DEFAULT_STRATEGIES = STRATEGIES


def candidates_for(
    name: str, ctx: ExciseContext, *, rng: random.Random, feature_size: FeatureSize | None = None
) -> CandidateStream:
    """The candidate stream of strategy `name` (one of `STRATEGIES`; `LookupError` if not);
    `feature_size` bounds strategy `feature` (default `FeatureSize()`)."""
    if name not in STRATEGIES:
        raise LookupError(f"unknown strategy {name!r}; choose one of {', '.join(STRATEGIES)}")
    if name == "feature":
        return feature(ctx, rng=rng, size=feature_size)
    return _STREAMS[as_strategy(name)](ctx, rng=rng)


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
    strategies: tuple[Strategy, ...] = DEFAULT_STRATEGIES,
    knobs: Knobs | None = None,
    coverage: CoverageMap | None = None,
    feature_size: FeatureSize | None = None,
) -> ExciseResult:
    """The `excise` verb: up to `max_candidates` candidates, taken in turn from each strategy.

    The seed's language's profile says which engine makes the edits and which of
    `strategies` apply (the others are passed over for this seed). libcst (Python:
    `STRATEGIES`): stub a body, remove a function or method, remove a class or most of its
    methods, remove a block, stub a feature cluster found from the coverage map, remove a
    whole feature across files, sized by `feature_size`; tree-sitter: byte-range edits
    (`excise.treesitter_candidates`). Each strategy's stream is seeded by `random_seed` and
    the snapshot, so the same inputs give the same candidate ids. Candidates outside `knobs`
    are dropped. An unknown strategy name raises `ValueError`.
    """
    strategies = tuple(as_strategy(s) for s in strategies)
    if knobs is not None and knobs.strategies is not None:
        strategies = tuple(s for s in strategies if s in knobs.strategies)
    language = profile_for_seed(seed)
    # a strategy the libcst engine has no name for (`remove_method`) is never asked for by
    # name, and always kept
    unnamed = tuple(s for s in language.strategies if s not in STRATEGIES + strategies)
    strategies = tuple(s for s in strategies if s in language.strategies) + unnamed
    return _ENGINES["profile" if language.own_edits else language.engine](
        seed,
        index,
        max_candidates=max_candidates,
        min_body_lines=min_body_lines,
        random_seed=random_seed,
        strategies=strategies,
        knobs=knobs,
        coverage=coverage,
        feature_size=feature_size,
    )


class _Engine(Protocol):
    def __call__(
        self,
        seed: SeedApp,
        index: CodeIndex,
        *,
        max_candidates: int,
        min_body_lines: int,
        random_seed: int,
        strategies: tuple[Strategy, ...],
        knobs: Knobs | None,
        coverage: CoverageMap | None,
        feature_size: FeatureSize | None,
    ) -> ExciseResult: ...


def _tree_sitter(
    seed: SeedApp,
    index: CodeIndex,
    *,
    max_candidates: int,
    min_body_lines: int,
    random_seed: int,
    strategies: tuple[Strategy, ...],
    knobs: Knobs | None,
    coverage: CoverageMap | None,
    feature_size: FeatureSize | None,
) -> ExciseResult:
    """The tree-sitter engine's candidates; a strategy the libcst engine does not know
    (`remove_method`) is never asked for by name, and always kept."""
    found, left_out = treesitter_candidates(
        seed,
        index.units,
        max_candidates=_asked(max_candidates, knobs),
        random_seed=random_seed,
        min_body_lines=min_body_lines,
    )
    kept = [c for c in found if c.strategy in strategies or c.strategy not in STRATEGIES]
    return _kept(kept, left_out, knobs, max_candidates)


def _asked(max_candidates: int, knobs: Knobs | None) -> int:
    """How many candidates to ask a one-shot engine for: more when `knobs` will drop some."""
    return max_candidates if knobs is None else max_candidates * 20


def _kept(
    found: list[Candidate], left_out: list[SkippedFile], knobs: Knobs | None, limit: int
) -> ExciseResult:
    """The first `limit` of `found` inside `knobs`, and what was left out."""
    kept = [c for c in found if knobs is None or matches(c, knobs)]
    return ExciseResult(candidates=tuple(kept[:limit]), skipped=tuple(left_out))


def _libcst(
    seed: SeedApp,
    index: CodeIndex,
    *,
    max_candidates: int,
    min_body_lines: int,
    random_seed: int,
    strategies: tuple[Strategy, ...],
    knobs: Knobs | None,
    coverage: CoverageMap | None,
    feature_size: FeatureSize | None,
) -> ExciseResult:
    """The libcst strategies' streams, taken in turn."""
    ctx = build_context(seed, index, coverage=coverage, min_body_lines=min_body_lines)
    streams: list[Iterator[Candidate | SkippedFile]] = [
        candidates_for(
            name,
            ctx,
            rng=random.Random(f"{random_seed}:{seed.snapshot_id}:{name}"),
            feature_size=feature_size,
        )
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


def _profile(
    seed: SeedApp,
    index: CodeIndex,
    *,
    max_candidates: int,
    min_body_lines: int,
    random_seed: int,
    strategies: tuple[Strategy, ...],
    knobs: Knobs | None,
    coverage: CoverageMap | None,
    feature_size: FeatureSize | None,
) -> ExciseResult:
    """The candidates a language's profile makes itself (Rust's, which keep the tree
    building), asked for more when `knobs` will drop some."""
    found, left_out = profile_for_seed(seed).candidates(
        seed,
        index.units,
        max_candidates=_asked(max_candidates, knobs),
        random_seed=random_seed,
        min_body_lines=min_body_lines,
        strategies=strategies,
        feature_size=feature_size,
    )
    return _kept(found, left_out, knobs, max_candidates)


# a profile's `engine` -> how its candidates are made
_ENGINES: dict[str, _Engine] = {
    "libcst": _libcst,
    "tree-sitter": _tree_sitter,
    "profile": _profile,
}
