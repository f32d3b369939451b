"""Reading the structured reports the in-sandbox runners write."""

from __future__ import annotations

import json
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from taskmint.records import Outcome, RunReport, TestResult
from taskmint.runners.inside.protocol import BatchEnd, read_batch_end

__all__ = ["BatchReport", "parse_node_report", "parse_pytest_batch", "parse_pytest_report"]

_SEVERITY: dict[str, int] = {
    "passed": 0,
    "xpassed": 1,
    "skipped": 2,
    "xfailed": 3,
    "failed": 4,
    "error": 5,
}


def _records(path: Path, nonce: str) -> tuple[list[dict[str, Any]], bool]:
    """The report's JSON records and whether every one was well-formed and carried `nonce`."""
    out: list[dict[str, Any]] = []
    ok = True
    try:
        raw = path.read_bytes()
    except OSError:
        return [], True
    for line in raw.decode("utf-8", "replace").splitlines():
        if not line.strip():
            continue
        try:
            rec = json.loads(line)
        except json.JSONDecodeError:
            ok = False
            continue
        if not isinstance(rec, dict) or rec.get("nonce") != nonce or "type" not in rec:
            ok = False
            continue
        out.append(rec)
    return out, ok


def _phase_outcome(rec: dict[str, Any]) -> Outcome:
    when, outcome, xfail = rec.get("when"), rec.get("outcome"), bool(rec.get("wasxfail"))
    if outcome == "failed":
        return "failed" if when == "call" else "error"
    if outcome == "skipped":
        return "xfailed" if xfail else "skipped"
    if outcome == "passed":
        return "xpassed" if xfail else "passed"
    return "error"


def parse_pytest_report(path: Path, nonce: str) -> RunReport:
    """Aggregate phase records into one outcome per test (the worst phase wins)."""
    records, ok = _records(path, nonce)
    return _pytest_report(records, ok)


def _pytest_report(records: list[dict[str, Any]], ok: bool) -> RunReport:
    outcomes: dict[str, Outcome] = {}
    durations: dict[str, float] = {}
    messages: dict[str, str | None] = {}
    collect_errors: list[str] = []
    collected: list[str] = []
    plugin_errors: list[str] = []
    deselected = 0
    running, since = "", 0.0
    complete = False
    for rec in records:
        kind = rec["type"]
        if kind == "start" and isinstance(rec.get("nodeid"), str):
            running, since = rec["nodeid"], float(rec.get("ts") or 0.0)
        elif kind == "phase" and rec.get("outcome") == "rerun":
            continue  # pytest-rerunfailures' earlier attempt: the last one is the outcome
        elif kind == "phase" and isinstance(rec.get("nodeid"), str):
            nodeid = rec["nodeid"]
            if rec.get("when") == "teardown" and nodeid == running:
                running = ""
            outcome = _phase_outcome(rec)
            if _SEVERITY[outcome] >= _SEVERITY.get(outcomes.get(nodeid, "passed"), 0):
                outcomes[nodeid] = outcome
                if rec.get("message"):
                    messages[nodeid] = str(rec["message"])
            durations[nodeid] = durations.get(nodeid, 0.0) + float(rec.get("duration") or 0.0)
        elif kind == "collect_error":
            collect_errors.append(f"{rec.get('nodeid')}: {rec.get('message')}")
        elif kind == "collected" and isinstance(rec.get("ids"), list):
            collected = [str(i) for i in rec["ids"]]
            deselected = int(rec.get("deselected") or 0)
        elif kind == "plugin_error":
            plugin_errors.append(f"{rec.get('name')}: {rec.get('message')}")
        elif kind == "finish":
            complete = True
            running = ""
    for nodeid in collected:  # collected but never reported: the run stopped before it
        outcomes.setdefault(nodeid, "missing")
    results = tuple(
        TestResult(
            test_id=t, outcome=o, duration=round(durations.get(t, 0.0), 6), message=messages.get(t)
        )
        for t, o in sorted(outcomes.items())
    )
    return RunReport(
        results=results,
        collection_errors=tuple(collect_errors),
        complete=complete,
        nonce_ok=ok,
        deselected=deselected,
        running=running,
        running_for=round(max(0.0, time.time() - since), 3) if running else 0.0,
        plugin_errors=tuple(plugin_errors),
    )


