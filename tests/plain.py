"""Plain pytest, as a project's own developer runs it: the reference that taskmint's original
runs must select exactly.

`plain_pytest` runs `python -m pytest` over a seed's test paths from a copy of its snapshot,
with the seed's environment's interpreter (its plugins autoloaded, as pytest does), the seed's
import paths on PYTHONPATH, the seed's own pytest plugins (`-p`, as an installed copy of the
project would register them), and nothing of taskmint but a passive plugin that writes down
what pytest selected and each test's outcome (`_PLUGIN`). A check for tests and benchmarks,
never a grading path.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import tempfile
import time
from collections import Counter
from dataclasses import dataclass, field
from pathlib import Path

from taskmint.files import copy_tree
from taskmint.records import Environment, SeedApp

__all__ = ["PlainRun", "plain_pytest"]

# A passive pytest plugin the plain run loads (`-p`): it writes, as JSON, the ids pytest
# selected (after every collection hook), how many it deselected, and each test's outcome. The
# terminal output cannot be read for them: a project's `-q` in addopts turns `--collect-only -q`
# into per-file counts, `-v` adds rules, colours and subtests change the summary line.
_PLUGIN = """
import json, os

_out = {"ids": [], "deselected": 0, "outcomes": {}}


def pytest_deselected(items):
    _out["deselected"] += len(items)


def pytest_collection_finish(session):
    _out["ids"] = [item.nodeid for item in session.items]


def pytest_runtest_logreport(report):
    kind = "xfailed" if hasattr(report, "wasxfail") and report.skipped else report.outcome
    if report.when == "call" or kind != "passed":
        if _out["outcomes"].get(report.nodeid) in (None, "passed"):
            _out["outcomes"][report.nodeid] = kind


def pytest_sessionfinish(session):
    with open(os.environ["PLAIN_PYTEST_OUT"], "w") as fh:
        json.dump(_out, fh)
"""


@dataclass(frozen=True)
class PlainRun:
    """What one plain pytest run selected: the collected ids (duplicates kept, as pytest lists
    them), the counts by outcome (and `deselected`), and its wall time."""

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
    """`python -m pytest -p no:cacheprovider [--collect-only] TEST_PATHS` from a copy of
    `seed`'s snapshot, in its environment (run on the host, not in the sandbox)."""
    work = Path(tempfile.mkdtemp(prefix="taskmint-plain-"))
    try:
        tree, tools = work / "tree", work / "tools"
        copy_tree(Path(seed.root), tree, seed.files)
        tools.mkdir()
        (tools / "plain_pytest_ids.py").write_text(_PLUGIN)
        argv = [f"{env.prefix}/bin/python", "-m", "pytest", "-p", "no:cacheprovider"]
        argv += ["-p", "plain_pytest_ids"] + (["--collect-only"] if collect_only else [])
        # the project's own plugins, as an installed copy of it would have them registered
        for _, module in seed.manifest.plugins:
            argv += ["-p", module]
        argv += [*extra, *seed.manifest.test_paths]
        paths = [str(tree / p) for p in seed.manifest.pythonpath] + [str(tools)]
        environ = {
            "PATH": f"{env.prefix}/bin:/usr/local/bin:/usr/bin:/bin",
            "HOME": str(work),
            "LANG": "C.UTF-8",
            "PYTHONPATH": os.pathsep.join(paths),
            "PYTHONDONTWRITEBYTECODE": "1",
            "PLAIN_PYTEST_OUT": str(work / "out.json"),
        }
        started = time.monotonic()
        proc = subprocess.run(
            argv, cwd=tree, env=environ, capture_output=True, text=True, timeout=timeout
        )
        seconds = time.monotonic() - started
        try:
            out = json.loads((work / "out.json").read_text())
        except (OSError, ValueError):
            out = {"ids": [], "deselected": 0, "outcomes": {}}
    finally:
        shutil.rmtree(work, ignore_errors=True)
    counts = dict(Counter(out["outcomes"].values()))
    if not collect_only and len(set(out["ids"])) > len(out["outcomes"]):
        counts["not run"] = len(set(out["ids"])) - len(out["outcomes"])
    counts["deselected"] = int(out["deselected"])
    return PlainRun(
        ids=tuple(out["ids"]),
        counts=counts,
        seconds=round(seconds, 3),
        returncode=proc.returncode,
        tail=(proc.stdout + proc.stderr)[-3000:],
    )
