"""`ast.parse` behind one lock, for every caller in the process.

CPython 3.11 before 3.11.8 keeps the recursion depth of its AST-to-object conversion in
interpreter-wide state, so two threads parsing at once can fail with "SystemError: AST
constructor recursion depth mismatch" (CPython issue 106905). The refresh validates and
describes candidates on a thread pool, and taskmint's own parses are not the only ones: the
standard library's `traceback` parses source lines to place its carets whenever an exception is
formatted (Prefect logs every failed task's), and `ast.literal_eval` parses too. A lock around
taskmint's parses alone let such a parse in another thread break one of them (2 of 180
candidates in one `make demo` on a loaded machine).

So importing taskmint installs `locked_parse` as `ast.parse` (`install`, idempotent): every
parse through the `ast` module then takes the one lock.

The same state breaks within one thread too: a parse nested in a parse (a finalizer that the
garbage collector runs mid-conversion and that formats a traceback, as pytest's unraisable-
exception hook does) resets the depth, and the outer parse then fails with the same error
(seen at the end of a pytest session). So the collector is paused while a parse runs, and a
parse that still nests (only a finalizer can start one) raises SyntaxError, which `traceback`'s
caret placement takes as "no carets".
"""

from __future__ import annotations

import ast
import gc
import threading
from typing import Any

__all__ = ["install", "locked_parse", "parse"]

_LOCK = threading.RLock()
_ORIGINAL = getattr(ast.parse, "__wrapped__", ast.parse)


_NESTED = threading.local()


def locked_parse(*args: Any, **kwargs: Any) -> Any:
    """`ast.parse` (same arguments), one thread at a time, never nested, with the garbage
    collector paused."""
    with _LOCK:
        if getattr(_NESTED, "active", False):
            raise SyntaxError("ast.parse started inside another parse (CPython issue 106905)")
        collecting = gc.isenabled()
        gc.disable()
        _NESTED.active = True
        try:
            return _ORIGINAL(*args, **kwargs)
        finally:
            _NESTED.active = False
            if collecting:
                gc.enable()


locked_parse.__wrapped__ = _ORIGINAL  # type: ignore[attr-defined]


def install() -> None:
    """Make `ast.parse` (so `traceback`, `ast.literal_eval` and every library) take the lock."""
    ast.parse = locked_parse


def parse(source: str | bytes, filename: str = "<unknown>") -> ast.Module:
    """`ast.parse(source, filename)`, one thread at a time."""
    result: ast.Module = locked_parse(source, filename)
    return result


install()
