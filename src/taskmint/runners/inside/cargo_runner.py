"""taskmint's cargo harness: builds a Rust seed's tests, runs them under cargo-nextest and
rustdoc, and reports one record per test on a channel the tests cannot reach.

Usage: python -I -S -B cargo_runner.py --channel
   or: python -I -S -B cargo_runner.py REPORT INPUT
With --channel, the input (`CargoInput` as JSON) is read from the descriptor that
$TASKMINT_CHANNEL names first, and the report goes to the second; otherwise the input is the
file INPUT (read, then deleted) and the report is appended to the file REPORT.

The run, in phases (each bounded by what is left of the input's `timeout`):

1. the warm target folder (the original's build, at a path only the input names) is copied to
   `target_dir`, unless one is there already;
2. `cargo metadata` names the packages and their test targets (those whose
   `required-features` are off, and those the input says the original cannot build, left out);
3. `cargo test --no-run --message-format json` builds every selected test target it can
   (cargo starts nothing new after a failure, so what was neither built nor failed is built
   again until a round adds nothing); a target that does not build fails every expected test
   of it, with the compiler's errors as the message (never zero tests). Then every process the
   build left is killed, the incremental caches and the test executables this build did not
   make are deleted, so the tests find no compiled copy of the original;
4. `cargo nextest list` lists the built test binaries (ignored tests come out "skipped");
5. `cargo nextest run` runs each selected test in its own process and writes its JUnit report
   to its own standard output, which only this process reads. A test's outcome is its
   process's exit status (nextest judges `#[should_panic]`); a test that passed without
   libtest's result line in its output exited from inside (`process::exit(0)` in the code
   under test) and fails;
6. `cargo test --doc -- --list` lists the doctests (rustdoc alone, before any doctest runs),
   then `cargo test --doc` runs them (rustdoc runs each as a child and reports its lines
   `test <file> - <item> (line N) ... ok|FAILED|ignored` on its standard output, which only this
   process reads; the lines a failing doctest printed come after "failures:" and are ignored;
   results that do not add up with rustdoc's counts, name a doctest twice or one that was not
   listed are "tampered").

After the build and after every later phase, whatever the phase left running is killed and the
workspace and the test executables are checked against what the build left (`Guard`): a change
is "tampered", and the run stops.

cargo, rustdoc and cargo-nextest are mounted execute-only, so the kernel makes them
non-dumpable: a test process (the same uid) can neither open their descriptors under /proc nor
their memory, and this process makes itself non-dumpable too. What a test can still forge is
listed in docs/rust.md: it runs the policy's code, which can exit 0 after printing libtest's
result line, and a 2024-edition crate's doctests are reported by the merged doctest binary,
which holds the crate's own code.

Test ids (see `taskmint.languages.rust.adapter`): `<kind>:<package>[/<target>]::<test path>` for
tests run by nextest (`lib:tinyrs::math::tests::adds`, `test:tinyrs/api::adds`,
`bin:tinyrs/cli::tests::parses`), and `doc:<package>::<file> - <item>` for doctests (the line
number left out, since any edit above a doctest moves it; ` #2`, ` #3` for an item's further
doctests, by line).
A selection may also name a whole binary (`test:tinyrs/api`) or every doctest (`doc:tinyrs`).

Report records (JSON lines, each with the run's nonce): "start"; "build_error" (target,
message); "test" (id, outcome: passed|failed|error|skipped, duration, message); "tampered"
(reason); "harness_error" (message); and "finish" last, with counts.

Standard library only; runs under the host's interpreter, never the seed's code.
"""

from __future__ import annotations

import contextlib
import hashlib
import json
import os
import re
import runpy
import selectors
import shutil
import signal
import subprocess
import sys
import time
import xml.etree.ElementTree as ElementTree
from collections.abc import Iterator
from typing import TYPE_CHECKING, Any, TypedDict

if TYPE_CHECKING:
    from taskmint.runners.inside.harness_io import Report, non_dumpable, read_input
else:  # `python -I` puts no folder on sys.path: the sibling file, by its path
    _io = runpy.run_path(os.path.join(os.path.dirname(os.path.abspath(__file__)), "harness_io.py"))
    Report, non_dumpable, read_input = _io["Report"], _io["non_dumpable"], _io["read_input"]

OUTPUT_CAP = 256 * 1024  # bytes of the tools' own output passed on, for people
STDOUT_CAP = 256 * 1024**2  # bytes of a tool's standard output read (JUnit with test output)
MESSAGE_LIMIT = 2000
ERRORS_LIMIT = 8000
FILTER_LIMIT = 60_000  # characters of one nextest filterset
_PLAIN_NAME = re.compile(r"^[A-Za-z0-9_:]+$")
_DOC_LINE = re.compile(
    r"^test (?P<name>.+? \(line \d+\))(?: - [a-z ]+)? \.\.\. (?P<result>ok|FAILED|ignored.*)$"
)
_DOC_NAME = re.compile(r"^(?P<base>.+) \(line (?P<line>\d+)\)$")
_RUNNING = re.compile(r"^running (\d+) tests?$")
_SUMMARY = re.compile(r"^test result: \w+\. (\d+) passed; (\d+) failed; (\d+) ignored;")
_LIBTEST_OK = re.compile(r"^test result: ok\. 1 passed;", re.MULTILINE)
KINDS = ("lib", "bin", "test", "example", "bench")


