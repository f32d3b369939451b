"""The grader of an exported Harbor task: what `tests/test.sh` runs after the agent finished.

It is one long file because it is shipped into each task's tests/ as a single script, run by
the seed's interpreter with nothing of taskmint installed.

This file runs INSIDE the task's container, under the seed environment's interpreter, and
imports nothing but the standard library (and, when shipped, `scan.py` and `environment.py`
beside it). It applies the defences of `taskmint.verify.grade_patch`:

- the environment is checked before it is trusted, where the task ships the digests taken at
  export (`environment.json`, compared by `environment.py` beside this file): this grader runs
  under `python -I -S` with no bytecode cache (no site-packages, no `.pth`), and a changed,
  new or missing file of the interpreter, its standard library, its site-packages, the shared
  libraries, the tools or the loader's configuration is a reward of 0, "tampered
  environment" (a harness that runs the agent as root in this container; test.sh checks the
  interpreter itself with sha256sum before starting it);
- nothing is taken from the agent but its changes to files the task allows: the agent's tree
  (`/app`) is compared with the pristine broken tree shipped in `tests/broken.tar`, and a
  changed or new file is kept only if the task's scope allows it (not a test path, not a
  protected configuration name, under a source path, a plain text file); deletions, symlinks
  and everything else are dropped and reported;
- every process the agent left running is killed (as root in a container: `stop_strays`),
  and again every process the tests left behind;
- a fresh workspace is rebuilt from the pristine broken tree, the kept files and the pristine
  tests (`tests/tests.tar`, the hidden tests included); bytecode is removed;
- canary tests with fresh names are planted (pytest; node's harness runs its own in every
  test process); the tests and their configuration are root-owned and read-only, checksummed
  before and after the run;
- the exact expected ids (FAIL_TO_PASS + PASS_TO_PASS) run with taskmint's pytest report
  plugin (`tests/runner/`), or for a node seed under taskmint's node harness
  (`tests/runner/node_runner.py`: each test file's process sends its results signed, on a
  channel of its own, never through its standard output), or for a Rust seed under taskmint's
  cargo harness (`tests/runner/cargo_runner.py`: each test in its own nextest process, the
  doctests under rustdoc, from the image's warm build, whose path only this grader, as root,
  can read; a target that does not build fails its expected tests), through the out-of-band
  channel,
  with a fresh nonce, the report going to a descriptor outside the workspace; as an
  unprivileged user when run as root;
- the grade is `taskmint.verify.grade`'s: missing, skipped or errored is failed, a bad record
  or nonce, wrong canaries or changed tests are tampering.

It writes `reward.txt` (1 or 0), `reward.json` (numbers only, as Harbor requires: reward,
passed, expected, tampered) and `grade.json` (with the reason) into the verifier's log folder.
Paths come from the environment: TASKMINT_TESTS_DIR (default: this file's folder),
TASKMINT_APP (/app), TASKMINT_LOGS (/logs/verifier), TASKMINT_GRADE_WS (/workspace),
TASKMINT_PYTHON (the task's interpreter, /opt/venv/bin/python), TASKMINT_NODE (a node seed's
node, else task.json's), TASKMINT_RUN_AS (`self`: do not switch users), TASKMINT_KILL_STRAYS
(see `stop_strays`), TASKMINT_CHECK_ENVIRONMENT (`0`: no environment check, for a grader run
outside the task's image).
"""

from __future__ import annotations

import contextlib
import difflib
import hashlib
import importlib.util
import json
import os
import posixpath
import re
import secrets
import shutil
import signal
import subprocess
import sys
import tarfile
import tempfile
import time
from typing import Any

WORKSPACE = "/workspace"  # the path the task's runner options name (rebased to the real one)
# This grader reads no bytecode cache of the environment's (a root agent could plant one for
# any module, and the grader starts before its check): its cache folder is one that cannot
# exist (procfs takes no new entries), and with -B nothing is written. test.sh starts it so.
# The tests read the caches only once the check has removed every one it does not know.
NO_PYCACHE = "/proc/taskmint-no-pycache"
PYTHON_FLAGS = ("-I", "-B", "-X", f"pycache_prefix={NO_PYCACHE}")
CHECKED_FLAGS = ("-I", "-B")
_SEVERITY = {"passed": 0, "xpassed": 1, "skipped": 2, "xfailed": 3, "failed": 4, "error": 5}


# --- scope -----------------------------------------------------------------------------------


def refusal(path: str, spec: dict[str, Any]) -> str | None:
    """None if the agent may change `path`, else why not (`taskmint.verify.scope.refusal`)."""
    parts = path.split("/")
    name = parts[-1]
    suffix = posixpath.splitext(name)[1]
    if not path or path.startswith("/") or ".." in parts or "\\" in path or "\0" in path:
        return "path leaves the workspace"
    if name in spec["protected_names"] or suffix in spec["protected_suffixes"]:
        return "test, build, CI or interpreter configuration"
    if set(parts) & set(spec["protected_dirs"]) or any(
        p.endswith((".egg-info", ".dist-info")) for p in parts
    ):
        return "test, build, CI or interpreter configuration"
    for t in spec["test_paths"]:
        if path == t or path.startswith(t.rstrip("/") + "/"):
            return "test files are restored from the task"
    if path in spec["hidden_files"]:
        return "test files are restored from the task"
    if not any(path == s or path.startswith(s.rstrip("/") + "/") for s in spec["source_paths"]):
        return "outside the task's source paths"
    return None


