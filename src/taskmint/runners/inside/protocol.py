"""The messages between taskmint and its pytest runner inside the sandbox, defined once.

Every message is a JSON object; the types here name its fields and the functions build and
read them, so the host and the runner write and read the same keys. The host imports this
module as `taskmint.runners.inside.protocol`; inside the sandbox the runner's scripts load it
from this folder (`run_pytest.py`, `forked_runs.py`, `taskmint_pytest_report.py`), under the
name `taskmint_inside_protocol`, which no module of a seed can take. So it imports nothing but
the standard library, and keeps to the syntax of the oldest interpreter a seed may run.

Host to runner (`run_pytest.py`, on the out-of-band channel or in its argv):
- `ChannelInput`: the nonce, the runner's `RunOptions` and pytest's arguments;
- `BatchSpec` (`RunOptions["batch"]`): the forked runs of a batch, one `CandidateSpec` each.

Host to the node harness (`node_runner.py`): `NodeInput`.

Runner to host, JSON lines on the report channel, each with the run's nonce:
- `BatchRun`, `BatchEnd`, `BatchDone`, `BatchStop`: how a batch's forked runs went
  (`forked_runs.Batch`); the runs' own test records carry the run's tag (`run_tag`).
"""

from __future__ import annotations

import base64
import os
from typing import Any, Literal, TypedDict

__all__ = [
    "SNAPSHOT_BYTES",
    "BatchDone",
    "BatchEnd",
    "BatchRun",
    "BatchSpec",
    "BatchStop",
    "CandidateSpec",
    "ChannelInput",
    "CoverageOptions",
    "NodeInput",
    "RunEnd",
    "RunOptions",
    "RunStatus",
    "batch_done",
    "batch_end",
    "batch_run",
    "batch_spec",
    "batch_stop",
    "candidate_files",
    "candidate_spec",
    "read_batch_end",
    "run_tag",
]

# A batch keeps a copy of a workspace up to this size in memory, to put back any file a run
# changes; a bigger tree makes such a run stop the batch (the rest go the ordinary way).
SNAPSHOT_BYTES = 128 * 1024**2

# (order, seed) of one run: "declared", "reverse" or "shuffle", and the seed of the shuffle and
# of each test's `random` (a JSON array of two).
Plan = tuple[str, int]


class CoverageOptions(TypedDict):
    """Measure coverage into `data_file`, of the files under the folders `source`."""

    data_file: str
    source: list[str]


class RunOptions(TypedDict, total=False):
    """The runner's options (`run_pytest.py`'s OPTIONS_JSON)."""

    pythonpath: list[str]  # put first on sys.path, in this order
    coverage: CoverageOptions | None
    order: str  # "declared", "reverse" or "shuffle"
    seed: int | None
    test_timeout: float  # seconds a test may run (0: no limit)
    plugins: list[list[str]]  # [name, module] of the seed's own pytest plugins
    compile: bool  # write the workspace's bytecode and collect, instead of testing
    select: list[str]  # the test ids to run (absent: every collected test)
    select_file: str  # ... or a file holding them, as a JSON list
    batch: BatchSpec  # serve this batch's runs as forks of the collection


class ChannelInput(TypedDict):
    """What the host writes on the channel's input for `run_pytest.py --channel`."""

    nonce: str
    options: RunOptions
    args: list[str]  # pytest's arguments


class NodeInput(TypedDict, total=False):
    """What the host hands `node_runner.py` (the node harness): the nonce, node, the test files
    to run (in this order), the expected test ids (None: every test), the working folder, the
    test processes' environment and how many run at once (default: as `node --test`)."""

    nonce: str
    node: str
    files: list[str]
    select: list[str] | None
    cwd: str
    env: list[list[str]]
    concurrency: int


class _CandidateRequired(TypedDict):
    files: list[list[str]]  # [workspace path, base64 of its bytes], written over the tree
    select: list[str] | None  # the tests of its first run (None: every collected test)
    failing: list[str]  # of those, the ones that fail on the original
    wall: float  # seconds per run


class CandidateSpec(_CandidateRequired, total=False):
    """One candidate of a batch: its files, its tests and how its runs are made."""

    plans: list[Plan]  # its own runs, replacing the batch's
    repeat: Literal["all"]  # every run repeats the whole request (not only the open tests)


class BatchSpec(TypedDict):
    """A batch of forked runs: each candidate's runs, forks of one collection."""

    runs: int  # runs per candidate (run i follows plans[i]; past them: a shuffle of seed i)
    plans: list[Plan]
    candidates: list[CandidateSpec]
    snapshot_bytes: int  # the largest tree the batch keeps a copy of (`SNAPSHOT_BYTES`)


