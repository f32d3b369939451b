"""A dataset version's report: one self-contained HTML page a researcher looks at.

`write_report(version_dir)` reads the version's tasks and, when the run that published it left
one, its run record (`run.json`: per seed, the candidates, what was accepted and rejected and
why, the wall time; the run's spend) and writes `report.html` beside them. The plots are inline
SVG drawn here (no script, font or file from elsewhere): tasks and yield per seed and strategy,
rejection reasons, removed sizes (lines, units, files), FAIL_TO_PASS counts, mutation scores,
statement levels, bands, solve rates per solver and hint level, and the run's costs. A plot
with nothing to show says so instead of drawing an empty frame.

The refresh writes both at publish; `taskmint report VERSION` writes the page again.
"""

from __future__ import annotations

import html
import itertools
import json
import math
from collections import Counter, defaultdict
from collections.abc import Iterable, Mapping, Sequence
from pathlib import Path
from typing import Any

from taskmint.publish import layout
from taskmint.publish.loader import load_tasks
from taskmint.records import Task

__all__ = ["REPORT", "RUN_RECORD", "render_report", "write_report", "write_run_record"]

REPORT = "report.html"
RUN_RECORD = "run.json"

_WIDTH = 640
_ROW = 22
_LABEL = 190


def write_run_record(
    version_dir: str, run: Mapping[str, Any], storage_options: dict[str, Any] | None = None
) -> None:
    """Keep what the run that published the version knew (summaries, spend) beside it."""
    fs, path = layout.target(version_dir, storage_options)
    layout.put_file(fs, f"{path}/{RUN_RECORD}", json.dumps(run, indent=1).encode("utf-8"))


def write_report(version_dir: str | Path, storage_options: dict[str, Any] | None = None) -> str:
    """Write `report.html` into the version folder `version_dir` (a path or any fsspec URL)
    and return where it is."""
    fs, path = layout.target(version_dir, storage_options)
    tasks = load_tasks(
        str(version_dir), streaming=False, check=False, storage_options=storage_options
    )
    run: dict[str, Any] = {}
    if fs.exists(f"{path}/{RUN_RECORD}"):
        run = json.loads(fs.cat_file(f"{path}/{RUN_RECORD}").decode("utf-8"))
    manifest = layout.read_manifest(fs, path) or {}
    title = f"{manifest.get('name', '')} {manifest.get('version', Path(path).name)}".strip()
    page = render_report(tasks, run, title=title).encode("utf-8")
    layout.put_file(fs, f"{path}/{REPORT}", page)
    return layout.display(fs, f"{path}/{REPORT}")


# --- the page ----------------------------------------------------------------------------------