def _tree(
    root: str, spec: dict[str, Any] | None = None, keep: set[str] | None = None
) -> dict[str, str]:
    """rel path -> "file" / "link" / "other" of everything under `root` (no link followed).

    With `spec`, a folder not in `keep` (the pristine tree's folders) whose every file the
    scope would refuse is not walked: it is one "dir" entry (a venv or a build folder the agent
    made costs one line, not thousands)."""
    out: dict[str, str] = {}
    for dirpath, dirnames, filenames in os.walk(root):
        for name in list(dirnames):
            full = os.path.join(dirpath, name)
            rel = os.path.relpath(full, root).replace(os.sep, "/")
            if os.path.islink(full):
                out[rel] = "link"
                dirnames.remove(name)
            elif (
                spec is not None
                and rel not in (keep or set())
                and refusal(rel + "/_", spec) is not None
            ):
                out[rel] = "dir"
                dirnames.remove(name)
        for name in filenames:
            full = os.path.join(dirpath, name)
            rel = os.path.relpath(full, root).replace(os.sep, "/")
            if os.path.islink(full):
                out[rel] = "link"
            elif os.path.isfile(full):
                out[rel] = "file"
            else:
                out[rel] = "other"
    return out


def _dirs(root: str) -> set[str]:
    return {
        os.path.relpath(os.path.join(d, n), root).replace(os.sep, "/")
        for d, ds, _ in os.walk(root)
        for n in ds
    }


def _read(path: str) -> bytes | None:
    try:
        with open(path, "rb") as fh:
            return fh.read()
    except OSError:
        return None


def agent_changes(
    app: str, pristine: str, spec: dict[str, Any]
) -> tuple[dict[str, bytes], list[str], str]:
    """(kept files: rel -> new bytes, rejected "path: reason" lines, the kept diff)."""
    before = _tree(pristine)
    now = _tree(app, spec, _dirs(pristine))
    kept: dict[str, bytes] = {}
    rejected: list[str] = []
    diff: list[str] = []
    for rel in sorted(now):
        kind = now[rel]
        old = _read(os.path.join(pristine, rel)) if before.get(rel) == "file" else None
        new = b""
        if kind == "file":
            data = _read(os.path.join(app, rel))
            if data is None or (old is not None and data == old):
                continue
            new = data
        elif before.get(rel) == kind == "link" and os.readlink(
            os.path.join(app, rel)
        ) == os.readlink(os.path.join(pristine, rel)):
            continue
        why = refusal(rel + "/_" if kind == "dir" else rel, spec)
        if why is not None and kind == "dir":
            why = f"a new folder: {why}"
        if why is None and kind != "file":
            why = "symlinks and special files are refused"
        if why is None and b"\0" in new:
            why = "binary content refused"
        text = ""
        if why is None:
            try:
                text = new.decode("utf-8")
            except UnicodeDecodeError:
                why = "binary content refused"
        if why is not None:
            rejected.append(f"{rel}{'/' if kind == 'dir' else ''}: {why}")
            continue
        kept[rel] = new
        old_text = old.decode("utf-8", "replace") if old is not None else ""
        diff.append(f"diff --git a/{rel} b/{rel}\n")
        diff += difflib.unified_diff(
            old_text.splitlines(keepends=True),
            text.splitlines(keepends=True),
            f"a/{rel}" if old is not None else "/dev/null",
            f"b/{rel}",
        )
    for rel in sorted(set(before) - set(now)):
        rejected.append(f"{rel}: deleting files is refused")
    return kept, list(dict.fromkeys(rejected)), "".join(diff)


# The test code inside source files (Rust's `#[cfg(test)]` modules and doctests): the grader has
# no parser to put the original back, so a change to it is refused. `task.json`'s
# `test_regions` holds, per source file, the 1-based line ranges of its test code in the broken
# tree; added lines that switch tests off or shadow what they use are refused anywhere in such
# a file.
_TEST_SWITCH = re.compile(
    r"#\s*!?\s*\[\s*(cfg_attr|ignore|should_panic|test)\b"
    r"|\bcfg\s*!?\s*\([^)]*\btest\b|#\s*!\s*\[\s*cfg\b"
    r"|\bmacro_rules\s*!\s*(r#)?(assert\w*|debug_assert\w*|panic|unreachable|todo"
    r"|unimplemented|matches|vec|format|write|writeln|print|println|eprint|eprintln|cfg)\b"
)


