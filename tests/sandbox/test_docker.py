"""The docker sandbox backend, tried for real against the machine's Docker Engine.

The base image is built once with debootstrap (cached by its tag; `.ci/run` builds it first
through scripts/build-base-image.sh), the tiny seed's environment image once per session.
"""

from __future__ import annotations

import contextlib
import dataclasses
import os
import signal
import socket
import sys
import threading
import time
from collections.abc import Iterator
from pathlib import Path

import pytest

from taskmint.config import Limits
from taskmint.errors import SandboxUnavailableError
from taskmint.languages import adapter_for
from taskmint.languages.python import PytestAdapter
from taskmint.records import Environment, SeedApp
from taskmint.runners import run_tests
from taskmint.sandbox import LocalSandbox, RunResult, RunSpec
from taskmint.sandbox.docker import DockerOptions, DockerSandbox, sweep_environment_volumes
from taskmint.sandbox.docker.base_image import build_base_image, debian_source
from taskmint.sandbox.docker.client import docker_client, image_exists
from taskmint.sandbox.docker.images import build_environment_image
from taskmint.sandbox.docker.mounts import VOLUME_LABEL as _VOLUME_LABEL

REPO = Path(__file__).resolve().parents[2]


@pytest.fixture(scope="module")
def base_image() -> str:
    return build_base_image(docker_client())


@pytest.fixture(scope="module")
def cold(base_image: str) -> Iterator[DockerSandbox]:
    with DockerSandbox(options=DockerOptions(base_image=base_image)) as sb:
        yield sb


@pytest.fixture(scope="module")
def warm(base_image: str) -> Iterator[DockerSandbox]:
    with DockerSandbox(options=DockerOptions(base_image=base_image, warm=1)) as sb:
        yield sb


def containers(sb: DockerSandbox) -> list[str]:
    found = sb.api.containers(all=True, filters={"label": f"taskmint.sandbox={sb._session}"})
    return [c["Id"] for c in found]


def py_spec(env: Environment, ws: Path, code: str, report: Path | None = None, **limits: float):
    ws.mkdir(parents=True, exist_ok=True)
    return RunSpec(
        argv=("/opt/venv/bin/python", "-I", "-c", code),
        workspace=str(ws),
        report_dir=str(report) if report else None,
        mounts=tuple(PytestAdapter().mounts(env)),
        env=(("PATH", "/usr/bin:/bin"), ("HOME", "/tmp")),
        limits=Limits(**{"wall_seconds": 30, **limits}),  # type: ignore[arg-type]
    )


def run_py(sb: DockerSandbox, env: Environment, tmp_path: Path, code: str, **limits: float):
    return sb.run(py_spec(env, tmp_path / "ws", code, **limits))


def test_network_is_unreachable(cold, tiny_env, tmp_path):
    server = socket.socket()
    server.bind(("127.0.0.1", 0))
    server.listen(1)
    port = server.getsockname()[1]
    code = f"""
import socket
for host, port in (("127.0.0.1", {port}), ("1.1.1.1", 53), ("172.17.0.1", 2375)):
    try:
        socket.create_connection((host, port), timeout=3)
        print("CONNECTED", host)
    except OSError as exc:
        print("REFUSED", host, type(exc).__name__)
"""
    result = run_py(cold, tiny_env, tmp_path, code)
    server.close()
    assert "CONNECTED" not in result.output
    assert result.output.count("REFUSED") == 3, result.output