class CargoInput(TypedDict, total=False):
    """What the host hands the harness."""

    nonce: str
    cargo: str  # cargo's absolute path (execute-only)
    nextest: str  # cargo-nextest's absolute path (execute-only)
    cwd: str  # the workspace (the seed's root)
    env: list[list[str]]  # the tools' environment
    target_dir: str  # where the build goes (CARGO_TARGET_DIR)
    warm: str | None  # the warm target folder to start from (copied), or None
    select: list[str] | None  # the test ids (or whole binaries) to run; None: every test
    expected: list[str]  # the ids of the original's tests (what a failed build fails)
    skip: list[str]  # labels of test targets never built (the original's do not build)
    test_timeout: float  # seconds one test may run (0: no limit)
    timeout: float  # seconds the whole run may take
    jobs: int  # build jobs and test threads (0: the CPUs)
    keep_target: bool  # leave the target folder (the warm build); else delete it at the end
    sweep: bool  # kill every other process of this uid between phases (inside a sandbox)
    sweep_any_parent: bool  # sweep though not started by init (a grader that gave it the uid)


# --- plumbing ------------------------------------------------------------------------------


class Output:
    """The tools' own output (cargo's progress, compiler errors), passed on capped."""

    def __init__(self) -> None:
        self.left = OUTPUT_CAP

    def write(self, data: bytes) -> None:
        if self.left <= 0:
            return
        chunk = data[: self.left]
        self.left -= len(chunk)
        sys.stdout.buffer.write(chunk)
        if self.left <= 0:
            sys.stdout.buffer.write(b"\n[... output truncated by taskmint ...]\n")
        sys.stdout.flush()


class Ran:
    """How one tool's run ended."""

    def __init__(self, code: int | None, stdout: bytes, timed_out: bool, too_big: bool) -> None:
        self.code = code
        self.stdout = stdout
        self.timed_out = timed_out
        self.too_big = too_big

    @property
    def text(self) -> str:
        return self.stdout.decode("utf-8", "replace")


def run_tool(
    argv: list[str], spec: CargoInput, env: dict[str, str], output: Output, seconds: float
) -> Ran:
    """Run one tool in a session of its own: its standard output is read (capped), its
    standard error passed on; killed with its group after `seconds`."""
    output.write(("$ " + " ".join(argv[:3]) + " ...\n").encode())
    proc = subprocess.Popen(
        argv,
        cwd=spec["cwd"],
        env=env,
        stdin=subprocess.DEVNULL,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        start_new_session=True,
    )
    assert proc.stdout is not None and proc.stderr is not None
    sel = selectors.DefaultSelector()
    sel.register(proc.stdout, selectors.EVENT_READ, "out")
    sel.register(proc.stderr, selectors.EVENT_READ, "err")
    chunks: list[bytes] = []
    size = 0
    too_big = timed_out = False
    deadline = time.monotonic() + max(seconds, 1.0)
    open_streams = 2
    while open_streams:
        left = deadline - time.monotonic()
        if left <= 0:
            timed_out = True
            break
        for key, _ in sel.select(timeout=min(left, 1.0)):
            data = os.read(key.fd, 1 << 16)
            if not data:
                sel.unregister(key.fileobj)
                open_streams -= 1
            elif key.data == "err":
                output.write(data)
            elif size + len(data) > STDOUT_CAP:
                too_big = True
                open_streams = 0
                break
            else:
                chunks.append(data)
                size += len(data)
    if timed_out or too_big:
        _kill_group(proc.pid)
    try:
        code: int | None = proc.wait(timeout=30)
    except subprocess.TimeoutExpired:
        _kill_group(proc.pid)
        code = None
    proc.stdout.close()
    proc.stderr.close()
    return Ran(None if timed_out else code, b"".join(chunks), timed_out, too_big)


def _kill_group(pgid: int) -> None:
    with contextlib.suppress(ProcessLookupError, PermissionError):
        os.killpg(pgid, signal.SIGKILL)


def sweep(spec: CargoInput) -> int:
    """Kill every other process this uid can signal (what a build or a test left behind);
    how many there were. Only inside a sandbox: a process of its own uid, started by the PID
    namespace's init, or (`sweep_any_parent`) one whose uid a grader gave it for this run
    alone (a Harbor task's container)."""
    inside = os.getppid() == 1 or bool(spec.get("sweep_any_parent"))
    if not (spec.get("sweep") and os.getuid() != 0 and inside):
        return 0
    me, uid = os.getpid(), os.getuid()
    left = 0
    for entry in os.listdir("/proc"):
        if entry.isdigit() and int(entry) != me:
            with contextlib.suppress(OSError):
                left += os.stat(f"/proc/{entry}").st_uid == uid
    with contextlib.suppress(ProcessLookupError, PermissionError):
        os.kill(-1, signal.SIGKILL)
    while True:  # reap what was ours
        try:
            if os.waitpid(-1, os.WNOHANG) == (0, 0):
                break
        except ChildProcessError:
            break
    return left