def render_report(tasks: Sequence[Task], run: Mapping[str, Any], *, title: str) -> str:
    """The page for `tasks` and the run record `run` (may be empty: then the plots that need
    it say there was no run record)."""
    seeds = run.get("seeds") or []
    sections = [
        _section("Tasks", [_bars("tasks per seed", _count(t.seed for t in tasks))]),
        _section(
            "Yield",
            [
                _bars("yield per seed (accepted / candidates)", _yield_by_seed(seeds), ratio=True),
                _bars(
                    "yield per strategy (accepted / candidates)",
                    _yield_by_strategy(seeds),
                    ratio=True,
                ),
                _bars("tasks per strategy", _count(t.strategy for t in tasks)),
            ],
            note="" if seeds else "no run record: yield needs the run that published this",
        ),
        _section(
            "Rejections",
            [_bars("candidates rejected, by reason", _rejections(seeds)), _examples(seeds)],
        ),
        _section(
            "What was removed",
            [
                _histogram("lines removed", [f.lines_removed for f in _features(tasks)]),
                _histogram("units removed", [f.units for f in _features(tasks)]),
                _histogram("files touched", [f.files for f in _features(tasks)]),
                _histogram("FAIL_TO_PASS tests", [len(t.FAIL_TO_PASS) for t in tasks]),
            ],
        ),
        _section(
            "Tests and statements",
            [
                _histogram(
                    "mutation score (test-strength gate)",
                    [t.mutation_score for t in tasks if t.mutation_score is not None],
                    bins=10,
                    span=(0.0, 1.0),
                ),
                _bars("statement level", _count(f"level {t.statement_level}" for t in tasks)),
                _bars("band", _count(t.band or "uncalibrated" for t in tasks)),
            ],
        ),
        _section(
            "Solve rates",
            [_bars("mean solve rate per solver and hint level", _rates(tasks), ratio=True)],
        ),
        _section(
            "Costs",
            [
                _bars("wall seconds per seed", _walls(seeds)),
                _bars("fixed seconds per seed (environment, original runs)", _fixed(seeds)),
                _bars("sandbox seconds per candidate", _per_candidate(seeds, "sandbox_seconds")),
                _bars("host CPU seconds per candidate", _per_candidate(seeds, "host_seconds")),
                _costs(run, tasks),
            ],
        ),
    ]
    languages = ", ".join(f"{k} {v:g}" for k, v in _count(t.language for t in tasks))
    return f"""<!DOCTYPE html>
<html lang="en"><head><meta charset="utf-8">
<title>{_e(title)}</title>
<style>
body {{ font: 14px/1.4 system-ui, sans-serif; margin: 24px auto; max-width: 1380px;
  color: #1d2330; background: #fff; }}
h1 {{ font-size: 22px; margin: 0 0 4px; }} h2 {{ font-size: 17px; margin: 28px 0 8px; }}
.grid {{ display: flex; flex-wrap: wrap; gap: 16px; }}
figure {{ margin: 0; border: 1px solid #dde2ea; border-radius: 6px; padding: 8px; }}
figcaption {{ font-weight: 600; margin-bottom: 4px; }}
.bar {{ fill: #3f6fd8; }} .axis {{ stroke: #9aa3b2; }}
svg text {{ font-size: 12px; fill: #1d2330; }}
.empty {{ fill: #8a93a3; font-style: italic; }} .note {{ color: #5b6575; }}
table {{ border-collapse: collapse; }}
td, th {{ padding: 3px 10px; border-bottom: 1px solid #e5e8ee; text-align: left; }}
td.n {{ text-align: right; font-variant-numeric: tabular-nums; }}
</style></head>
<body>
<h1>{_e(title)}</h1>
<p class="note">{len(tasks)} tasks from {len({t.seed for t in tasks})} seeds ({_e(languages)})</p>
{"".join(sections)}
</body></html>
"""


def _section(name: str, figures: Iterable[str], note: str = "") -> str:
    extra = f'<p class="note">{_e(note)}</p>' if note else ""
    return f'<h2>{_e(name)}</h2>{extra}<div class="grid">{"".join(figures)}</div>'


def _e(text: object) -> str:
    return html.escape(str(text), quote=True)


# --- the data ----------------------------------------------------------------------------------


def _count(values: Iterable[str]) -> list[tuple[str, float]]:
    return [(k, float(v)) for k, v in sorted(Counter(values).items())]


def _features(tasks: Sequence[Task]) -> list[Any]:
    return [t.features for t in tasks if t.features is not None]


def _yield_by_seed(seeds: Sequence[Mapping[str, Any]]) -> list[tuple[str, float]]:
    return [
        (f"{s['seed']} ({s['accepted']}/{s['candidates']})", s["accepted"] / s["candidates"])
        for s in seeds
        if s.get("candidates")
    ]


def _yield_by_strategy(seeds: Sequence[Mapping[str, Any]]) -> list[tuple[str, float]]:
    made: dict[str, int] = defaultdict(int)
    kept: dict[str, int] = defaultdict(int)
    for s in seeds:
        for strategy, (m, k) in (s.get("by_strategy") or {}).items():
            made[strategy] += m
            kept[strategy] += k
    return [(f"{k} ({kept[k]}/{made[k]})", kept[k] / made[k]) for k in sorted(made) if made[k]]


def _rejections(seeds: Sequence[Mapping[str, Any]]) -> list[tuple[str, float]]:
    total: Counter[str] = Counter()
    for s in seeds:
        total.update(s.get("rejected") or {})
        if s.get("error"):
            total["seed refused"] += 1
    return sorted(((k, float(v)) for k, v in total.items()), key=lambda kv: -kv[1])


def _rates(tasks: Sequence[Task]) -> list[tuple[str, float]]:
    rates: dict[str, list[float]] = defaultdict(list)
    for t in tasks:
        for c in t.calibration:
            rates[c.label].append(c.rate)
    return [(f"{k} (n={len(v)})", sum(v) / len(v)) for k, v in sorted(rates.items())]


