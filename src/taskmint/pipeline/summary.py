"""What a run did, per seed and in all: counts per verdict and strategy, the seeds' suites,
bands and spend, as rows (for a table artifact or `--json`) and as a markdown report."""

from __future__ import annotations

import dataclasses
import json
import resource
import time
from collections import Counter
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from taskmint.pipeline.mint import MintResult
from taskmint.records import Task
from taskmint.sandbox.base import METER
from taskmint.validate import Baseline
from taskmint.validate.baseline import seed_report

__all__ = [
    "CostReading",
    "SeedSummary",
    "band_counts",
    "peak_memory",
    "record_seed",
    "summarize_seed",
    "summary_markdown",
    "summary_rows",
    "with_tests",
]


@dataclass(frozen=True, slots=True, kw_only=True)
class SeedSummary:
    """What one seed produced in a refresh."""

    seed: str
    candidates: int = 0
    accepted: int = 0
    rejected: dict[str, int] = field(default_factory=dict)
    # strategy -> (candidates, accepted)
    by_strategy: dict[str, tuple[int, int]] = field(default_factory=dict)
    wall_time: float = 0.0
    error: str | None = None
    tests_kept: int = 0  # stable tests of the original suite the tasks are built on
    tests_excluded: int = 0  # failing, skipped, hung, flaky or cut from a long suite
    # what the project's own configuration selects (plain pytest's run) and deselects
    tests_selected: int = 0
    tests_deselected: int = 0
    # what to know and do about the seed's suite, a line each (`validate.seed_report`)
    report: tuple[str, ...] = ()
    # a few rejected candidates per reason: "strategy unit: the verdict's reason"
    examples: dict[str, tuple[str, ...]] = field(default_factory=dict)
    # what the seed cost (`CostReading`): the fixed part (acquire, environment, index, original
    # runs, coverage, excision) in wall seconds; for the whole seed, this process's CPU
    # seconds (every thread), and the sandbox runs and their summed wall seconds
    prepare_seconds: float = 0.0
    host_seconds: float = 0.0
    sandbox_runs: int = 0
    sandbox_seconds: float = 0.0


EXAMPLES_PER_REASON = 3


@dataclass(frozen=True, slots=True)
class CostReading:
    """The process's counters at one moment: CPU seconds of this process (every thread) and
    the sandbox meter (`sandbox.base.METER`)."""

    wall: float
    host: float
    runs: int
    sandbox: float

    @classmethod
    def now(cls) -> CostReading:
        me = resource.getrusage(resource.RUSAGE_SELF)
        runs, seconds = METER.reading()
        return cls(
            wall=time.monotonic(),
            host=me.ru_utime + me.ru_stime,
            runs=runs,
            sandbox=seconds,
        )

    def charge(self, summary: SeedSummary, prepared_at: float | None = None) -> SeedSummary:
        """`summary` with the cost from this reading to now (`prepared_at`: when the fixed
        part ended, a `time.monotonic()`)."""
        now = CostReading.now()
        return dataclasses.replace(
            summary,
            prepare_seconds=round((prepared_at or now.wall) - self.wall, 1),
            host_seconds=round(now.host - self.host, 2),
            sandbox_runs=now.runs - self.runs,
            sandbox_seconds=round(now.sandbox - self.sandbox, 1),
        )


def record_seed(path: Path, summary: SeedSummary, **extra: Any) -> None:
    """Append `summary` (and `extra`) as one JSON line to the run's seed log `path`, as soon as
    the seed is done: a run stopped before it publishes keeps what its seeds cost, and the
    parts of a resumed run add up."""
    path.parent.mkdir(parents=True, exist_ok=True)
    line = json.dumps({**dataclasses.asdict(summary), **extra, **peak_memory()})
    with path.open("a", encoding="utf-8") as f:
        f.write(line + "\n")


def peak_memory() -> dict[str, float]:
    """Peak resident memory so far, MiB: this process's, and its largest waited-for child's."""
    me = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
    kids = resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss
    return {"peak_rss_mib": round(me / 1024, 1), "peak_child_rss_mib": round(kids / 1024, 1)}


def summarize_seed(
    seed_name: str,
    results: list[MintResult],
    started: float,
    error: str | None = None,
    strategies: Mapping[str, str] | None = None,
    names: Mapping[str, str] | None = None,
) -> SeedSummary:
    """Counts per verdict status (and per strategy, given candidate id -> strategy), and a few
    examples of each rejection (named by `names`, candidate id -> name, when given)."""
    statuses = Counter(r.verdict.status for r in results)
    examples: dict[str, list[str]] = {}
    for r in results:
        v = r.verdict
        shown = examples.setdefault(v.status, [])
        if v.status != "accepted" and len(shown) < EXAMPLES_PER_REASON:
            named = (names or {}).get(v.candidate_id, v.candidate_id)
            shown.append(f"{named}: {v.reason[:300]}")
    by_strategy: dict[str, tuple[int, int]] = {}
    for r in results:
        name = (strategies or {}).get(r.verdict.candidate_id)
        if name is not None:
            made, ok = by_strategy.get(name, (0, 0))
            by_strategy[name] = (made + 1, ok + int(r.task is not None))
    accepted = statuses.pop("accepted", 0)
    return SeedSummary(
        seed=seed_name,
        candidates=len(results),
        accepted=accepted,
        rejected=dict(sorted(statuses.items())),
        by_strategy=dict(sorted(by_strategy.items())),
        wall_time=round(time.monotonic() - started, 1),
        error=error,
        examples={k: tuple(v) for k, v in sorted(examples.items()) if v},
    )


