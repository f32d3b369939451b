"""taskmint's fork server: warm Python runs with the isolation of a cold one.

Runs INSIDE a long-lived bubblewrap sandbox (see `taskmint.sandbox.warm`), as the sandbox's root
with a handful of capabilities, and imports nothing of taskmint. It imports pytest, its builtin
plugins, coverage, taskmint's pytest plugin and the seed's third-party packages once; then, for
each request, it forks a run that:

1. enters new mount, PID, network, IPC and UTS namespaces (like bubblewrap does for a cold run),
2. binds the run's workspace at /workspace and its report folder at /run/taskmint, mounts a
   fresh size-capped /tmp and /dev/shm, and covers the spool (where every other run's workspace
   lives) with an empty tmpfs,
3. becomes PID 1 of the new PID namespace (an init that reaps orphans and mounts a fresh /proc)
   and forks the process that runs the code, which
4. takes the run's rlimits, drops every capability (bounding, ambient, inheritable), switches to
   the run's own unprivileged uid, sets no_new_privs and starts a new session, and
5. does what `python -I -B SCRIPT ARGS` or `python -I -B -c CODE ARGS` would do.

The server never runs code from a workspace itself. The wall-clock limit is enforced here, and
again from the host, which kills the whole server if it does not answer in time.

Protocol: one JSON request per line on stdin, one JSON response per line on stdout. End of input
means the host is gone: the server exits, and every run dies with it (parent-death signals).

It stays one file although it is long: it is the script the sandbox starts (`python -I -B
forkserver.py`, with nothing of this folder on its path), and its two modes, the server and the
docker backend's standby, share the steps that make a process the run (`_become_run`).
"""

from __future__ import annotations

import atexit
import base64
import builtins
import contextlib
import ctypes
import fcntl
import gc
import importlib
import json
import os
import resource
import runpy
import select
import signal
import socket
import struct
import subprocess
import sys
import tarfile  # the supervisor's own copy (`standby`), loaded before any run code
import threading
import time
import traceback
from importlib import metadata
from typing import Any

CLONE_NEWNS = 0x00020000
CLONE_NEWUTS = 0x04000000
CLONE_NEWIPC = 0x08000000
CLONE_NEWPID = 0x20000000
CLONE_NEWNET = 0x40000000
MS_NOSUID, MS_NODEV, MS_NOEXEC = 2, 4, 8
MS_BIND, MS_REC, MS_PRIVATE = 4096, 16384, 1 << 18
PR_SET_PDEATHSIG, PR_SET_DUMPABLE, PR_CAPBSET_DROP, PR_SET_NO_NEW_PRIVS = 1, 4, 24, 38
PR_CAP_AMBIENT, PR_CAP_AMBIENT_CLEAR_ALL = 47, 4
SIOCGIFFLAGS, SIOCSIFFLAGS, IFF_UP = 0x8913, 0x8914, 0x1

SPOOL = "/spool"
WORKSPACE = "/workspace"
REPORT_DIR = "/run/taskmint"
CHANNEL_ENV = "TASKMINT_CHANNEL"
CHANNEL_IN, CHANNEL_OUT = 3, 4  # the channel's descriptors in the run
READY = b"taskmint-standby-ready\n"  # standby mode: preloaded, waiting for its one run
COLLECTED = b"taskmint-collected "  # standby mode: after the report tar, then the exit code

_libc = ctypes.CDLL(None, use_errno=True)


def _check(ret: int, what: str) -> None:
    if ret != 0:
        err = ctypes.get_errno()
        raise OSError(err, f"{what}: {os.strerror(err)}")


def _mount(source: str | None, target: str, fstype: str | None, flags: int, data: str = "") -> None:
    _check(
        _libc.mount(
            source.encode() if source else None,
            target.encode(),
            fstype.encode() if fstype else None,
            ctypes.c_ulong(flags),
            data.encode() if data else None,
        ),
        f"mount {target}",
    )


