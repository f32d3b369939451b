"""`CargoAdapter`: a Rust seed's tests run by taskmint's cargo harness, and its report read.

The harness (`runners/inside/cargo_runner.py`, run as `python -I -S -B` under the host's own
interpreter) builds the selected test targets with cargo, runs each test in its own process
under cargo-nextest (JUnit on nextest's own standard output), runs the doctests with rustdoc,
and sends one record per test over the out-of-band channel. See the harness's docstring for
the phases and docs/rust.md for what a policy can still forge.

Test ids, stable across runs and across a tree that does not build (they name the target, not
the binary's hashed file name):

- `lib:<package>::<module path>::<test>`: a unit test of the package's library
  (`lib:tinyrs::math::tests::factorial_of_five`);
- `<kind>:<package>/<target>::<path>` for the other test targets, kind one of `test`
  (an integration test file: `test:tinyrs/api::divide_rounds_toward_zero`), `bin`, `example`,
  `bench`;
- `doc:<package>::<file> - <item>`: a doctest, named as rustdoc names it but without its
  line number, which any edit above it changes (`doc:tinyrs::src/lib.rs - add`); an item's
  second, third, ... doctest in that file, by line, ends in ` #2`, ` #3`.

The binary part ends at the first `::` (package and target names cannot hold one). A selection
may also name a whole binary (`test:tinyrs/api`, `doc:tinyrs`).

Outcomes: passed, failed (an assertion, a panic, a timeout, a crash, a test that did not
build), skipped (`#[ignore]`, and doctests marked `ignore`), error (the harness could not run
it). A crate that does not build fails every expected test of each target that did not build,
with the compiler's errors as the message; a report with no record at all is an
infrastructure error (`SandboxError`), never outcomes.
"""

from __future__ import annotations

import json
import posixpath
import secrets
import shutil
from pathlib import Path
from typing import Any

from taskmint.config import Limits
from taskmint.errors import SandboxError
from taskmint.languages.rust.toolchain import CARGO_HOME, NEXTEST, TOOLCHAIN, VENDOR, WARM
from taskmint.records import Environment, Outcome, RunReport, SeedManifest, TestResult
from taskmint.runners.adapters import RUNNER_DIR, HarnessAdapter, inside_dir
from taskmint.runners.inside.cargo_runner import CargoInput, split_id
from taskmint.runners.protect import workspace_readonly
from taskmint.sandbox.base import REPORT_DIR, WORKSPACE, Mount, RunResult, RunSpec, Sandbox
from taskmint.scratch import make_scratch

__all__ = [
    "TARGET_DIR",
    "CargoAdapter",
    "EnvLayout",
    "parse_cargo_report",
    "run_harness",
    "split_id",
]

TARGET_DIR = posixpath.join(WORKSPACE, "target")
CARGO_INPUT = posixpath.join(REPORT_DIR, "cargo_input.json")
LAYOUT_FILE = "layout.json"  # in the environment folder: where its parts are on the host
WARM_FILE = "warm.json"  # the warm target's secret folder name (never mounted)
TESTS_FILE = "tests.json"  # the original's test ids
BROKEN_FILE = "broken.json"  # labels of the original's test targets that do not build


class EnvLayout:
    """The host paths behind a Rust environment (`<env>/layout.json`)."""

    def __init__(self, prefix: str) -> None:
        self.prefix = Path(prefix)
        try:
            data = json.loads((self.prefix / LAYOUT_FILE).read_text(encoding="utf-8"))
        except (OSError, ValueError) as exc:
            raise SandboxError(
                f"{prefix} is not a Rust environment ({exc}); build it with "
                "taskmint.languages.rust.build_environment"
            ) from exc
        self.toolchain: str = data["toolchain"]
        self.tools: str = data["tools"]
        self.vendor: str = data["vendor"]
        self.linker: str = data["linker"]
        self.linker_dirs: list[str] = list(data.get("linker_dirs") or [])
        self.host: str = data["host"]

    def warm_path(self) -> str | None:
        """The warm target folder inside the sandbox (its name is secret), or None."""
        try:
            secret = json.loads((self.prefix / WARM_FILE).read_text(encoding="utf-8"))["name"]
        except (OSError, ValueError, KeyError):
            return None
        return posixpath.join(WARM, str(secret), "target")

    def broken_targets(self) -> list[str]:
        """The original's test targets (labels) that do not build: never built again."""
        try:
            data = json.loads((self.prefix / BROKEN_FILE).read_text(encoding="utf-8"))
        except (OSError, ValueError):
            return []
        return [str(t) for t in data] if isinstance(data, list) else []

    def known_tests(self) -> list[str]:
        try:
            data = json.loads((self.prefix / TESTS_FILE).read_text(encoding="utf-8"))
        except (OSError, ValueError):
            return []
        return [str(t) for t in data] if isinstance(data, list) else []