def test_code_change(old: str, new: str, regions: list[list[int]]) -> str | None:
    """Why the agent's `new` text of a source file changes its test code (`regions` of `old`,
    1-based inclusive line ranges), or None."""
    a, b = old.splitlines(), new.splitlines()
    matcher = difflib.SequenceMatcher(None, a, b, autojunk=False)
    for tag, i1, i2, j1, j2 in matcher.get_opcodes():
        if tag == "equal":
            continue
        for line in b[j1:j2]:
            if _TEST_SWITCH.search(line):
                return f"adds `{line.strip()[:60]}`"
        for first, last in regions:
            if tag == "insert":
                if first < i1 + 1 <= last:  # lines added inside the test code
                    return f"adds lines inside the test code at lines {first}-{last}"
            elif i1 + 1 <= last and i2 >= first:  # replaced or deleted lines overlap it
                return f"changes the test code at lines {first}-{last}"
    return None


# --- workspace -------------------------------------------------------------------------------


def _extract(archive: str, dest: str) -> None:
    """Unpack one of the task's own archives (made by the export, never seen by the agent)."""
    with tarfile.open(archive) as tar:
        try:
            tar.extractall(dest, filter="data")
        except TypeError:  # an interpreter older than extraction filters (3.11.4, 3.10.12)
            tar.extractall(dest)


def _clear(path: str) -> None:
    if os.path.lexists(path):
        for dirpath, dirnames, _ in os.walk(path):
            for name in dirnames:
                full = os.path.join(dirpath, name)
                if not os.path.islink(full):
                    os.chmod(full, 0o700)
        if os.path.isdir(path) and not os.path.islink(path):
            os.chmod(path, 0o700)
            shutil.rmtree(path)
        else:
            os.unlink(path)


def _remove(path: str) -> None:
    if os.path.isdir(path) and not os.path.islink(path):
        shutil.rmtree(path)
    elif os.path.lexists(path):
        os.unlink(path)


def build_workspace(ws: str, tests_dir: str, kept: dict[str, bytes], spec: dict[str, Any]) -> None:
    """The broken tree, the kept files, then the pristine tests and their configuration."""
    _clear(ws)
    os.makedirs(ws, mode=0o755)
    _extract(os.path.join(tests_dir, "broken.tar"), ws)
    for rel, data in kept.items():
        target = os.path.join(ws, rel)
        os.makedirs(os.path.dirname(target), exist_ok=True)
        _remove(target)
        with open(target, "wb") as fh:
            fh.write(data)
    for rel in [*spec["test_paths"], *spec["protected_files"]]:
        _remove(os.path.join(ws, rel))
    _extract(os.path.join(tests_dir, "tests.tar"), ws)
    for dirpath, dirnames, filenames in os.walk(ws):
        if "__pycache__" in dirnames:
            shutil.rmtree(os.path.join(dirpath, "__pycache__"))
            dirnames.remove("__pycache__")
        for name in filenames:
            if name.endswith((".pyc", ".pyo")):
                os.unlink(os.path.join(dirpath, name))


def plant_canaries(ws: str, folder: str) -> dict[str, str]:
    """A fresh canary file (`taskmint.verify.canary`): one test that must pass, one that must
    fail, with names and values nobody can predict."""
    token = secrets.token_hex(6)
    a, b = secrets.randbelow(10**9), secrets.randbelow(10**9)
    b = b if b != a else a + 1
    name_pass, name_fail = f"test_{secrets.token_hex(5)}", f"test_{secrets.token_hex(5)}"
    rel = posixpath.join(folder, f"test_{token}.py")
    source = (
        f"def {name_pass}():\n"
        f"    value = {a}\n"
        f"    assert type(value) is int and repr(value) == {str(a)!r}\n"
        "\n\n"
        f"def {name_fail}():\n"
        f"    assert repr({a}) == {str(b)!r}\n"
    )
    target = os.path.join(ws, rel)
    os.makedirs(os.path.dirname(target), exist_ok=True)
    with open(target, "w", encoding="utf-8") as fh:
        fh.write(source)
    return {"path": rel, "must_pass": f"{rel}::{name_pass}", "must_fail": f"{rel}::{name_fail}"}


def digest(ws: str, rels: list[str]) -> str:
    """One hash over the read-only files and folders (content, or absence)."""
    h = hashlib.sha256()
    for rel in sorted(set(rels)):
        path = os.path.join(ws, rel)
        files = [rel]
        if os.path.isdir(path) and not os.path.islink(path):
            files = sorted(
                os.path.relpath(os.path.join(d, f), ws).replace(os.sep, "/")
                for d, _, fs in os.walk(path)
                for f in fs
            )
        for item in files:
            full = os.path.join(ws, item)
            h.update(item.encode() + b"\0")
            data = None if os.path.islink(full) else _read(full)
            h.update(b"<missing>" if data is None else data)
    return h.hexdigest()