def test_only_workspace_and_tmp_are_writable_and_privileges_are_gone(cold, tiny_env, tmp_path):
    (tmp_path / "ws").mkdir()
    (tmp_path / "ws" / "given.txt").write_text("from the host")
    code = f"""
import os
print("uid", os.getuid(), os.getgid())
print("given", open("/workspace/given.txt").read())
open("/workspace/ok.txt", "w").write("x")
open("/tmp/ok.txt", "w").write("x")
for path in ("/usr/evil", "/opt/venv/evil", "/evil", "/etc/evil", "/opt/taskmint/evil"):
    try:
        open(path, "w")
        print("WROTE", path)
    except OSError:
        print("DENIED", path)
for path in ({str(REPO)!r}, {str(REPO / "seed_apps")!r}, {sys.prefix!r}, "/root/.cache",
             "/var/run/docker.sock"):
    print("VISIBLE" if os.path.exists(path) else "HIDDEN", path)
status = dict(l.split(":", 1) for l in open("/proc/self/status") if ":" in l)
caps = [status[k].strip() for k in ("CapEff", "CapBnd", "NoNewPrivs")]
print("caps", *caps)
print("site", os.listdir({tiny_env.interpreter_prefix + "/lib/python3.11/site-packages"!r}))
"""
    result = run_py(cold, tiny_env, tmp_path, code)
    out = result.output
    assert "given from the host" in out, out
    assert "WROTE" not in out
    assert out.count("DENIED") == 5, out
    assert "VISIBLE" not in out, out
    assert "caps 0000000000000000 0000000000000000 1" in out, out
    assert "site []" in out, out
    uid, gid = (int(x) for x in out.split("uid", 1)[1].split()[:2])
    assert uid >= 300_000 and gid == uid
    # the workspace was copied in: the host folder is only read
    assert not (tmp_path / "ws" / "ok.txt").exists()


def test_wall_clock_timeout_kills_the_whole_tree(cold, tiny_env, tmp_path):
    code = """
import subprocess, time
subprocess.Popen(["/bin/sh", "-c", "trap '' TERM; sleep 300"])
time.sleep(300)
"""
    start = time.monotonic()
    result = run_py(cold, tiny_env, tmp_path, code, wall_seconds=2)
    assert result.timed_out
    assert result.exit_code is None
    assert time.monotonic() - start < 15
    assert containers(cold) == []  # killed and removed


def test_output_is_capped(cold, tiny_env, tmp_path):
    code = "import sys\nfor _ in range(200000): sys.stdout.write('x' * 100 + '\\n')"
    result = run_py(cold, tiny_env, tmp_path, code, output_bytes=10_000)
    assert result.output_truncated
    assert len(result.output) < 12_000


def test_memory_limit(cold, tiny_env, tmp_path):
    code = "x = bytearray(3 * 1024**3)\nprint('ALLOCATED')"
    result = run_py(cold, tiny_env, tmp_path, code, memory_bytes=1024**3)
    assert "ALLOCATED" not in result.output
    assert "MemoryError" in result.output


def test_process_limit_stops_a_fork_bomb(cold, tiny_env, tmp_path):
    code = """
import os
children = 0
try:
    for _ in range(10000):
        if os.fork() == 0:
            import time; time.sleep(30); os._exit(0)
        children += 1
except OSError as exc:
    print("LIMITED after", children, type(exc).__name__)
"""
    start = time.monotonic()
    result = run_py(cold, tiny_env, tmp_path, code, processes=64, wall_seconds=20)
    assert "LIMITED after" in result.output, result.output
    assert int(result.output.split("LIMITED after")[1].split()[0]) < 64
    assert time.monotonic() - start < 25


def test_file_size_limit(cold, tiny_env, tmp_path):
    code = """
try:
    with open('/workspace/big', 'wb') as fh:
        fh.write(b'x' * (8 * 1024 * 1024))
    print('WROTE')
except OSError as exc:
    print('LIMITED', exc.errno)
"""
    result = run_py(cold, tiny_env, tmp_path, code, file_bytes=1024 * 1024)
    assert "WROTE" not in result.output
    assert "LIMITED 27" in result.output, result.output  # EFBIG