# --- test ids ------------------------------------------------------------------------------


def label(package: str, kind: str, name: str) -> str:
    """The binary part of a test id: `lib:<package>` or `<kind>:<package>/<target>`."""
    return f"lib:{package}" if kind == "lib" else f"{kind}:{package}/{name}"


def split_id(test_id: str) -> tuple[str, str]:
    """(binary label, test name) of an id; the name is "" for a whole binary."""
    kind, _, rest = test_id.partition(":")
    binary, _, name = rest.partition("::")
    return f"{kind}:{binary}", name


def target_kind(kinds: list[str]) -> str:
    """cargo's target kinds (["lib"], ["proc-macro"], ["cdylib", "rlib"], ["test"]) as one of
    KINDS, or "build" for a build script."""
    if "custom-build" in kinds:
        return "build"
    for kind in ("bin", "test", "example", "bench"):
        if kind in kinds:
            return kind
    return "lib"


class Target:
    """A test target of a workspace package."""

    def __init__(self, package: str, package_id: str, kind: str, name: str) -> None:
        self.package = package
        self.package_id = package_id
        self.kind = kind
        self.name = name
        self.label = label(package, kind, name)

    def flag(self) -> list[str]:
        return ["--lib"] if self.kind == "lib" else [f"--{self.kind}", self.name]


class Workspace:
    """The packages of the workspace (`cargo metadata --no-deps`) and their test targets."""

    def __init__(self, metadata: dict[str, Any]) -> None:
        members = set(metadata.get("workspace_members") or [])
        self.names: dict[str, str] = {}  # package id -> name
        self.targets: dict[str, Target] = {}  # label -> target
        self.doc_packages: list[str] = []  # packages whose lib has doctests
        for package in metadata.get("packages") or []:
            if package.get("id") not in members:
                continue
            pid, pname = str(package["id"]), str(package["name"])
            self.names[pid] = pname
            enabled = default_features(package.get("features") or {})
            for target in package.get("targets") or []:
                kind = target_kind(list(target.get("kind") or []))
                if kind == "build" or not set(target.get("required-features") or []) <= enabled:
                    continue  # cargo test skips a target whose features are not on
                if kind == "lib" and target.get("doctest"):
                    self.doc_packages.append(pname)
                if target.get("test"):
                    t = Target(pname, pid, kind, str(target.get("name")))
                    self.targets[t.label] = t


def default_features(features: dict[str, list[str]]) -> set[str]:
    """The features a plain build turns on: `default` and what it names, transitively."""
    on: set[str] = set()
    todo = ["default"] if "default" in features else []
    while todo:
        name = todo.pop()
        if name in on:
            continue
        on.add(name)
        todo += [f for f in features.get(name) or [] if f in features]
    return on


def build_flags(targets: list[Target], everything: bool) -> list[str]:
    """cargo's package and target flags for `targets` (every test target: `--workspace`)."""
    if everything:
        return ["--workspace"]
    flags: list[str] = []
    for package in sorted({t.package for t in targets}):
        flags += ["-p", package]
    for flag in sorted({tuple(t.flag()) for t in targets}):
        flags += list(flag)
    return flags


# --- the workspace between phases ----------------------------------------------------------

_BUILD_NAMES = ("Cargo.toml", "Cargo.lock", "build.rs", "config", "config.toml")


class Guard:
    """The workspace and the test executables as the build left them: every later cargo or
    nextest call builds again (a no-op when nothing changed) and rustdoc compiles the doctests
    from the sources, so code that a phase ran (a test; a test binary listing its tests) must
    not have changed a file there, nor planted a Rust source or a cargo configuration
    (`.cargo/config.toml` can name a test runner), nor replaced a test binary. Checked after
    every process of the phase is gone (a binary replaced and put back in between is not
    seen: see docs/rust.md)."""

    def __init__(self, root: str, exclude: str, extra: set[str]) -> None:
        self.root = root
        self.exclude = os.path.realpath(exclude)
        self.extra = sorted(extra)  # files outside `root` (the test executables)
        self.files = self._scan()

    def _scan(self) -> dict[str, str]:
        out: dict[str, str] = {path: _digest(path) for path in self.extra}
        for dirpath, dirnames, filenames in os.walk(self.root):
            dirnames[:] = [
                d for d in dirnames if os.path.realpath(os.path.join(dirpath, d)) != self.exclude
            ]
            for name in filenames:
                path = os.path.join(dirpath, name)
                out[os.path.relpath(path, self.root)] = _digest(path)
        return out

    def changed(self) -> str:
        """The first file a phase changed, deleted or planted where a build reads ("")."""
        now = self._scan()
        for rel, digest in sorted(self.files.items()):
            if now.get(rel) != digest:
                return rel
        for rel in sorted(now.keys() - self.files.keys()):
            parts = rel.split(os.sep)
            if rel.endswith(".rs") or parts[-1] in _BUILD_NAMES or ".cargo" in parts:
                return rel
        return ""


