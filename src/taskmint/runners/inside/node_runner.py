"""taskmint's node test harness: runs each test file in its own node process and takes its
results only from a channel that process's code cannot forge.

Usage: python -I -S -B node_runner.py --channel
   or: python -I -S -B node_runner.py REPORT INPUT
With --channel, the input (`protocol.NodeInput` as JSON) is read from the descriptor that
$TASKMINT_CHANNEL names first, and the report goes to the second; otherwise the input is the
file INPUT (read, then deleted) and the report is appended to the file REPORT.

Why not `node --test`: its runner takes each test file's process's standard output as that
file's events, so code under test that writes a stream of passing events there (recorded
elsewhere, or from a re-run of its own file with the test bodies emptied) and exits is reported
as passing. Here:

- this process makes itself non-dumpable before any test runs, so the test processes (the same
  uid) can neither trace it nor open its memory or its descriptors under /proc; the input
  descriptor is closed at once and the report descriptor is never inherited;
- each test file runs as `node --test-reporter=node_child.mjs node_main.mjs` with a fresh
  32-byte key on descriptor 3 (read and closed before any code of the workspace loads) and
  its events on descriptor 4; every event is signed with the key (HMAC-SHA256) and numbered,
  so a record from any other process (a child the code started, a recording, a replay) fails
  the check, as does a dropped, repeated or reordered one;
- the test process freezes node:test and node:assert before the test file loads, and runs
  canary tests after the file's own: one that must pass and three that must fail (assert's
  strict and deep equality, a rejected promise) with fresh names and values;
- its standard output and error are never read as results (they are passed on, capped, to
  this process's own output, for people).

A file whose records fail the check, whose canaries come out wrong, or which reports a second
test under the name of an expected one, gets a "tampered" record; its tests count as failed.
A file whose process ended before its run did ("end") gets a "file_error" record: its tests
that did not report are missing.

Report records (JSON lines, each with the run's nonce; as `taskmint.runners.report` reads
them): "test" (id, file, name, outcome, duration, message, is_suite, loc), "file_error"
(id/file, message), "tampered" (file, reason), and "finish" last, with counts.

Standard library only; runs under the host's interpreter (or the grader's, in a Harbor
container), never the seed's.
"""

from __future__ import annotations

import hashlib
import hmac
import json
import os
import random
import runpy
import secrets
import selectors
import subprocess
import sys
import time
from typing import TYPE_CHECKING, Any

HERE = os.path.dirname(os.path.abspath(__file__))
if TYPE_CHECKING:
    from taskmint.runners.inside.harness_io import Report, non_dumpable, read_input
    from taskmint.runners.inside.protocol import NodeInput
else:  # `python -I` puts no folder on sys.path: the sibling file, by its path
    _io = runpy.run_path(os.path.join(HERE, "harness_io.py"))
    Report, non_dumpable, read_input = _io["Report"], _io["non_dumpable"], _io["read_input"]
CHILD = os.path.join(HERE, "node_child.mjs")
MAIN = os.path.join(HERE, "node_main.mjs")
OUTPUT_CAP = 256 * 1024  # bytes of the test processes' output passed on, per file
MESSAGE_LIMIT = 500
TEST_FIELDS = ("file", "name", "outcome", "duration", "message", "is_suite", "loc")
WORDS = (
    "accepts", "builds", "keeps", "handles", "returns", "reads", "writes", "parses", "renders",
    "splits", "joins", "maps", "merges", "orders", "finds", "checks", "escapes", "counts",
    "empty", "nested", "plain", "long", "short", "mixed", "unicode", "quoted", "trailing",
    "input", "lines", "values", "names", "items", "entries", "blocks", "tokens", "options",
    "links", "lists", "tables", "headings", "spaces", "numbers", "keys", "paths", "rows",
)  # fmt: skip


def _is_test_file(name: str, under_test_dir: bool) -> bool:
    stem, ext = os.path.splitext(name)
    if ext not in (".js", ".mjs", ".cjs"):
        return False
    return under_test_dir or (
        stem == "test" or stem.startswith("test-") or stem.endswith((".test", "-test", "_test"))
    )


def test_files(targets: list[str], cwd: str) -> list[str]:
    """The test files `node --test TARGETS` runs (node 20's rules): a file named is run; a
    folder is searched (node_modules skipped) for files named `test`, `test-*`, `*.test`,
    `*-test` or `*_test`, and every script under a folder named `test`; sorted, as node sorts
    them. Paths are relative to `cwd`, with "/" separators."""
    found: set[str] = set()
    for target in targets:
        path = os.path.join(cwd, target)
        if not os.path.isdir(path):
            found.add(os.path.normpath(target).replace(os.sep, "/"))
            continue
        for dirpath, dirnames, filenames in os.walk(path):
            dirnames[:] = sorted(d for d in dirnames if d != "node_modules")
            rel_dir = os.path.relpath(dirpath, cwd)
            parts = rel_dir.replace(os.sep, "/").split("/")
            under = "test" in parts[len(os.path.normpath(target).split(os.sep)) - 1 :]
            for name in filenames:
                if _is_test_file(name, under):
                    found.add(os.path.normpath(os.path.join(rel_dir, name)).replace(os.sep, "/"))
    return sorted(found)


