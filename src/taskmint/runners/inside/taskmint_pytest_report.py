"""taskmint's pytest plugin: per-test outcomes as JSON lines in a file outside the workspace.

This file runs INSIDE the sandbox, under the seed's interpreter, and imports nothing of
taskmint. Every record carries the per-run nonce; the host checks the nonce, the schema, and
that a `finish` record arrived. What the tests print is never parsed.
"""

from __future__ import annotations

import json
import os

_state: dict[str, object] = {"fh": None, "nonce": ""}


def configure(path: str, nonce: str) -> None:
    """Open the report file (called by the bootstrap before pytest starts)."""
    fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_APPEND, 0o600)
    _state["fh"] = os.fdopen(fd, "a", encoding="utf-8", buffering=1)
    _state["nonce"] = nonce


def _emit(record: dict[str, object]) -> None:
    fh = _state["fh"]
    if fh is None:
        return
    record["nonce"] = _state["nonce"]
    fh.write(json.dumps(record, sort_keys=True) + "\n")  # type: ignore[attr-defined]
    fh.flush()  # type: ignore[attr-defined]


def _message(report: object) -> str | None:
    longrepr = getattr(report, "longrepr", None)
    if longrepr is None:
        return None
    crash = getattr(longrepr, "reprcrash", None)
    text = getattr(crash, "message", None) if crash is not None else None
    if text is None:
        text = str(longrepr)
    return text[-2000:]


def pytest_collectreport(report):  # type: ignore[no-untyped-def]
    """Record collection errors: a module that fails to import is data, not a lost line."""
    if report.failed:
        _emit({"type": "collect_error", "nodeid": report.nodeid, "message": _message(report)})


def pytest_collection_finish(session):  # type: ignore[no-untyped-def]
    """Record every collected test id."""
    _emit({"type": "collected", "ids": [item.nodeid for item in session.items]})


def pytest_runtest_logreport(report):  # type: ignore[no-untyped-def]
    """Record each phase (setup, call, teardown) of each test."""
    _emit(
        {
            "type": "phase",
            "nodeid": report.nodeid,
            "when": report.when,
            "outcome": report.outcome,
            "wasxfail": hasattr(report, "wasxfail"),
            "duration": float(report.duration),
            "message": _message(report) if report.failed else None,
        }
    )


def pytest_sessionfinish(session, exitstatus):  # type: ignore[no-untyped-def]
    """Record the end of the session; a report without it is incomplete."""
    _emit({"type": "finish", "exitstatus": int(exitstatus)})