def _digest(path: str) -> str:
    h = hashlib.sha256()
    try:
        with open(path, "rb") as fh:
            while chunk := fh.read(1 << 20):
                h.update(chunk)
    except OSError as exc:
        return f"unreadable: {exc.errno}"
    return h.hexdigest()


def unchanged(run: Run, guard: Guard | None) -> bool:
    """Kill what the last phase left, then check the workspace; a change is "tampered"."""
    run.swept += sweep(run.spec)
    rel = guard.changed() if guard is not None else ""
    if rel:
        run.report.emit({"type": "tampered", "reason": f"the tests changed {rel} in the workspace"})
    return not rel


# --- phases --------------------------------------------------------------------------------


class Run:
    """One harness run: the input, the report, and the outcomes so far."""

    def __init__(self, spec: CargoInput, report: Report) -> None:
        self.spec = spec
        self.report = report
        self.output = Output()
        self.env = {k: v for k, v in spec.get("env") or []}
        self.env.pop("TASKMINT_CHANNEL", None)
        self.deadline = time.monotonic() + float(spec.get("timeout") or 600)
        self.select = spec.get("select")
        self.reported: set[str] = set()
        self.counts = {"tests": 0, "passed": 0, "failed": 0, "skipped": 0, "error": 0}
        self.phases: dict[str, float] = {}
        self.swept = 0  # processes left behind by a build or a test, killed

    @contextlib.contextmanager
    def phase(self, name: str) -> Iterator[None]:
        """Time a phase (seconds, summed per name; reported in "finish")."""
        start = time.monotonic()
        try:
            yield
        finally:
            self.phases[name] = self.phases.get(name, 0.0) + time.monotonic() - start

    def left(self) -> float:
        return self.deadline - time.monotonic()

    def tool(self, argv: list[str]) -> Ran:
        return run_tool(argv, self.spec, self.env, self.output, self.left())

    def cargo(self, *args: str) -> list[str]:
        return [self.spec["cargo"], *args]

    def test(self, test_id: str, outcome: str, duration: float = 0.0, message: str = "") -> None:
        if test_id in self.reported:
            return
        self.reported.add(test_id)
        self.counts["tests"] += 1
        self.counts[outcome] = self.counts.get(outcome, 0) + 1
        record = {"type": "test", "id": test_id, "outcome": outcome, "duration": duration}
        if message:
            record["message"] = message[:MESSAGE_LIMIT]
        self.report.emit(record)

    def wanted(self, binary: str) -> tuple[bool, set[str]]:
        """(whether the whole binary is selected, the selected test names in it)."""
        if self.select is None:
            return True, set()
        whole, names = False, set()
        for tid in self.select:
            b, name = split_id(tid)
            if b == binary:
                if name:
                    names.add(name)
                else:
                    whole = True
        return whole, names

    def expected_of(self, binary: str) -> list[str]:
        """The ids a failure of `binary` fails: the selected ones (a whole binary: its tests
        in the original's list), or every one of the original's."""
        known = [t for t in self.spec.get("expected") or [] if split_id(t)[0] == binary]
        if self.select is None:
            return known
        whole, names = self.wanted(binary)
        if whole:
            return known or [binary]
        return [f"{binary}::{n}" for n in sorted(names)]


def prepare_target(run: Run) -> str | None:
    target, warm = run.spec["target_dir"], run.spec.get("warm")
    if not warm or os.path.exists(target):
        return None
    if not os.path.isdir(warm):
        return f"the warm target folder is missing ({warm})"
    proc = subprocess.run(["cp", "-a", warm, target], capture_output=True, timeout=600)
    if proc.returncode != 0:
        shutil.rmtree(target, ignore_errors=True)
        return f"could not copy the warm target folder: {proc.stderr.decode()[-500:]}"
    return None


def metadata(run: Run) -> Workspace | str:
    ran = run.tool(run.cargo("metadata", "--no-deps", "--format-version", "1", "--frozen"))
    if ran.code != 0:
        return f"cargo metadata failed (exit {ran.code}); is Cargo.toml valid?"
    try:
        return Workspace(json.loads(ran.stdout))
    except (ValueError, KeyError, TypeError) as exc:
        return f"cargo metadata's output is not what cargo writes: {exc}"


class Build:
    """What `cargo test --no-run` built and the errors it met."""

    def __init__(self) -> None:
        self.built: set[str] = set()  # labels of test binaries built
        self.executables: set[str] = set()
        self.errors: dict[str, list[str]] = {}  # label ("lib:<package>" for the lib) -> errors
        self.all_errors: list[str] = []
        self.ok = False
        self.problem = ""