def _prctl(option: int, arg: int) -> None:
    _check(
        _libc.prctl(
            ctypes.c_int(option),
            ctypes.c_ulong(arg),
            ctypes.c_ulong(0),
            ctypes.c_ulong(0),
            ctypes.c_ulong(0),
        ),
        f"prctl {option}",
    )


def _loopback_up() -> None:
    """A new network namespace has only `lo`, down; bubblewrap brings it up, so do we."""
    with socket.socket(socket.AF_INET, socket.SOCK_DGRAM) as sock:
        req = struct.pack("16sH14x", b"lo", 0)
        flags = struct.unpack("16sH14x", fcntl.ioctl(sock, SIOCGIFFLAGS, req))[1]
        fcntl.ioctl(sock, SIOCSIFFLAGS, struct.pack("16sH14x", b"lo", flags | IFF_UP))


def _drop_privileges(uid: int) -> None:
    with open("/proc/sys/kernel/cap_last_cap") as fh:
        last = int(fh.read())
    for cap in range(last + 1):
        _prctl(PR_CAPBSET_DROP, cap)
    with contextlib.suppress(OSError):  # kernels without ambient capabilities
        _prctl(PR_CAP_AMBIENT, PR_CAP_AMBIENT_CLEAR_ALL)
    os.setgroups([])
    os.setresgid(uid, uid, uid)
    os.setresuid(uid, uid, uid)  # clears the permitted and effective sets
    header = (ctypes.c_uint32 * 2)(0x20080522, 0)  # _LINUX_CAPABILITY_VERSION_3, this process
    data = (ctypes.c_uint32 * 6)()  # effective, permitted, inheritable: all empty
    _check(_libc.capset(header, data), "capset")
    _prctl(PR_SET_NO_NEW_PRIVS, 1)


def _set_limits(limits: dict[str, int]) -> None:
    for name, value in (
        ("RLIMIT_CPU", limits["cpu_seconds"]),
        ("RLIMIT_AS", limits["memory_bytes"]),
        ("RLIMIT_NPROC", limits["processes"]),
        ("RLIMIT_FSIZE", limits["file_bytes"]),
        ("RLIMIT_NOFILE", limits["open_files"]),
        ("RLIMIT_CORE", 0),
    ):
        resource.setrlimit(getattr(resource, name), (value, value))


def _enter_namespaces(req: dict[str, Any]) -> tuple[int, int] | None:
    """In the run's first process: private mounts, its own folders, the spool hidden. Returns
    the channel's descriptors (input, report), opened before the spool is covered."""
    _check(
        _libc.unshare(CLONE_NEWNS | CLONE_NEWPID | CLONE_NEWNET | CLONE_NEWIPC | CLONE_NEWUTS),
        "unshare",
    )
    _mount(None, "/", None, MS_REC | MS_PRIVATE)
    run_dir = os.path.join(SPOOL, str(req["run"]))
    _mount(os.path.join(run_dir, "ws"), WORKSPACE, None, MS_BIND | MS_REC)
    if req.get("report"):
        _mount(os.path.join(run_dir, "report"), REPORT_DIR, None, MS_BIND | MS_REC)
    channel = None
    if req.get("channel"):
        channel = (
            os.open(os.path.join(run_dir, "chan", "in"), os.O_RDONLY),
            os.open(os.path.join(run_dir, "chan", "out"), os.O_WRONLY | os.O_APPEND),
        )
    size = int(req["limits"]["file_bytes"])
    _mount("tmpfs", "/tmp", "tmpfs", MS_NOSUID | MS_NODEV, f"size={size},mode=1777")
    if os.path.isdir("/dev/shm"):
        _mount("tmpfs", "/dev/shm", "tmpfs", MS_NOSUID | MS_NODEV, f"size={size},mode=1777")
    _mount("tmpfs", SPOOL, "tmpfs", MS_NOSUID | MS_NODEV | MS_NOEXEC, "size=4096,mode=0755")
    socket.sethostname("sandbox")
    _loopback_up()
    return channel


