"""Is exact test selection exact on real code? Selected against full-suite validation.

Usage: python scripts/selection_exactness.py [SEEDS_TOML] [--per-seed N] [--strategies a,b]
       [--only name,name] [--cache DIR] [--reruns | --batch]

For every seed of SEEDS_TOML (default: seed_apps/pypi_seeds.toml, real PyPI packages nobody here
wrote), build the baseline (3 runs) and the coverage map, excise up to N candidates (default 12)
of the given strategies (default remove_function,remove_class), and validate each twice: with
the coverage map (only the selected tests run) and without it (the full suite). Prints one line
per candidate (the share of the suite selected; DIFFER and the missing FAIL_TO_PASS tests when
the two disagree) and the agreement. With --reruns, the comparison is of the broken tree's
second run instead: both sides run the selection twice, one repeating only the tests still
failing (the default), the other the whole selection (`validate_candidate(reruns="all")`).
With --batch, the seed's candidates are validated together with `validate_batch` (selected
tests, forked runs where it allows them; two runs) and compared with two ordinary full-suite
runs of each.
A seed that cannot be built is reported and skipped.
Exit status 1 when any candidate disagrees. Caches go to --cache (default
$TMPDIR/taskmint-exactness), so a second run only validates.
"""

from __future__ import annotations

import argparse
import sys
import tempfile
from pathlib import Path

from taskmint.acquire.sources import acquire_source, load_seed_sources
from taskmint.config import Limits, SandboxConfig
from taskmint.excise import excise
from taskmint.index import index_seed
from taskmint.index.coverage import coverage_map
from taskmint.languages import build_environment
from taskmint.sandbox import LocalSandbox
from taskmint.validate import run_baseline, validate_batch, validate_candidate
from taskmint.validate.forked import unforkable
from taskmint.validate.selection import select_tests

ROOT = Path(__file__).resolve().parents[1]


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("seeds", nargs="?", default=ROOT / "seed_apps" / "pypi_seeds.toml")
    parser.add_argument("--per-seed", type=int, default=12)
    parser.add_argument("--strategies", default="remove_function,remove_class")
    parser.add_argument("--only", default="", help="comma list of seed locations to keep")
    parser.add_argument("--reruns", action="store_true", help="compare the second runs")
    parser.add_argument("--batch", action="store_true", help="validate_batch against full runs")
    parser.add_argument("--cache", default=Path(tempfile.gettempdir()) / "taskmint-exactness")
    args = parser.parse_args()
    only = {s for s in args.only.split(",") if s}
    cache = Path(args.cache)
    limits = Limits(wall_seconds=300)
    box = LocalSandbox(SandboxConfig(warm=True))
    total = agree = forked = 0
    shares: list[float] = []
    try:
        for source in load_seed_sources(Path(args.seeds)):
            if only and source.location not in only:
                continue
            try:
                seed = acquire_source(source, cache_dir=cache)
                env = build_environment(seed.manifest, cache_dir=cache)
                baseline = run_baseline(seed, env, box, runs=3, limits=limits, cache_dir=cache)
                cmap = coverage_map(seed, env, box, limits=limits, cache_dir=cache)
                cands = excise(
                    seed,
                    index_seed(seed),
                    max_candidates=args.per_seed,
                    strategies=tuple(args.strategies.split(",")),
                ).candidates
            except Exception as exc:  # one bad seed is a recorded reason, not the end
                print(f"{source.location}: skipped: {type(exc).__name__}: {exc}", flush=True)
                continue
            suite = max(len(baseline.stable_passed), 1)
            runs = 2 if args.reruns or args.batch else 1
            together = (
                validate_batch(
                    cands,
                    seed,
                    env,
                    baseline,
                    box,
                    runs=runs,
                    limits=limits,
                    coverage=cmap,
                    workers=2,
                )
                if args.batch
                else None
            )
            for number, cand in enumerate(cands):
                sel = select_tests(cand, cmap, baseline.stable_passed, seed)
                fast = (
                    together[number]
                    if together is not None
                    else validate_candidate(
                        cand, seed, env, baseline, box, runs=runs, limits=limits, coverage=cmap
                    )
                )
                full = validate_candidate(
                    cand,
                    seed,
                    env,
                    baseline,
                    box,
                    runs=runs,
                    limits=limits,
                    coverage=cmap if args.reruns else None,
                    reruns="all" if args.reruns else "open",
                )
                same = (fast.status, fast.fail_to_pass) == (full.status, full.fail_to_pass)
                total += 1
                agree += same
                share = 1.0 if sel is None else len(sel) / suite
                shares.append(share)
                note = ""
                if args.batch:
                    stable = set(baseline.stable_passed)
                    kept = None if sel is None else tuple(t for t in sel if t in stable)
                    forkable = not unforkable(cand, cmap, kept)
                    forked += forkable
                    note = "  forked" if forkable else ""
                if not same:
                    missing = sorted(set(full.fail_to_pass) - set(fast.fail_to_pass))[:3]
                    note += f"  DIFFER selected {fast.status} full {full.status} missing {missing}"
                print(
                    f"{source.location:14} {cand.strategy:16} share {share:4.2f} "
                    f"{cand.units[0]}{note}",
                    flush=True,
                )
    finally:
        box.close()
    mean = sum(shares) / len(shares) if shares else 0.0
    print(f"same verdict and FAIL_TO_PASS: {agree}/{total}; mean share of the suite run {mean:.2f}")
    if args.batch:
        print(f"forked runs could take {forked} of the {total} candidates")
    return 0 if agree == total else 1


if __name__ == "__main__":
    sys.exit(main())