def test_report_comes_out_and_late_writers_are_killed_first(cold, tiny_env, tmp_path):
    report = tmp_path / "report"
    report.mkdir()
    (report / "select.json").write_text('["a"]')
    code = """
import subprocess
print(open("/run/taskmint/select.json").read())
open("/run/taskmint/report.jsonl", "w").write("real\\n")
# a grandchild that would forge the report after the command has returned
subprocess.Popen(["/bin/sh", "-c", "sleep 1; echo forged > /run/taskmint/report.jsonl"])
"""
    result = cold.run(py_spec(tiny_env, tmp_path / "ws", code, report))
    assert '["a"]' in result.output
    time.sleep(1.5)
    assert (report / "report.jsonl").read_text() == "real\n"
    assert containers(cold) == []


def test_warm_container_is_reused_and_reset(warm, tiny_env, tmp_path):
    dirty = """
import os, subprocess
for path in ("/workspace/left", "/tmp/left", "/dev/shm/left"):
    open(path, "w").write("x")
os.chmod("/workspace", 0)
subprocess.Popen(["/bin/sleep", "300"], start_new_session=True)
print("dirty")
"""
    first = run_py(warm, tiny_env, tmp_path / "one", dirty)
    assert "dirty" in first.output, first.output
    [cid] = containers(warm)
    probe = """
import os
print("left", [p for p in ("/workspace/left", "/tmp/left", "/dev/shm/left") if os.path.exists(p)])
procs = [p for p in os.listdir("/proc") if p.isdigit()]
print("procs", [p for p in procs if open(f"/proc/{p}/cmdline").read() == "/bin/sleep\\x00300\\x00"])
"""
    second = run_py(warm, tiny_env, tmp_path / "two", probe)
    assert "left []" in second.output, second.output
    assert "procs []" in second.output, second.output
    assert containers(warm) == [cid]


def test_warm_standby_runs_with_the_isolation_of_a_cold_run(warm, tiny_env, tmp_path):
    """`python -I -B` runs on a warm container go to an interpreter preloaded after the reset
    (pytest already imported): same uid, no capabilities, the run's rlimits, nothing left."""

    def spec(name: str, code: str) -> RunSpec:
        base = py_spec(tiny_env, tmp_path / name, code, open_files=77)
        return dataclasses.replace(base, argv=(base.argv[0], "-I", "-B", "-c", code))

    dirty = """
import os, subprocess
open("/workspace/left", "w").write("x"); open("/tmp/left", "w").write("x")
subprocess.Popen(["/bin/sleep", "300"], start_new_session=True)
print("dirty", os.getuid())
"""
    probe = """
import os, resource, sys
status = dict(l.split(":", 1) for l in open("/proc/self/status"))
print("preloaded", "_pytest.main" in sys.modules, "uid", os.getuid())
print("caps", status["CapEff"].strip(), status["CapBnd"].strip(), status["NoNewPrivs"].strip())
print("nofile", resource.getrlimit(resource.RLIMIT_NOFILE))
print("left", [p for p in ("/workspace/left", "/tmp/left") if os.path.exists(p)])
print("procs", [p for p in os.listdir("/proc") if p.isdigit()
                and open(f"/proc/{p}/cmdline").read() == "/bin/sleep\\x00300\\x00"])
print("ws", sorted(os.listdir("/workspace")))
"""
    first = warm.run(spec("one", dirty))
    uid = first.output.split("dirty")[1].split()[0]
    assert int(uid) > 0, first.output
    (tmp_path / "two").mkdir()
    (tmp_path / "two" / "mine").write_text("2")
    second = warm.run(spec("two", probe))
    out = second.output
    assert second.exit_code == 0, out
    assert f"preloaded True uid {uid}" in out, out  # served by the standby
    assert "caps 0000000000000000 0000000000000000 1" in out, out
    assert "nofile (77, 77)" in out, out
    assert "left []" in out and "procs []" in out and "ws ['mine']" in out, out
    stuck = dataclasses.replace(
        spec("three", "while True: pass"), limits=Limits(wall_seconds=3, open_files=77)
    )
    start = time.monotonic()
    assert warm.run(stuck).timed_out
    assert time.monotonic() - start < 15
    assert uid not in str(warm.run(spec("four", "import os; print(os.getuid())")).output)