def build(run: Run, ws: Workspace, targets: list[Target], everything: bool) -> Build:
    """Build every target of `targets` that builds. cargo starts no new unit once one has
    failed (`cargo test` has no --keep-going), so after a failure the targets neither built nor
    failed are built again, until a round builds or fails nothing new."""
    result = Build()
    jobs = int(run.spec.get("jobs") or 0)
    argv = run.cargo("test", "--no-run", "--no-fail-fast", "--message-format", "json", "--frozen")
    argv += ["-j", str(jobs)] if jobs else []
    remaining = list(targets)
    while remaining:
        known = len(result.built) + len(result.errors)
        result.ok = False
        ran = run.tool(argv + build_flags(remaining, everything and remaining == targets))
        if ran.timed_out:
            result.problem = "the build did not finish in time"
        for line in ran.text.splitlines():
            if not line.startswith("{"):
                continue
            try:
                msg = json.loads(line)
            except ValueError:
                continue
            _take_build_message(msg, ws, result)
        if not result.problem and ran.code not in (0, 101):
            result.problem = f"cargo test --no-run ended with exit code {ran.code}"
        if result.ok or result.problem or len(result.built) + len(result.errors) == known:
            break
        remaining = [
            t for t in remaining if t.label not in result.built and t.label not in result.errors
        ]
    return result


def _take_build_message(msg: dict[str, Any], ws: Workspace, result: Build) -> None:
    reason = msg.get("reason")
    target = msg.get("target") or {}
    package = ws.names.get(str(msg.get("package_id")), "")
    kind = target_kind(list(target.get("kind") or []))
    name = str(target.get("name"))
    if reason == "compiler-artifact" and package:
        if (msg.get("profile") or {}).get("test") and msg.get("executable"):
            result.built.add(label(package, kind, name))
            result.executables.add(os.path.realpath(str(msg["executable"])))
    elif reason == "compiler-message":
        message = msg.get("message") or {}
        if message.get("level") in ("error", "error: internal compiler error"):
            text = str(message.get("rendered") or message.get("message") or "")
            if text not in result.all_errors:
                result.all_errors.append(text)
            if package:
                key = f"lib:{package}" if kind in ("lib", "build") else label(package, kind, name)
                if text not in result.errors.get(key, []):
                    result.errors.setdefault(key, []).append(text)
    elif reason == "build-finished":
        result.ok = bool(msg.get("success"))


def _errors_for(result: Build, target: Target) -> str:
    own = result.errors.get(target.label) or result.errors.get(f"lib:{target.package}")
    texts = own or result.all_errors
    if not texts:
        return result.problem or "the test target did not build (see the run's output)"
    return "\n".join(texts)[:ERRORS_LIMIT]


def scrub(run: Run, result: Build) -> None:
    """After the build: no test executable it did not make, and no incremental cache (both
    can hold the original's compiled code)."""
    if run.spec.get("keep_target"):
        return
    root = run.spec["target_dir"]
    for profile in _profiles(root):
        shutil.rmtree(os.path.join(profile, "incremental"), ignore_errors=True)
        deps = os.path.join(profile, "deps")
        try:
            names = os.listdir(deps)
        except OSError:
            continue
        for name in names:
            path = os.path.join(deps, name)
            if "." in name or not os.path.isfile(path) or not os.access(path, os.X_OK):
                continue
            if os.path.realpath(path) not in result.executables:
                os.unlink(path)


def _profiles(root: str) -> list[str]:
    try:
        return [
            os.path.join(root, d)
            for d in os.listdir(root)
            if os.path.isdir(os.path.join(root, d, "deps"))
        ]
    except OSError:
        return []


def nextest_config(run: Run) -> str:
    timeout = float(run.spec.get("test_timeout") or 0)
    jobs = int(run.spec.get("jobs") or 0)
    lines = [
        "[profile.taskmint]",
        "retries = 0",
        "fail-fast = false",
        'failure-output = "never"',
        'success-output = "never"',
        'status-level = "fail"',
        'final-status-level = "none"',
        'leak-timeout = "200ms"',
    ]
    if jobs:
        lines.append(f"test-threads = {jobs}")
    if timeout > 0:
        lines.append(f'slow-timeout = {{ period = "{timeout:g}s", terminate-after = 1 }}')
    lines += [
        "",
        "[profile.taskmint.junit]",
        'path = "/dev/stdout"',
        "store-success-output = true",
        "store-failure-output = true",
    ]
    return "\n".join(lines) + "\n"


def nextest_args(run: Run, config: str) -> list[str]:
    return [
        run.spec["nextest"],
        "nextest",
        "--config-file",
        config,
        "--user-config-file",
        "none",
    ]


class Suite:
    """One test binary as nextest lists it."""

    def __init__(self, binary_id: str, label: str, tests: dict[str, bool]) -> None:
        self.binary_id = binary_id
        self.label = label
        self.tests = tests  # name -> ignored


