"""Plain pytest, as a project's own developer runs it: the reference that taskmint's original
runs must select exactly.

`plain_pytest` runs `python -m pytest` over a seed's test paths from a copy of its snapshot,
with the seed's environment's interpreter (its plugins autoloaded, as pytest does), the seed's
import paths on PYTHONPATH, the seed's own pytest plugins (`-p`, as an installed copy of the
project would register them), and nothing of taskmint.
It reads pytest's own terminal output (ids from `--collect-only -q`, counts from the summary
line); this is a check for tests and benchmarks, never a grading path.
"""

from __future__ import annotations

import os
import re
import shutil
import subprocess
import tempfile
import time
from dataclasses import dataclass, field
from pathlib import Path

from taskmint.acquire.snapshot import copy_tree
from taskmint.records import Environment, SeedApp

__all__ = ["PlainRun", "plain_pytest"]

_ID = re.compile(r"^[^\s:]+\.\w+::")  # a node id line of `--collect-only -q`
_COUNT = re.compile(r"(\d+) (passed|failed|skipped|deselected|errors?|xfailed|xpassed|warnings?)")


@dataclass(frozen=True)
class PlainRun:
    """What one plain pytest run printed: the collected ids (with `collect_only`), the summary
    line's counts, and its wall time."""

    ids: tuple[str, ...]
    counts: dict[str, int] = field(default_factory=dict)
    seconds: float = 0.0
    returncode: int = 0
    tail: str = ""


def plain_pytest(
    seed: SeedApp,
    env: Environment,
    *,
    collect_only: bool = True,
    extra: tuple[str, ...] = (),
    timeout: float = 1800,
) -> PlainRun:
    """`python -m pytest -p no:cacheprovider [--collect-only -q] TEST_PATHS` from a copy of
    `seed`'s snapshot, in its environment (run on the host, not in the sandbox)."""
    work = Path(tempfile.mkdtemp(prefix="taskmint-plain-"))
    try:
        copy_tree(Path(seed.root), work, seed.files)
        argv = [f"{env.prefix}/bin/python", "-m", "pytest", "-p", "no:cacheprovider"]
        argv += ["--collect-only", "-q"] if collect_only else ["-q", "-rN", "--tb=no"]
        # the project's own plugins, as an installed copy of it would have them registered
        for _, module in seed.manifest.plugins:
            argv += ["-p", module]
        argv += [*extra, *seed.manifest.test_paths]
        environ = {
            "PATH": f"{env.prefix}/bin:/usr/local/bin:/usr/bin:/bin",
            "HOME": str(work),
            "LANG": "C.UTF-8",
            "PYTHONPATH": os.pathsep.join(str(work / p) for p in seed.manifest.pythonpath),
            "PYTHONDONTWRITEBYTECODE": "1",
        }
        started = time.monotonic()
        proc = subprocess.run(
            argv, cwd=work, env=environ, capture_output=True, text=True, timeout=timeout
        )
        seconds = time.monotonic() - started
    finally:
        shutil.rmtree(work, ignore_errors=True)
    lines = proc.stdout.splitlines()
    ids = tuple(ln for ln in lines if _ID.match(ln))
    counts: dict[str, int] = {}
    summary = [ln for ln in lines if re.search(r"\bin [\d.]+s\b", ln)]
    for number, kind in _COUNT.findall(summary[-1] if summary else ""):
        counts[kind.rstrip("s") if kind.startswith(("error", "warning")) else kind] = int(number)
    return PlainRun(
        ids=ids if collect_only else (),
        counts=counts,
        seconds=round(seconds, 3),
        returncode=proc.returncode,
        tail=(proc.stdout + proc.stderr)[-3000:],
    )
