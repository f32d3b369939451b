"""Bands and retirement."""

from __future__ import annotations

import itertools

import pytest

from taskmint.calibrate.bands import band_edges, band_of, is_retired, overall_band
from taskmint.calibrate.models import DEFAULT_BANDS, CalibrationConfig
from taskmint.errors import ManifestError
from taskmint.records import Calibration


def _row(model: str, rate: float, attempts: int = 10) -> Calibration:
    solves = round(rate * attempts)
    return Calibration(
        model=model,
        attempts=attempts,
        solves=solves,
        rate=solves / attempts,
        interval_low=0.0,
        interval_high=1.0,
        date="2025-01-01",
    )


@pytest.mark.parametrize(
    ("rate", "band"),
    [
        (1.0, "easy"),
        (0.8, "easy"),
        (0.79, "medium"),
        (0.5, "medium"),
        (0.2, "hard"),
        (0.1, "frontier"),
        (0.05, "frontier"),
        (0.0, "unsolved"),
    ],
)
def test_band_of_uses_inclusive_lower_bounds(rate: float, band: str) -> None:
    assert band_of(rate) == band


def test_band_edges_cover_zero_to_one_without_gaps() -> None:
    edges = band_edges(DEFAULT_BANDS)
    assert edges[0] == ("unsolved", 0.0, 0.05)
    assert edges[-1] == ("easy", 0.8, 1.0)
    assert all(a[2] == b[1] for a, b in itertools.pairwise(edges))


def test_custom_bands_are_validated() -> None:
    ok = CalibrationConfig(bands=(("solved", 0.5), ("unsolved", 0.0)))
    assert band_of(0.6, ok.bands) == "solved" and band_of(0.4, ok.bands) == "unsolved"
    with pytest.raises(ManifestError, match="lowest band must start at"):
        CalibrationConfig(bands=(("solved", 0.5), ("unsolved", 0.1)))
    with pytest.raises(ManifestError, match="distinct lower bounds"):
        CalibrationConfig(bands=(("a", 0.2), ("b", 0.5), ("c", 0.0)))


def test_a_task_every_model_solves_at_90_percent_is_retired() -> None:
    rows = [_row("a", 0.9), _row("b", 1.0), _row("reference/oracle", 1.0, attempts=1)]
    assert is_retired(rows, ["a", "b"])
    assert not is_retired(rows, ["a", "b", "c"])  # c never ran: keep the task
    assert not is_retired([_row("a", 0.9), _row("b", 0.8)], ["a", "b"])
    assert not is_retired(rows, [])
    # a hint row does not count as solving the task
    assert not is_retired([_row("a", 0.9), _row("b@hint2", 1.0)], ["a", "b"])
    assert is_retired([_row("a", 0.8)], ["a"], retire_at=0.75)


def test_overall_band_is_the_best_models_band() -> None:
    rows = [_row("weak", 0.0), _row("strong", 0.6), _row("strong@hint1", 1.0)]
    assert overall_band(rows) == "medium"
    assert overall_band(rows, models=["weak"]) == "unsolved"
    assert overall_band([_row("reference/oracle", 1.0, attempts=1)]) is None
