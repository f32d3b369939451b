"""Bands and retirement."""

from __future__ import annotations

import itertools

import pytest

from taskmint.calibrate.bands import band_edges, band_of, is_retired, overall_band
from taskmint.calibrate.models import DEFAULT_BANDS, CalibrationConfig
from taskmint.errors import ManifestError
from taskmint.records import Calibration, SolverKind


def _row(
    name: str,
    rate: float,
    attempts: int = 10,
    *,
    hint_level: int = 0,
    kind: SolverKind = "model",
) -> Calibration:
    solves = round(rate * attempts)
    return Calibration(
        solver_kind=kind,
        solver_name=name,
        hint_level=hint_level,
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
    rows = [_row("a", 0.9), _row("b", 1.0), _row("oracle", 1.0, 1, kind="reference")]
    assert is_retired(rows, ["a", "b"])
    assert not is_retired(rows, ["a", "b", "c"])  # c never ran: keep the task
    assert not is_retired([_row("a", 0.9), _row("b", 0.8)], ["a", "b"])
    assert not is_retired(rows, [])
    # a hint row does not count as solving the task
    assert not is_retired([_row("a", 0.9), _row("b", 1.0, hint_level=2)], ["a", "b"])
    # a reference solver is no model, whatever the names
    assert not is_retired([_row("a", 1.0, kind="reference")], ["a"])
    assert is_retired([_row("a", 0.8)], ["a"], retire_at=0.75)


def test_overall_band_is_the_best_models_band() -> None:
    rows = [_row("weak", 0.0), _row("strong", 0.6), _row("strong", 1.0, hint_level=1)]
    assert overall_band(rows) == "medium"
    assert overall_band(rows, models=["weak"]) == "unsolved"
    assert overall_band([_row("oracle", 1.0, 1, kind="reference")]) is None
    # the kind decides, not the name: a model may be called anything (names with "/" or "@")
    odd = [_row("reference/oracle", 0.6), _row("org/m@hint1", 0.1)]
    assert overall_band(odd) == "medium" and is_retired(odd, ["org/m@hint1"], retire_at=0.1)