def tool_env(layout: EnvLayout) -> list[list[str]]:
    """The environment cargo, rustc, rustdoc, nextest and the tests run with."""
    triple = layout.host.upper().replace("-", "_")
    return [
        ["PATH", f"{TOOLCHAIN}/bin:/usr/local/bin:/usr/bin:/bin"],
        ["HOME", "/tmp"],
        ["TMPDIR", "/tmp"],
        ["LANG", "C.UTF-8"],
        ["LC_ALL", "C.UTF-8"],
        ["TZ", "UTC"],
        ["CARGO", f"{TOOLCHAIN}/bin/cargo"],
        ["CARGO_HOME", CARGO_HOME],
        ["CARGO_TARGET_DIR", TARGET_DIR],
        ["CARGO_TERM_COLOR", "never"],
        ["CARGO_NET_OFFLINE", "true"],
        ["RUSTC", f"{TOOLCHAIN}/bin/rustc"],
        ["RUSTDOC", f"{TOOLCHAIN}/bin/rustdoc"],
        [f"CARGO_TARGET_{triple}_LINKER", layout.linker],
        ["CC", layout.linker],
        ["RUST_BACKTRACE", "0"],
    ]


class CargoAdapter(HarnessAdapter):
    """cargo-nextest and rustdoc under taskmint's cargo harness (see the module docstring):
    `python -I -S -B cargo_runner.py REPORT INPUT`. Tests run in nextest's order, in
    parallel; `order`, `seed`, `fail_fast`, `coverage` and `compile_bytecode` do not apply
    (no coverage map for Rust yet)."""

    runner = "cargo"
    selects_whole_files = False
    inside_files = ("cargo_runner.py", "harness_io.py")
    harness = "cargo_runner.py"
    input_file = CARGO_INPUT

    def __init__(self, *, keep_target: bool = False, warm: bool = True) -> None:
        self.keep_target = keep_target  # leave the build in the workspace (the warm build)
        self.warm = warm  # start from the environment's warm target folder

    def mounts(self, env: Environment) -> list[Mount]:
        """The harness files and interpreter, the toolchain (cargo, rustdoc and nextest
        execute-only), the offline cargo home, the vendored crates, the warm target's
        folder (whose one entry has a secret name) and the linker's folders."""
        layout = EnvLayout(env.prefix)
        mounts = [Mount(source=str(inside_dir()), target=RUNNER_DIR)]
        mounts += self.host_python_mounts()
        tools = Path(layout.tools)
        mounts += [
            Mount(source=layout.toolchain, target=TOOLCHAIN),
            Mount(source=str(tools / "cargo"), target=f"{TOOLCHAIN}/bin/cargo"),
            Mount(source=str(tools / "rustdoc"), target=f"{TOOLCHAIN}/bin/rustdoc"),
            Mount(source=str(tools / "cargo-nextest"), target=NEXTEST),
            Mount(source=str(Path(env.prefix) / "cargo-home"), target=CARGO_HOME),
            Mount(source=layout.vendor, target=VENDOR),
        ]
        warm = Path(env.prefix) / "warm"
        if self.warm and warm.is_dir():
            mounts.append(Mount(source=str(warm), target=WARM))
        mounts += [Mount(source=d, target=d) for d in layout.linker_dirs]
        return mounts

    def harness_input(
        self,
        manifest: SeedManifest,
        env: Environment,
        *,
        nonce: str,
        test_ids: tuple[str, ...] | None,
        coverage: bool = False,
    ) -> CargoInput:
        """What the harness runs: the selection, the original's test ids (what a broken
        build fails), the tools and the limits."""
        layout = EnvLayout(env.prefix)
        return {
            "nonce": nonce,
            "cargo": f"{TOOLCHAIN}/bin/cargo",
            "nextest": NEXTEST,
            "cwd": WORKSPACE,
            "env": tool_env(layout),
            "target_dir": TARGET_DIR,
            "warm": layout.warm_path() if self.warm else None,
            "select": list(test_ids) if test_ids is not None else None,
            "expected": layout.known_tests(),
            "skip": layout.broken_targets(),
            "test_timeout": manifest.test_timeout,
            "timeout": manifest.timeout,
            "jobs": 0,
            "keep_target": self.keep_target,
            "sweep": True,
        }

    def parse(self, report_dir: Path, nonce: str) -> RunReport:
        """Read the harness's JSON lines."""
        return parse_cargo_report(report_dir / "report.jsonl", nonce)


