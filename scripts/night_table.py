"""The night run's table (docs/night.md): per seed and in all, from a refresh's output root.

Reads every part's seed log (`OUT/runs/refresh-*.jsonl`, a line per seed as it finished; a
stopped and resumed refresh writes one log per part), the parts' wall clock
(`OUT/parts.log`, lines `part N start EPOCH` and `part N end EPOCH`, when there is one), the
published version (tasks per seed, their snapshots and environments) and the disk under OUT.

A seed's counts are its last record's (a resumed seed counts the candidates it found stored);
its costs add up over the parts (a part's record holds that part's work alone; a part stopped
mid-seed leaves no record, so that part's share of the seed is in the parts' total only).

    python scripts/night_table.py OUT [--name night] [--json FILE]
"""

from __future__ import annotations

import argparse
import json
import os
import sys
import time
from collections import Counter, defaultdict
from pathlib import Path
from typing import Any

COSTS = ("wall_time", "prepare_seconds", "host_seconds", "sandbox_seconds", "sandbox_runs")


def du(path: Path) -> int:
    """Bytes under `path` (its files' sizes; links not followed)."""
    if path.is_symlink() or not path.exists():
        return 0
    if path.is_file():
        return path.stat().st_size
    total = 0
    for root, _dirs, files in os.walk(path):
        for name in files:
            full = os.path.join(root, name)
            if not os.path.islink(full):
                total += os.stat(full).st_size
    return total


def seed_records(out: Path) -> dict[str, dict[str, Any]]:
    """Per seed: its last record, with the costs summed over every part's record."""
    merged: dict[str, dict[str, Any]] = {}
    for log in sorted((out / "runs").glob("refresh-*.jsonl")):
        for line in log.read_text().splitlines():
            row = json.loads(line)
            before = merged.get(row["seed"])
            if before is not None:
                for key in COSTS:
                    row[key] = before.get(key, 0) + row.get(key, 0)
                row["parts"] = before["parts"] + 1
                row["peak_rss_mib"] = max(before["peak_rss_mib"], row["peak_rss_mib"])
            else:
                row["parts"] = 1
            merged[row["seed"]] = row
    return merged


def parts_seconds(out: Path) -> float | None:
    """The parts' summed wall clock, from OUT/parts.log."""
    log = out / "parts.log"
    if not log.exists():
        return None
    starts: dict[str, float] = {}
    total = 0.0
    for line in log.read_text().splitlines():
        words = line.split()
        if len(words) >= 4 and words[0] == "part" and words[2] in ("start", "end"):
            if words[2] == "start":
                starts[words[1]] = float(words[3])
            elif words[1] in starts:
                total += float(words[3]) - starts.pop(words[1])
        elif len(words) >= 2 and words[-1] == "s" and words[-2].replace(".", "").isdigit():
            total += float(words[-2])  # a part written by hand: "part 0 (...) 124 s"
    return total + sum(time.time() - started for started in starts.values())  # still running


def version_disk(out: Path, name: str) -> tuple[Path | None, dict[str, list[Any]]]:
    """The latest version of dataset `name` and its tasks' (seed, snapshot, env) per seed."""
    root = out / "datasets" / name
    latest = root / "LATEST"
    if not latest.exists():
        return None, {}
    version = root / latest.read_text().strip()
    sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "src"))
    from taskmint.publish import load_tasks

    per_seed: dict[str, list[Any]] = defaultdict(list)
    for t in load_tasks(version, streaming=False, check=False):
        per_seed[t.seed].append(t)
    return version, per_seed


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("out", type=Path)
    parser.add_argument("--name", default="night")
    parser.add_argument("--json", type=Path)
    args = parser.parse_args(argv)
    out: Path = args.out
    seeds = seed_records(out)
    if not seeds:
        print(f"no seed logs under {out / 'runs'}", file=sys.stderr)
        return 1
    version, tasks = version_disk(out, args.name)
    cache = out / "cache"
    lines = [
        "| seed | candidates | accepted | yield | rejected (reason: n) | wall s | fixed s | "
        "host CPU s / cand | sandbox s / cand | sandbox runs / cand | env MiB |",
        "|---|---|---|---|---|---|---|---|---|---|---|",
    ]
    rejected: Counter[str] = Counter()
    envs: dict[str, int] = {}
    for s in seeds.values():
        n = s["candidates"] or 1
        rejected.update(s.get("rejected") or {})
        env_ids = {t.env_id for t in tasks.get(s["seed"], [])}
        env = sum(du(cache / "envs" / e) for e in env_ids)
        envs.update({e: du(cache / "envs" / e) for e in env_ids})
        why = ", ".join(f"{k}: {v}" for k, v in sorted((s.get("rejected") or {}).items()))
        if s.get("error"):
            why = f"REFUSED: {s['error'][:120]}"
        lines.append(
            f"| {s['seed']} | {s['candidates']} | {s['accepted']} | "
            f"{s['accepted'] / n:.2f} | {why} | {s['wall_time']:.0f} | "
            f"{s['prepare_seconds']:.0f} | {s['host_seconds'] / n:.2f} | "
            f"{s['sandbox_seconds'] / n:.1f} | {s['sandbox_runs'] / n:.1f} | "
            f"{env / 2**20:.0f} |"
        )
    made = sum(s["candidates"] for s in seeds.values())
    ok = sum(s["accepted"] for s in seeds.values())
    seed_wall = sum(s["wall_time"] for s in seeds.values())
    wall = parts_seconds(out) or seed_wall
    disk = {p.name: du(p) for p in sorted(cache.iterdir())} if cache.exists() else {}
    dataset = du(version) if version else 0
    n_tasks = sum(len(v) for v in tasks.values())
    totals = {
        "seeds": len(seeds),
        "usable": sum(not s.get("error") for s in seeds.values()),
        "candidates": made,
        "accepted": ok,
        "yield": round(ok / made, 3) if made else 0.0,
        "rejected": dict(rejected.most_common()),
        "wall_seconds": round(wall, 1),
        "seed_wall_seconds": round(seed_wall, 1),
        "tasks_per_hour": round(ok * 3600 / wall, 1) if wall else 0.0,
        "hours_for_1000": round(1000 * wall / ok / 3600, 2) if ok else None,
        "fixed_seconds_median": sorted(s["prepare_seconds"] for s in seeds.values())[
            len(seeds) // 2
        ],
        "host_seconds_per_candidate": round(
            sum(s["host_seconds"] for s in seeds.values()) / made, 3
        )
        if made
        else 0.0,
        "sandbox_seconds_per_candidate": round(
            sum(s["sandbox_seconds"] for s in seeds.values()) / made, 2
        )
        if made
        else 0.0,
        "peak_rss_mib": max(s["peak_rss_mib"] for s in seeds.values()),
        "disk_mib": {k: round(v / 2**20, 1) for k, v in disk.items()},
        "dataset_mib": round(dataset / 2**20, 1),
        "published_tasks": n_tasks,
        "dataset_kib_per_task": round(dataset / 1024 / n_tasks, 1) if n_tasks else None,
        "results_kib_per_candidate": round(disk.get("results", 0) / 1024 / made, 1)
        if made
        else None,
        "env_mib_per_seed_median": round(sorted(envs.values())[len(envs) // 2] / 2**20, 1)
        if envs
        else None,
    }
    print("\n".join(lines))
    print()
    print(json.dumps(totals, indent=1))
    if args.json:
        args.json.write_text(
            json.dumps({"seeds": list(seeds.values()), "totals": totals}, indent=1)
        )
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
