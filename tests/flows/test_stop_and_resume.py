"""A refresh stopped by a signal or killed outright loses no finished work and leaves nothing.

`taskmint refresh` runs as a user runs it: a subprocess of the console entry point, with
Prefect's temporary server (no API URL), on the tiny fixture seed. Each run is marked by an
environment variable its processes inherit and given its own scratch folder, so what a run
leaves behind can be found: processes (sandboxes, fork servers, Prefect's server), mounts,
memory cgroups, scratch and staging folders.

- SIGINT and SIGTERM: the run ends within 10 s with 130 / 143 and says how to resume; the
  rerun redoes no finished result.
- SIGKILL at 5 seeded random points, resuming after each: the published version has the
  content hash of an uninterrupted run's.
- Run directly (no Prefect settings): no ERROR line, no traceback.
"""

from __future__ import annotations

import json
import os
import random
import signal
import subprocess
import sys
import time
import uuid
from pathlib import Path

import pytest

from taskmint.cache import ResultStore
from taskmint.publish import latest_version
from taskmint.sandbox.base import CGROUP_MEMORY
from tests.conftest import SEEDS

ROOT = Path(__file__).resolve().parents[2]
TINY = SEEDS / "seeds.toml"
CONFIG = "original_runs = 3\nbroken_runs = 2\nmax_candidates_per_seed = 4\n"

pytestmark = pytest.mark.slow


class Run:
    """One output root and the `taskmint refresh` command that writes it."""

    def __init__(self, work_dir: Path, name: str, config: str = CONFIG) -> None:
        self.pids: list[int] = []  # the taskmint processes of this output root
        self.out = work_dir / name
        (self.out / "cache").mkdir(parents=True)
        # the session's environments (built once by `tiny_env`)
        (self.out / "cache" / "envs").symlink_to(work_dir / "cache" / "envs")
        self.scratch = work_dir / f"{name}-scratch"
        self.scratch.mkdir()
        # its own temporary folder: the workspace caps it mounts are told from other runs'
        self.tmp = work_dir / f"{name}-tmp"
        self.tmp.mkdir()
        (work_dir / f"{name}.toml").write_text(config)
        self.cmd = [
            sys.executable,
            "-m",
            "taskmint.cli",
            "--config",
            str(work_dir / f"{name}.toml"),
            "--output",
            str(self.out),
            "refresh",
            "--seeds",
            str(TINY),
            "--workers",
            "2",
        ]
        self.mark = uuid.uuid4().hex
        env = {k: v for k, v in os.environ.items() if k != "PREFECT_API_URL"}
        env.update(
            PREFECT_HOME=str(work_dir / "prefect-cli"),  # one database for these runs
            TASKMINT_SCRATCH=str(self.scratch),
            TMPDIR=str(self.tmp),
            TASKMINT_TEST_MARK=self.mark,
        )
        self.env = env
        self.store = ResultStore(self.out / "cache" / "results")

    def start(self) -> subprocess.Popen[bytes]:
        """Start the command; its output goes to files (`stderr` reads what it printed)."""
        self.err = self.out / f"run-{len(self.pids)}.err"
        with (self.out / f"run-{len(self.pids)}.out").open("w") as out, self.err.open("w") as err:
            proc = subprocess.Popen(self.cmd, cwd=ROOT, env=self.env, stdout=out, stderr=err)
        self.pids.append(proc.pid)
        return proc

    def stderr(self) -> str:
        return self.err.read_text(errors="replace")

    def run(self) -> tuple[int, str]:
        proc = self.start()
        proc.wait(timeout=900)
        return proc.returncode, self.stderr()

    def wait_for_results(self, proc: subprocess.Popen[bytes], n: int) -> None:
        deadline = time.monotonic() + 600
        while len(self.store.journal()) < n and time.monotonic() < deadline:
            assert proc.poll() is None, "the run ended before it could be stopped"
            time.sleep(0.1)

    def processes(self) -> list[str]:
        """Live processes of this run (they inherit its mark)."""
        found = []
        for entry in Path("/proc").iterdir():
            if not entry.name.isdigit():
                continue
            try:
                environ = (entry / "environ").read_bytes()
                cmdline = (entry / "cmdline").read_bytes().replace(b"\0", b" ").decode()
                state = (entry / "stat").read_text().rsplit(")", 1)[1].split()[0]
            except OSError:
                continue
            if f"TASKMINT_TEST_MARK={self.mark}".encode() in environ and state != "Z":
                found.append(f"{entry.name}: {cmdline[:200]}")
        return found

    def leftovers(self) -> dict[str, list[str]]:
        """What this run left behind, once its reaper had time to finish."""
        deadline = time.monotonic() + 30
        while self.processes() and time.monotonic() < deadline:
            time.sleep(0.2)
        mounts = [
            line.split()[1]
            for line in Path("/proc/mounts").read_text().splitlines()
            if line.split()[1].startswith((f"{self.scratch}/", f"{self.tmp}/"))
        ]
        staging = [
            str(p.relative_to(self.out))
            for p in self.out.rglob(".*")
            if p.name != ".installed" and "prefect" not in p.parts
        ]
        return {
            "processes": self.processes(),
            "mounts": mounts,
            "cgroups": sorted(c for c in _cgroups() if int(c.split("-")[0]) in self.pids),
            "scratch": sorted(p.name for p in self.scratch.iterdir()),
            "caps": sorted(p.name for p in self.tmp.glob("taskmint-cap-*")),
            "staging": staging,
        }


