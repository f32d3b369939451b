"""A harder batch: n tasks in a target band, found by turning the excision knobs up.

A researcher asks for `n` tasks in a band (with models configured: the band the calibration
assigns) or in solve-rate ranges per solver (`rates`, e.g. `{"gpt-x": (0.0, 0.3)}`; the
reference solvers `reference/null` and `reference/oracle` count as solvers, so a band they
decide needs no model). Each round:

1. excises candidates with the knobs turned up to the current level (`knobs_for`: more units,
   larger line budgets, more callers, i.e. more central code), new ones only; from level
   `BEHAVIOUR_LEVEL` the statements are level 2 (behaviour, no signatures), and from
   `FEATURE_LEVEL` the strategy is `feature` (whole features across files, larger with each
   level), unless the request names its strategies (`level_config`);
2. pre-filters them with the static difficulty predictor, when one is given (fitted on a
   calibrated dataset version) and the target is a band;
3. validates and calibrates them (results stored by content hash, as in the refresh);
4. keeps the tasks in the target, and moves the level up when the round's tasks were mostly
   too easy, down when mostly too hard (`next_level`). A round that finds no candidate it has
   not tried moves on instead (`move_on`: the nearest level above that has not run dry, else
   below) and does not count as one of `max_rounds`.

It stops when n tasks are found, when the budget (rollouts, tokens, wall time) is spent, after
`max_rounds` rounds with new candidates, or when every level has run dry; publishes what it
found as a new version of `dataset_name`, and reports what it spent, what each round tried
and found (`HarderResult.rounds`) and why it stopped (`why`). Prefect-free: the steps run
through an `Executor`, as the refresh's do.
"""

from __future__ import annotations

import dataclasses
import logging
import time
from collections.abc import Sequence
from pathlib import Path
from types import SimpleNamespace
from typing import Any, Literal

from taskmint.acquire.sources import load_seed_sources
from taskmint.calibrate import (
    DEFAULT_BANDS,
    DifficultyPredictor,
    fit_predictor,
    load_calibration_config,
)
from taskmint.config import Knobs, PipelineConfig
from taskmint.errors import TaskmintError
from taskmint.pipeline.calibration import calibrate_seed, spend_of
from taskmint.pipeline.failures import describe_error
from taskmint.pipeline.mint import MintResult
from taskmint.pipeline.refresh import mint_batch, publish_version, report_version
from taskmint.pipeline.seed import PreparedSeed, excise_seed, prepare_seed
from taskmint.pipeline.steps import Executor
from taskmint.pipeline.summary import SeedSummary, summarize_seed
from taskmint.publish import load_tasks
from taskmint.records import Candidate, Language, Strategy, Task

__all__ = [
    "BEHAVIOUR_LEVEL",
    "FEATURE_LEVEL",
    "Budget",
    "HarderRequest",
    "HarderResult",
    "harder",
    "in_target",
    "knobs_for",
    "level_config",
    "load_predictor",
    "move_on",
    "next_level",
    "over_budget",
    "prefilter",
    "target_side",
]

log = logging.getLogger("taskmint.pipeline")

Range = tuple[float, float]


@dataclasses.dataclass(frozen=True, slots=True, kw_only=True)
class Budget:
    """What a batch may spend; None: no limit."""

    rollouts: int | None = None  # solver attempts (reference solvers and models)
    tokens: int | None = None  # model tokens
    wall_seconds: float | None = None


@dataclasses.dataclass(frozen=True, slots=True, kw_only=True)
class HarderRequest:
    """What to look for (see the module docstring)."""

    n: int
    band: str | None = None
    rates: dict[str, Range] | None = None
    languages: tuple[Language, ...] | None = None
    strategies: tuple[Strategy, ...] | None = None
    knobs: Knobs | None = None  # the base ranges, turned up by the level
    start_level: int = 1
    max_level: int = 6
    max_rounds: int = 4
    candidates_per_round: int = 8  # per seed
    budget: Budget = dataclasses.field(default_factory=Budget)
    predictor_from: Path | None = None  # a calibrated dataset version to fit the predictor on
    min_probability: float = 0.2  # the predictor's probability of the band to keep a candidate
    dataset_name: str | None = None  # None: the config's dataset

    def __post_init__(self) -> None:
        if self.n < 1:
            raise TaskmintError(f"n must be at least 1, got {self.n}")
        if (self.band is None) == (self.rates is None):
            raise TaskmintError("give exactly one target: a band, or solve-rate ranges per solver")
        for model, (low, high) in (self.rates or {}).items():
            if not 0.0 <= low <= high <= 1.0:
                raise TaskmintError(f"rate range for {model} must be 0 <= low <= high <= 1")