def with_tests(summary: SeedSummary, baseline: Baseline) -> SeedSummary:
    """The summary with what the seed's original suite gave: tests selected by the project,
    deselected, kept and excluded, and the per-seed report (`seed_report`)."""
    return dataclasses.replace(
        summary,
        tests_kept=baseline.tests_kept,
        tests_excluded=baseline.tests_excluded,
        tests_selected=baseline.collected,
        tests_deselected=baseline.deselected,
        report=seed_report(baseline),
    )


def summary_rows(summaries: Sequence[SeedSummary]) -> list[dict[str, Any]]:
    """One row per (seed, strategy): candidates, accepted, yield; a seed error is its own row."""
    rows: list[dict[str, Any]] = []
    for s in summaries:
        if s.error:
            rows.append(
                {
                    "seed": s.seed,
                    "strategy": "-",
                    "candidates": 0,
                    "accepted": 0,
                    "yield": 0.0,
                    "wall_s": s.wall_time,
                    "error": s.error[:200],
                }
            )
            continue
        for strategy, (made, ok) in sorted(s.by_strategy.items()):
            rows.append(
                {
                    "seed": s.seed,
                    "strategy": strategy,
                    "candidates": made,
                    "accepted": ok,
                    "yield": round(ok / made, 3) if made else 0.0,
                    "wall_s": s.wall_time,
                    "error": "",
                }
            )
    return rows


def band_counts(tasks: Iterable[Task]) -> dict[str, int]:
    """Tasks per band ("uncalibrated" for tasks without a band)."""
    return dict(sorted(Counter(t.band or "uncalibrated" for t in tasks).items()))


def _strength_lines(summaries: Sequence[SeedSummary], tasks: Sequence[Task]) -> list[str]:
    """The test-strength gate's part of the report: the tasks' mutation scores and the
    candidates it rejected as `weak_tests` (nothing when the gate measured nothing)."""
    scores = sorted(t.mutation_score for t in tasks if t.mutation_score is not None)
    weak = sum(s.rejected.get("weak_tests", 0) for s in summaries)
    if not scores and not weak:
        return []
    lines = ["", "## Test strength", ""]
    if scores:
        median = scores[len(scores) // 2]
        lines.append(
            f"- mutation score of {len(scores)} of {len(tasks)} tasks: median {median:.2f}, "
            f"lowest {scores[0]:.2f}; mutants graded: {sum(t.mutants for t in tasks)}, "
            f"killed: {sum(t.mutants_killed for t in tasks)}"
        )
    lines.append(f"- rejected as `weak_tests`: {weak}")
    return lines


def _cost_lines(summaries: Sequence[SeedSummary]) -> list[str]:
    """What each seed cost: its fixed part, and per candidate, the host's CPU and the
    sandboxes' wall seconds."""
    rows = [s for s in summaries if s.sandbox_runs]
    if not rows:
        return []
    lines = ["", "## Costs", ""]
    lines += ["| seed | wall s | fixed s | host CPU s / candidate | sandbox s / candidate |"]
    lines += ["|---|---|---|---|---|"]
    for s in rows:
        n = max(s.candidates, 1)
        lines.append(
            f"| {s.seed} | {s.wall_time:.0f} | {s.prepare_seconds:.0f} | "
            f"{s.host_seconds / n:.2f} | {s.sandbox_seconds / n:.1f} |"
        )
    return lines


def summary_markdown(
    title: str,
    summaries: Sequence[SeedSummary],
    tasks: Sequence[Task],
    spend: Mapping[str, float | int],
    wall_time: float,
    published: str | None,
) -> str:
    """The run's markdown report."""
    made = sum(s.candidates for s in summaries)
    ok = sum(s.accepted for s in summaries)
    lines = [
        f"# {title}",
        "",
        f"- candidates: {made}, accepted: {ok}, yield: {ok / made if made else 0.0:.2f}",
        f"- wall time: {wall_time:.1f} s",
        f"- published: {published or 'nothing'}",
        "",
        "| seed | strategy | candidates | accepted | yield |",
        "|---|---|---|---|---|",
    ]
    for row in summary_rows(summaries):
        name = row["strategy"] if not row["error"] else f"ERROR: {row['error']}"
        lines.append(
            f"| {row['seed']} | {name} | {row['candidates']} | {row['accepted']} | "
            f"{row['yield']:.2f} |"
        )
    notes = [s for s in summaries if s.report or s.tests_selected]
    if notes:
        lines += ["", "## Seeds' test suites", ""]
        lines += ["| seed | selected by the project | deselected | kept | excluded |"]
        lines += ["|---|---|---|---|---|"]
        lines += [
            f"| {s.seed} | {s.tests_selected} | {s.tests_deselected} | {s.tests_kept} | "
            f"{s.tests_excluded} |"
            for s in notes
        ]
        for s in notes:
            lines += [f"- **{s.seed}**: {line}" for line in s.report]
    lines += _strength_lines(summaries, tasks)
    lines += _cost_lines(summaries)
    lines += ["", "## Bands", "", "| band | tasks |", "|---|---|"]
    lines += [f"| {band} | {n} |" for band, n in band_counts(tasks).items()]
    lines += ["", "## Spend", "", "| what | amount |", "|---|---|"]
    lines += [f"| {k} | {v} |" for k, v in spend.items()]
    return "\n".join(lines) + "\n"