def lock_down(ws: str, readonly: list[str], uid: int) -> None:
    """Run as root: the workspace belongs to the test user, the read-only paths to root
    (files 0444, folders 0555), and every folder the user owns is sticky, so the user cannot
    rename or delete what root owns in it."""
    for dirpath, dirnames, filenames in os.walk(ws):
        for name in [*dirnames, *filenames]:
            os.lchown(os.path.join(dirpath, name), uid, uid)
    os.lchown(ws, uid, uid)
    for dirpath, dirnames, _ in os.walk(ws):
        for name in dirnames:
            os.chmod(os.path.join(dirpath, name), 0o1755)
    os.chmod(ws, 0o1755)
    for rel in readonly:
        path = os.path.join(ws, rel)
        if os.path.islink(path) or not os.path.exists(path):
            continue
        items = [path]
        if os.path.isdir(path):
            items += [os.path.join(d, n) for d, ds, fs in os.walk(path) for n in [*ds, *fs]]
        for item in items:
            if os.path.islink(item):
                continue
            os.lchown(item, 0, 0)
            os.chmod(item, 0o555 if os.path.isdir(item) else 0o444)


# --- the run ---------------------------------------------------------------------------------


def _rebase(value: str, ws: str) -> str:
    if value == WORKSPACE or value.startswith(WORKSPACE + "/"):
        return ws + value[len(WORKSPACE) :]
    return value


def node_input(spec: dict[str, Any], ws: str, test_ids: list[str], nonce: str) -> dict[str, Any]:
    """What the node harness runs (`taskmint.languages.javascript.NodeAdapter.node_input`): the
    files of `test_ids` in the workspace `ws`, graded against `test_ids`."""
    node = os.environ.get("TASKMINT_NODE") or spec["node"]
    if "/" not in node:  # `node` on the tests' PATH (an image of the user's)
        node = shutil.which(node, path=dict(spec["env"]).get("PATH")) or node
    return {
        **spec["node_input"],
        "nonce": nonce,
        "node": node,
        "files": list(dict.fromkeys(t.split("::", 1)[0] for t in test_ids)),
        "select": list(test_ids),
        "cwd": ws,
    }


def _json_file(path: str) -> dict[str, Any] | None:
    """A JSON object from a file of the image's, or None when it cannot be read (the warm
    target's path is root's alone: a grader not run as root builds cold)."""
    try:
        with open(path, encoding="utf-8") as fh:
            data = json.load(fh)
    except (OSError, ValueError):
        return None
    return data if isinstance(data, dict) else None


def cargo_input(
    spec: dict[str, Any], ws: str, test_ids: list[str], nonce: str, *, owns_uid: bool = False
) -> dict[str, Any]:
    """What the cargo harness runs (`taskmint.languages.rust.CargoAdapter.cargo_input`): the
    image's fixed part (`rust_input`: the tools, their environment, the original's ids), the
    warm target (`rust_warm`, when readable), the task's limits, and this run's nonce,
    selection and workspace `ws`. `owns_uid`: the tests' uid runs nothing else here (the
    grader switched to it), so the harness may kill every process of it between phases."""
    fixed = _json_file(spec["rust_input"])
    if fixed is None:
        raise RuntimeError(f"the image has no cargo harness input ({spec['rust_input']})")
    warm = _json_file(spec["rust_warm"]) or {}
    home = spec.get("tool_home")
    env = [
        [k, home if home and k in ("HOME", "TMPDIR") else _rebase(v, ws)] for k, v in fixed["env"]
    ]
    return {
        **spec["cargo_input"],
        "nonce": nonce,
        "cargo": fixed["cargo"],
        "nextest": fixed["nextest"],
        "cwd": ws,
        "env": env,
        "target_dir": _rebase(fixed["target_dir"], ws),
        "warm": warm.get("warm"),
        "select": list(test_ids),
        "expected": list(fixed.get("expected") or []),
        "skip": list(fixed.get("skip") or []),
        "sweep": owns_uid,
        "sweep_any_parent": owns_uid,
    }


