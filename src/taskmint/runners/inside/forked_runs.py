"""Forked broken runs: one pytest collection, then each candidate's runs as forks of it.

Runs INSIDE the sandbox, as the run's own unprivileged uid, under the seed's interpreter; imports
nothing of taskmint. The way fast mutation-testing tools work: the original tree is collected
once (the seed's modules and the selected test files imported, their module-level code run),
and every run of every candidate in the batch is a fresh fork of that process which

1. writes the candidate's files over the workspace's (so anything that reads them from disk,
   a lazy import or a process a test starts, sees the broken tree),
2. points every live function whose source changed at the code the broken file compiles to
   (`hot_patch`), and refuses when that cannot be exact (`Unforkable`): the host then runs the
   candidate the ordinary way,
3. runs the run's tests with pytest's own protocol, in the run's order and random seed, and
   reports them, tagged, on the run's report channel.

Why a fork of the original's collection is the broken tree's own collection: the host sends
only edits confined to function bodies that no code ran while the seed was imported or the test
files collected (the coverage map's shared and collection contexts), so importing and collecting
the broken tree runs the very same code. What differs is only which code object each changed
function holds, and step 2 sets that: the module and class bodies must compile to the same code
up to line numbers and the functions defined in them, or the batch refuses the candidate.

Between forks the parent puts the tree back: the changed files' bytes and times, every other
process of the uid killed, new entries of /tmp and /dev/shm removed; a run that changed any
other file of the workspace stops the batch (later candidates go back to the host).
"""

from __future__ import annotations

import base64
import contextlib
import gc
import importlib.util
import json
import os
import random
import select
import shutil
import signal
import stat
import time
import types
from collections.abc import Callable, Iterator
from typing import Any, NamedTuple

WORKSPACE = "/workspace"
SCRATCH = ("/tmp", "/dev/shm")
_CO_NEWLOCALS = 0x0002  # a function's code (module and class bodies lack it)


class Unforkable(Exception):
    """This candidate cannot be run as a fork of the original's collection."""


def _qualname(code: types.CodeType) -> str:
    return str(getattr(code, "co_qualname", code.co_name))  # co_qualname: Python 3.11+


def _codes(code: types.CodeType) -> Iterator[types.CodeType]:
    yield code
    for const in code.co_consts:
        if isinstance(const, types.CodeType):
            yield from _codes(const)


def _nested(code: types.CodeType) -> list[types.CodeType]:
    return [c for c in code.co_consts if isinstance(c, types.CodeType)]


def _same_but_nested(a: types.CodeType, b: types.CodeType) -> bool:
    """Whether `a` and `b` do the same thing, up to line numbers and the code of what they
    define (their nested code objects, compared separately)."""
    if (a.co_code, a.co_names, a.co_varnames, a.co_freevars, a.co_cellvars, a.co_flags) != (
        b.co_code,
        b.co_names,
        b.co_varnames,
        b.co_freevars,
        b.co_cellvars,
        b.co_flags,
    ):
        return False
    if (a.co_argcount, a.co_posonlyargcount, a.co_kwonlyargcount) != (
        b.co_argcount,
        b.co_posonlyargcount,
        b.co_kwonlyargcount,
    ):
        return False
    if len(a.co_consts) != len(b.co_consts):
        return False
    for x, y in zip(a.co_consts, b.co_consts, strict=True):
        if isinstance(x, types.CodeType) or isinstance(y, types.CodeType):
            if not (isinstance(x, types.CodeType) and isinstance(y, types.CodeType)):
                return False
            if _qualname(x) != _qualname(y):
                return False
        elif type(x) is not type(y) or x != y:
            return False
    return True