def test_standby_supervisor_is_out_of_the_runs_reach(warm, tiny_env, tmp_path):
    """A standby run's supervisor (it kills what is left of the run, then sends the report and
    the exit code) has the run's uid but is not dumpable: the run cannot open its descriptors
    or its memory through /proc. A run that kills it loses its report and the container."""

    def spec(name: str, code: str, report: Path | None = None) -> RunSpec:
        base = py_spec(tiny_env, tmp_path / name, code, report)
        return dataclasses.replace(base, argv=(base.argv[0], "-I", "-B", "-c", code))

    warm.run(spec("zero", "pass"))  # the next run of this kind goes to a standby
    probe = """
import os, sys
print("preloaded", "_pytest.main" in sys.modules)
sup = os.getppid()
for path in (f"/proc/{sup}/fd/1", f"/proc/{sup}/mem"):
    try:
        open(path, "wb").close()
        print("OPENED", path)
    except OSError as exc:
        print("refused", exc.errno)
open("/run/taskmint/report.jsonl", "w").write("real\\n")
raise SystemExit(7)
"""
    report = tmp_path / "report"
    report.mkdir()
    result = warm.run(spec("one", probe, report))
    assert "preloaded True" in result.output, result.output
    assert "OPENED" not in result.output and result.output.count("refused 13") == 2, result.output
    assert result.exit_code == 7
    assert (report / "report.jsonl").read_text() == "real\n"
    [cid] = containers(warm)
    kill = """
import os, signal
os.kill(os.getppid(), signal.SIGKILL)
open("/run/taskmint/forged", "w").write("x")
"""
    report = tmp_path / "report2"
    report.mkdir()
    warm.run(spec("two", kill, report))
    assert list(report.iterdir()) == []
    assert cid not in containers(warm)  # never reused


def test_interrupt_removes_the_container(base_image, tiny_env, tmp_path):
    sb = DockerSandbox(options=DockerOptions(base_image=base_image, warm=1))
    # A real SIGINT, as Ctrl-C sends (it also wakes a blocking system call, which
    # `_thread.interrupt_main` does not), under Python's default handler.
    previous = signal.signal(signal.SIGINT, signal.default_int_handler)
    timer = threading.Timer(2.0, os.kill, (os.getpid(), signal.SIGINT))
    timer.start()
    result = None
    try:
        with pytest.raises(KeyboardInterrupt):
            result = run_py(sb, tiny_env, tmp_path, "import time; time.sleep(60)")
    except pytest.fail.Exception:
        pytest.fail(f"the run was not interrupted: it returned {result!r}")
    finally:
        timer.cancel()
        signal.signal(signal.SIGINT, previous)
    assert containers(sb) == []
    sb.run(py_spec(tiny_env, tmp_path / "again", "print(1)"))
    assert len(containers(sb)) == 1  # the warm one
    sb.close()
    assert containers(sb) == []


def test_interrupt_while_a_container_starts_leaks_nothing(base_image, tiny_env, tmp_path):
    """A first run on a busy daemon may spend seconds creating and starting its container: an
    interrupt then (as in the test above, when the exploit suite ran first) must not leave
    the container running until `close()`."""
    sb = DockerSandbox(options=DockerOptions(base_image=base_image, warm=1))
    real_start, real_create = sb.api.start, sb.api.create_container

    def start(*args, **kwargs):
        real_start(*args, **kwargs)
        raise KeyboardInterrupt

    def create(*args, **kwargs):
        real_create(*args, **kwargs)  # made by the daemon; the answer never arrives
        raise KeyboardInterrupt

    try:
        for name, fake in (("start", start), ("create_container", create)):
            setattr(sb.api, name, fake)
            with pytest.raises(KeyboardInterrupt):
                run_py(sb, tiny_env, tmp_path, "print(1)")
            setattr(sb.api, name, real_start if name == "start" else real_create)
            assert containers(sb) == [], name
    finally:
        sb.close()