def _cgroups() -> set[str]:
    """taskmint's memory cgroups (each named for the process that made it)."""
    try:
        return {
            p.name
            for p in Path(CGROUP_MEMORY, "taskmint").iterdir()
            if p.is_dir() and p.name.split("-")[0].isdigit()
        }
    except OSError:
        return set()


NOTHING = {
    "processes": [],
    "mounts": [],
    "cgroups": [],
    "scratch": [],
    "caps": [],
    "staging": [],
}


def _content_hash(out: Path) -> str:
    version = latest_version(out / "datasets" / "taskmint")
    manifest = json.loads((version / "manifest.json").read_text())
    return str(manifest["content_sha256"])


@pytest.mark.parametrize(("sig", "code"), [(signal.SIGINT, 130), (signal.SIGTERM, 143)])
def test_a_signal_stops_the_refresh_at_once_and_the_rerun_resumes(work_dir, tiny_env, sig, code):
    run = Run(work_dir, f"signal-{sig.name}")
    proc = run.start()
    run.wait_for_results(proc, 2)
    sent = time.monotonic()
    proc.send_signal(sig)
    proc.wait(timeout=60)
    took = time.monotonic() - sent
    err = run.stderr()
    assert proc.returncode == code, err[-3000:]
    assert took < 10, f"{sig.name} took {took:.1f} s"
    assert f"stopped by {sig.name}" in err and "run the same command again to resume" in err
    assert "Traceback" not in err
    assert run.leftovers() == NOTHING
    before = run.store.journal()
    assert len(before) >= 2
    assert not (run.out / "datasets").exists()

    code_again, err_again = run.run()
    assert code_again == 0, err_again[-3000:]
    after = run.store.journal()
    assert after[: len(before)] == before
    assert len(after) == len(set(after)), "a finished result was computed again"
    assert (run.out / "datasets" / "taskmint").is_dir()
    assert run.leftovers() == NOTHING
    print(f"{sig.name}: stopped in {took:.2f} s with {len(before)} results kept")


def test_sigkill_at_five_random_points_then_resume_gives_the_uninterrupted_version(
    work_dir, tiny_env
):
    config = CONFIG.replace("max_candidates_per_seed = 4", "max_candidates_per_seed = 8")
    uninterrupted = Run(work_dir, "kill-reference", config)
    code, err = uninterrupted.run()
    assert code == 0, err[-3000:]
    assert uninterrupted.leftovers() == NOTHING
    total = len(uninterrupted.store.journal())

    killed = Run(work_dir, "killed-5", config)
    rng = random.Random(30)
    # Each point: once the run has stored a random number of results (0: while it starts,
    # Prefect's server, the baseline), plus a random fraction of a second.
    targets = sorted(rng.randrange(total) for _ in range(5))
    points = []
    for target in targets:
        proc = killed.start()
        while len(killed.store.journal()) < target and proc.poll() is None:
            time.sleep(0.02)
        time.sleep(rng.uniform(0.0, 1.0 if target else 20.0))
        if proc.poll() is None:
            proc.kill()  # SIGKILL to taskmint alone: its children must not outlive it
        proc.wait(timeout=60)
        points.append((target, proc.returncode, len(killed.store.journal())))
        assert killed.leftovers() == NOTHING, f"after the kill at {points[-1]}"
    code, err = killed.run()
    assert code == 0, err[-3000:]
    assert killed.leftovers() == NOTHING
    journal = killed.store.journal()
    assert len(journal) == len(set(journal)), "a finished result was computed again"
    assert _content_hash(killed.out) == _content_hash(uninterrupted.out)
    assert sum(code == -signal.SIGKILL for _, code, _ in points) >= 4, points
    print(f"{total} results; kills (target, exit code, results stored after): {points}")


def test_a_direct_run_prints_no_error_and_keeps_prefect_under_the_output(work_dir, tiny_env):
    # `taskmint refresh` as a user runs it, not through `make`: no Prefect variable set, a home
    # with no Prefect profile. Before: Prefect's analytics logged "ERROR ... Failed to send
    # telemetry" (no network), and its database was the user's shared ~/.prefect.
    run = Run(work_dir, "direct")
    home = work_dir / "direct-home"
    home.mkdir()
    run.env = {k: v for k, v in run.env.items() if not k.startswith(("PREFECT_", "DO_NOT_"))}
    run.env["HOME"] = str(home)
    code, err = run.run()
    printed = (run.out / "run-0.out").read_text(errors="replace") + err
    assert code == 0, err[-3000:]
    assert "Traceback" not in printed
    assert not [line for line in printed.splitlines() if "| ERROR" in line], printed[-3000:]
    # the pipeline's own lines reach the run's log (per seed, and per candidate)
    assert "[tiny] " in printed and " accepted: " in printed, printed[-3000:]
    assert "taskmint: [1/1] tiny: preparing" in printed  # the progress, off a terminal
    assert (run.out / "prefect").is_dir() and not (home / ".prefect").exists()
    assert run.leftovers() == NOTHING