def pair_code(
    old: types.CodeType, new: types.CodeType
) -> tuple[dict[types.CodeType, types.CodeType], set[types.CodeType]]:
    """The code objects of the original module (`old`) that a live function must swap, each
    with its replacement from the broken module (`new`), and the original ones that have no
    replacement (nested in a changed function whose nested definitions changed shape: a live
    function holding one of them makes the candidate unforkable).

    Module and class bodies ran when the original was imported: they must be the same up to
    line numbers and nested code, or `Unforkable`. A function may change in any way that keeps
    its name and its free variables (its closure cells are the live function's)."""
    swap: dict[types.CodeType, types.CodeType] = {}
    orphans: set[types.CodeType] = set()

    def walk(a: types.CodeType, b: types.CodeType) -> None:
        function = bool(a.co_flags & _CO_NEWLOCALS)
        if _qualname(a) != _qualname(b) or function != bool(b.co_flags & _CO_NEWLOCALS):
            raise Unforkable(f"{_qualname(a)} does not line up with {_qualname(b)}")
        if a == b:
            return
        if not function:
            if not _same_but_nested(a, b):
                raise Unforkable(f"the edit changes code that runs at import ({_qualname(a)})")
        else:
            if a.co_freevars != b.co_freevars:
                raise Unforkable(f"the edit changes the closure of {_qualname(a)}")
            swap[a] = b
        na, nb = _nested(a), _nested(b)
        if len(na) == len(nb) and all(
            _qualname(x) == _qualname(y) for x, y in zip(na, nb, strict=True)
        ):
            for x, y in zip(na, nb, strict=True):
                walk(x, y)
        elif function:
            for x in na:
                orphans.update(_codes(x))
        else:  # pragma: no cover - _same_but_nested already compared them
            raise Unforkable(f"the definitions in {_qualname(a)} changed")

    walk(old, new)
    return swap, orphans


def function_index(root: str = WORKSPACE) -> dict[types.CodeType, list[types.FunctionType]]:
    """Every live function defined in a file under `root`, by its code object (code objects
    compare by value, so two imports of one file share a key)."""
    index: dict[types.CodeType, list[types.FunctionType]] = {}
    prefix = root.rstrip("/") + "/"
    for obj in gc.get_objects():
        if type(obj) is types.FunctionType and obj.__code__.co_filename.startswith(prefix):
            index.setdefault(obj.__code__, []).append(obj)
    return index


def hot_patch(
    path: str,
    old_source: bytes,
    new_source: bytes,
    index: dict[types.CodeType, list[types.FunctionType]],
) -> int:
    """Point the live functions of `path` at the code `new_source` compiles to; the number of
    functions changed. `Unforkable` when that would not be what importing `new_source` does."""
    try:
        old = compile(old_source, path, "exec", dont_inherit=True)
    except (SyntaxError, ValueError) as exc:
        raise Unforkable(f"the original {path} does not compile here: {exc}") from exc
    try:
        new = compile(new_source, path, "exec", dont_inherit=True)
    except (SyntaxError, ValueError) as exc:
        raise Unforkable(f"the broken {path} does not compile: {exc}") from exc
    live = [c for c in index if c.co_filename == path]
    known = set(_codes(old))
    strangers = [_qualname(c) for c in live if c not in known]
    if strangers:
        # rewritten on import (pytest's assertion rewriting), or made at run time
        raise Unforkable(f"live code of {path} is not what its source compiles to: {strangers[0]}")
    swap, orphans = pair_code(old, new)
    held = [_qualname(c) for c in orphans if c in index]
    if held:
        raise Unforkable(f"a live function holds code the edit reshaped: {held[0]}")
    changed = 0
    for code, functions in index.items():
        if code.co_filename != path or code not in swap:
            continue
        for function in functions:
            doc = code.co_consts[0] if code.co_consts else None
            function.__code__ = swap[code]
            new_doc = swap[code].co_consts[0] if swap[code].co_consts else None
            text = new_doc is None or isinstance(new_doc, str)
            if doc != new_doc and function.__doc__ == doc and text:
                function.__doc__ = new_doc
            changed += 1
    return changed


def _tree(root: str) -> dict[str, tuple[int, int, int]]:
    """(size, mtime, mode) of every file under `root`, (0, 0, mode) of every folder (whose
    times change whenever an entry comes or goes)."""
    out: dict[str, tuple[int, int, int]] = {}
    for dirpath, dirnames, filenames in os.walk(root):
        for name in dirnames + filenames:
            path = os.path.join(dirpath, name)
            with contextlib.suppress(OSError):
                st = os.lstat(path)
                if stat.S_ISDIR(st.st_mode):
                    out[path] = (0, 0, st.st_mode)
                else:
                    out[path] = (st.st_size, st.st_mtime_ns, st.st_mode)
    return out


def _pristine(
    tree: dict[str, tuple[int, int, int]], limit: int
) -> dict[str, tuple[bytes, int, int]] | None:
    """The bytes, times and mode of every regular file and link of `tree` (a link's target as
    its bytes), to put back whatever a run changes; None when they take more than `limit`
    bytes (a run that changes a file then stops the batch)."""
    out: dict[str, tuple[bytes, int, int]] = {}
    total = 0
    for path, (size, mtime, mode) in tree.items():
        if stat.S_ISDIR(mode):
            continue
        total += size
        if total > limit:
            return None
        try:
            if stat.S_ISLNK(mode):
                out[path] = (os.readlink(path).encode(), mtime, mode)
            elif stat.S_ISREG(mode):
                with open(path, "rb") as fh:
                    out[path] = (fh.read(), mtime, mode)
            else:
                return None
        except OSError:
            return None
    return out