def list_tests(run: Run, ws: Workspace, config: str, flags: list[str]) -> list[Suite] | str:
    argv = [*nextest_args(run, config), "list", "--message-format", "json", "--frozen"]
    ran = run.tool([*argv, "--run-ignored", "all", *flags])
    if ran.code != 0:
        why = "timed out" if ran.timed_out else f"exit code {ran.code}"
        return f"cargo nextest list failed ({why})"
    try:
        data = json.loads(ran.stdout)
        suites = []
        for binary_id, suite in (data.get("rust-suites") or {}).items():
            package = ws.names.get(str(suite.get("package-id")), "")
            if not package:
                continue
            kind = "lib" if suite.get("kind") in ("lib", "proc-macro") else str(suite.get("kind"))
            lab = label(package, kind, str(suite.get("binary-name")))
            tests = {
                str(name): bool(case.get("ignored"))
                for name, case in (suite.get("testcases") or {}).items()
            }
            suites.append(Suite(str(binary_id), lab, tests))
        return suites
    except (ValueError, AttributeError, TypeError) as exc:
        return f"cargo nextest list's output is not what nextest writes: {exc}"


def filtersets(run: Run, suites: list[Suite]) -> tuple[list[str], set[str]]:
    """nextest's -E expressions for the selection, and the ids to keep from its report (a
    binary whose selected names cannot be written as a filterset runs whole)."""
    exprs: list[str] = []
    keep: set[str] = set()
    for suite in suites:
        whole, names = run.wanted(suite.label)
        if not whole and not names:
            continue
        plain = all(_PLAIN_NAME.match(n) for n in names) and _PLAIN_NAME.match(
            suite.binary_id.replace("/", "_").replace("-", "_")
        )
        binary = f"binary_id(={suite.binary_id})"
        if whole or not plain:
            exprs.append(binary)
            keep |= {f"{suite.label}::{n}" for n in (suite.tests if whole else names)}
            continue
        expr = f"{binary} & ({' | '.join(f'test(={n})' for n in sorted(names))})"
        if len(expr) > FILTER_LIMIT:
            expr = binary
        exprs.append(expr)
        keep |= {f"{suite.label}::{n}" for n in names}
    return exprs, keep


def run_nextest(run: Run, suites: list[Suite], config: str, flags: list[str]) -> None:
    by_binary = {s.binary_id: s for s in suites}
    selected: set[str] | None = None
    argv = [*nextest_args(run, config), "run", "--profile", "taskmint", "--frozen"]
    argv += ["--no-fail-fast", "--show-progress", "none", "--no-tests", "pass", *flags]
    if run.select is not None:
        exprs, selected = filtersets(run, suites)
        if not exprs:
            return
        for expr in exprs:
            argv += ["-E", expr]
    ran = run.tool(argv)
    problem = ""
    if ran.timed_out:
        problem = "the tests did not finish in time"
    elif ran.too_big:
        problem = "the tests' output was too large to report"
    elif ran.code not in (0, 100):
        problem = f"cargo nextest run ended with exit code {ran.code}"
    if not problem:
        problem = _take_junit(run, ran.text, by_binary, selected)
    if problem:
        run.report.emit({"type": "harness_error", "message": problem})
        for suite in suites:  # what was to run and did not report
            whole, names = run.wanted(suite.label)
            for name, ignored in sorted(suite.tests.items()):
                if not ignored and (whole or name in names):
                    run.test(f"{suite.label}::{name}", "error", message=problem)


def _take_junit(run: Run, text: str, by_binary: dict[str, Suite], selected: set[str] | None) -> str:
    body = text.strip()
    if not body:
        return ""  # nothing was selected to run
    if not body.startswith("<?xml"):
        return "cargo nextest wrote something besides its JUnit report"
    try:
        root = ElementTree.fromstring(body)
    except ElementTree.ParseError as exc:
        return f"cargo nextest's JUnit report does not parse: {exc}"
    for suite_el in root.iter("testsuite"):
        suite = by_binary.get(str(suite_el.get("name")))
        if suite is None:
            return f"the JUnit report names a binary nextest did not list: {suite_el.get('name')}"
        for case in suite_el.iter("testcase"):
            test_id = f"{suite.label}::{case.get('name')}"
            if selected is not None and test_id not in selected:
                continue
            outcome, message = _case_outcome(case)
            run.test(test_id, outcome, _seconds(case.get("time")), message)
    return ""


def _case_outcome(case: ElementTree.Element) -> tuple[str, str]:
    for tag in ("failure", "error"):
        el = case.find(tag)
        if el is not None:
            kind = str(el.get("type") or "")
            text = (el.text or el.get("message") or kind or tag).strip()
            if kind == "test timeout":
                text = "the test timed out"
            return ("failed" if tag == "failure" else "error"), text
    out = case.find("system-out")
    if out is None or not _LIBTEST_OK.search(out.text or ""):
        return "failed", (
            "the test process exited 0 without its test harness's result line: the code under "
            "test ended the process (process::exit) before the test finished"
        )
    return "passed", ""


def _seconds(value: Any) -> float:
    try:
        return round(float(value or 0.0), 6)
    except (TypeError, ValueError):
        return 0.0


def _cargo_messages(text: str) -> tuple[bool, list[str]]:
    """(whether cargo's build finished well, the compiler's errors) from its JSON lines."""
    errors: list[str] = []
    built = True
    for line in text.splitlines():
        if not line.startswith("{"):
            continue
        try:
            msg = json.loads(line)
        except ValueError:
            continue
        message = msg.get("message") or {}
        if msg.get("reason") == "compiler-message" and message.get("level") == "error":
            errors.append(str(message.get("rendered") or message.get("message") or ""))
        elif msg.get("reason") == "build-finished":
            built = bool(msg.get("success"))
    return built, errors