def _emulate_python(argv: list[str]) -> int:
    """What `python -I -B <argv>` does once the interpreter is up."""
    code = 0
    try:
        if argv[0] == "-c":
            sys.argv = ["-c", *argv[2:]]
            main = {"__name__": "__main__", "__builtins__": builtins, "__doc__": None}
            exec(compile(argv[1], "<string>", "exec"), main)
        else:
            sys.argv = list(argv)
            runpy.run_path(argv[0], run_name="__main__")
    except SystemExit as exc:
        if exc.code is None:
            code = 0
        elif isinstance(exc.code, int):
            code = exc.code
        else:
            print(exc.code, file=sys.stderr)
            code = 1
    except BaseException:
        traceback.print_exc()
        code = 1
    with contextlib.suppress(BaseException):
        atexit._run_exitfuncs()
    for stream in (sys.stdout, sys.stderr):
        with contextlib.suppress(BaseException):
            stream.flush()
    return code & 0xFF


def _forget_shadowed() -> None:
    """A preloaded package that the workspace also holds (an installed copy of the seed) must
    come from the workspace, as it would in a cold run: forget the preloaded one."""
    names: set[str] = set()
    for base in (WORKSPACE, WORKSPACE + "/src", WORKSPACE + "/lib"):
        with contextlib.suppress(OSError):
            names.update(n.removesuffix(".py") for n in os.listdir(base))
    shadowed = _PRELOADED & names
    for module in [m for m in sys.modules if m.split(".")[0] in shadowed]:
        del sys.modules[module]


def _become_run(req: dict[str, Any], extra_env: dict[str, str]) -> int:
    """The last steps of every run, once limits and privileges are set: the run's folder,
    environment, umask and signal dispositions, then `python -I -B ...` itself."""
    os.chdir(str(req["cwd"]))
    os.environ.clear()
    os.environ.update(dict(req["env"]))
    os.environ.update(extra_env)
    os.umask(0o022)
    signal.signal(signal.SIGPIPE, signal.SIG_DFL)
    signal.signal(signal.SIGINT, signal.default_int_handler)
    _forget_shadowed()
    return _emulate_python(list(req["argv"])[3:])


def _run_code(req: dict[str, Any], out_fd: int, channel: tuple[int, int] | None) -> None:
    """The process that runs the code (a child of the namespace's init). Never returns."""
    try:
        limits = req["limits"]
        assert isinstance(limits, dict)
        os.setsid()
        null = os.open("/dev/null", os.O_RDONLY)
        os.dup2(null, 0)
        os.dup2(out_fd, 1)
        os.dup2(out_fd, 2)
        first_free = 3
        if channel is not None:
            moved = [os.dup(fd) for fd in channel]  # out of the way of 3 and 4
            os.dup2(moved[0], CHANNEL_IN)
            os.dup2(moved[1], CHANNEL_OUT)
            first_free = CHANNEL_OUT + 1
        os.closerange(first_free, 65536)
        sys.stdin = open(0, closefd=False)  # noqa: SIM115
        sys.stdout = open(1, "w", closefd=False)  # noqa: SIM115
        sys.stderr = open(2, "w", buffering=1, closefd=False)  # noqa: SIM115
        _set_limits(limits)
        _drop_privileges(int(req["uid"]))
        extra = {CHANNEL_ENV: f"{CHANNEL_IN} {CHANNEL_OUT}"} if channel is not None else {}
        code = _become_run(req, extra)
    except BaseException as exc:
        with contextlib.suppress(BaseException):
            os.write(2, f"taskmint fork server: run setup failed: {exc!r}\n".encode())
        code = 125
    os._exit(code)


