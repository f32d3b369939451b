"""Difficulty bands and retirement, from per-model solve rates.

A band is a named range of solve rates; the configured bands (see `models.DEFAULT_BANDS`) list
each band's lowest rate, highest first, ending at 0.0. A task is banded per model. A task that
every configured model solves at `retire_at` or more is retired: the next dataset version
tombstones it, since it no longer tells models apart.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence

from taskmint.calibrate.models import DEFAULT_BANDS
from taskmint.records import Calibration

__all__ = ["band_edges", "band_of", "is_retired", "overall_band"]

Bands = Sequence[tuple[str, float]]


def band_of(rate: float, bands: Bands = DEFAULT_BANDS) -> str:
    """The name of the band holding `rate` (a band includes its lower bound)."""
    for name, low in bands:
        if rate >= low:
            return name
    return bands[-1][0]


def band_edges(bands: Bands = DEFAULT_BANDS) -> list[tuple[str, float, float]]:
    """(name, low, high) per band, lowest band first; the top band's high is 1.0 inclusive."""
    ordered = sorted(bands, key=lambda b: b[1])
    out = []
    for i, (name, low) in enumerate(ordered):
        high = ordered[i + 1][1] if i + 1 < len(ordered) else 1.0
        out.append((name, low, high))
    return out


def _model_rows(calibrations: Iterable[Calibration]) -> list[Calibration]:
    """Rows of models (not reference solvers) without hints that made attempts."""
    return [
        c for c in calibrations if c.solver_kind == "model" and c.hint_level == 0 and c.attempts > 0
    ]


def is_retired(
    calibrations: Iterable[Calibration],
    models: Iterable[str],
    *,
    retire_at: float = 0.9,
) -> bool:
    """Whether every model in `models` solved the task at `retire_at` or more.

    Only rows without hints count (a hint makes a task easier than it is). A model with no row
    keeps the task alive, and so does an empty `models`.
    """
    wanted = list(models)
    if not wanted:
        return False
    rows = {c.solver_name: c for c in _model_rows(calibrations)}
    return all(name in rows and rows[name].rate >= retire_at for name in wanted)


def overall_band(
    calibrations: Iterable[Calibration],
    models: Iterable[str] | None = None,
    bands: Bands = DEFAULT_BANDS,
) -> str | None:
    """The band of the best model's solve rate (the hardest a task is for the field), or None.

    A task is as easy as its easiest solver finds it, so the maximum rate decides.
    """
    rows = _model_rows(calibrations)
    if models is not None:
        wanted = set(models)
        rows = [c for c in rows if c.solver_name in wanted]
    if not rows:
        return None
    return band_of(max(c.rate for c in rows), bands)
