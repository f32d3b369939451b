"""`ast.parse` behind one lock.

CPython 3.11 before 3.11.8 keeps the recursion depth of its AST-to-object conversion in
interpreter-wide state, so two threads parsing at once can fail with "SystemError: AST
constructor recursion depth mismatch" (CPython issue 106905). The refresh validates and
describes candidates on a thread pool, so every parse in taskmint goes through here.
"""

from __future__ import annotations

import ast
import threading

__all__ = ["parse"]

_LOCK = threading.Lock()


def parse(source: str | bytes, filename: str = "<unknown>") -> ast.Module:
    """`ast.parse(source, filename)`, one thread at a time."""
    with _LOCK:
        return ast.parse(source, filename)