def _walls(seeds: Sequence[Mapping[str, Any]]) -> list[tuple[str, float]]:
    return [(s["seed"], float(s.get("wall_time") or 0.0)) for s in seeds]


def _fixed(seeds: Sequence[Mapping[str, Any]]) -> list[tuple[str, float]]:
    return [(s["seed"], float(s["prepare_seconds"])) for s in seeds if s.get("prepare_seconds")]


def _per_candidate(seeds: Sequence[Mapping[str, Any]], key: str) -> list[tuple[str, float]]:
    return [
        (s["seed"], round(float(s[key]) / s["candidates"], 3))
        for s in seeds
        if s.get("candidates") and s.get(key) is not None
    ]


def _examples(seeds: Sequence[Mapping[str, Any]]) -> str:
    """A table: per seed and reason, how many, and one example (the candidate and why)."""
    rows = [
        (s["seed"], reason, (s.get("rejected") or {}).get(reason, 0), shown[0])
        for s in seeds
        for reason, shown in sorted((s.get("examples") or {}).items())
        if shown
    ]
    if not rows:
        return _empty("rejected candidates, an example per seed and reason")
    body = "".join(
        f'<tr><td>{_e(seed)}</td><td>{_e(reason)}</td><td class="n">{n}</td>'
        f'<td class="why">{_e(_clip(example, 160))}</td></tr>'
        for seed, reason, n, example in rows
    )
    return (
        "<figure><figcaption>rejected candidates, an example per seed and reason</figcaption>"
        f"<table><tr><th>seed</th><th>reason</th><th>n</th><th>example</th></tr>{body}"
        "</table></figure>"
    )


def _costs(run: Mapping[str, Any], tasks: Sequence[Task]) -> str:
    rows: list[tuple[str, object]] = [("tasks", len(tasks))]
    rows += [(k, v) for k, v in (run.get("spend") or {}).items()]
    if run.get("wall_time") is not None:
        rows.append(("run wall seconds", run["wall_time"]))
    candidates = sum(s.get("candidates", 0) for s in run.get("seeds") or [])
    if candidates and run.get("wall_time"):
        rows.append(("wall seconds per candidate", round(run["wall_time"] / candidates, 2)))
        rows.append(("tasks per hour", round(len(tasks) * 3600 / run["wall_time"], 1)))
    for key, name in (
        ("peak_rss_mib", "peak memory, MiB"),
        ("peak_child_rss_mib", "largest run, MiB"),
    ):
        if run.get(key):
            rows.append((name, run[key]))
    validation = [t.validation_wall_time for t in tasks if t.validation_wall_time]
    if validation:
        rows.append(("median validation seconds per task", round(_median(validation), 2)))
    body = "".join(f'<tr><th>{_e(k)}</th><td class="n">{_e(v)}</td></tr>' for k, v in rows)
    return f"<figure><figcaption>the run's costs</figcaption><table>{body}</table></figure>"


def _median(values: Sequence[float]) -> float:
    ordered = sorted(values)
    mid = len(ordered) // 2
    return ordered[mid] if len(ordered) % 2 else (ordered[mid - 1] + ordered[mid]) / 2


# --- the plots ---------------------------------------------------------------------------------


def _bars(title: str, items: Sequence[tuple[str, float]], *, ratio: bool = False) -> str:
    """Horizontal bars, one per (label, value); `ratio`: values in 0-1, drawn on a 0-1 axis."""
    if not items:
        return _empty(title)
    top = 1.0 if ratio else max(v for _, v in items) or 1.0
    span = _WIDTH - _LABEL - 60
    height = _ROW * len(items) + 10
    parts = [f'<line class="axis" x1="{_LABEL}" y1="0" x2="{_LABEL}" y2="{height - 5}"/>']
    for i, (label, value) in enumerate(items):
        y = 5 + i * _ROW
        w = max(span * value / top, 0.0)
        shown = f"{value:.2f}" if ratio else f"{value:g}"
        parts.append(
            f'<text x="{_LABEL - 6}" y="{y + 14}" text-anchor="end">{_e(_clip(label))}</text>'
            f'<rect class="bar" x="{_LABEL}" y="{y + 2}" width="{w:.1f}" height="{_ROW - 6}" '
            f'data-value="{value:g}"><title>{_e(label)}: {shown}</title></rect>'
            f'<text x="{_LABEL + w + 4:.1f}" y="{y + 14}">{shown}</text>'
        )
    return _figure(title, height, parts, len(items))