def _canaries(rng: random.Random, taken: set[str]) -> dict[str, list[str]]:
    names: list[str] = []
    while len(names) < 4:
        name = " ".join(rng.choice(WORDS) for _ in range(3)) + f" {rng.randrange(10, 99)}"
        if name not in taken and name not in names:
            names.append(name)
    return {"pass": names[:1], "fail": names[1:]}


class FileRun:
    """One test file's node process, its signed channel and what it reported."""

    def __init__(self, spec: NodeInput, file: str, rng: random.Random) -> None:
        self.file = file
        self.key = secrets.token_bytes(32)
        self.canaries = _canaries(rng, set())
        a = secrets.randbelow(10**9)
        config = {
            "file": file,
            "canaries": self.canaries,
            "values": [a, a + 1 + secrets.randbelow(10**6)],
        }
        self.records: list[dict[str, Any]] = []
        self.problem = ""  # why the records cannot be trusted ("" if they can)
        self.buffer = b""
        self.output = bytearray()
        self.output_dropped = 0
        self.start = time.monotonic()
        in_r, in_w = os.pipe()
        ev_r, ev_w = os.pipe()
        payload = self.key + json.dumps(config).encode()
        os.write(in_w, payload)  # far below a pipe's capacity
        os.close(in_w)
        env = dict(spec.get("env") or [])
        env.pop("TASKMINT_CHANNEL", None)
        argv = [
            spec["node"],
            f"--test-reporter={CHILD}",
            "--test-reporter-destination=stdout",
            MAIN,
        ]

        def place() -> None:  # in the child, before exec: the input on 3, the channel on 4
            a, b = os.dup(in_r), os.dup(ev_w)
            os.dup2(a, 3)
            os.dup2(b, 4)

        try:
            self.proc = subprocess.Popen(
                argv,
                cwd=spec["cwd"],
                env=env,
                stdin=subprocess.DEVNULL,
                stdout=subprocess.PIPE,
                stderr=subprocess.STDOUT,
                preexec_fn=place,
                close_fds=False,
            )
        finally:
            os.close(in_r)
            os.close(ev_w)
        self.events = ev_r
        assert self.proc.stdout is not None
        self.stdout = self.proc.stdout.fileno()

    def take_events(self, data: bytes) -> None:
        self.buffer += data
        *lines, self.buffer = self.buffer.split(b"\n")
        for line in lines:
            self._check(line)

    def _check(self, line: bytes) -> None:
        if self.problem:
            return
        mac, _, body = line.partition(b" ")
        want = hmac.new(self.key, body, hashlib.sha256).hexdigest().encode()
        if not hmac.compare_digest(mac, want):
            self.problem = "a record that the test process's reporter did not sign"
            return
        try:
            record = json.loads(body)
        except ValueError:
            self.problem = "a signed record that is not JSON"
            return
        if not isinstance(record, dict) or record.get("seq") != len(self.records):
            self.problem = "a record out of sequence (dropped, repeated or reordered)"
            return
        self.records.append(record)

    def take_output(self, data: bytes) -> None:
        room = OUTPUT_CAP - len(self.output)
        self.output += data[: max(room, 0)]
        self.output_dropped += max(len(data) - max(room, 0), 0)

    def finish(self) -> None:
        if self.buffer and not self.problem:
            self.problem = "an unterminated record"
        self.proc.wait()
        self.wall = time.monotonic() - self.start


def _outcome_of(records: list[dict[str, Any]], name: str) -> list[str]:
    return [
        str(r.get("outcome"))
        for r in records
        if r.get("type") == "test" and r.get("path") == [name] and not r.get("is_suite")
    ]


def _first_of_name(test_id: str) -> str:
    """`test_id` with the " #N" that tells repeated names apart taken off every part: the id
    of the first test (or suite) of each name along its path."""
    file, _, rest = test_id.partition("::")
    parts = []
    for part in rest.split(" > "):
        name, sep, n = part.rpartition(" #")
        parts.append(name if sep and n.isdigit() else part)
    return f"{file}::{' > '.join(parts)}"


