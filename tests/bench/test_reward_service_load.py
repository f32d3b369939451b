"""Benchmark: the reward service under load and through faults, on a published version.

The version is `TASKMINT_BENCH_DATASET` (default: the latest local demo version, `make demo`).
Every task gets three patches: its gold patch, an empty one and a wrong one (the gold patch
with its first added `return` returning nothing useful). Each pair's reward is first computed
with the library (`taskmint.verify`, local), and the raw test time is measured on a sample of
tasks (the graded tests run with the seed's own interpreter, no sandbox, no taskmint).

Then one `taskmint serve-reward` (the real CLI, default concurrency: the cores) takes:
- load: 8, 32 and 128 concurrent clients (`RewardClient`, which honours Retry-After), each
  sending random pairs for PHASE seconds (default 180);
- faults, 8 clients each: sandbox processes SIGKILLed at random; one environment flooded with
  slow gradings (its queue and graders starved); the service stopped with SIGTERM and with
  SIGKILL mid-load and started again on the same port and state folder.

Every answer is compared with the library's reward for its pair. Printed per phase: rewards
per minute, client latency p50/p95/p99 against the raw test time, 429s, lost (no answer),
duplicated (a request id graded twice), wrong (an answer unlike the library's), server RSS.
Run: `make bench` or `.venv/bin/python -m pytest -q -s tests/bench/test_reward_service_load.py`.
"""

from __future__ import annotations

import hashlib
import json
import os
import random
import re
import shutil
import signal
import statistics
import subprocess
import tempfile
import threading
import time
import uuid
from collections import Counter
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pytest

from taskmint import RewardClient
from taskmint.consumer import load_tasks, runtime_for, verify, workspace
from taskmint.patches import apply_patch
from taskmint.publish.loader import latest_version
from taskmint.records import Task
from tests.service.helpers import (
    ROOT,
    comparable,
    kill,
    sandbox_processes,
    slow_patch,
    start_server,
    stop,
    wait_ready,
    wrong_patch,
)

PHASE = float(os.environ.get("TASKMINT_BENCH_PHASE_SECONDS", "180"))
FAULT_PHASE = float(os.environ.get("TASKMINT_BENCH_FAULT_SECONDS", "60"))
CLIENTS = tuple(int(n) for n in os.environ.get("TASKMINT_BENCH_CLIENTS", "8,32,128").split(","))
RAW_SAMPLE = 40
LIMIT_TASKS = int(os.environ.get("TASKMINT_BENCH_TASKS", "0"))  # 0: every task
OUTPUT = ROOT / "output"


def _dataset() -> Path:
    given = os.environ.get("TASKMINT_BENCH_DATASET")
    if given:
        return Path(given)
    try:
        return latest_version(OUTPUT / "datasets" / "taskmint")
    except Exception as exc:
        pytest.fail(
            f"no demo version to load ({exc}): run `make demo`, or set "
            "TASKMINT_BENCH_DATASET to a dataset version"
        )


@dataclass
class Pair:
    task: Task
    kind: str
    patch: str
    expected: dict[str, Any] = field(default_factory=dict)
    library_seconds: float = 0.0


@dataclass
class Answer:
    pair: int
    request_id: str
    latency: float
    body: dict[str, Any] | None
    error: str = ""


def _pairs(tasks: list[Task], cache: Path, version: str) -> list[Pair]:
    """Each task's three pairs with the library's reward; the rewards are kept in
    output/bench/ per version and patch, so a rerun of the benchmark reuses them."""
    stored_path = OUTPUT / "bench" / f"reward-pairs-{version}.json"
    stored = json.loads(stored_path.read_text()) if stored_path.is_file() else {}
    pairs = []
    for task in tasks:
        pairs += [
            Pair(task, "gold", task.patch),
            Pair(task, "empty", ""),
            Pair(task, "wrong", wrong_patch(task, cache)),
        ]

    def key(pair: Pair) -> str:
        digest = hashlib.sha256(pair.patch.encode()).hexdigest()[:16]
        return f"{pair.task.instance_id}:{digest}"

    def library(pair: Pair) -> None:
        found = stored.get(key(pair))
        if found is not None:
            pair.expected = {
                **found["expected"],
                "rejected_paths": tuple(found["expected"]["rejected_paths"]),
                "findings": tuple(found["expected"]["findings"]),
                "outcomes": tuple(tuple(o) for o in found["expected"]["outcomes"]),
            }
            pair.library_seconds = found["seconds"]
            return
        reward = verify(pair.task, pair.patch, cache_dir=cache, reward_url="")
        pair.expected = comparable(reward)
        pair.library_seconds = reward.wall_time

    with ThreadPoolExecutor(2) as pool:
        list(pool.map(library, pairs))
    stored_path.parent.mkdir(parents=True, exist_ok=True)
    stored_path.write_text(
        json.dumps({key(p): {"expected": p.expected, "seconds": p.library_seconds} for p in pairs})
    )
    return pairs