def _histogram(
    title: str,
    values: Sequence[float],
    *,
    bins: int = 12,
    span: tuple[float, float] | None = None,
) -> str:
    """Counts of `values` in equal bins (whole numbers for integer data)."""
    if not values:
        return _empty(title)
    low, high = span if span is not None else (min(values), max(values))
    integers = span is None and all(float(v).is_integer() for v in values)
    if integers and low >= 1 and high > 32 * low:  # skewed counts: bins that double
        return _doubling(title, [int(v) for v in values])
    width: float
    if integers:
        width = max(1, math.ceil((high - low + 1) / bins))
        edges = [low + i * width for i in range(math.ceil((high - low + 1) / width) + 1)]
    else:
        width = (high - low) / bins or 1.0
        edges = [low + i * width for i in range(bins + 1)]
    counts = [0] * (len(edges) - 1)
    for v in values:
        i = min(int((v - low) // width), len(counts) - 1)
        counts[i] += 1
    labels = []
    for a, b in itertools.pairwise(edges):
        if integers:
            labels.append(f"{a:g}" if b - a == 1 else f"{a:g}-{b - 1:g}")
        else:
            labels.append(f"{a:.2f}-{b:.2f}")
    return _columns(title, list(zip(labels, counts, strict=True)), len(values))


def _doubling(title: str, values: Sequence[int]) -> str:
    """Counts in bins 1, 2-3, 4-7, 8-15, ... (sizes and test counts spread over decades)."""
    top = max(values).bit_length()
    counts = [0] * top
    for v in values:
        counts[v.bit_length() - 1] += 1
    labels = [f"{1 << i}" if i == 0 else f"{1 << i}-{(2 << i) - 1}" for i in range(top)]
    first = next(i for i, c in enumerate(counts) if c)
    return _columns(title, list(zip(labels, counts, strict=True))[first:], len(values))


def _columns(title: str, items: Sequence[tuple[str, int]], n: int) -> str:
    """Vertical bars (a histogram's bins), labelled under each."""
    height, base, top = 200, 160, max(c for _, c in items) or 1
    step = (_WIDTH - 50) / len(items)
    parts = [f'<line class="axis" x1="40" y1="{base}" x2="{_WIDTH - 10}" y2="{base}"/>']
    for i, (label, count) in enumerate(items):
        x = 40 + i * step
        h = (base - 20) * count / top
        parts.append(
            f'<rect class="bar" x="{x + 2:.1f}" y="{base - h:.1f}" width="{step - 4:.1f}" '
            f'height="{h:.1f}" data-value="{count}"><title>{_e(label)}: {count}</title></rect>'
            f'<text x="{x + step / 2:.1f}" y="{base - h - 4:.1f}" text-anchor="middle">'
            f"{count if count else ''}</text>"
            f'<text x="{x + step / 2:.1f}" y="{base + 16}" text-anchor="middle" '
            f'transform="rotate(30 {x + step / 2:.1f} {base + 16})">{_e(label)}</text>'
        )
    return _figure(f"{title} (n={n})", height, parts, len(items))


def _figure(title: str, height: int, parts: Sequence[str], points: int) -> str:
    return (
        f"<figure><figcaption>{_e(title)}</figcaption>"
        f'<svg class="plot" data-points="{points}" width="{_WIDTH}" height="{height}" '
        f'viewBox="0 0 {_WIDTH} {height}" role="img" aria-label="{_e(title)}">'
        f"{''.join(parts)}</svg></figure>"
    )


def _empty(title: str) -> str:
    return (
        f"<figure><figcaption>{_e(title)}</figcaption>"
        f'<svg class="plot" data-points="0" width="{_WIDTH}" height="40">'
        f'<text class="empty" x="10" y="24">no data</text></svg></figure>'
    )


def _clip(label: str, most: int = 30) -> str:
    return label if len(label) <= most else label[: most - 1] + "…"
