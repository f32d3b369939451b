"""Measure how many Rust excision candidates and mutants still compile, with real cargo.

Usage:
    PYTHONPATH=src .venv/bin/python scripts/rust_compile_share.py CRATE_DIR [--per-strategy N]
        [--mutants N] [--tests K] [--build]

CRATE_DIR is a Cargo package whose dependencies cargo can resolve offline (a vendored copy).
It is copied to a scratch folder; each candidate's breaking patch (each mutant) is applied
there, `cargo check --tests --offline` (`cargo build --tests` with --build) runs, and the files
are put back. With --tests K, `cargo test --offline` runs for K compiling candidates and the
script reports how many made some test fail. Prints one line per strategy and a summary.
"""

from __future__ import annotations

import argparse
import json
import random
import re
import shutil
import subprocess
import sys
import tempfile
import time
from collections import Counter
from pathlib import Path

from taskmint.config import FeatureSize
from taskmint.index.treesitter import index_files
from taskmint.languages.rust.candidates import STRATEGIES, rust_candidates
from taskmint.languages.rust.excise import excisable
from taskmint.languages.rust.mutants import rust_mutants
from taskmint.languages.rust.scan import scan_rust_patch
from taskmint.patches import apply_patch
from taskmint.records import SeedApp, SeedManifest, SkippedFile, Unit
from taskmint.strength.mutants import gold_lines
from taskmint.verify.scan import scan_patch


def seed_of(root: Path) -> SeedApp:
    files = tuple(
        sorted(
            str(p.relative_to(root))
            for p in root.rglob("*")
            if p.is_file() and "target" not in p.relative_to(root).parts
        )
    )
    manifest = SeedManifest(
        name=root.name,
        language="rust",
        source_paths=("src",),
        test_paths=("tests",),
        runner="cargo",
    )
    return SeedApp(
        name=root.name,
        snapshot_id=f"measure-{root.name}",
        root=str(root),
        manifest=manifest,
        files=files,
        origin="local",
    )


def rust_units(seed: SeedApp) -> tuple[list[Unit], list[SkippedFile]]:
    units, skipped = index_files("rust", seed.root, seed.files, snapshot_id=seed.snapshot_id)
    kept, left = excisable(seed, units)
    return kept, skipped + left


def cargo(work: Path, args: list[str], target: Path) -> subprocess.CompletedProcess[str]:
    env = {
        "PATH": f"{Path.home()}/.cargo/bin:/usr/bin:/bin",
        "HOME": str(Path.home()),
        "CARGO_TARGET_DIR": str(target),
        "CARGO_TERM_COLOR": "never",
    }
    return subprocess.run(
        ["cargo", *args, "--offline", "-q"],
        cwd=work,
        env=env,
        capture_output=True,
        text=True,
        timeout=900,
    )


def snapshot(work: Path, files: list[str]) -> dict[str, bytes]:
    return {f: (work / f).read_bytes() for f in files}


def restore(work: Path, saved: dict[str, bytes]) -> None:
    for f, data in saved.items():
        (work / f).write_bytes(data)


_FAILED = re.compile(r"^test (\S+) \.\.\. FAILED$", re.MULTILINE)
_RESULT = re.compile(r"test result: \w+\. (\d+) passed; (\d+) failed")


def test_outcome(out: str) -> tuple[int, int]:
    passed = failed = 0
    for m in _RESULT.finditer(out):
        passed += int(m.group(1))
        failed += int(m.group(2))
    return passed, failed


