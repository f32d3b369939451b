"""What a run did, per seed and in all: counts per verdict and strategy, the seeds' suites,
bands and spend, as rows (for a table artifact or `--json`) and as a markdown report."""

from __future__ import annotations

import dataclasses
import time
from collections import Counter
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from taskmint.pipeline.mint import MintResult
from taskmint.records import Task
from taskmint.validate import Baseline
from taskmint.validate.baseline import seed_report

__all__ = [
    "SeedSummary",
    "band_counts",
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


def summarize_seed(
    seed_name: str,
    results: list[MintResult],
    started: float,
    error: str | None = None,
    strategies: Mapping[str, str] | None = None,
) -> SeedSummary:
    """Counts per verdict status (and per strategy, given candidate id -> strategy)."""
    statuses = Counter(r.verdict.status for r in results)
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
    lines += ["", "## Bands", "", "| band | tasks |", "|---|---|"]
    lines += [f"| {band} | {n} |" for band, n in band_counts(tasks).items()]
    lines += ["", "## Spend", "", "| what | amount |", "|---|---|"]
    lines += [f"| {k} | {v} |" for k, v in spend.items()]
    return "\n".join(lines) + "\n"
