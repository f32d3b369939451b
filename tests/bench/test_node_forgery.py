"""Benchmark: the forged-stream attacks on every JavaScript task of a version, through `verify`,
the reward service and Harbor trials, and what grading a JavaScript task costs.

The attacks are tests/verify/node_forgery.py's: a source module that re-runs its test files
with every test body emptied and hands the passing stream on ("rerun"), the same with
stand-ins for the removed exports ("stubs"), and a stream recorded from the gold tree outside
the run ("recorded": node's own child stream and the harness's records under another key).
Every attack must get 0 and every gold patch 1; the table prints the counts per channel.

Cost: the median `verify` time of the gold patch per task, next to a plain `node --test` of the
same files on the host (no sandbox, no harness), and the ratio.

The version: TASKMINT_BENCH_DATASET (a dataset root or version folder, e.g. the output of
`make demo`), else the mdrender seed is minted here first (about 7 minutes).
Run: `.venv/bin/python -m pytest -q -s tests/bench/test_node_forgery.py`.
"""

from __future__ import annotations

import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from collections import Counter
from pathlib import Path

import pytest

from taskmint import RewardClient
from taskmint.client import RewardRequestError
from taskmint.consumer import load_tasks, verify, workspace
from taskmint.harbor import export_harbor, run_trial
from taskmint.patches import apply_patch
from taskmint.records import Task
from tests.service.helpers import running
from tests.verify.node_forgery import apply_to_text, forgery_patch, removed_exports
from tests.verify.test_node_exploits import recording

ROOT = Path(__file__).resolve().parents[2]
NODE = shutil.which("node") or "node"


@pytest.fixture(scope="module")
def dataset(tmp_path_factory: pytest.TempPathFactory) -> Path:
    given = os.environ.get("TASKMINT_BENCH_DATASET")
    if given:
        return Path(given)
    out = tmp_path_factory.mktemp("mdrender")
    seeds = out / "seeds.toml"
    seeds.write_text(f'[[seed]]\npath = "{ROOT / "seed_apps" / "mdrender"}"\n')
    subprocess.run(
        [
            sys.executable,
            "-m",
            "taskmint.cli",
            "--output",
            str(out),
            "refresh",
            "--seeds",
            str(seeds),
        ],
        check=True,
        timeout=3600,
    )
    return out / "datasets" / "taskmint"


def _attacks(task: Task, cache_dir: Path) -> dict[str, str]:
    with tempfile.TemporaryDirectory() as tmp:
        ws = Path(workspace(task, Path(tmp) / "ws", cache_dir=cache_dir))
        source = (ws / task.files[0]).read_text(encoding="utf-8")
    args = (source, task.files[0], task.test_paths)
    return {
        "rerun": forgery_patch(*args),
        "stubs": forgery_patch(*args, exports=removed_exports(task.units)),
        "recorded": forgery_patch(*args, recorded=recording(task, cache_dir)),
    }


def _plain_node(task: Task, cache_dir: Path) -> float:
    """Seconds of a plain `node --test` of the expected ids' files on the gold tree."""
    files = sorted({t.split("::", 1)[0] for t in (*task.FAIL_TO_PASS, *task.PASS_TO_PASS)})
    with tempfile.TemporaryDirectory() as tmp:
        ws = Path(workspace(task, Path(tmp) / "ws", cache_dir=cache_dir))
        apply_patch(ws, task.patch)
        start = time.monotonic()
        subprocess.run(
            [NODE, "--test", *files], cwd=ws, capture_output=True, check=True, timeout=300
        )
        return time.monotonic() - start


@pytest.mark.timeout(4 * 3600)
def test_forged_streams_on_every_javascript_task(dataset: Path, tmp_path: Path) -> None:
    cache_dir = tmp_path / "cache"
    tasks = [t for t in load_tasks(dataset, streaming=False) if t.language == "javascript"]
    assert tasks, f"no JavaScript task in {dataset}"
    attacks = {t.instance_id: _attacks(t, cache_dir) for t in tasks}
    results: Counter[tuple[str, str, float]] = Counter()
    gold_times, plain_times = [], []

    for task in tasks:  # the library
        start = time.monotonic()
        results["verify", "gold", verify(task, task.patch, cache_dir=cache_dir).reward] += 1
        gold_times.append(time.monotonic() - start)
        plain_times.append(_plain_node(task, cache_dir))
        for name, patch in attacks[task.instance_id].items():
            results["verify", name, verify(task, patch, cache_dir=cache_dir).reward] += 1

    with running(dataset, tmp_path, tmp_path / "service.log", "--concurrency", "2") as server:
        client = RewardClient(server.url)
        for task in tasks:
            results["service", "gold", client.verify(task.instance_id, task.patch).reward] += 1
            for name, patch in attacks[task.instance_id].items():
                try:
                    reward = client.verify(task.instance_id, patch).reward
                except RewardRequestError:  # refused (a patch over the size limit): no reward
                    reward = 0.0
                results["service", name, reward] += 1

    folders = {p.name: p for p in export_harbor(dataset, tmp_path / "harbor", cache_dir=cache_dir)}
    for task in tasks:
        folder = folders[task.instance_id]
        results["harbor", "gold", run_trial(folder, "oracle").reward] += 1
        with tempfile.TemporaryDirectory() as tmp:
            ws = Path(workspace(task, Path(tmp) / "ws", cache_dir=cache_dir))
            source = (ws / task.files[0]).read_text(encoding="utf-8")
        for name, patch in attacks[task.instance_id].items():
            text = apply_to_text(source, patch)
            agent = f"cat > /app/{task.files[0]} <<'EOF_ATTACK'\n{text}EOF_ATTACK\n"
            results["harbor", name, run_trial(folder, agent).reward] += 1

    print(f"\n{len(tasks)} JavaScript tasks of {dataset}")
    print(f"{'channel':8} {'patch':9} {'reward 1':>8} {'reward 0':>8}")
    for channel in ("verify", "service", "harbor"):
        for name in ("gold", "rerun", "stubs", "recorded"):
            ones, zeros = results[channel, name, 1.0], results[channel, name, 0.0]
            print(f"{channel:8} {name:9} {ones:8} {zeros:8}")
    gold, plain = statistics.median(gold_times), statistics.median(plain_times)
    print(
        f"verify(gold) median {gold:.2f} s; plain `node --test` of the same files "
        f"{plain:.2f} s; ratio {gold / plain:.2f}"
    )
    for channel in ("verify", "service", "harbor"):
        assert results[channel, "gold", 1.0] == len(tasks), results
        for name in ("rerun", "stubs", "recorded"):
            assert results[channel, name, 0.0] == len(tasks), results