def _put_back(
    path: str,
    was: tuple[int, int, int],
    pristine: dict[str, tuple[bytes, int, int]],
) -> None:
    """Make `path` what it was (`was`: its entry in the tree; its bytes in `pristine`)."""
    mode = was[2]
    if os.path.lexists(path) and (
        stat.S_IFMT(os.lstat(path).st_mode) != stat.S_IFMT(mode) or not stat.S_ISDIR(mode)
    ):
        _remove(path)
    if stat.S_ISDIR(mode):
        os.makedirs(path, exist_ok=True)
        os.chmod(path, stat.S_IMODE(mode))
        return
    data, mtime, mode = pristine[path]
    if stat.S_ISLNK(mode):
        os.symlink(data.decode(), path)
        os.utime(path, ns=(mtime, mtime), follow_symlinks=False)
        return
    fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
    with os.fdopen(fd, "wb") as fh:
        fh.write(data)
    os.chmod(path, stat.S_IMODE(mode))
    os.utime(path, ns=(mtime, mtime))


def _saved(path: str) -> tuple[str, bytes | None, int, int]:
    """`path`'s bytes and times (None: absent), to put back after a run."""
    try:
        st = os.stat(path)
        with open(path, "rb") as fh:
            return path, fh.read(), st.st_atime_ns, st.st_mtime_ns
    except FileNotFoundError:
        return path, None, 0, 0


def _entries(folder: str) -> set[str]:
    try:
        return set(os.listdir(folder))
    except OSError:
        return set()


def _remove(path: str) -> None:
    def retry(func: Callable[..., Any], target: str, _exc: object) -> None:
        with contextlib.suppress(OSError):
            os.chmod(os.path.dirname(target), 0o700)
            os.chmod(target, 0o700)
        func(target)

    if os.path.isdir(path) and not os.path.islink(path):
        shutil.rmtree(path, onerror=retry)
    else:
        os.unlink(path)


def _dumpable(flag: bool) -> None:
    with contextlib.suppress(OSError, AttributeError):
        import ctypes

        ctypes.CDLL(None, use_errno=True).prctl(4, int(flag), 0, 0, 0)  # PR_SET_DUMPABLE


def _kill_others() -> None:
    """SIGKILL every other process this uid may signal (the runs' leftovers), until none is
    left that answers."""
    for _ in range(200):
        try:
            os.kill(-1, signal.SIGKILL)
        except (ProcessLookupError, PermissionError):  # none left (or only init)
            return
        with contextlib.suppress(ChildProcessError):
            while os.waitpid(-1, os.WNOHANG)[0]:
                pass
        time.sleep(0.001)


class _Run(NamedTuple):
    """One run of one candidate in a batch."""

    request: list[str]  # the tests it runs
    files: list[tuple[str, bytes]]  # the candidate's files (path, bytes)
    originals: list[tuple[str, bytes | None, int, int]]  # what to put back (`_saved`)
    functions: dict[types.CodeType, list[types.FunctionType]]  # the live ones (`function_index`)
    order: str
    seed: int
    tag: str
    wall: float  # seconds