def judge(run: FileRun, select: set[str] | None) -> tuple[str, str]:
    """(how the file's run went: "ok", "tampered" or "crashed", and why)."""
    if run.problem:
        return "tampered", run.problem
    records = run.records
    if not records or records[0].get("type") != "ready":
        return "crashed", f"the test process did not start (exit code {run.proc.returncode})"
    ended = records[-1].get("type") == "end" and records[-1].get("count") == len(records) - 1
    for name in run.canaries["pass"] + run.canaries["fail"]:
        got = _outcome_of(records, name)
        wanted = "passed" if name in run.canaries["pass"] else "failed"
        if len(got) > 1:
            return "tampered", "a second test registered under a canary's name"
        if ended and got != [wanted]:
            which = "must-pass" if wanted == "passed" else "must-fail"
            return "tampered", f"the {which} canary came out {got[0] if got else 'missing'}"
    if select is not None:
        ids = {str(r.get("id")) for r in records if r.get("type") == "test"}
        for tid in sorted(ids):
            base = _first_of_name(tid)
            if base != tid and base in select and tid not in select:
                return "tampered", f"a second test registered under the name of {base!r}"
    if not ended:
        code = run.proc.returncode
        how = f"signal {-code}" if code is not None and code < 0 else f"exit code {code}"
        return "crashed", f"the test process ended before its tests did ({how})"
    return "ok", ""


def main() -> int:
    spec: NodeInput
    spec, target = read_input("node_runner.py")
    report = Report(target, spec["nonce"])
    why = non_dumpable()
    if why is not None:
        report.emit({"type": "harness_error", "message": why})
        return 2
    chosen = spec.get("select")
    select = set(chosen) if chosen is not None else None
    files = test_files(spec["files"], spec["cwd"])
    # as many at once as `node --test` runs by default: the CPUs this process may use, less one
    concurrency = int(spec.get("concurrency") or max(1, len(os.sched_getaffinity(0)) - 1))
    rng = random.Random(secrets.randbits(64))
    sel = selectors.DefaultSelector()
    pending = list(files)
    running: dict[str, FileRun] = {}
    open_fds: dict[FileRun, int] = {}
    counts = {"tests": 0, "passed": 0, "failed": 0, "skipped": 0, "todo": 0, "file_errors": 0}
    seen: dict[str, str] = {}
    tampered = 0
    while pending or running:
        while pending and len(running) < concurrency:
            file = pending.pop(0)
            try:
                run = FileRun(spec, file, rng)
            except OSError as exc:
                report.emit(_file_error(file, f"could not start node: {exc}"))
                counts["file_errors"] += 1
                continue
            running[file] = run
            sel.register(run.events, selectors.EVENT_READ, (run, "events"))
            sel.register(run.stdout, selectors.EVENT_READ, (run, "output"))
            open_fds[run] = 2
        for key, _ in sel.select():
            run, kind = key.data
            data = os.read(key.fd, 1 << 16)
            if data:
                (run.take_events if kind == "events" else run.take_output)(data)
                continue
            sel.unregister(key.fd)
            if kind == "events":
                os.close(key.fd)
            open_fds[run] -= 1
            if open_fds[run] == 0:
                run.finish()
                del running[run.file]
                tampered += _emit_file(report, run, select, counts, seen)
    report.emit({"type": "finish", "counts": {**counts, "tampered_files": tampered}})
    return 0


def _file_error(file: str, message: str) -> dict[str, Any]:
    return {
        "type": "file_error",
        "id": file,
        "file": file,
        "name": file,
        "outcome": "failed",
        "duration": 0.0,
        "message": message[:MESSAGE_LIMIT],
        "is_suite": False,
    }


def _emit_file(
    report: Report,
    run: FileRun,
    select: set[str] | None,
    counts: dict[str, int],
    seen: dict[str, str],
) -> int:
    """Write one file's records; 1 if it was tampered with."""
    out = run.output.decode("utf-8", "replace")
    if run.output_dropped:
        out += f"\n[... {run.output_dropped} bytes dropped by taskmint ...]\n"
    if out:
        sys.stdout.write(f"--- {run.file}\n{out}")
        sys.stdout.flush()
    status, why = judge(run, select)
    canaries = set(run.canaries["pass"] + run.canaries["fail"])
    tests = [
        r
        for r in run.records
        if r.get("type") == "test" and not (r.get("path") and r["path"][0] in canaries)
    ]
    if status != "tampered":
        for rec in tests:
            tid = str(rec.get("id"))
            if tid in seen:
                status, why = "tampered", f"test {tid!r} was reported by {seen[tid]} too"
                break
    if status == "tampered":
        report.emit({"type": "tampered", "file": run.file, "reason": why})
        return 1
    # What a crashed file reported before it ended counts (it was signed); the rest is missing.
    for rec in run.records:
        if rec.get("type") == "load_error":
            counts["file_errors"] += 1
            report.emit(_file_error(run.file, str(rec.get("message") or "did not load")))
    for rec in tests:
        tid = str(rec.get("id"))
        seen[tid] = run.file
        report.emit({"type": "test", **{k: rec.get(k) for k in TEST_FIELDS}, "id": tid})
        if not rec.get("is_suite"):
            counts["tests"] += 1
            outcome = str(rec.get("outcome"))
            counts[outcome] = counts.get(outcome, 0) + 1
    if status == "crashed":
        counts["file_errors"] += 1
        report.emit(_file_error(run.file, why))
    return 0


if __name__ == "__main__":
    sys.exit(main())
