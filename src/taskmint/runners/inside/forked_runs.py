"""Forked broken runs: one pytest collection, then each candidate's runs as forks of it.

Runs INSIDE the sandbox, as the run's own unprivileged uid, under the seed's interpreter; imports
nothing of taskmint but its siblings in this folder, loaded from their files: `code_swap` (step 2
below) and `protocol` (the batch's spec and records). The way fast mutation-testing tools work:
the original tree is collected once (the seed's modules and the selected test files imported,
their module-level code run), and every run of every candidate in the batch is a fresh fork
of that process which

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

import contextlib
import ctypes
import importlib.util
import json
import linecache
import os
import random
import select
import shutil
import signal
import stat
import sys
import threading
import time
import types
from collections.abc import Callable, Mapping
from typing import TYPE_CHECKING, Any, NamedTuple


def _sibling(name: str) -> types.ModuleType:
    """A module of this folder, loaded once from its file under a name of taskmint's own
    (`taskmint_inside_<name>`): never a file of the workspace, never in the way of a seed's
    own module of that name, and the same module object for every runner file that loads it."""
    key = "taskmint_inside_" + name
    if key not in sys.modules:
        path = os.path.join(os.path.dirname(os.path.abspath(__file__)), name + ".py")
        spec = importlib.util.spec_from_file_location(key, path)
        assert spec is not None and spec.loader is not None
        module = importlib.util.module_from_spec(spec)
        sys.modules[key] = module
        spec.loader.exec_module(module)
    return sys.modules[key]


if TYPE_CHECKING:
    from taskmint.runners.inside import protocol
    from taskmint.runners.inside.code_swap import Unforkable, function_index, hot_patch
else:
    protocol = _sibling("protocol")
    _code_swap = _sibling("code_swap")
    Unforkable, function_index, hot_patch = (
        _code_swap.Unforkable,
        _code_swap.function_index,
        _code_swap.hot_patch,
    )

WORKSPACE = "/workspace"
SCRATCH = ("/tmp", "/dev/shm")


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

    The spec is a `protocol.BatchSpec`: per candidate its files, the tests of its first run,
    those of them failing on the original and the wall limit of a run, optionally its own
    runs' plans (replacing the batch's) and "repeat": "all" (every run repeats the whole
    request, instead of the open tests). What happens is told by `emit`, as `protocol`'s
    batch records.
    """

    def __init__(
        self, spec: protocol.BatchSpec, emit: Callable[[Mapping[str, object]], None]
    ) -> None:
        self.spec = spec
        self.emit = emit
        self.plans = [(str(o), int(s)) for o, s in spec["plans"]]
        self.runs = int(spec["runs"])

    def serve(self, session: Any, start_run: Callable[[str, int | None, str], None]) -> None:
        """Run every candidate of the batch; `start_run(order, seed, tag)` sets the plugin up
        for one run in the child."""
        self.start_run = start_run
        if threading.active_count() > 1:
            # a fork keeps only this thread: locks another one holds would never be released
            self.emit(protocol.batch_stop("the collection left threads running"))
            return
        _dumpable(False)  # no run (the same uid) may trace this process or read its memory
        swaps = any(cand["files"] for cand in self.spec["candidates"])
        index = function_index(WORKSPACE) if swaps else {}
        baseline_tree = _tree(WORKSPACE)
        self.pristine = _pristine(baseline_tree, int(self.spec.get("snapshot_bytes", 0)))
        scratch = {folder: _entries(folder) for folder in SCRATCH}
        collected = {item.nodeid for item in session.items}
        for number, cand in enumerate(self.spec["candidates"]):
            files = protocol.candidate_files(cand, WORKSPACE)
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
                tag = protocol.run_tag(number, run)
                order, seed = plans[run] if run < len(plans) else ("shuffle", run)
                self.emit(protocol.batch_run(tag, request))
                began = time.monotonic()
                this = _Run(request, files, originals, index, order, seed, tag, float(cand["wall"]))
                status, got = self._fork(session, this)
                passed.update(got)
                failed.update(t for t in request if t not in got)
                broken = self._restore(originals, baseline_tree, scratch)
                wall = round(time.monotonic() - began, 4)
                self.emit(protocol.batch_end(tag, wall, status))
                if broken:
                    # this candidate is done only if it needed no further run
                    if status["status"] != "ran" or run + 1 == runs:
                        self.emit(protocol.batch_done(number))
                    self.emit(protocol.batch_stop(broken))
                    return
                if status["status"] != "ran":
                    break
            self.emit(protocol.batch_done(number))

    def _fork(self, session: Any, run: _Run) -> tuple[protocol.RunEnd, set[str]]:
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
        end: protocol.RunEnd = {"status": answer["status"], "exit_code": exit_code, "ended": True}
        if "reason" in answer:
            end["reason"] = answer["reason"]
        return end, {str(t) for t in answer.get("passed", [])}

    def _child(self, session: Any, run: _Run) -> None:
        """In the fork: the candidate's files and code in place, then the run's tests."""
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
