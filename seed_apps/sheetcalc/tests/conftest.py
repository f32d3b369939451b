"""Shared fixtures for the sheetcalc test-suite."""

import pytest

from sheetcalc import Workbook


@pytest.fixture
def wb():
    """A fresh workbook with sheets ``Sheet1`` and ``Data``."""
    return Workbook(["Sheet1", "Data"])


@pytest.fixture
def calc():
    """Return ``calc(formula, **cells)``: evaluate a formula in a new workbook holding ``cells``.

    Cell contents are given as keyword arguments, e.g. ``calc("=A1*2", A1=3)``.
    """
    def run(formula, **cells):
        book = Workbook()
        if cells:
            book.set_cells(cells)
        return book.evaluate(formula)
    return run