def _init(req: dict[str, Any], out_fd: int, channel: tuple[int, int] | None) -> None:
    """PID 1 of the run's namespace: mount /proc, start the code, reap orphans. Never returns."""
    code = 125
    try:
        _prctl(PR_SET_PDEATHSIG, signal.SIGKILL)
        _mount("proc", "/proc", "proc", MS_NOSUID | MS_NODEV | MS_NOEXEC)
        pid = os.fork()
        if pid == 0:
            _run_code(req, out_fd, channel)
        os.close(out_fd)
        for fd in channel or ():
            os.close(fd)
        while True:
            done, status = os.wait()
            if done == pid:
                code = os.waitstatus_to_exitcode(status)
                code = 128 - code if code < 0 else code
                break
    except BaseException as exc:
        with contextlib.suppress(BaseException):
            os.write(out_fd, f"taskmint fork server: init failed: {exc!r}\n".encode())
    os._exit(code)


def _spawn(req: dict[str, Any], out_fd: int) -> None:
    """The run's first process, in the server's PID namespace. Never returns."""
    code = 125
    try:
        _prctl(PR_SET_PDEATHSIG, signal.SIGKILL)
        channel = _enter_namespaces(req)
        pid = os.fork()
        if pid == 0:
            _init(req, out_fd, channel)
        os.close(out_fd)
        for fd in channel or ():
            os.close(fd)
        _, status = os.waitpid(pid, 0)
        code = os.waitstatus_to_exitcode(status)
        code = 128 - code if code < 0 else code
    except BaseException as exc:
        with contextlib.suppress(BaseException):
            os.write(out_fd, f"taskmint fork server: namespace setup failed: {exc!r}\n".encode())
    os._exit(code)