def run_doctests(run: Run, package: str) -> None:
    """List the package's doctests (rustdoc alone: no doctest runs), then run them; the
    results must name listed doctests only, each once, and add up with rustdoc's counts."""
    binary = f"doc:{package}"
    whole, names = run.wanted(binary)
    if not whole and not names:
        return
    base = run.cargo("test", "--doc", "--frozen", "-p", package, "--message-format", "json")
    tokens = (doc_filters(names) if not whole else None) or []
    listing = run.tool([*base, "--", "--list", *tokens])
    built, errors = _cargo_messages(listing.text)
    if not built and not listing.timed_out:
        text = "\n".join(errors)[:ERRORS_LIMIT] or "(see the run's output)"
        run.report.emit({"type": "build_error", "target": binary, "message": text})
        for tid in run.expected_of(binary):
            run.test(tid, "failed", message=f"the library did not build:\n{text}")
        return
    listed = [
        line[: -len(": test")]
        for line in listing.text.splitlines()
        if line.endswith(": test") and not line.startswith("{")
    ]
    if listing.code != 0 or not listed:
        problem = "" if listing.code == 0 else f"listing the doctests failed ({listing.code})"
        if problem:
            run.report.emit({"type": "harness_error", "message": problem})
        return
    jobs = int(run.spec.get("jobs") or 0)
    threads = ["--test-threads", str(jobs)] if jobs else []
    ran = run.tool([*base, "--", "--color", "never", *threads, *tokens])
    results, problem = parse_doctests(ran.text)
    unlisted = sorted({name for name, _ in results} - set(listed))
    if unlisted and not problem:
        problem = f"tampered: a result for a doctest rustdoc did not list: {unlisted[0]!r}"
    if ran.timed_out:
        problem = "the doctests did not finish in time"
    elif not problem and ran.code not in (0, 101):
        problem = f"cargo test --doc ended with exit code {ran.code}"
    if problem.startswith("tampered: "):
        run.report.emit({"type": "tampered", "reason": problem.removeprefix("tampered: ")})
        return
    stable = doc_ids(listed)
    for name, outcome in results:
        if whole or stable[name] in names:
            run.test(f"{binary}::{stable[name]}", outcome)
    if problem:
        run.report.emit({"type": "harness_error", "message": problem})
        for tid in run.expected_of(binary):
            run.test(tid, "error", message=problem)


def doc_ids(names: list[str]) -> dict[str, str]:
    """rustdoc's doctest names -> the names in test ids: without the line number (an edit
    above a doctest moves it), the k-th doctest of one item in one file (by line) with " #k"
    after the first: `src/lib.rs - add (line 8)` -> `src/lib.rs - add`."""
    groups: dict[str, list[tuple[int, str]]] = {}
    for name in names:
        m = _DOC_NAME.match(name)
        base, line = (m.group("base"), int(m.group("line"))) if m else (name, 0)
        groups.setdefault(base, []).append((line, name))
    out: dict[str, str] = {}
    for base, entries in groups.items():
        for k, (_, name) in enumerate(sorted(entries), start=1):
            out[name] = base if k == 1 else f"{base} #{k}"
    return out


def doc_filters(names: set[str]) -> list[str] | None:
    """libtest filters that select at least the doctests `names` (ids' names, see `doc_ids`)
    and every other doctest of their items (so their numbering is whole): the item part of
    each name, as a substring (rustdoc splits its test arguments at whitespace, so a whole
    name cannot be one); None when an item has whitespace in it (then every doctest runs).
    What they select beyond the names is run and left out of the report."""
    tokens = set()
    for name in names:
        m = re.match(r"^\S+ - (?P<item>.+?)(?: #\d+)?$", name)
        if m is None or re.search(r"\s", m.group("item")):
            return None
        tokens.add(m.group("item"))
    return sorted(tokens)


class _Section:
    """One `running N tests` ... `test result:` run of rustdoc's (a 2024-edition crate's
    merged doctests and its standalone ones are two)."""

    def __init__(self, expected: int) -> None:
        self.expected = expected
        self.results: list[tuple[str, str]] = []
        self.summary: tuple[int, int, int] | None = None