def run_tests(
    ws: str,
    runner: str,
    python: str,
    spec: dict[str, Any],
    test_ids: list[str],
    uid: int | None,
    flags: tuple[str, ...] = PYTHON_FLAGS,
) -> tuple[list[dict[str, Any]], bool, bool]:
    """Run `test_ids` through the runner's channel: (report records, nonce ok, timed out).
    pytest runs with taskmint's plugin (`run_pytest.py`); node under taskmint's harness
    (`node_runner.py`: each test file's process sends its results signed, on a channel of its
    own), as the adapters run them. `flags` are the Python runner's interpreter flags (the node
    harness also runs without site: it needs nothing outside the standard library)."""
    nonce = secrets.token_hex(16)
    timeout = float(spec["timeout"])
    if spec["runner"] == "node":
        data = json.dumps(node_input(spec, ws, test_ids, nonce)).encode()
        argv = [python, *flags, "-S", os.path.join(runner, "node_runner.py"), "--channel"]
    elif spec["runner"] == "cargo":
        data = json.dumps(cargo_input(spec, ws, test_ids, nonce, owns_uid=uid is not None)).encode()
        argv = [python, *flags, "-S", os.path.join(runner, "cargo_runner.py"), "--channel"]
        timeout += 30.0  # the harness keeps the run's limit itself, then cleans up
    else:
        options = dict(spec["options"])
        options["pythonpath"] = [_rebase(p, ws) for p in options.get("pythonpath", [])]
        options["select"] = list(test_ids)
        targets = list(dict.fromkeys(t.split("::", 1)[0] for t in test_ids))
        args = [_rebase(a, ws) for a in spec["args"]] + targets
        data = json.dumps({"nonce": nonce, "options": options, "args": args}).encode()
        argv = [python, *flags, os.path.join(runner, "run_pytest.py"), "--channel"]
    private = tempfile.mkdtemp(prefix="taskmint-channel-")  # 0700: the test user cannot enter
    try:
        in_path, out_path = os.path.join(private, "in.json"), os.path.join(private, "out.jsonl")
        with open(in_path, "wb") as fh:
            fh.write(data)
        fd_in = os.open(in_path, os.O_RDONLY)
        fd_out = os.open(out_path, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
        env = {k: _rebase_env(k, v, ws) for k, v in spec["env"]}
        env["TASKMINT_CHANNEL"] = f"{fd_in} {fd_out}"
        extra: dict[str, Any] = {}
        if uid is not None:
            extra = {"user": uid, "group": uid, "extra_groups": []}
        proc = subprocess.Popen(
            argv,
            cwd=ws,
            env=env,
            stdin=subprocess.DEVNULL,
            stdout=subprocess.DEVNULL,
            stderr=subprocess.DEVNULL,
            pass_fds=(fd_in, fd_out),
            start_new_session=True,
            **extra,
        )
        os.close(fd_in)
        os.close(fd_out)
        timed_out = _reap(proc, timeout)
        records, ok = read_report(out_path, nonce)
    finally:
        shutil.rmtree(private, ignore_errors=True)
    return records, ok, timed_out


def _reap(proc: subprocess.Popen[bytes], timeout: float) -> bool:
    """Wait for the test run up to `timeout`, then kill its whole session (late writers and
    leftover children); whether it timed out."""
    timed_out = False
    try:
        proc.wait(timeout=timeout)
    except subprocess.TimeoutExpired:
        timed_out = True
    with contextlib.suppress(ProcessLookupError, PermissionError):
        os.killpg(proc.pid, signal.SIGKILL)
    proc.wait()
    return timed_out


def _rebase_env(key: str, value: str, ws: str) -> str:
    if key == "PYTHONPATH":
        return os.pathsep.join(_rebase(p, ws) for p in value.split(os.pathsep))
    return value


def read_report(path: str, nonce: str) -> tuple[list[dict[str, Any]], bool]:
    """The report's records and whether every one was well-formed and carried `nonce`."""
    raw = _read(path) or b""
    out: list[dict[str, Any]] = []
    ok = True
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


def _phase_outcome(rec: dict[str, Any]) -> str:
    when, outcome, xfail = rec.get("when"), rec.get("outcome"), bool(rec.get("wasxfail"))
    if outcome == "failed":
        return "failed" if when == "call" else "error"
    if outcome == "skipped":
        return "xfailed" if xfail else "skipped"
    if outcome == "passed":
        return "xpassed" if xfail else "passed"
    return "error"


def outcomes_of(records: list[dict[str, Any]]) -> tuple[dict[str, str], bool]:
    """One outcome per test (the worst phase wins) and whether the run finished
    (`taskmint.runners.report.parse_pytest_report`)."""
    outcomes: dict[str, str] = {}
    collected: list[str] = []
    complete = False
    for rec in records:
        kind = rec["type"]
        if kind == "phase" and rec.get("outcome") == "rerun":
            continue
        if kind == "phase" and isinstance(rec.get("nodeid"), str):
            outcome = _phase_outcome(rec)
            current = outcomes.get(rec["nodeid"], "passed")
            if _SEVERITY[outcome] >= _SEVERITY.get(current, 0):
                outcomes[rec["nodeid"]] = outcome
        elif kind == "collected" and isinstance(rec.get("ids"), list):
            collected = [str(i) for i in rec["ids"]]
        elif kind == "finish":
            complete = True
    for nodeid in collected:
        outcomes.setdefault(nodeid, "missing")
    return outcomes, complete


_NODE_OUTCOMES = {"passed": "passed", "failed": "failed", "skipped": "skipped", "todo": "skipped"}


def node_outcomes_of(records: list[dict[str, Any]]) -> tuple[dict[str, str], bool, str]:
    """One outcome per leaf test (suites are not tests; a file that failed to load is no
    test's outcome: its tests are missing), whether the run finished, and why the harness found
    it tampered with ("" if it did not) (`taskmint.runners.report.parse_node_report`)."""
    outcomes: dict[str, str] = {}
    complete = False
    tampered = []
    for rec in records:
        kind = rec["type"]
        if kind == "test" and not rec.get("is_suite"):
            outcomes[str(rec.get("id"))] = _NODE_OUTCOMES.get(str(rec.get("outcome")), "error")
        elif kind == "tampered":
            tampered.append(f"{rec.get('file')}: {rec.get('reason')}")
        elif kind == "finish":
            complete = True
    return outcomes, complete, "; ".join(tampered)


_CARGO_OUTCOMES = {"passed": "passed", "failed": "failed", "skipped": "skipped", "error": "error"}


def cargo_outcomes_of(records: list[dict[str, Any]]) -> tuple[dict[str, str], bool, str]:
    """One outcome per test id, whether the run finished, and why the harness found it
    tampered with ("" if it did not) (`taskmint.languages.rust.parse_cargo_report`)."""
    outcomes: dict[str, str] = {}
    complete = False
    tampered = []
    for rec in records:
        kind = rec["type"]
        if kind == "test":
            outcomes[str(rec.get("id"))] = _CARGO_OUTCOMES.get(str(rec.get("outcome")), "error")
        elif kind == "tampered":
            tampered.append(str(rec.get("reason")))
        elif kind == "finish":
            complete = True
    return outcomes, complete, "; ".join(tampered)


def _came_out(outcomes: dict[str, str], test_id: str, wanted: str) -> str | None:
    if test_id in outcomes:
        got = [outcomes[test_id]]
    else:
        got = [o for t, o in outcomes.items() if t.startswith(test_id + "[")]
    if not got:
        return "missing"
    wrong = [o for o in got if o not in (wanted, "skipped")]
    if wrong:
        return wrong[0]
    return None if wanted in got else got[0]


def judge(
    outcomes: dict[str, str],
    expected: list[str],
    *,
    complete: bool,
    nonce_ok: bool,
    timed_out: bool,
    changed: bool,
    canaries: dict[str, str] | None,
    runner_tamper: str = "",
) -> tuple[float, str, int, bool]:
    """(reward, reason, passed, tampered): `taskmint.verify.grade` and `grade_patch`'s checks."""
    passed = sum(1 for t in expected if outcomes.get(t) == "passed")
    if timed_out:
        reward, reason = 0.0, "the tests timed out"
    elif not nonce_ok:
        reward, reason = 0.0, "the report was tampered with (bad record or nonce)"
    elif runner_tamper:
        reward, reason = 0.0, f"tampered: {runner_tamper}"
    elif not complete:
        reward, reason = 0.0, "the test run did not complete"
    elif passed < len(expected):
        missing = [t for t in expected if outcomes.get(t) != "passed"]
        reward = 0.0
        reason = f"{len(missing)} expected test(s) did not pass, e.g. {missing[0]}"
    else:
        reward, reason = 1.0, "all expected tests passed"
    tamper = None
    if not nonce_ok:
        tamper = "the report was tampered with (bad record or nonce)"
    elif runner_tamper:
        tamper = runner_tamper
    elif changed:
        tamper = "the tests or their configuration changed during the run"
    elif (
        canaries is not None
        and complete
        and all(outcomes.get(t, "missing") != "missing" for t in expected)
    ):
        got = _came_out(outcomes, canaries["must_fail"], "failed")
        if got is not None:
            tamper = f"the must-fail canary came out {got}"
        else:
            got = _came_out(outcomes, canaries["must_pass"], "passed")
            if got is not None:
                tamper = f"the must-pass canary came out {got}"
    if tamper is not None:
        return 0.0, f"tampered: {tamper}", passed, True
    return reward, reason, passed, False


# --- main ------------------------------------------------------------------------------------


def _ancestors() -> set[int]:
    pids, pid = {os.getpid()}, os.getpid()
    while pid > 1:
        try:
            with open(f"/proc/{pid}/stat", encoding="utf-8", errors="replace") as fh:
                pid = int(fh.read().rsplit(")", 1)[1].split()[1])
        except (OSError, ValueError, IndexError):
            break
        pids.add(pid)
    return pids


def stop_strays() -> list[int]:
    """Kill every process of the container but its first, this grader's ancestors and its
    session (each `docker exec` is a session of its own): what the agent left running could
    otherwise rewrite the workspace while the tests run. Only as root in a container
    (/.dockerenv), or with TASKMINT_KILL_STRAYS=1; never with =0."""
    wanted = os.environ.get("TASKMINT_KILL_STRAYS", "")
    if wanted == "0" or os.geteuid() != 0:
        return []
    if wanted != "1" and not os.path.exists("/.dockerenv"):
        return []
    keep = _ancestors() | {1}
    session = os.getsid(0)  # the verifier's own command (test.sh, a `tee` beside it) stays
    killed = []
    for _ in range(3):  # a forking stray may leave children behind once
        for name in os.listdir("/proc"):
            if not name.isdigit() or int(name) in keep:
                continue
            with contextlib.suppress(ProcessLookupError, PermissionError):
                if os.getsid(int(name)) != session:
                    os.kill(int(name), signal.SIGKILL)
                    killed.append(int(name))
        time.sleep(0.05)
    return sorted(set(killed))


def _scan(tests_dir: str, diff: str) -> list[str]:
    module = _load_beside(tests_dir, "scan") if diff else None
    return [] if module is None else list(module.scan_patch(diff))


def _load_beside(tests_dir: str, name: str) -> Any:
    """A module shipped beside this file (`scan.py`, `environment.py`), or None."""
    path = os.path.join(tests_dir, f"{name}.py")
    if not os.path.isfile(path):
        return None
    spec = importlib.util.spec_from_file_location(f"taskmint_harbor_{name}", path)
    if spec is None or spec.loader is None:
        return None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def environment_problems(tests_dir: str, removed: list[str] | None = None) -> list[str] | None:
    """How this container's environment differs from the digests taken at export
    (`environment.json`, compared by `environment.py`, both beside this file): the
    interpreter, its standard library and site-packages (`.pth` files, `sitecustomize`), the
    shared libraries, the tools, the loader's configuration. None when the task ships no
    digests, or with TASKMINT_CHECK_ENVIRONMENT=0 (a grader run outside the task's image).
    Bytecode caches it does not know are deleted (their paths added to `removed`)."""
    if os.environ.get("TASKMINT_CHECK_ENVIRONMENT") == "0":
        return None
    path = os.path.join(tests_dir, "environment.json")
    if not os.path.isfile(path):
        return None
    module = _load_beside(tests_dir, "environment")
    if module is None:
        return ["environment.py: missing beside grade.py"]
    with open(path, encoding="utf-8") as fh:
        return list(module.check(json.load(fh), removed))


def _tampered_environment(
    spec: dict[str, Any], problems: list[str], strays: list[int], start: float
) -> dict[str, Any]:
    shown = "; ".join(problems[:5])
    if len(problems) > 5:
        shown += f"; and {len(problems) - 5} more"
    expected = list(dict.fromkeys(spec["expected"]))
    return {
        "reward": 0.0,
        "passed": 0,
        "expected": len(expected),
        "tampered": True,
        "reason": f"tampered environment: {shown}",
        "instance_id": spec["instance_id"],
        "environment": problems[:200],
        "stopped_processes": len(strays),
        "outcomes": {t: "missing" for t in expected},
        "wall_time": round(time.monotonic() - start, 3),
    }


def _private_copy(src: str) -> str:
    """The runner's files in a fresh root-owned folder the test user can read, not write."""
    dest = tempfile.mkdtemp(prefix="taskmint-runner-")
    shutil.copytree(src, dest, dirs_exist_ok=True)
    for dirpath, dirnames, filenames in os.walk(dest):
        os.chmod(dirpath, 0o755)
        for name in filenames:
            os.chmod(os.path.join(dirpath, name), 0o444)
        for name in dirnames:
            os.chmod(os.path.join(dirpath, name), 0o755)
    return dest


def _with_home(env: list[list[str]], home: str) -> list[list[str]]:
    return [[k, home if k in ("HOME", "TMPDIR") else v] for k, v in env]


def _test_code_changes(
    pristine: str, kept: dict[str, bytes], regions: dict[str, list[list[int]]]
) -> list[str]:
    """ "path: why" for each kept source file whose test code the agent changed."""
    out = []
    for rel, new in sorted(kept.items()):
        if rel not in regions:
            continue
        old = _read(os.path.join(pristine, rel)) or b""
        why = test_code_change(
            old.decode("utf-8", "replace"), new.decode("utf-8", "replace"), regions[rel]
        )
        if why is not None:
            out.append(f"{rel}: {why}")
    return out


def grade(tests_dir: str, app: str, ws: str, python: str) -> dict[str, Any]:
    """The reward record of the agent's tree `app`."""
    start = time.monotonic()
    with open(os.path.join(tests_dir, "task.json"), encoding="utf-8") as fh:
        spec = json.load(fh)
    expected = list(dict.fromkeys(spec["expected"]))
    # as root, the tests run as the image's unprivileged user (TASKMINT_RUN_AS=self: as this
    # process's user, for an interpreter that user cannot reach)
    root = os.geteuid() == 0 and os.environ.get("TASKMINT_RUN_AS") != "self"
    uid = int(spec["sandbox_uid"]) if root else None
    strays = stop_strays() if root else []
    # before anything of the environment is trusted (what the agent left running is stopped
    # first, so nothing changes it after the check)
    checked = time.monotonic()
    removed: list[str] = []
    problems = environment_problems(tests_dir, removed)
    check_seconds = round(time.monotonic() - checked, 3)
    if problems:
        return {
            **_tampered_environment(spec, problems, strays, start),
            "check_seconds": check_seconds,
            "bytecode_removed": len(removed),
        }
    pristine = tempfile.mkdtemp(prefix="taskmint-pristine-")
    runner = _private_copy(os.path.join(tests_dir, "runner"))
    # the tests' HOME and TMPDIR: a fresh folder, not the /tmp the agent could write to
    home = tempfile.mkdtemp(prefix="taskmint-home-")
    if uid is not None:
        os.chown(home, uid, uid)
    spec = {**spec, "env": _with_home(spec["env"], home)}
    if spec["runner"] == "cargo":
        spec["tool_home"] = home
    if "node_input" in spec:
        spec["node_input"] = {
            **spec["node_input"],
            "env": _with_home(spec["node_input"]["env"], home),
        }
    try:
        _extract(os.path.join(tests_dir, "broken.tar"), pristine)
        kept, rejected, diff = agent_changes(app, pristine, spec)
        test_code = _test_code_changes(pristine, kept, spec.get("test_regions") or {})
        findings = _scan(tests_dir, diff)
        build_workspace(ws, tests_dir, kept, spec)
        canaries = plant_canaries(ws, spec["canary_dir"]) if spec["runner"] == "pytest" else None
        readonly = [*spec["test_paths"], *spec["protected_files"]]
        readonly += [canaries["path"]] if canaries else []
        if uid is not None:
            lock_down(ws, readonly, uid)
        before = digest(ws, readonly)
        ids = [*expected, *([canaries["must_pass"], canaries["must_fail"]] if canaries else [])]
        flags = PYTHON_FLAGS if problems is None else CHECKED_FLAGS  # see NO_PYCACHE
        records, nonce_ok, timed_out = run_tests(ws, runner, python, spec, ids, uid, flags)
        # a process the tests left in a session of its own could still write the reward files
        strays += stop_strays() if root else []
        changed = digest(ws, readonly) != before
    finally:
        shutil.rmtree(pristine, ignore_errors=True)
        shutil.rmtree(runner, ignore_errors=True)
        shutil.rmtree(home, ignore_errors=True)
    runner_tamper = ""
    if spec["runner"] == "node":
        outcomes, complete, runner_tamper = node_outcomes_of(records)
    elif spec["runner"] == "cargo":
        outcomes, complete, runner_tamper = cargo_outcomes_of(records)
    else:
        outcomes, complete = outcomes_of(records)
    reward, reason, passed, tampered = judge(
        outcomes,
        expected,
        complete=complete,
        nonce_ok=nonce_ok,
        timed_out=timed_out,
        changed=changed,
        canaries=canaries,
        runner_tamper=runner_tamper,
    )
    if test_code:
        reward, reason = 0.0, f"the test code in a source file was changed: {test_code[0]}"
    if rejected and reward == 0.0:
        reason += f"; {len(rejected)} change(s) outside the allowed paths were dropped"
    return {
        "reward": reward,
        "passed": passed,
        "expected": len(expected),
        "tampered": tampered,
        "reason": reason,
        "instance_id": spec["instance_id"],
        "kept_paths": sorted(kept),
        "rejected_paths": rejected,
        "findings": findings,
        "test_code_changed": test_code,
        "environment_checked": problems is not None,
        "check_seconds": check_seconds,
        "bytecode_removed": len(removed),
        "stopped_processes": len(strays),
        "outcomes": {t: outcomes.get(t, "missing") for t in expected},
        "wall_time": round(time.monotonic() - start, 3),
        # the harness's own seconds per phase (the cargo harness's: copy, build, tests, ...)
        "runner_phases": next(
            (r.get("phases") for r in records if r["type"] == "finish" and r.get("phases")), {}
        ),
    }


def write_reward(logs: str, result: dict[str, Any]) -> None:
    """`reward.txt` (1 or 0); `reward.json`, which Harbor reads first and which must hold
    numbers only: reward, passed, expected, tampered (0 or 1); and `grade.json`, everything
    (the reason, the outcomes, the dropped paths, the scan's findings)."""
    os.makedirs(logs, exist_ok=True)
    reward = 1 if result["reward"] == 1.0 else 0
    numbers = {
        "reward": reward,
        "passed": int(result["passed"]),
        "expected": int(result["expected"]),
        "tampered": 1 if result["tampered"] else 0,
    }
    texts = {
        "grade.json": json.dumps(result, indent=2, sort_keys=True) + "\n",
        "reward.json": json.dumps(numbers, indent=2, sort_keys=True) + "\n",
        "reward.txt": f"{reward}\n",
    }
    for name, text in texts.items():
        path = os.path.join(logs, name)
        # what stands there (a link the agent planted, say) is replaced, never written through
        with contextlib.suppress(FileNotFoundError):
            _remove(path)
        fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW, 0o644)
        with open(fd, "w", encoding="utf-8") as fh:
            fh.write(text)


def main() -> int:
    tests_dir = os.environ.get("TASKMINT_TESTS_DIR") or os.path.dirname(os.path.abspath(__file__))
    logs = os.environ.get("TASKMINT_LOGS") or "/logs/verifier"
    try:
        with open(os.path.join(tests_dir, "task.json"), encoding="utf-8") as fh:
            python = os.environ.get("TASKMINT_PYTHON") or json.load(fh)["python"]
        result = grade(
            tests_dir,
            os.environ.get("TASKMINT_APP") or "/app",
            os.environ.get("TASKMINT_GRADE_WS") or WORKSPACE,
            python,
        )
    except Exception as exc:  # the grader failing is a zero, never a crash without a reward
        result = {
            "reward": 0.0,
            "passed": 0,
            "expected": 0,
            "tampered": False,
            "reason": f"the grader failed: {type(exc).__name__}: {exc}",
        }
    write_reward(logs, result)
    with contextlib.suppress(OSError):
        print(f"reward {result['reward']}: {result['reason']}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