def parse_node_report(path: Path, nonce: str) -> RunReport:
    """Read the node harness's report (`runners/inside/node_runner.py`), leaf tests only.

    A test file whose process's records failed the harness's checks ("tampered") makes the
    whole report `tampered`, and its tests are absent; a file that did not load or whose
    process ended early is a collection error.
    """
    records, ok = _records(path, nonce)
    outcomes: dict[str, TestResult] = {}
    errors: list[str] = []
    tampered: list[str] = []
    complete = False
    mapping: dict[str, Outcome] = {
        "passed": "passed",
        "failed": "failed",
        "skipped": "skipped",
        "todo": "skipped",
    }
    for rec in records:
        kind = rec["type"]
        if kind == "test" and not rec.get("is_suite"):
            tid = str(rec.get("id"))
            message = rec.get("message")
            outcomes[tid] = TestResult(
                test_id=tid,
                outcome=mapping.get(str(rec.get("outcome")), "error"),
                duration=round(_float(rec.get("duration")), 6),
                message=str(message) if message is not None else None,
            )
        elif kind == "file_error":
            errors.append(f"{rec.get('file') or rec.get('id')}: {rec.get('message')}")
        elif kind == "tampered":
            tampered.append(f"{rec.get('file')}: {rec.get('reason')}")
        elif kind == "harness_error":
            errors.append(f"the node harness could not run: {rec.get('message')}")
        elif kind == "finish":
            complete = True
    return RunReport(
        results=tuple(outcomes[k] for k in sorted(outcomes)),
        collection_errors=tuple(errors),
        complete=complete,
        nonce_ok=ok,
        tampered="; ".join(tampered),
    )


def _float(value: Any) -> float:
    try:
        return float(value or 0.0)
    except (TypeError, ValueError):
        return 0.0


@dataclass(frozen=True, slots=True)
class BatchReport:
    """What a batch of forked runs reported (see `runners/inside/forked_runs.py`): per run tag
    (`protocol.run_tag`), the tests it was asked to run, its report, and how it ended."""

    requests: dict[str, tuple[str, ...]]
    reports: dict[str, RunReport]
    done: frozenset[int]  # the candidates (by number) whose runs all happened
    ends: dict[str, BatchEnd]
    stopped: str  # why the batch stopped early ("" if it did not)
    complete: bool  # the collection process finished (every candidate was served)
    nonce_ok: bool
    collection_errors: tuple[str, ...]


def parse_pytest_batch(path: Path, nonce: str) -> BatchReport:
    """Split a batch's records by run tag; each run's report is read like a whole run's, and a
    test it was asked to run but never reported is "missing"."""
    records, ok = _records(path, nonce)
    requests: dict[str, tuple[str, ...]] = {}
    ends: dict[str, BatchEnd] = {}
    by_tag: dict[str, list[dict[str, Any]]] = {}
    errors: list[dict[str, Any]] = []
    stopped = ""
    complete = False
    done: set[int] = set()
    for rec in records:
        kind, tag = rec["type"], rec.get("tag")
        if kind == "batch_run" and isinstance(tag, str) and isinstance(rec.get("ids"), list):
            requests[tag] = tuple(str(i) for i in rec["ids"])
        elif kind == "batch_end" and isinstance(tag, str):
            ends[tag] = read_batch_end(rec)
        elif kind == "batch_done" and isinstance(rec.get("candidate"), int):
            done.add(rec["candidate"])
        elif kind == "batch_stop":
            stopped = str(rec.get("reason") or "stopped")
        elif kind == "collect_error" and tag is None:
            errors.append(rec)
        elif kind == "finish" and tag is None:
            complete = True
        elif kind == "phase" and isinstance(tag, str):
            by_tag.setdefault(tag, []).append(rec)
    reports = {}
    for tag, ids in requests.items():
        end = ends.get(tag)
        finished = end is not None and end["status"] == "ran" and end.get("ended", False)
        recs = [*errors, {"type": "collected", "ids": list(ids)}, *by_tag.get(tag, [])]
        if finished:
            recs.append({"type": "finish"})
        reports[tag] = _pytest_report(recs, ok)
    return BatchReport(
        requests=requests,
        reports=reports,
        done=frozenset(done),
        ends=ends,
        stopped=stopped,
        complete=complete,
        nonce_ok=ok,
        collection_errors=tuple(f"{r.get('nodeid')}: {r.get('message')}" for r in errors),
    )
