"""Benchmark: the cargo runner on real crates from the Rust crate registry, pinned versions.

Per crate: acquisition (download, lock, vendor), the clean build (the environment's warm build:
a cold target folder, the whole suite once, in the sandbox), the warm run of the original,
the warm run after a one-function change (a statement added to one function's body), each split
into the harness's phases (copying the warm target, compiling, listing, running tests, running
doctests), and, side by side, a plain `cargo test` of the same change on the host (no sandbox,
its own target folder built once before) with the ratio of the two.

Needs the Rust crate registry (acquisition). Run: `pytest -q -s tests/bench/test_rust_runner.py
-p no:cacheprovider`. TASKMINT_BENCH_RUST_CRATES picks crates by name (comma-separated).
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import tempfile
import time
from pathlib import Path

import pytest

from taskmint.acquire.rust import acquire_crate
from taskmint.config import Limits
from taskmint.files import copy_tree
from taskmint.languages import profile
from taskmint.languages.rust import build_environment, find_toolchain
from taskmint.languages.rust.environment import BUILD_FILE, phases, vendor_dependencies
from taskmint.records import Environment, RunReport, SeedApp
from taskmint.runners import run_tests
from taskmint.sandbox import LocalSandbox

pytestmark = [pytest.mark.network, pytest.mark.slow]

# (crate, version, file, the line of the function whose body gets one more statement)
CRATES = [
    ("semver", "1.0.28", "src/lib.rs", "pub fn cmp_precedence(&self, other: &Self) -> Ordering {"),
    ("strsim", "0.11.1", "src/lib.rs", "pub fn jaro(a: &str, b: &str) -> f64 {"),
    ("unicode-width", "0.2.3", "src/lib.rs", "pub fn char_iter_width<S: DoubleEndedIterator"),
    ("either", "1.19.0", "src/lib.rs", "pub fn flip(self) -> Either<R, L> {"),
    ("hex", "0.4.3", "src/lib.rs", "pub fn encode<T: AsRef<[u8]>>(data: T) -> String {"),
]
# itoa 1.0.19 is refused: its dev-dependency criterion needs serde_json, which needs itoa 1.0.18,
# a copy of the seed in the vendored folder.
LIMITS = Limits(wall_seconds=1800, cpu_seconds=1800)
STATEMENT = "        let _taskmint_change = core::hint::black_box(0u8);\n"


def _changed(text: str, line: str) -> str:
    at = text.index(line)
    end = text.index("\n", at) + 1
    return text[:end] + STATEMENT + text[end:]


def _run(
    sandbox: LocalSandbox, seed: SeedApp, env: Environment, edit: tuple[str, str] | None
) -> tuple[float, RunReport]:
    ws = Path(tempfile.mkdtemp(prefix="bench-rust-"))
    try:
        copy_tree(Path(seed.root), ws, seed.files)
        if edit is not None:
            path = ws / edit[0]
            path.write_text(_changed(path.read_text(), edit[1]))
        start = time.monotonic()
        report = run_tests(
            sandbox, ws, seed.manifest, env, adapter=profile("rust").adapter, limits=LIMITS
        )
        return time.monotonic() - start, report
    finally:
        shutil.rmtree(ws, ignore_errors=True)


def _plain(seed: SeedApp, vendor: Path, edit: tuple[str, str]) -> tuple[float, float]:
    """Seconds of a plain `cargo test` on the host: clean, then after the change."""
    toolchain = find_toolchain()
    tree = Path(tempfile.mkdtemp(prefix="bench-rust-plain-"))
    try:
        copy_tree(Path(seed.root), tree, seed.files)
        argv = [
            toolchain.cargo,
            "--config",
            'source.crates-io.replace-with="bench-vendored"',
            "--config",
            f'source.bench-vendored.directory="{vendor}"',
            "test",
            "--offline",
            "--workspace",
            "-q",
        ]
        env = {**toolchain.host_env(), "RUST_BACKTRACE": "0"}
        start = time.monotonic()
        subprocess.run(argv, cwd=tree, env=env, capture_output=True, timeout=1800)
        clean = time.monotonic() - start
        path = tree / edit[0]
        path.write_text(_changed(path.read_text(), edit[1]))
        start = time.monotonic()
        subprocess.run(argv, cwd=tree, env=env, capture_output=True, timeout=1800)
        return clean, time.monotonic() - start
    finally:
        shutil.rmtree(tree, ignore_errors=True)


def _phases(report: RunReport) -> dict[str, float]:
    return phases(report.output_tail)


def _fmt(p: dict[str, float]) -> str:
    keys = ("copy", "build", "list", "tests", "doctests")
    return " / ".join(f"{p.get(k, 0.0):.1f}" for k in keys)


def test_rust_runner_on_real_crates() -> None:
    wanted = {c for c in os.environ.get("TASKMINT_BENCH_RUST_CRATES", "").split(",") if c}
    crates = [c for c in CRATES if not wanted or c[0] in wanted]
    cache = Path(tempfile.mkdtemp(prefix="bench-rust-cache-"))
    os.chmod(cache, 0o755)
    sandbox = LocalSandbox()
    rows = [
        "| crate | tests | acquire + vendor | clean build + run (compile) | warm run, original "
        "| warm run, one function changed | phases: copy / compile / list / tests / doctests "
        "| plain cargo test: clean, changed | changed: taskmint / plain |",
        "|---|---:|---:|---:|---:|---:|---|---:|---:|",
    ]
    try:
        for name, version, file, line in crates:
            start = time.monotonic()
            seed = acquire_crate(name, version, cache_dir=cache)
            acquired = time.monotonic() - start
            start = time.monotonic()
            env = build_environment(seed, cache_dir=cache, sandbox=sandbox)
            clean = time.monotonic() - start
            warm_build = json.loads((Path(env.prefix) / BUILD_FILE).read_text())
            compile_clean = warm_build["phases"].get("build", 0.0)
            original, report = _run(sandbox, seed, env, None)
            assert report.complete, report.collection_errors
            passed = sum(o == "passed" for o in report.outcome_map().values())
            changed, changed_report = _run(sandbox, seed, env, (file, line))
            assert changed_report.complete, changed_report.collection_errors
            assert changed_report.outcome_map() == report.outcome_map()
            vendor = vendor_dependencies(Path(seed.root), cache)
            plain_clean, plain_changed = _plain(seed, vendor, (file, line))
            rows.append(
                f"| {name} {version} | {passed} | {acquired:.1f} s | {clean:.1f} s "
                f"({compile_clean:.1f}) | {original:.1f} s | {changed:.1f} s "
                f"| {_fmt(_phases(changed_report))} | {plain_clean:.1f} s, {plain_changed:.1f} s "
                f"| {changed / plain_changed:.1f}x |"
            )
            print(rows[-1], flush=True)
    finally:
        shutil.rmtree(cache, ignore_errors=True)
    print("\n" + "\n".join(rows))