def test_environment_comes_read_only_from_volumes_filled_from_the_image(cold, tiny_env, tmp_path):
    spec = py_spec(tiny_env, tmp_path / "ws", "")
    volumes = cold._key(spec).volumes
    assert {target for _, target in volumes} == {"/opt/venv", tiny_env.interpreter_prefix}
    code = """
import pytest
mounts = [line.split() for line in open("/proc/self/mountinfo")]
print("venv", [m[5].split(",")[0] for m in mounts if m[4] == "/opt/venv"])
try:
    open("/opt/venv/pyvenv.cfg", "a")
except OSError as exc:
    print("refused", exc.errno)
"""
    result = cold.run(dataclasses.replace(spec, argv=(*spec.argv[:2], "-c", code)))
    assert "venv ['ro']" in result.output and "refused" in result.output, result.output
    # A second sandbox finds the volumes complete and reuses them.
    with DockerSandbox(options=cold.options) as again:
        assert again._key(spec).volumes == volumes


def test_stale_environment_volumes_are_swept(cold, base_image):
    """Volumes of an image that no longer exists go; those of an existing image, or mounted by
    a container, stay."""
    api = cold.api
    label = _VOLUME_LABEL
    live = str(api.inspect_image(base_image)["Id"]).split(":")[-1][:16]
    stale, kept, busy = (
        "taskmint-env-test-stale",
        "taskmint-env-test-kept",
        "taskmint-env-test-busy",
    )
    api.create_volume(stale, labels={label: "0000feedface0000"})
    api.create_volume(kept, labels={label: live})
    api.create_volume(busy, labels={label: "0000feedface0001"})
    holder = api.create_container(
        base_image,
        command=["/bin/true"],
        host_config=api.create_host_config(binds={busy: {"bind": "/v", "mode": "ro"}}),
    )["Id"]
    try:
        removed = sweep_environment_volumes(api)
        names = {v["Name"] for v in api.volumes().get("Volumes") or []}
        assert stale in removed and stale not in names
        assert kept in names and kept not in removed
        assert busy in names and busy not in removed
    finally:
        api.remove_container(holder, force=True)
        for name in (stale, kept, busy):
            with contextlib.suppress(Exception):
                api.remove_volume(name, force=True)


def test_missing_daemon_is_a_clear_error():
    with pytest.raises(SandboxUnavailableError, match="cannot reach the Docker daemon"):
        DockerSandbox(options=DockerOptions(docker_host="unix:///nonexistent/docker.sock"))


def test_environment_image_is_labelled_and_reused(base_image, tiny_env):
    client = docker_client()
    tag = build_environment_image(tiny_env, client, base=base_image)
    labels = image_exists(client, tag)["Config"]["Labels"]  # type: ignore[index]
    assert tag == f"taskmint-env:{tiny_env.env_id}"
    assert labels["taskmint.env_id"] == tiny_env.env_id
    start = time.monotonic()
    assert build_environment_image(tiny_env, client, base=base_image) == tag
    assert time.monotonic() - start < 5


def test_debian_source_reads_deb822_and_one_line_sources(tmp_path):
    d = tmp_path / "apt"
    (d / "sources.list.d").mkdir(parents=True)
    (d / "sources.list.d" / "debian.sources").write_text(
        "Types: deb\nURIs: http://mirror.example/debian\nSuites: trixie trixie-updates\n"
        "Components: main\n\nTypes: deb\nURIs: http://mirror.example/security\n"
        "Suites: trixie-security\nComponents: main\n"
    )
    assert debian_source(d) == ("http://mirror.example/debian", "trixie")
    (d / "sources.list.d" / "debian.sources").unlink()
    (d / "sources.list").write_text("deb [arch=amd64] http://m.example/debian bookworm main\n")
    assert debian_source(d) == ("http://m.example/debian", "bookworm")