def parse_doctests(text: str) -> tuple[list[tuple[str, str]], str]:
    """(name, outcome) of each doctest rustdoc reported, and a problem ("" if none; starting
    "tampered: " when the lines do not add up). In each run ("running N tests"), only the
    lines before its first "failures:", "successes:" or "test result:" line are results, and
    its last "test result:" line is its summary: what a failing doctest printed comes between
    them. Every run's results must add up with its count and summary, and no doctest may be
    reported twice."""
    sections: list[_Section] = []
    in_results = False
    for line in text.splitlines():
        if line.startswith("{"):
            continue  # cargo's JSON messages
        m = _RUNNING.match(line)
        if m:
            sections.append(_Section(int(m.group(1))))
            in_results = True
            continue
        if not sections:
            continue
        s = _SUMMARY.match(line)
        if s:
            sections[-1].summary = (int(s.group(1)), int(s.group(2)), int(s.group(3)))
            in_results = False
        elif line in ("failures:", "successes:"):
            in_results = False
        elif in_results and (d := _DOC_LINE.match(line)) is not None:
            result = d.group("result")
            outcome = "passed" if result == "ok" else "failed" if result == "FAILED" else "skipped"
            sections[-1].results.append((d.group("name"), outcome))
    results = [r for section in sections for r in section.results]
    names = [name for name, _ in results]
    if len(set(names)) != len(names):
        twice = next(n for n in names if names.count(n) > 1)
        return results, f"tampered: doctest {twice!r} was reported twice"
    if not sections:
        return results, "rustdoc reported no doctest run (did the library build?)"
    for section in sections:
        if section.summary is None:
            return results, "rustdoc's doctest run did not finish"
        got = section.results
        counts = (
            sum(o == "passed" for _, o in got),
            sum(o == "failed" for _, o in got),
            sum(o == "skipped" for _, o in got),
        )
        if len(got) != section.expected or counts != section.summary:
            return results, (
                f"tampered: rustdoc's lines do not add up ({len(got)} results {counts} for "
                f"{section.expected} tests, summary {section.summary})"
            )
    return results, ""


def main() -> int:
    spec: CargoInput
    spec, target = read_input("cargo_runner.py")
    report = Report(target, spec["nonce"])
    report.emit({"type": "start"})
    why = non_dumpable()
    if why is not None:
        report.emit({"type": "harness_error", "message": why})
        return 2
    run = Run(spec, report)
    try:
        status = _main(run)
    finally:
        if not spec.get("keep_target"):
            with run.phase("clean"):
                shutil.rmtree(spec["target_dir"], ignore_errors=True)
    phases = {k: round(v, 3) for k, v in run.phases.items()}
    counts = {**run.counts, "swept": run.swept}
    report.emit({"type": "finish", "counts": counts, "status": status, "phases": phases})
    sys.stdout.write(f"taskmint-swept {run.swept}\ntaskmint-phases {json.dumps(phases)}\n")
    sys.stdout.flush()
    return 0


def _main(run: Run) -> str:
    with run.phase("copy"):
        problem = prepare_target(run)
    if problem:
        run.report.emit({"type": "harness_error", "message": problem})
        return "error"
    with run.phase("metadata"):
        ws = metadata(run)
    if isinstance(ws, str):
        run.report.emit({"type": "harness_error", "message": ws})
        return "error"
    skip = set(run.spec.get("skip") or [])
    wanted = [t for t in ws.targets.values() if any(run.wanted(t.label)) and t.label not in skip]
    docs = [p for p in ws.doc_packages if any(run.wanted(f"doc:{p}")) and f"doc:{p}" not in skip]
    result = Build()
    if wanted:
        with run.phase("build"):
            result = build(run, ws, wanted, run.select is None and not skip)
            run.swept += sweep(run.spec)
            scrub(run, result)
        for t in wanted:
            if t.label not in result.built:
                message = _errors_for(result, t)
                run.report.emit({"type": "build_error", "target": t.label, "message": message})
                for tid in run.expected_of(t.label):
                    run.test(tid, "failed", message=f"the test target did not build:\n{message}")
    with run.phase("guard"):
        guard = Guard(run.spec["cwd"], run.spec["target_dir"], result.executables)
    built = [t for t in wanted if t.label in result.built]
    config = os.path.join("/tmp", f"taskmint-nextest-{os.getpid()}.toml")
    if built:
        flags = build_flags(built, run.select is None and not skip and built == wanted)
        with run.phase("list"):
            _write(config, nextest_config(run))
            suites = list_tests(run, ws, config, flags)
        with run.phase("guard"):
            if not unchanged(run, guard):
                return "tampered"
        if isinstance(suites, str):
            run.report.emit({"type": "harness_error", "message": suites})
            for t in built:
                for tid in run.expected_of(t.label):
                    run.test(tid, "error", message=suites)
        else:
            for suite in suites:  # ignored tests are skipped, never run
                whole, names = run.wanted(suite.label)
                for name, ignored in sorted(suite.tests.items()):
                    if ignored and (whole or name in names):
                        run.test(f"{suite.label}::{name}", "skipped", message="ignored")
            with run.phase("tests"):
                _write(config, nextest_config(run))  # as it was: the listing ran test code
                run_nextest(run, suites, config, flags)
            with run.phase("guard"):
                if not unchanged(run, guard):
                    return "tampered"
    for package in docs:
        with run.phase("doctests"):
            run_doctests(run, package)
        with run.phase("guard"):
            if not unchanged(run, guard):
                return "tampered"
    return "ok"


def _write(path: str, text: str) -> None:
    with contextlib.suppress(FileNotFoundError):
        os.unlink(path)  # whatever stands there (a link, a file of the tests')
    fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW, 0o600)
    with os.fdopen(fd, "w", encoding="utf-8") as fh:
        fh.write(text)


if __name__ == "__main__":
    sys.exit(main())
