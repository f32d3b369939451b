"""The reaper (`taskmint/reaper.py`): when its owner's pipe closes, it kills the process groups
and removes the folders it was told of, and leaves alone what is not what it was told."""

from __future__ import annotations

import subprocess
import sys
import time
from pathlib import Path

from taskmint import reaper
from taskmint.lifecycle import process_start_time

SCRIPT = Path(reaper.__file__)


def _alive(proc: subprocess.Popen[bytes]) -> bool:
    return proc.poll() is None


def test_the_reaper_cleans_up_when_its_owner_is_gone(tmp_path: Path) -> None:
    folder = tmp_path / "scratch"
    (folder / "deep").mkdir(parents=True)
    (folder / "deep" / "f").write_text("x")
    kept = tmp_path / "kept"
    kept.mkdir()
    group = subprocess.Popen(["sleep", "60"], start_new_session=True)
    other = subprocess.Popen(["sleep", "60"], start_new_session=True)
    lines = [
        f"group\t{group.pid}\t{process_start_time(group.pid)}",
        f"group\t{other.pid}\t0",  # not the process that started then: a reused pid
        f"path\t{folder}",
        f"path\t{tmp_path / 'never-made'}",
    ]
    try:
        subprocess.run(
            [sys.executable, "-I", str(SCRIPT), "1"],
            input="\n".join(lines).encode() + b"\n",  # then end of input: the owner is gone
            timeout=60,
            check=True,
        )
        deadline = time.monotonic() + 10
        while _alive(group) and time.monotonic() < deadline:
            time.sleep(0.05)
        assert not _alive(group)
        assert _alive(other)
        assert not folder.exists() and kept.is_dir()
    finally:
        group.kill()
        other.kill()
        group.wait()
        other.wait()


def test_a_long_lived_owners_reaper_forgets_what_is_gone(tmp_path: Path) -> None:
    gone, live = tmp_path / "gone", tmp_path / "live"
    live.mkdir()
    paths = {str(gone): None, str(live): None}
    groups = {999_999_999: "1"}  # no such process
    reaper._prune(groups, paths)
    assert paths == {str(live): None} and groups == {}