@pytest.mark.slow
def test_tiny_suite_gives_the_same_outcomes_as_local(
    cold, warm, tiny_seed: SeedApp, tiny_env: Environment, tmp_path
):
    from taskmint.files import copy_tree

    def outcomes(sandbox) -> dict[str, str]:
        ws = tmp_path / f"ws-{sandbox.name}-{len(os.listdir(tmp_path))}"
        copy_tree(Path(tiny_seed.root), ws, tiny_seed.files)
        report = run_tests(
            sandbox,
            ws,
            tiny_seed.manifest,
            tiny_env,
            adapter=adapter_for(tiny_seed.manifest),
            limits=Limits(wall_seconds=60),
        )
        assert report.complete and report.nonce_ok and not report.timed_out, report.output_tail
        return report.outcome_map()

    local = outcomes(LocalSandbox())
    assert local and set(local.values()) == {"passed"}
    assert outcomes(cold) == local
    assert outcomes(warm) == local
    assert outcomes(warm) == local  # the reset container gives the same again


def test_the_images_hold_no_wheel_of_the_interpreter_nor_pip_or_setuptools(
    cold, tiny_env, tmp_path
):
    """As the local backend shows it: ensurepip's wheels (pip's vendors a dozen projects) are
    not in the runtime image, and the venv has neither pip nor setuptools."""
    code = (
        "import ensurepip, importlib.util, os\n"
        "print('bundled', sorted(os.listdir(os.path.dirname(ensurepip.__file__) + '/_bundled')))\n"
        "print('tools', [n for n in ('pip', 'setuptools', 'pkg_resources')"
        " if importlib.util.find_spec(n)])\n"
    )
    result = run_py(cold, tiny_env, tmp_path, code)
    assert "bundled []" in result.output and "tools []" in result.output, result.output


@pytest.mark.slow
def test_a_seed_pytest_depends_on_runs_from_the_workspace_in_its_image(
    cold, cache_dir, tmp_path_factory, tmp_path
):
    """iniconfig (pytest requires it) as a seed: its image carries the metadata-only stand-in
    of the host venv, installs no copy, and the suite passes, pytest importing it from the
    workspace."""
    from taskmint.acquire import acquire
    from taskmint.files import copy_tree
    from taskmint.languages import build_environment
    from tests.envs.test_copies import _iniconfig_seed

    seed = acquire(_iniconfig_seed(tmp_path_factory.mktemp("ini")), cache_dir=cache_dir)
    env = build_environment(seed.manifest, cache_dir=cache_dir)
    code = (
        "import importlib.metadata as m, importlib.util as u\n"
        "print('version', m.version('iniconfig'), 'code', u.find_spec('iniconfig'))\n"
    )
    result = run_py(cold, env, tmp_path, code)
    assert "version 2." in result.output and "code None" in result.output, result.output
    ws = tmp_path / "suite"
    copy_tree(Path(seed.root), ws, seed.files)
    report = run_tests(
        cold,
        ws,
        seed.manifest,
        env,
        adapter=adapter_for(seed.manifest),
        limits=Limits(wall_seconds=60),
    )
    assert report.complete and report.nonce_ok, report.output_tail
    assert set(report.outcome_map().values()) == {"passed"}, report.outcome_map()
    assert len(report.outcome_map()) == 3


def test_result_type(cold, tiny_env, tmp_path):
    result = run_py(cold, tiny_env, tmp_path, "import sys; print('hi'); sys.exit(3)")
    assert isinstance(result, RunResult)
    assert result.exit_code == 3 and result.output.strip() == "hi" and not result.timed_out
