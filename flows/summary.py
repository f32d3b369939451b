"""Run summaries as Prefect artifacts: a table per seed and strategy, and a markdown report.

`summary_rows` and `summary_markdown` are plain functions (tested without Prefect);
`publish_artifacts` creates the artifacts inside a flow run.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterable, Mapping, Sequence
from typing import Any

from taskmint.pipeline import SeedSummary
from taskmint.records import Task

__all__ = ["band_counts", "publish_artifacts", "summary_markdown", "summary_rows"]


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
    lines += ["", "## Bands", "", "| band | tasks |", "|---|---|"]
    lines += [f"| {band} | {n} |" for band, n in band_counts(tasks).items()]
    lines += ["", "## Spend", "", "| what | amount |", "|---|---|"]
    lines += [f"| {k} | {v} |" for k, v in spend.items()]
    return "\n".join(lines) + "\n"


def publish_artifacts(key: str, markdown: str, rows: list[dict[str, Any]]) -> None:
    """Create the run's table and markdown artifacts (inside a flow run)."""
    from prefect.artifacts import create_markdown_artifact, create_table_artifact

    create_table_artifact(table=rows or [{"seed": "-"}], key=f"{key}-table")
    create_markdown_artifact(markdown=markdown, key=f"{key}-summary")
