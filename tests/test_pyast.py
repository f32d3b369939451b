"""`taskmint.pyast.parse` is safe on the refresh's thread pool; bare `ast.parse` is not on
CPython 3.11 before 3.11.8 (interpreter-wide recursion depth in the AST-to-object conversion)."""

from __future__ import annotations

import ast
import gc
import sys
import threading
import time
from collections.abc import Callable
from pathlib import Path

import pytest

from taskmint import pyast

SOURCE = (Path(__file__).resolve().parents[1] / "src/taskmint/validate/removal.py").read_text()


def _race(parse: Callable[[str], ast.Module], rounds: int) -> list[SystemError]:
    """Parse from 4 threads while the garbage collector lets other threads in mid-parse."""
    errors: list[SystemError] = []

    def work() -> None:
        for _ in range(rounds):
            try:
                parse(SOURCE)
            except SystemError as exc:
                errors.append(exc)

    def yield_gil(phase: str, info: dict[str, int]) -> None:
        time.sleep(0)

    threshold = gc.get_threshold()
    gc.callbacks.append(yield_gil)
    gc.set_threshold(50, 1, 1)
    try:
        threads = [threading.Thread(target=work) for _ in range(4)]
        for t in threads:
            t.start()
        for t in threads:
            t.join()
    finally:
        gc.callbacks.remove(yield_gil)
        gc.set_threshold(*threshold)
    return errors


def test_locked_parse_survives_the_race() -> None:
    assert _race(pyast.parse, 40) == []


def test_the_race_is_real_on_this_interpreter() -> None:
    # What the lock is for: without it the same harness fails on affected interpreters.
    if sys.version_info >= (3, 11, 8):
        pytest.skip("this interpreter has the fix (CPython issue 106905)")
    errors: list[SystemError] = []
    for _ in range(5):
        errors += _race(ast.parse, 40)
        if errors:
            break
    assert errors and "recursion depth mismatch" in str(errors[0])