# found: n tasks; budget: a limit of the request's budget; rounds: max_rounds rounds that each
# had new candidates; exhausted: no level left with a candidate not tried yet.
StopReason = Literal["found", "budget", "rounds", "exhausted"]


@dataclasses.dataclass(frozen=True, slots=True, kw_only=True)
class HarderResult:
    """What a harder batch found and spent."""

    tasks: tuple[Task, ...]
    stop_reason: StopReason
    spend: dict[str, float | int]
    levels: tuple[int, ...]  # the knob level of each round
    published: str | None
    summaries: tuple[SeedSummary, ...]
    rounds: tuple[str, ...] = ()  # what each round tried and found, in words
    why: str = ""  # why it stopped, in words (what to change when it fell short)


def _up(rng: tuple[float | None, float | None] | None, floor: float) -> tuple[float | None, ...]:
    low, high = rng if rng is not None else (None, None)
    new_low = max(low if low is not None else 0.0, floor)
    if high is not None and new_low > high:
        new_low = high  # never past the researcher's own cap
    return (new_low, high)


# From these knob levels on, statements describe behaviour only (level 2), and the strategy is
# `feature`: levels 1-2 small edits, interface given; 3 small edits, behaviour only; 4 whole
# features, interface given; 5 and up whole features, behaviour only; from 6 the minimum size
# of a feature grows by its configured minimum a level (100, 200, 300... lines by default).
BEHAVIOUR_LEVEL = 3
FEATURE_LEVEL = 4


def level_config(config: PipelineConfig, level: int, request: HarderRequest) -> PipelineConfig:
    """The run's config at knob `level`: its statement level and, unless the request names its
    strategies, the `feature` strategy with a larger minimum size at the highest levels."""
    statement = 2 if level >= BEHAVIOUR_LEVEL and level != FEATURE_LEVEL else 1
    changes: dict[str, Any] = {"statement_level": max(statement, config.statement_level)}
    if level >= FEATURE_LEVEL and request.strategies is None:
        low, high = config.feature.lines
        floor = (low or 0) * (1 + max(0, level - FEATURE_LEVEL - 1))
        if high is not None:
            floor = min(floor, high)
        changes["strategies"] = ("feature",)
        changes["feature"] = dataclasses.replace(config.feature, lines=(floor, high))
    return dataclasses.replace(config, **changes)