def main() -> int:
    ap = argparse.ArgumentParser()
    ap.add_argument("crate", type=Path)
    ap.add_argument("--per-strategy", type=int, default=20)
    ap.add_argument("--mutants", type=int, default=0)
    ap.add_argument("--tests", type=int, default=0)
    ap.add_argument("--build", action="store_true")
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--feature-lines", type=int, default=20)
    ap.add_argument("--json", type=Path)
    ap.add_argument("--strategies", default=",".join(STRATEGIES))
    args = ap.parse_args()
    crate = args.crate.resolve()
    seed = seed_of(crate)
    units, _ = rust_units(seed)
    report: dict[str, object] = {"crate": crate.name, "units": len(units)}
    with tempfile.TemporaryDirectory(prefix="rust-share-") as tmp:
        work = Path(tmp) / crate.name
        shutil.copytree(crate, work, ignore=shutil.ignore_patterns("target"))
        target = Path(tmp) / "target"
        check = ["build", "--tests"] if args.build else ["check", "--tests"]
        base = cargo(work, check, target)
        if base.returncode != 0:
            print("the pristine crate does not compile:\n" + base.stderr[-2000:])
            return 1
        if args.tests:
            cargo(work, ["test", "--no-run"], target)
        total_ok = total = 0
        gold_findings: Counter[str] = Counter()
        tested: list[tuple[str, int, int]] = []
        gold_patches: list[str] = []
        for strategy in args.strategies.split(","):
            cands, _ = rust_candidates(
                seed,
                units,
                max_candidates=args.per_strategy,
                random_seed=args.seed,
                strategies=(strategy,),
                feature_size=FeatureSize(lines=(args.feature_lines, 1500)),
            )
            ok = 0
            failures: list[str] = []
            t0 = time.monotonic()
            for c in cands:
                saved = snapshot(work, list(c.files))
                apply_patch(work, c.breaking_patch)
                proc = cargo(work, check, target)
                if proc.returncode == 0:
                    ok += 1
                    if args.tests and len([t for t in tested if t[0] == strategy]) < args.tests:
                        run = cargo(work, ["test", "--no-fail-fast"], target)
                        passed, failed = test_outcome(run.stdout)
                        tested.append((strategy, passed, failed))
                else:
                    err = next(
                        (ln for ln in proc.stderr.splitlines() if ln.startswith("error")), "?"
                    )
                    failures.append(f"{c.units[0]}: {err}")
                restore(work, saved)
                gold_patches.append(c.gold_patch)
                for f in (*scan_patch(c.gold_patch), *scan_rust_patch(c.gold_patch)):
                    gold_findings[f.split(": ", 1)[-1]] += 1
            total += len(cands)
            total_ok += ok
            took = time.monotonic() - t0
            print(f"{strategy:16s} {ok}/{len(cands)} compile ({took:.0f}s)")
            for f in failures[:5]:
                print("    ", f)
            report[strategy] = {"candidates": len(cands), "compile": ok, "failures": failures}
        print(f"excision: {total_ok}/{total} compile")
        if tested:
            broke = Counter(s for s, _, failed in tested if failed)
            runs = Counter(s for s, _, _ in tested)
            for s in runs:
                print(f"  cargo test after {s}: {broke[s]}/{runs[s]} candidates fail some test")
            report["tests"] = tested
        print(
            f"scan over {len(gold_patches)} gold patches: "
            f"{sum(gold_findings.values())} findings {dict(gold_findings)}"
        )
        report["gold_findings"] = dict(gold_findings)
        if args.mutants:
            rng = random.Random(args.seed)
            pool = []
            for patch in gold_patches_candidates(seed, units, args.seed):
                for rel, lines in gold_lines(patch).items():
                    data = (crate / rel).read_bytes()
                    pool.extend(rust_mutants(rel, data, lines))
            rng.shuffle(pool)
            sample = pool[: args.mutants]
            ok = 0
            by_op: Counter[str] = Counter()
            ok_op: Counter[str] = Counter()
            bad: list[str] = []
            for m in sample:
                path = work / m.file
                saved = snapshot(work, [m.file])
                path.write_bytes(m.apply(saved[m.file]))
                proc = cargo(work, check, target)
                by_op[m.operator] += 1
                if proc.returncode == 0:
                    ok += 1
                    ok_op[m.operator] += 1
                else:
                    err = next(
                        (ln for ln in proc.stderr.splitlines() if ln.startswith("error")), "?"
                    )
                    bad.append(f"{m.description}: {err}")
                restore(work, saved)
            print(f"mutants: {ok}/{len(sample)} compile (of {len(pool)} found)")
            for op in sorted(by_op):
                print(f"  {op:14s} {ok_op[op]}/{by_op[op]}")
            for b in bad[:10]:
                print("    ", b)
            report["mutants"] = {"sampled": len(sample), "compile": ok, "found": len(pool)}
    if args.json:
        args.json.write_text(json.dumps(report, indent=1))
    return 0


def gold_patches_candidates(seed: SeedApp, units: list[Unit], random_seed: int) -> list[str]:
    """Gold patches of stub_body candidates over every unit: the code mutants are drawn from."""
    cands, _ = rust_candidates(
        seed, units, max_candidates=10_000, random_seed=random_seed, strategies=("stub_body",)
    )
    return [c.gold_patch for c in cands]


if __name__ == "__main__":
    sys.exit(main())