def _raw_seconds(task: Task, cache: Path) -> float:
    """The graded tests run bare: the seed's interpreter, the gold tree, no sandbox."""
    seed, env = runtime_for(task, cache_dir=cache)
    ids = list(dict.fromkeys((*task.FAIL_TO_PASS, *task.PASS_TO_PASS)))
    with tempfile.TemporaryDirectory(prefix="taskmint-raw-") as tmp:
        ws = workspace(task, Path(tmp) / "ws", cache_dir=cache)
        apply_patch(ws, task.patch)
        for rel in task.test_paths:  # the hidden tests back in
            src = Path(seed.root) / rel
            if src.is_file():
                shutil.copy2(src, ws / rel)
            elif src.is_dir():
                shutil.copytree(src, ws / rel, dirs_exist_ok=True)
        if env.kind == "node":
            files = sorted({i.split("::", 1)[0] for i in ids})
            argv = [env.interpreter, "--test", *files]
        else:
            python = Path(env.prefix) / "bin" / "python"  # the seed's venv
            argv = [str(python), "-m", "pytest", "-q", "-p", "no:cacheprovider", *ids]
        start = time.monotonic()
        done = subprocess.run(argv, cwd=ws, capture_output=True, timeout=600, check=False)
        seconds = time.monotonic() - start
        if done.returncode != 0:  # a raw time only counts for a run of the passing tests
            tail = done.stdout[-300:] + done.stderr[-300:]
            raise AssertionError(
                f"{task.instance_id}: {argv[:3]} exited {done.returncode}: {tail!r}"
            )
        return seconds


def _metric(text: str, name: str, **labels: str) -> float:
    total = 0.0
    for line in text.splitlines():
        if not line.startswith(name + "{") and not line.startswith(name + " "):
            continue
        if all(f'{k}="{v}"' in line for k, v in labels.items()):
            total += float(line.rsplit(" ", 1)[1])
    return total


def _metrics(url: str) -> str:
    try:
        return RewardClient(url, timeout=10).metrics()
    except Exception:  # a restarting service: no figure
        return ""


def _rss(pid: int) -> int:
    try:
        with open(f"/proc/{pid}/status") as fh:
            found = re.search(r"VmRSS:\s+(\d+) kB", fh.read())
        return int(found.group(1)) * 1024 if found else 0
    except OSError:
        return 0


def _clients(
    url: str, pairs: list[Pair], n: int, seconds: float, choose: list[int] | None = None
) -> tuple[list[Answer], int, float]:
    """n client threads for `seconds`; returns the answers, the clients' retries and the
    phase's wall time (until the last answer)."""
    stop_at = time.monotonic() + seconds
    answers: list[Answer] = []
    lock = threading.Lock()
    retries = [0]
    pick = choose or list(range(len(pairs)))

    def loop(k: int) -> None:
        rng = random.Random(k)
        client = RewardClient(url, timeout=900)
        while time.monotonic() < stop_at:
            i = rng.choice(pick)
            rid = uuid.uuid4().hex
            t0 = time.monotonic()
            try:
                body = client.verify_json(pairs[i].task.instance_id, pairs[i].patch, request_id=rid)
                answer = Answer(i, rid, time.monotonic() - t0, body)
            except Exception as exc:
                answer = Answer(i, rid, time.monotonic() - t0, None, repr(exc))
            with lock:
                answers.append(answer)
        with lock:
            retries[0] += client.retries

    start = time.monotonic()
    threads = [threading.Thread(target=loop, args=(k,)) for k in range(n)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    return answers, retries[0], time.monotonic() - start


def _pct(values: list[float], q: float) -> float:
    if not values:
        return float("nan")
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, int(q * len(ordered)))]