class Batch:
    """The parent: serves each candidate's runs as forks, puts the tree back in between.

    The spec: {"runs": N, "plans": [[order, seed], ...] (run i's), "snapshot_bytes": ...,
    "candidates": [{"files": [[path, base64], ...], "select": [test ids] or null (every
    collected test), "failing": [ids failing on the original], "wall": seconds per run,
    optional "plans" (this candidate's own runs, replacing N and the batch's plans) and
    "repeat": "all" (every run repeats the whole request, instead of the open tests)}, ...]}.
    """

    def __init__(self, spec: dict[str, Any], emit: Callable[[dict[str, Any]], None]) -> None:
        self.spec = spec
        self.emit = emit
        self.plans = [(str(o), int(s)) for o, s in spec["plans"]]
        self.runs = int(spec["runs"])

    def serve(self, session: Any, start_run: Callable[[str, int | None, str], None]) -> None:
        """Run every candidate of the batch; `start_run(order, seed, tag)` sets the plugin up
        for one run in the child."""
        self.start_run = start_run
        import threading

        if threading.active_count() > 1:
            # a fork keeps only this thread: locks another one holds would never be released
            self.emit({"type": "batch_stop", "reason": "the collection left threads running"})
            return
        _dumpable(False)  # no run (the same uid) may trace this process or read its memory
        swaps = any(cand["files"] for cand in self.spec["candidates"])
        index = function_index() if swaps else {}
        baseline_tree = _tree(WORKSPACE)
        self.pristine = _pristine(baseline_tree, int(self.spec.get("snapshot_bytes", 0)))
        scratch = {folder: _entries(folder) for folder in SCRATCH}
        collected = {item.nodeid for item in session.items}
        for number, cand in enumerate(self.spec["candidates"]):
            files = [
                (os.path.join(WORKSPACE, rel), base64.b64decode(data))
                for rel, data in cand["files"]
            ]
            # the changed files, and their bytecode, which a process the tests start rewrites
            originals = [_saved(path) for path, _ in files]
            originals += [
                _saved(importlib.util.cache_from_source(path))
                for path, _ in files
                if path.endswith(".py")
            ]
            if cand["select"] is None:  # every collected test (the original suite's runs)
                request = [item.nodeid for item in session.items]
            else:
                request = [t for t in cand["select"] if t in collected]
            # a test's verdict is settled once it passed (a test that passes on the original)
            # or once it failed (one that fails there): later runs repeat only the open ones,
            # unless the candidate asks for every run to repeat the whole request
            failing = set(cand.get("failing", ()))
            repeat_all = cand.get("repeat") == "all"
            plans = self.plans
            runs = self.runs
            if cand.get("plans"):  # its own runs: (order, seed) each
                plans = [(str(order), int(seed)) for order, seed in cand["plans"]]
                runs = len(plans)
            passed: set[str] = set()
            failed: set[str] = set()
            for run in range(runs):
                if run > 0 and not repeat_all:
                    request = [
                        t
                        for t in request
                        if (t in failing and t not in failed)
                        or (t not in failing and t not in passed)
                    ]
                    if not request:
                        break
                tag = f"{number}/{run}"
                order, seed = plans[run] if run < len(plans) else ("shuffle", run)
                self.emit({"type": "batch_run", "tag": tag, "ids": request})
                began = time.monotonic()
                this = _Run(request, files, originals, index, order, seed, tag, float(cand["wall"]))
                status, got = self._fork(session, this)
                passed.update(got)
                failed.update(t for t in request if t not in got)
                broken = self._restore(originals, baseline_tree, scratch)
                wall = round(time.monotonic() - began, 4)
                self.emit({"type": "batch_end", "tag": tag, "wall": wall, **status})
                if broken:
                    # this candidate is done only if it needed no further run
                    if status["status"] != "ran" or run + 1 == runs:
                        self.emit({"type": "batch_done", "candidate": number})
                    self.emit({"type": "batch_stop", "reason": broken})
                    return
                if status["status"] != "ran":
                    break
            self.emit({"type": "batch_done", "candidate": number})

    def _fork(self, session: Any, run: _Run) -> tuple[dict[str, Any], set[str]]:
        """Serve `run` as a fork: how it ended, and the tests that passed."""
        read_fd, write_fd = os.pipe()
        pid = os.fork()
        if pid == 0:
            os.close(read_fd)
            code = 0
            self.passed: set[str] = set()
            try:
                _dumpable(True)  # the run is an ordinary process
                os.setpgid(0, 0)
                self._child(session, run)
                answer = {"status": "ran"}
            except Unforkable as exc:
                answer = {"status": "unforkable", "reason": str(exc)[:500]}
            except BaseException as exc:  # reported, then the child ends
                answer = {"status": "crashed", "reason": repr(exc)[:500]}
                code = 1
            with contextlib.suppress(BaseException):
                data = json.dumps({**answer, "passed": sorted(self.passed)}).encode()
                view = memoryview(data)
                while view:
                    view = view[os.write(write_fd, view) :]
            os._exit(code)
        os.close(write_fd)
        deadline = time.monotonic() + run.wall
        chunks: list[bytes] = []
        timed_out = False
        pidfd = os.pidfd_open(pid)
        try:
            open_fds = [read_fd, pidfd]
            while open_fds:
                left = deadline - time.monotonic()
                if left <= 0:
                    timed_out = True
                    with contextlib.suppress(ProcessLookupError):
                        os.killpg(pid, signal.SIGKILL)
                    break
                ready, _, _ = select.select(open_fds, [], [], left)
                if read_fd in ready:
                    chunk = os.read(read_fd, 1 << 16)
                    if chunk:
                        chunks.append(chunk)
                    else:
                        open_fds.remove(read_fd)
                if pidfd in ready:
                    open_fds.remove(pidfd)
                    if read_fd in open_fds:  # the child is gone: what it wrote is there
                        os.set_blocking(read_fd, False)
                        with contextlib.suppress(BlockingIOError):
                            while chunk := os.read(read_fd, 1 << 16):
                                chunks.append(chunk)
                        open_fds.remove(read_fd)
        finally:
            os.close(read_fd)
            os.close(pidfd)
        _, wait_status = os.waitpid(pid, 0)
        exit_code = os.waitstatus_to_exitcode(wait_status)
        if timed_out:
            return {"status": "timeout", "exit_code": None}, set()
        try:
            answer = json.loads(b"".join(chunks))
        except ValueError:
            return {"status": "ran", "exit_code": exit_code, "ended": False}, set()
        passed = {str(t) for t in answer.pop("passed", [])}
        return {**answer, "exit_code": exit_code, "ended": True}, passed

    def _child(self, session: Any, run: _Run) -> None:
        """In the fork: the candidate's files and code in place, then the run's tests."""
        import linecache

        files = run.files
        for (path, data), (_, old, _, _) in zip(files, run.originals[: len(files)], strict=True):
            if old is None:
                raise Unforkable(f"{path} is not in the workspace")
            if path.endswith(".py"):
                hot_patch(path, old, data, run.functions)
        for path, data in files:
            with open(path, "wb") as fh:
                fh.write(data)
        linecache.clearcache()
        wanted = set(run.request)
        items = [item for item in session.items if item.nodeid in wanted]
        if run.order == "reverse":
            items.reverse()
        elif run.order == "shuffle":
            random.Random(f"order|{run.seed}").shuffle(items)
        self.start_run(run.order, run.seed, run.tag)
        hook = session.config.hook
        for i, item in enumerate(items):
            nextitem = items[i + 1] if i + 1 < len(items) else None
            hook.pytest_runtest_protocol(item=item, nextitem=nextitem)
            if session.shouldfail or session.shouldstop:
                break

    def record(self, report: Any) -> None:
        """Called by the plugin in the child for every phase report: the tests that passed
        (as the host reads them: a passing call, no xfail mark, no failing phase)."""
        nodeid = report.nodeid
        if report.when == "call" and report.outcome == "passed" and not hasattr(report, "wasxfail"):
            self.passed.add(nodeid)
        elif report.outcome != "passed" or hasattr(report, "wasxfail"):
            self.passed.discard(nodeid)

    def _restore(
        self,
        originals: list[tuple[str, bytes | None, int, int]],
        baseline_tree: dict[str, tuple[int, int, int]],
        scratch: dict[str, set[str]],
    ) -> str:
        """Put the tree back after a run: a reason to stop the batch, or "" when the tree is
        as it was (the changed files and their bytecode put back, whatever the run added to the
        workspace, /tmp or /dev/shm removed, any other file it changed rewritten from the
        batch's copy of the tree, `pristine`, when the tree was small enough to keep one)."""
        _kill_others()
        try:
            for path, data, atime, mtime in originals:
                if data is None:
                    with contextlib.suppress(FileNotFoundError):
                        os.unlink(path)
                    continue
                with open(path, "wb") as fh:
                    fh.write(data)
                os.utime(path, ns=(atime, mtime))
            for folder, before in scratch.items():
                for name in _entries(folder) - before:
                    _remove(os.path.join(folder, name))
            now = _tree(WORKSPACE)
            if now == baseline_tree:  # the common case: nothing else to put back or check
                return ""
            for path in sorted(set(now) - set(baseline_tree)):
                if os.path.lexists(path):
                    _remove(path)
            if self.pristine is not None:  # folders before what they hold
                for path, was in sorted(baseline_tree.items()):
                    if now.get(path) != was:
                        _put_back(path, was, self.pristine)
        except (OSError, KeyError) as exc:
            return f"could not put the tree back: {exc}"
        now = _tree(WORKSPACE)
        if now != baseline_tree:
            changed = sorted(set(now) ^ set(baseline_tree)) or sorted(
                p for p in now if now[p] != baseline_tree.get(p)
            )
            return f"a run changed the workspace: {changed[0] if changed else '?'}"
        return ""
