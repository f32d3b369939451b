"""Benchmark: the describe stage over every candidate of the bundled seeds (run with `pytest -s`).

No sandbox: candidates come from `excise` without a coverage map (so no feature clusters), and
each gets a verdict naming two tests. Prints, per seed, the candidates, the time per describe
call (cold: the first call on a file parses it; warm: the parsed units are reused), the share
of candidates at each template detail level (2 = everything, 1 = no failure messages, 0 = no
docstrings), the rejections, and the size of the statements and hints.
"""

from __future__ import annotations

import time
from collections import Counter
from pathlib import Path

from taskmint.acquire import acquire, load_seed_list
from taskmint.describe import describe
from taskmint.describe.facts import _index_snapshot_file
from taskmint.excise import excise
from taskmint.index import index_seed
from taskmint.records import Verdict

SEED_LIST = Path(__file__).resolve().parents[2] / "seed_apps" / "seeds.toml"


def test_describe_speed_and_detail_levels(tmp_path):
    print()
    print(
        f"{'seed':10} {'cands':>5} {'cold ms':>8} {'warm ms':>8} {'detail 2/1/0':>13} "
        f"{'rejected':>8} {'stmt chars':>10} {'hint chars':>10}"
    )
    for seed_dir in load_seed_list(SEED_LIST):
        seed = acquire(seed_dir, cache_dir=tmp_path)
        cands = excise(seed, index_seed(seed), max_candidates=60).candidates
        verdicts = [
            Verdict(
                candidate_id=c.candidate_id,
                status="accepted",
                reason="",
                fail_to_pass=("tests/test_a.py::test_one", "tests/test_a.py::test_two"),
                failure_messages=(("tests/test_a.py::test_one", "AssertionError: assert 1 == 2"),),
            )
            for c in cands
        ]
        timings = {}
        for label in ("cold", "warm"):
            if label == "cold":
                _index_snapshot_file.cache_clear()
            start = time.perf_counter()
            out = [
                describe(c, v, seed.manifest.source_paths, seed=seed)
                for c, v in zip(cands, verdicts, strict=True)
            ]
            timings[label] = (time.perf_counter() - start) / len(cands) * 1000
        levels = Counter(d.detail for d in out if d.ok)
        rejected = sum(1 for d in out if not d.ok)
        stmt = sum(len(d.statement) for d in out) / len(out)
        hints = sum(sum(len(h) for h in d.hints) for d in out) / len(out)
        print(
            f"{seed.name:10} {len(cands):5d} {timings['cold']:8.1f} {timings['warm']:8.1f} "
            f"{levels[2]:>5}/{levels[1]}/{levels[0]:<5} {rejected:8d} {stmt:10.0f} {hints:10.0f}"
        )