def _summary(
    name: str, answers: list[Answer], pairs: list[Pair], wall: float, **extra: Any
) -> dict[str, Any]:
    lost = [a for a in answers if a.body is None]
    got = [a for a in answers if a.body is not None]
    # wrong: another reward (or tampering or error verdict) than the library's for the pair;
    # differing: the same reward, but another reason or other per-test outcomes (a pair whose
    # run depends on timing, e.g. a per-test timeout under load)
    key = ("reward", "tampered", "error")
    wrong, differing = [], []
    for a in got:
        mine, want = comparable(a.body), pairs[a.pair].expected  # type: ignore[arg-type]
        if any(mine[k] != want[k] for k in key):
            wrong.append(a)
        elif mine != want:
            differing.append(a)
    ids = Counter(a.request_id for a in got)
    latencies = [a.latency for a in got]
    grading = [float(a.body["grading_time"]) for a in got if a.body and "grading_time" in a.body]
    return {
        "phase": name,
        "answers": len(got),
        "rewards_per_minute": round(len(got) / wall * 60, 1),
        "p50": round(_pct(latencies, 0.50), 3),
        "p95": round(_pct(latencies, 0.95), 3),
        "p99": round(_pct(latencies, 0.99), 3),
        "grading_p50": round(_pct(grading, 0.5), 3),
        "lost": len(lost),
        "duplicated_answers": sum(c - 1 for c in ids.values()),
        "wrong": len(wrong),
        "same_reward_other_detail": len(differing),
        "detail_examples": sorted(
            {
                f"{pairs[a.pair].task.instance_id} {pairs[a.pair].kind}: "
                f"{a.body and a.body.get('reason', '')[:60]} / "
                f"{pairs[a.pair].expected['reason'][:60]}"
                for a in differing
            }
        )[:5],
        "wrong_examples": [
            {
                "task": pairs[a.pair].task.instance_id,
                "kind": pairs[a.pair].kind,
                "got": a.body and a.body.get("reason"),
                "want": pairs[a.pair].expected["reason"],
            }
            for a in wrong[:5]
        ],
        "lost_examples": [a.error[:200] for a in lost[:3]],
        "by_kind": dict(Counter(pairs[a.pair].kind for a in got)),
        "slowest": [
            {
                "task": pairs[a.pair].task.instance_id,
                "kind": pairs[a.pair].kind,
                "latency": round(a.latency, 1),
                "grading": a.body and a.body.get("grading_time"),
                "reason": a.body and a.body.get("reason", "")[:80],
            }
            for a in sorted(got, key=lambda a: -a.latency)[:3]
        ],
        **extra,
    }