_OUTCOMES: dict[str, Outcome] = {
    "passed": "passed",
    "failed": "failed",
    "error": "error",
    "skipped": "skipped",
}


def parse_cargo_report(path: Path, nonce: str) -> RunReport:
    """The harness's report as a `RunReport`: tests, build errors as collection errors,
    "tampered". No record at all (the harness never ran) is a `SandboxError`."""
    try:
        raw = path.read_bytes()
    except OSError:
        raw = b""
    records: list[dict[str, Any]] = []
    ok = True
    for line in raw.decode("utf-8", "replace").splitlines():
        if not line.strip():
            continue
        try:
            rec = json.loads(line)
        except ValueError:
            ok = False
            continue
        if not isinstance(rec, dict) or rec.get("nonce") != nonce or "type" not in rec:
            ok = False
            continue
        records.append(rec)
    if not records:
        raise SandboxError(
            "the cargo harness wrote no report (it did not start, or was killed at once): "
            "an infrastructure failure, not the tests' outcome"
        )
    results: dict[str, TestResult] = {}
    errors: list[str] = []
    tampered: list[str] = []
    complete = False
    for rec in records:
        kind = rec["type"]
        if kind == "test":
            tid = str(rec.get("id"))
            message = rec.get("message")
            results[tid] = TestResult(
                test_id=tid,
                outcome=_OUTCOMES.get(str(rec.get("outcome")), "error"),
                duration=_float(rec.get("duration")),
                message=str(message) if message else None,
            )
        elif kind == "build_error":
            errors.append(f"{rec.get('target')} did not build: {str(rec.get('message'))[:1500]}")
        elif kind == "harness_error":
            errors.append(f"the cargo harness: {rec.get('message')}")
        elif kind == "tampered":
            tampered.append(str(rec.get("reason")))
        elif kind == "finish":
            complete = True
    return RunReport(
        results=tuple(results[k] for k in sorted(results)),
        collection_errors=tuple(errors),
        complete=complete,
        nonce_ok=ok,
        tampered="; ".join(tampered),
    )


def _float(value: Any) -> float:
    try:
        return round(float(value or 0.0), 6)
    except (TypeError, ValueError):
        return 0.0


def run_harness(
    sandbox: Sandbox,
    workspace: Path,
    manifest: SeedManifest,
    env: Environment,
    *,
    limits: Limits,
    adapter: CargoAdapter,
    test_ids: tuple[str, ...] | None = None,
) -> tuple[RunResult, RunReport]:
    """One harness run over `workspace` with a given adapter (the warm build's, which keeps
    its target folder), over the out-of-band channel; what `runners.run_tests` does with the
    registered adapter."""
    if not sandbox.supports_channel:
        raise SandboxError("Rust seeds run on the local sandbox (it has the report channel)")
    nonce = secrets.token_hex(16)
    chan_dir = make_scratch("taskmint-channel-")
    try:
        argv, env_vars = adapter.command(manifest, env, nonce=nonce, test_ids=test_ids)
        argv, data = adapter.channel_command(argv, manifest, env, nonce=nonce, test_ids=test_ids)
        result = sandbox.run(
            RunSpec(
                argv=argv,
                workspace=str(workspace),
                mounts=tuple(adapter.mounts(env)),
                env=env_vars,
                limits=limits,
                warm=False,
                channel_input=data,
                channel_report=str(chan_dir / "report.jsonl"),
                readonly=workspace_readonly(manifest, workspace),
            )
        )
        report = adapter.parse(chan_dir, nonce)
    finally:
        shutil.rmtree(chan_dir, ignore_errors=True)
    return result, report
