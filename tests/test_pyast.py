"""`taskmint.pyast.parse` is safe on the refresh's thread pool; bare `ast.parse` is not on
CPython 3.11 before 3.11.8 (interpreter-wide recursion depth in the AST-to-object conversion)."""

from __future__ import annotations

import ast
import gc
import inspect
import sys
import threading
import time
import traceback
from collections.abc import Callable
from pathlib import Path

import pytest

from taskmint import pyast

UNLOCKED = ast.parse.__wrapped__  # type: ignore[attr-defined]
SOURCE = (Path(__file__).resolve().parents[1] / "src/taskmint/validate/removal.py").read_text()


def _race(
    parse: Callable[[str], ast.Module],
    rounds: int,
    other: Callable[[str], object] | None = None,
) -> list[SystemError]:
    """Parse from 4 threads (two of them with `other`, if given) while the garbage collector
    lets other threads in mid-parse."""
    errors: list[SystemError] = []

    def work(fn: Callable[[str], object]) -> None:
        for _ in range(rounds):
            try:
                fn(SOURCE)
            except SystemError as exc:
                errors.append(exc)

    def yield_gil(phase: str, info: dict[str, int]) -> None:
        time.sleep(0)

    threshold = gc.get_threshold()
    gc.callbacks.append(yield_gil)
    gc.set_threshold(50, 1, 1)
    try:
        fns = [parse, parse, other or parse, other or parse]
        threads = [threading.Thread(target=work, args=(fn,)) for fn in fns]
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
        errors += _race(UNLOCKED, 40)
        if errors:
            break
    assert errors and "recursion depth mismatch" in str(errors[0])


def test_every_parse_in_the_process_takes_the_lock() -> None:
    # The standard library parses too (traceback places its carets with `ast.parse`, on every
    # formatted exception; `ast.literal_eval` parses strings): importing taskmint routes those
    # through the same lock, so they cannot break a taskmint parse in another thread.
    assert ast.parse is pyast.locked_parse
    assert _race(pyast.parse, 40, other=ast.parse) == []
    assert _race(pyast.parse, 20, other=lambda s: ast.literal_eval("[1, (2, 3)]")) == []


def test_a_formatted_traceback_waits_for_the_lock() -> None:
    def fails() -> None:
        values: dict[str, list[int]] = {"a": [1]}
        values["a"][0] + values["b"][0] * 2  # the failing line is an expression

    try:
        fails()
    except KeyError as exc:
        error = exc
    done = threading.Event()

    def format_it() -> None:
        traceback.format_exception(error)
        done.set()

    with pyast._LOCK:
        thread = threading.Thread(target=format_it)
        thread.start()
        # caret placement parses the failing line: it cannot run while another thread parses
        assert not done.wait(0.5)
    assert done.wait(10)
    thread.join()


def _parse_with_a_finalizer_that_parses(parse) -> list[str]:  # type: ignore[no-untyped-def]
    """Parse a large module while cyclic garbage waits whose finalizer formats a traceback
    (which parses the failing line), the collector running at every allocation."""
    errors: list[str] = []

    class Cycle:
        def __init__(self) -> None:
            self.me = self

        def __del__(self) -> None:
            try:
                {}["missing"] + [][0] * 2  # an expression line to place carets on
            except KeyError as exc:
                traceback.format_exception(exc)

    source = inspect.getsource(traceback) * 3
    threshold = gc.get_threshold()
    try:
        for _ in range(3):
            for _ in range(200):
                Cycle()
            gc.set_threshold(1)
            try:
                parse(source)
            except SystemError as exc:
                errors.append(str(exc))
            finally:
                gc.set_threshold(*threshold)
    finally:
        gc.collect()
    return errors


@pytest.mark.skipif(sys.version_info >= (3, 11, 8), reason="CPython 3.11.8 fixed the state")
def test_a_finalizer_parsing_mid_parse_breaks_a_bare_parse() -> None:
    assert _parse_with_a_finalizer_that_parses(pyast._ORIGINAL)


def test_a_finalizer_cannot_parse_mid_parse() -> None:
    assert _parse_with_a_finalizer_that_parses(pyast.parse) == []