@pytest.mark.timeout(4 * 3600)  # the phases alone take PHASE x 3 + FAULT_PHASE x 3
def test_reward_service_load_and_faults(tmp_path: Path) -> None:
    dataset = _dataset()
    cache = OUTPUT / "cache"
    tasks = sorted(load_tasks(dataset, streaming=False), key=lambda t: t.instance_id)
    if LIMIT_TASKS:
        tasks = random.Random(2).sample(tasks, min(LIMIT_TASKS, len(tasks)))
    t0 = time.monotonic()
    pairs = _pairs(tasks, cache, dataset.name)
    library_seconds = time.monotonic() - t0
    rng = random.Random(0)
    sample = rng.sample(tasks, min(RAW_SAMPLE, len(tasks)))
    raw = [_raw_seconds(t, cache) for t in sample]
    lib = [p.library_seconds for p in pairs]
    print(
        f"library grading time per pair: p50 {_pct(lib, 0.5):.2f} s, p95 {_pct(lib, 0.95):.2f} "
        f"s, p99 {_pct(lib, 0.99):.2f} s; by kind: "
        + ", ".join(
            f"{k} {_pct([p.library_seconds for p in pairs if p.kind == k], 0.5):.2f} s"
            for k in ("gold", "empty", "wrong")
        )
    )
    print(
        f"\n{len(tasks)} tasks, {len(pairs)} pairs graded by the library in "
        f"{library_seconds:.0f} s ({Counter(p.expected['reward'] for p in pairs)}); raw test "
        f"time over {len(sample)} tasks: p50 {statistics.median(raw):.2f} s, "
        f"p95 {_pct(raw, 0.95):.2f} s"
    )
    state = tmp_path / "state"
    log = tmp_path / "service.log"
    server = start_server(dataset, OUTPUT, log, "--state-dir", str(state))
    results: list[dict[str, Any]] = []
    try:
        wait_ready(server, timeout=900)
        print("warm-up:", json.dumps(server.health()["warm_up"]))
        for n in CLIENTS:
            before = _metrics(server.url)
            rss0 = _rss(server.proc.pid)
            jobs0 = server.health()["jobs"]
            answers, retries, wall = _clients(server.url, pairs, n, PHASE)
            after = _metrics(server.url)
            unique = len({a.request_id for a in answers if a.body and not a.body.get("cached")})
            results.append(
                _summary(
                    f"load {n} clients",
                    answers,
                    pairs,
                    wall,
                    too_many_requests=_metric(after, "taskmint_reward_requests_total", code="429")
                    - _metric(before, "taskmint_reward_requests_total", code="429"),
                    client_retries=retries,
                    graded_twice=server.health()["jobs"] - jobs0 - unique,
                    rss_start_mb=round(rss0 / 2**20, 1),
                    rss_end_mb=round(_rss(server.proc.pid) / 2**20, 1),
                )
            )
            print(json.dumps(results[-1]))

        # -- fault: sandbox processes killed at random -----------------------------------------
        kills = [0]
        done = threading.Event()

        def killer() -> None:
            rng_k = random.Random(1)
            while not done.wait(1.5):
                pids = sandbox_processes(server.proc.pid, r"bwrap|forkserver|python")
                if pids:
                    kills[0] += kill([rng_k.choice(pids)])

        before = _metrics(server.url)
        thread = threading.Thread(target=killer)
        thread.start()
        answers, retries, wall = _clients(server.url, pairs, 8, FAULT_PHASE)
        done.set()
        thread.join()
        after = _metrics(server.url)
        results.append(
            _summary(
                "fault: random sandbox kills",
                answers,
                pairs,
                wall,
                kills=kills[0],
                regraded=_metric(after, "taskmint_reward_retries_total")
                - _metric(before, "taskmint_reward_retries_total"),
                client_retries=retries,
            )
        )
        print(json.dumps(results[-1]))

        # -- fault: one environment flooded with slow gradings (10 s each) ---------------------
        by_env = Counter(t.env_id for t in tasks)
        flooded = by_env.most_common(1)[0][0]
        victim = next(t for t in tasks if t.env_id == flooded)
        slow = slow_patch(victim, cache, 10)
        slow_pair = Pair(victim, "slow gold", slow, {})
        slow_pair.expected = comparable(verify(victim, slow, cache_dir=cache, reward_url=""))
        pairs.append(slow_pair)
        others = [i for i, p in enumerate(pairs) if p.task.env_id != flooded]
        before = _metrics(server.url)
        flood: list[list[Answer]] = []
        flood_thread = threading.Thread(
            target=lambda: flood.append(
                _clients(server.url, pairs, 16, FAULT_PHASE, [len(pairs) - 1])[0]
            )
        )
        flood_thread.start()
        answers, retries, wall = _clients(server.url, pairs, 8, FAULT_PHASE, others)
        flood_thread.join()
        after = _metrics(server.url)
        flood_summary = _summary("flood", flood[0], pairs, wall)
        results.append(
            _summary(
                f"fault: env {flooded[:12]} flooded (16 clients x 10 s gradings); other envs",
                answers,
                pairs,
                wall,
                too_many_requests=_metric(after, "taskmint_reward_requests_total", code="429")
                - _metric(before, "taskmint_reward_requests_total", code="429"),
                flood_answers=flood_summary["answers"],
                flood_lost=flood_summary["lost"],
                flood_wrong=flood_summary["wrong"],
                flood_p50=flood_summary["p50"],
            )
        )
        print(json.dumps(results[-1]))
        pairs.pop()

        # -- fault: the service stopped (SIGTERM, then SIGKILL) and started again --------------
        downtimes: list[float] = []

        def restarter() -> None:
            nonlocal server
            for sig in (signal.SIGTERM, signal.SIGKILL):
                time.sleep(FAULT_PHASE / 3)
                down = time.monotonic()
                stop(server, sig)
                server = start_server(
                    dataset, OUTPUT, log, "--state-dir", str(state), port=server.port
                )
                wait_ready(server, timeout=900)
                downtimes.append(round(time.monotonic() - down, 1))

        thread = threading.Thread(target=restarter)
        thread.start()
        answers, retries, wall = _clients(server.url, pairs, 8, FAULT_PHASE)
        thread.join()
        results.append(
            _summary(
                "fault: SIGTERM restart, then SIGKILL restart",
                answers,
                pairs,
                wall,
                downtime_s=downtimes,
                client_retries=retries,
                answered_from_store=sum(1 for a in answers if a.body and a.body.get("cached")),
            )
        )
        print(json.dumps(results[-1]))
    finally:
        stop(server)
    print(
        "\nphase | answers | rewards/min | p50 | p95 | p99 | grading p50 | 429s | lost | dup "
        "| wrong | same reward, other detail"
    )
    for r in results:
        print(
            f"{r['phase']} | {r['answers']} | {r['rewards_per_minute']} | {r['p50']} | "
            f"{r['p95']} | {r['p99']} | {r['grading_p50']} | {r.get('too_many_requests', '-')} "
            f"| {r['lost']} | {r['duplicated_answers']} | {r['wrong']} | "
            f"{r['same_reward_other_detail']}"
        )
    print(f"raw test time p50 {statistics.median(raw):.2f} s")
    (tmp_path / "results.json").write_text(json.dumps(results, indent=1))
    print(f"figures: {tmp_path / 'results.json'}")
    assert all(r["lost"] == 0 for r in results), results
    assert all(r["wrong"] == 0 for r in results if r["phase"].startswith("load")), results