def knobs_for(base: Knobs | None, level: int) -> Knobs | None:
    """The base knobs turned up to `level` (0: unchanged).

    Each level asks for 3 more removed lines, every third level for one more unit, every
    second level for one more caller (more central code); the researcher's maxima hold.
    """
    if level <= 0:
        return base
    base = base or Knobs()
    return dataclasses.replace(
        base,
        lines_removed=_up(base.lines_removed, 3.0 * level),  # type: ignore[arg-type]
        units=_up(base.units, 1.0 + level // 3),  # type: ignore[arg-type]
        callers=_up(base.callers, float(level // 2)),  # type: ignore[arg-type]
    )


def target_side(task: Task, request: HarderRequest, bands: Sequence[tuple[str, float]]) -> int:
    """0: in the target; 1: too easy; -1: too hard (or not decidable: -1 keeps the level)."""
    if request.rates is not None:
        rows = {c.label: c for c in task.calibration}
        side = 0
        for model, (low, high) in request.rates.items():
            row = rows.get(model)
            if row is None or row.attempts == 0:
                return -1
            if row.rate > high:
                side = 1
            elif row.rate < low:
                return -1
        return side
    order = [name for name, _ in sorted(bands, key=lambda b: b[1])]  # hardest first
    if not task.band or task.band not in order or request.band not in order:
        return -1
    got, want = order.index(task.band), order.index(request.band or "")
    return 0 if got == want else (1 if got > want else -1)


def in_target(task: Task, request: HarderRequest, bands: Sequence[tuple[str, float]]) -> bool:
    """Whether the task is in the requested band or rate ranges."""
    return target_side(task, request, bands) == 0


def next_level(level: int, sides: Sequence[int], request: HarderRequest) -> int:
    """Up when most of the round's tasks were too easy, down when most were too hard."""
    easy = sum(s == 1 for s in sides)
    hard = sum(s == -1 for s in sides)
    if easy > len(sides) / 2:
        return min(level + 1, request.max_level)
    if hard > len(sides) / 2 and request.band is not None:
        return max(level - 1, 0)
    return level


def move_on(level: int, exhausted: set[int], request: HarderRequest) -> int | None:
    """The level to try after a round that found no new candidate at `level`: the nearest
    level above that has not run dry (harder first), else the nearest below; None when every
    level from 0 to `max_level` has."""
    above = range(level + 1, request.max_level + 1)
    below = range(level - 1, -1, -1)
    return next((lv for lv in (*above, *below) if lv not in exhausted), None)


def _round_line(round_no: int, level: int, new: int, minted: int, sides: Sequence[int]) -> str:
    easy, hard = sum(s == 1 for s in sides), sum(s == -1 for s in sides)
    return (
        f"round {round_no} level {level}: {new} new candidate{'' if new == 1 else 's'}, "
        f"{minted} task{'' if minted == 1 else 's'}, "
        f"{sum(s == 0 for s in sides)} in the target ({easy} too easy, {hard} too hard or "
        "undecided)"
    )


def _why(stop: StopReason, found: int, request: HarderRequest, levels: Sequence[int]) -> str:
    tried = ", ".join(str(lv) for lv in dict.fromkeys(levels))
    if stop == "found":
        return f"found {found} of {request.n}"
    if stop == "exhausted":
        return (
            f"found {found} of {request.n}: every level from 0 to {request.max_level} has no "
            f"candidate left that was not tried (levels tried: {tried}); add seeds, allow "
            "more strategies, raise --max-candidates or widen the target"
        )
    if stop == "rounds":
        return (
            f"found {found} of {request.n} in {request.max_rounds} rounds with new candidates "
            f"(levels tried: {tried}); raise --rounds or widen the target"
        )
    return f"found {found} of {request.n}: the budget is spent"


def over_budget(spend: dict[str, float | int], budget: Budget, elapsed: float) -> str | None:
    """Which budget is spent, if any."""
    if budget.rollouts is not None and spend.get("rollouts", 0) >= budget.rollouts:
        return f"rollouts {spend.get('rollouts')} >= {budget.rollouts}"
    if budget.tokens is not None and spend.get("tokens", 0) >= budget.tokens:
        return f"tokens {spend.get('tokens')} >= {budget.tokens}"
    if budget.wall_seconds is not None and elapsed >= budget.wall_seconds:
        return f"wall time {elapsed:.0f}s >= {budget.wall_seconds:.0f}s"
    return None


def load_predictor(version: Path) -> DifficultyPredictor | None:
    """A predictor fitted on a dataset version's banded tasks (None: too few to fit)."""
    banded = [t for t in load_tasks(version) if t.band]
    if len(banded) < 2 or len({t.band for t in banded}) < 2:
        return None
    return fit_predictor(banded, [t.band for t in banded])


def prefilter(
    candidates: Sequence[Candidate],
    predictor: DifficultyPredictor | None,
    band: str | None,
    min_probability: float,
    *,
    statement_level: int = 1,
) -> list[Candidate]:
    """Candidates the predictor gives at least `min_probability` of being in `band`.

    With no predictor or no band target (rate ranges), every candidate is kept.
    """
    if predictor is None or band is None or band not in predictor.classes or not candidates:
        return list(candidates)
    views: Any = [
        SimpleNamespace(
            features=c.features,
            strategy=c.strategy,
            language=c.language,
            statement_level=statement_level,
        )
        for c in candidates
    ]
    probs = predictor.probabilities(views)
    return [c for c, p in zip(candidates, probs, strict=True) if p[band] >= min_probability]


def target_bands(config: PipelineConfig) -> tuple[tuple[str, float], ...]:
    """The bands a task is placed in: the run's, else the models file's, else the defaults."""
    if config.bands is not None:
        return config.bands
    if config.models is not None:
        return load_calibration_config(config.models).bands
    return DEFAULT_BANDS


def _prepare_all(
    request: HarderRequest, config: PipelineConfig, ex: Executor
) -> list[PreparedSeed]:
    languages = frozenset(request.languages or ())
    prepared = []
    for source in load_seed_sources(config.seeds_manifest):
        try:
            ready = prepare_seed(source, config, ex, languages=languages)
        except Exception as exc:  # one seed's failure is its own: logged, the others go on
            log.error("seed %s skipped: %s", source.label, describe_error(exc))
            continue
        if ready is None:
            continue
        if not ready.baseline.usable:
            log.error("[%s] original suite unusable: %s", ready.seed.name, ready.baseline.reason)
            continue
        prepared.append(ready)
    return prepared


def harder(request: HarderRequest, config: PipelineConfig, ex: Executor) -> HarderResult:
    """Find `request.n` tasks in the target; see the module docstring."""
    started = time.monotonic()
    if request.strategies is not None:
        config = dataclasses.replace(config, strategies=request.strategies)
    if request.band is not None and config.models is None:
        raise TaskmintError(
            f"band {request.band!r} needs models to calibrate against (--models); without "
            "models, give rate ranges for the reference solvers"
        )
    bands = target_bands(config)
    predictor = load_predictor(request.predictor_from) if request.predictor_from else None
    prepared = _prepare_all(request, config, ex)
    found: dict[str, Task] = {}
    minted: list[Task] = []
    tried: set[str] = set()
    results_by_seed: dict[str, list[MintResult]] = {}
    strategies: dict[str, str] = {}
    levels: list[int] = []
    level = request.start_level
    stop: StopReason = "rounds"
    story: list[str] = []
    exhausted: set[int] = set()
    # a round with no new candidate moves on to another level and is not counted: each level
    # runs dry once, so the loop ends
    counted = round_no = 0
    while counted < request.max_rounds:
        round_no += 1
        levels.append(level)
        at_level = level_config(config, level, request)
        # a whole feature's size is the feature size's business, and it has few callers by
        # construction: the knobs turn up the small strategies only
        whole = at_level.strategies == ("feature",)
        knobs = request.knobs if whole else knobs_for(request.knobs, level)
        sides: list[int] = []
        new = minted_now = 0
        for ready in prepared:
            excised = ex.call(excise_seed, ready, at_level, knobs, round_no - 1)
            fresh = [c for c in excised.candidates if c.candidate_id not in tried]
            kept = prefilter(
                fresh,
                predictor,
                request.band,
                request.min_probability,
                statement_level=at_level.statement_level,
            )
            kept = kept[: request.candidates_per_round]
            log.info(
                "[%s] round %d level %d: %d candidates, %d new, %d after the predictor",
                ready.seed.name,
                round_no,
                level,
                len(excised.candidates),
                len(fresh),
                len(kept),
            )
            tried.update(c.candidate_id for c in fresh)
            new += len(fresh)
            if not kept:
                continue
            strategies.update({c.candidate_id: c.strategy for c in kept})
            results = mint_batch(ex, ready, kept, at_level)
            results_by_seed.setdefault(ready.seed.name, []).extend(results)
            tasks = [r.task for r in results if r.task is not None]
            if config.models is not None and tasks:
                tasks = list(ex.call(calibrate_seed, tasks, ready, config).tasks)
            minted.extend(tasks)
            minted_now += len(tasks)
            for t in tasks:
                side = target_side(t, request, bands)
                sides.append(side)
                if side == 0 and len(found) < request.n:
                    found[t.instance_id] = t
            if len(found) >= request.n:
                break
            if over_budget(spend_of(minted), request.budget, time.monotonic() - started):
                break
        story.append(_round_line(round_no, level, new, minted_now, sides))
        log.info("harder batch: %s", story[-1])
        spent = over_budget(spend_of(minted), request.budget, time.monotonic() - started)
        if len(found) >= request.n:
            stop = "found"
            break
        if spent:
            log.warning("budget spent: %s", spent)
            stop = "budget"
            break
        if new:
            counted += 1
            level = next_level(level, sides, request)
            continue
        exhausted.add(level)
        moved = move_on(level, exhausted, request)
        if moved is None:
            stop = "exhausted"
            break
        log.info("harder batch: nothing new at level %d; level %d next", level, moved)
        level = moved
    chosen = list(found.values())
    published = None
    created = False
    if chosen:
        seeds = [
            ready.seed_ref
            for ready in prepared
            if any(t.snapshot_id == ready.seed.snapshot_id for t in chosen)
        ]
        name = request.dataset_name or config.dataset_name
        version = ex.call(
            publish_version, chosen, seeds, dataclasses.replace(config, dataset_name=name)
        )
        published, created = str(version.path), version.created
    wall = round(time.monotonic() - started, 1)
    spend = {**spend_of(minted), "candidates": len(strategies), "wall_seconds": wall}
    summaries = tuple(
        summarize_seed(name, rs, started, strategies=strategies)
        for name, rs in results_by_seed.items()
    )
    why = _why(stop, len(chosen), request, levels)
    log.info("harder batch: %s (%s); spent %s", why, stop, spend)
    if published is not None and created:
        run = {"kind": "harder", "seeds": [dataclasses.asdict(s) for s in summaries]}
        report_version(published, {**run, "spend": spend, "wall_time": wall, "rounds": story})
    return HarderResult(
        tasks=tuple(chosen),
        stop_reason=stop,
        spend=spend,
        levels=tuple(levels),
        published=published,
        summaries=summaries,
        rounds=tuple(story),
        why=why,
    )