RunStatus = Literal["ran", "unforkable", "crashed", "timeout"]


class _RunEndRequired(TypedDict):
    status: RunStatus
    exit_code: int | None  # of the fork (None: killed at the wall limit)


class RunEnd(_RunEndRequired, total=False):
    """How one forked run ended."""

    ended: bool  # the run reported its end (else it died before it could)
    reason: str  # why it was refused ("unforkable") or crashed


class BatchRun(TypedDict):
    """A forked run starts: the tests it was asked to run."""

    type: Literal["batch_run"]
    tag: str
    ids: list[str]


class _BatchEndRequired(TypedDict):
    type: Literal["batch_end"]
    tag: str
    wall: float  # seconds, the putting back of the tree included
    status: RunStatus
    exit_code: int | None


class BatchEnd(_BatchEndRequired, total=False):
    """A forked run ended (the fields of its `RunEnd`)."""

    ended: bool
    reason: str


class BatchDone(TypedDict):
    """Every run of candidate number `candidate` happened."""

    type: Literal["batch_done"]
    candidate: int


class BatchStop(TypedDict):
    """The batch stopped early: the candidates not done go back to the host."""

    type: Literal["batch_stop"]
    reason: str


def run_tag(candidate: int, run: int) -> str:
    """The tag of a forked run ("<candidate>/<run>"), on its records and their requests."""
    return f"{candidate}/{run}"


# --- the host's side ------------------------------------------------------------------------


def candidate_spec(
    files: list[tuple[str, bytes]],
    select: list[str] | None,
    failing: list[str],
    wall: float,
    *,
    repeat_all: bool = False,
) -> CandidateSpec:
    """A candidate of a batch: `files` (workspace path, bytes) written over the tree."""
    spec: CandidateSpec = {
        "files": [[rel, base64.b64encode(data).decode()] for rel, data in files],
        "select": select,
        "failing": failing,
        "wall": wall,
    }
    if repeat_all:
        spec["repeat"] = "all"
    return spec


def batch_spec(
    candidates: list[CandidateSpec], plans: list[Plan], snapshot_bytes: int
) -> BatchSpec:
    """A batch of `len(plans)` runs of every candidate."""
    return {
        "runs": len(plans),
        "plans": [(order, seed) for order, seed in plans],
        "candidates": candidates,
        "snapshot_bytes": snapshot_bytes,
    }


def read_batch_end(record: Any) -> BatchEnd:
    """A `batch_end` record as read from the report, its fields of the types they should be
    (a field of the wrong type reads as absent: the status then is "crashed")."""
    status = record.get("status")
    if status not in ("ran", "unforkable", "crashed", "timeout"):
        status = "crashed"
    exit_code = record.get("exit_code")
    end: BatchEnd = {
        "type": "batch_end",
        "tag": str(record.get("tag")),
        "wall": _number(record.get("wall")),
        "status": status,
        "exit_code": exit_code if type(exit_code) is int else None,
    }
    if "ended" in record:
        end["ended"] = bool(record["ended"])
    if isinstance(record.get("reason"), str):
        end["reason"] = record["reason"]
    return end


def _number(value: Any) -> float:
    try:
        return float(value or 0.0)
    except (TypeError, ValueError):
        return 0.0


# --- the runner's side ----------------------------------------------------------------------


def candidate_files(candidate: CandidateSpec, root: str) -> list[tuple[str, bytes]]:
    """The (absolute path under `root`, bytes) of each file of `candidate`."""
    return [(os.path.join(root, rel), base64.b64decode(data)) for rel, data in candidate["files"]]


def batch_run(tag: str, ids: list[str]) -> BatchRun:
    return {"type": "batch_run", "tag": tag, "ids": ids}


def batch_end(tag: str, wall: float, end: RunEnd) -> BatchEnd:
    record: BatchEnd = {
        "type": "batch_end",
        "tag": tag,
        "wall": wall,
        "status": end["status"],
        "exit_code": end["exit_code"],
    }
    if "ended" in end:
        record["ended"] = end["ended"]
    if "reason" in end:
        record["reason"] = end["reason"]
    return record


def batch_done(candidate: int) -> BatchDone:
    return {"type": "batch_done", "candidate": candidate}


def batch_stop(reason: str) -> BatchStop:
    return {"type": "batch_stop", "reason": reason}