def _serve_one(req: dict[str, Any]) -> dict[str, Any]:
    limits = req["limits"]
    assert isinstance(limits, dict)
    cap = int(limits["output_bytes"])
    out_r, out_w = os.pipe()
    start = time.monotonic()
    pid = os.fork()
    if pid == 0:
        os.close(out_r)
        _spawn(req, out_w)
    os.close(out_w)
    head, tail, truncated = bytearray(), bytearray(), False
    half = max(cap // 2, 1)
    deadline = start + float(limits["wall_seconds"])
    status: int | None = None
    timed_out = False
    eof = False
    while True:
        if status is None:
            done, st = os.waitpid(pid, os.WNOHANG)
            if done:
                status = st
        if status is not None and (eof or time.monotonic() > deadline + 2):
            break
        if status is None and time.monotonic() > deadline:
            timed_out = True
            os.kill(pid, signal.SIGKILL)  # its init and everything inside die with it
            _, status = os.waitpid(pid, 0)
            deadline = time.monotonic()
        if eof:
            time.sleep(0.002)
            continue
        ready, _, _ = select.select([out_r], [], [], 0.05)
        if ready:
            chunk = os.read(out_r, 65536)
            if not chunk:
                eof = True
                continue
            if len(head) < half:
                take = half - len(head)
                head += chunk[:take]
                chunk = chunk[take:]
            tail += chunk
            if len(tail) > half:
                truncated = True
                del tail[: len(tail) - half]
    os.close(out_r)
    code = os.waitstatus_to_exitcode(status)
    code = 128 - code if code < 0 else code
    output = bytes(head)
    if truncated:
        output += b"\n[... output truncated by taskmint ...]\n"
    output += bytes(tail)
    return {
        "run": req["run"],
        "exit_code": None if timed_out else code,
        "timed_out": timed_out,
        "wall_time": time.monotonic() - start,
        "output": base64.b64encode(output).decode(),
        "truncated": truncated,
    }


_PRELOADED: set[str] = set()
_NOT_PRELOADED = {"pip", "setuptools", "pkg_resources", "wheel", "distutils", "pytest", "_pytest"}


def _preload(mode: object, coverage: bool = True) -> None:
    """Import what every run would import anyway: pytest with its builtin plugins, coverage
    (unless not `coverage`: a standby whose run will not measure coverage), taskmint's plugin
    and (mode "auto") the environment's installed top-level packages. A package that fails to
    import is skipped; one that leaves threads running makes the server refuse to start
    (forking a threaded process is unsafe), and the host runs cold instead. pytest is imported
    here, not at the top: importing it is the preload (a standby's supervisor never does)."""
    import pytest  # noqa: F401
    from _pytest.config import default_plugins

    for plugin in default_plugins:
        with contextlib.suppress(Exception):
            importlib.import_module(f"_pytest.{plugin}")
    here = os.path.dirname(os.path.abspath(__file__))
    sys.path.insert(0, here)
    try:
        importlib.import_module("taskmint_pytest_report")
    finally:
        sys.path.remove(here)
    names = ["coverage"] if coverage else []
    if mode == "auto":
        names += sorted(
            n
            for n in metadata.packages_distributions()
            if not n.startswith("_")
            and n not in _NOT_PRELOADED
            and n.isidentifier()
            and (coverage or n != "coverage")
        )
    for name in names:
        with contextlib.suppress(Exception):
            importlib.import_module(name)
            _PRELOADED.add(name)
    if threading.active_count() > 1:
        raise RuntimeError("a preloaded package started threads; forking would be unsafe")


def _read_exactly(fd: int, size: int) -> bytes:
    data = bytearray()
    while len(data) < size:
        chunk = os.read(fd, size - len(data))
        if not chunk:
            raise EOFError("the host closed the input early")
        data += chunk
    return bytes(data)


def serve_once() -> int:
    """Standby mode, the run's side (see `standby`): write `READY` to stdout, then become ONE
    run. Input on stdin: a 10-digit length, a JSON request {"argv", "env", "cwd", "limits"},
    then the tar of the run's inputs, unpacked by `tar` into / before any run code starts.
    Output: the run's own stdout and stderr, both on stderr (the exec's stdout stays the
    supervisor's). Never returns."""
    code = 125
    try:
        os.write(1, READY)  # the host reads this before it hands the stream to the run
        os.dup2(2, 1)  # from here on this process holds no descriptor of the exec's stdout
        req = json.loads(_read_exactly(0, int(_read_exactly(0, 10))))
        if subprocess.run(["tar", "-x", "-f", "-", "-C", "/"], stdin=0).returncode != 0:
            os._exit(125)
        null = os.open("/dev/null", os.O_RDONLY)
        os.dup2(null, 0)
        os.close(null)
        sys.stdin = open(0, closefd=False)  # noqa: SIM115
        sys.stdout = open(1, "w", closefd=False)  # noqa: SIM115
        limits = dict(req["limits"])
        # The CPU time of the preload is not the run's: add it to the run's budget.
        used = resource.getrusage(resource.RUSAGE_SELF)
        limits["cpu_seconds"] = int(limits["cpu_seconds"]) + int(used.ru_utime + used.ru_stime) + 1
        # The supervisor is a process of this uid too: the run may still start `processes`.
        limits["processes"] = int(limits["processes"]) + 1
        _set_limits(limits)
        code = _become_run(req, {})
    except BaseException as exc:
        with contextlib.suppress(BaseException):
            os.write(2, f"taskmint standby: run setup failed: {exc!r}\n".encode())
    os._exit(code)


def _others_alive(uid: int) -> bool:
    """Whether a process of `uid` other than this one exists in this PID namespace (zombies
    too; by its real uid, which no process of it can change, so also the non-dumpable)."""
    me = str(os.getpid())
    for name in os.listdir("/proc"):
        if not name.isdigit() or name == me:
            continue
        try:
            with open(f"/proc/{name}/status", "rb") as fh:
                for line in fh:
                    if line.startswith(b"Uid:"):
                        if int(line.split()[1]) == uid:
                            return True
                        break
        except OSError:  # it ended meanwhile
            continue
    return False


def _kill_all_others(timeout: float) -> bool:
    """SIGKILL every other process of this uid until none is left (False: not in time)."""
    uid = os.getuid()
    deadline = time.monotonic() + timeout
    while True:
        with contextlib.suppress(ProcessLookupError):
            os.kill(-1, signal.SIGKILL)  # all we may signal: only our uid; never ourselves
        if not _others_alive(uid):
            return True
        if time.monotonic() > deadline:
            return False
        time.sleep(0.001)


def _send_report(fd: int) -> None:
    """The report folder as a tar stream (folders and regular files only) on `fd`."""

    def keep(info: tarfile.TarInfo) -> tarfile.TarInfo | None:
        return info if info.isdir() or info.isreg() else None

    with (
        os.fdopen(os.dup(fd), "wb") as out,
        tarfile.open(fileobj=out, mode="w|", format=tarfile.PAX_FORMAT) as tar,
    ):
        tar.add(REPORT_DIR, arcname=".", filter=keep)


def standby(preload: object, coverage: bool = True) -> int:
    """Standby mode (the docker backend's warm containers), started as the run's own
    unprivileged uid inside the run's container. This process is the supervisor: it makes
    itself non-dumpable (so no process of the run can ptrace it or open its descriptors
    through /proc) and forks the interpreter that preloads, says `READY` and becomes ONE run
    (`serve_once`). When that process ends, the supervisor kills every other process of the
    uid, waits until none is left, and writes on stdout the report folder as a tar, then
    `COLLECTED` and the run's exit code: the host reads the outcome of the run from the one
    stream, with no other exec. The container is the isolation: nothing here is privileged,
    and the interpreter serves one run, never another."""
    _prctl(PR_SET_DUMPABLE, 0)
    pid = os.fork()
    if pid == 0:
        try:
            _prctl(PR_SET_DUMPABLE, 1)  # the run is an ordinary process
            # No fork follows, so threads a preloaded package started do no harm.
            with contextlib.suppress(RuntimeError):
                _preload(preload, coverage)
        except BaseException as exc:
            with contextlib.suppress(BaseException):
                os.write(2, f"taskmint standby: preload failed: {exc!r}\n".encode())
            os._exit(125)
        serve_once()
    null = os.open("/dev/null", os.O_RDONLY)
    os.dup2(null, 0)
    os.close(null)
    _, status = os.waitpid(pid, 0)
    code = os.waitstatus_to_exitcode(status)
    code = 128 - code if code < 0 else code
    if not _kill_all_others(timeout=30):
        os.write(2, b"taskmint standby: processes of the run survived\n")
        return 3
    _send_report(1)
    os.write(1, COLLECTED + b"%d\n" % code)
    return 0


def main() -> int:
    """Preload, say ready, then serve requests until the host closes stdin (or, with
    "once", supervise a single run: see `standby`)."""
    options = json.loads(sys.argv[1])
    if options.get("once"):
        return standby(options.get("preload"), bool(options.get("coverage", True)))
    _preload(options.get("preload"))
    # Everything preloaded lives as long as the server: keep it out of the collector's way, so
    # a run's collections (pytest forces some) walk only the run's own objects, and so its
    # pages are not dirtied (copied) by the collector in every forked run.
    gc.collect()
    gc.freeze()
    signal.signal(signal.SIGCHLD, signal.SIG_DFL)
    out = sys.stdout.buffer
    out.write(json.dumps({"ready": True, "pid": os.getpid()}).encode() + b"\n")
    out.flush()
    for line in sys.stdin.buffer:
        req = json.loads(line)
        try:
            resp = _serve_one(req)
        except Exception as exc:
            resp = {"run": req.get("run"), "error": repr(exc)}
        out.write(json.dumps(resp).encode() + b"\n")
        out.flush()
    return 0


if __name__ == "__main__":
    sys.exit(main())
