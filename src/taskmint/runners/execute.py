"""Running a seed's tests over a prepared workspace and reading back per-test outcomes."""

from __future__ import annotations

import dataclasses
import secrets
import shutil
from collections.abc import Callable
from pathlib import Path
from typing import TypeVar

from taskmint.config import Limits
from taskmint.records import Environment, RunReport, SeedManifest
from taskmint.runners.adapters import Adapter
from taskmint.runners.inside.protocol import BatchSpec
from taskmint.runners.protect import workspace_readonly
from taskmint.runners.report import BatchReport
from taskmint.sandbox.base import RunResult, RunSpec, Sandbox
from taskmint.scratch import make_scratch

T = TypeVar("T")

__all__ = ["run_batch", "run_tests"]


def run_tests(
    sandbox: Sandbox,
    workspace: Path,
    manifest: SeedManifest,
    env: Environment,
    *,
    adapter: Adapter,
    limits: Limits,
    test_ids: tuple[str, ...] | None = None,
    nonce: str | None = None,
    coverage_out: Path | None = None,
    fail_fast: bool = False,
    order: str = "declared",
    seed: int | None = None,
    warm: bool = True,
    readonly: tuple[str, ...] | None = None,
    compile_bytecode: bool = False,
    keep_workspace: bool = True,
) -> RunReport:
    """Run the seed's tests over `workspace` (which the run may modify) in `sandbox`, with
    the seed's runner (`adapter`: its language profile's, `taskmint.languages.adapter_for`).

    The report folder is created fresh outside the workspace for each run, and a new nonce
    tags every record, so neither an old report nor one written by the code under test counts.
    `order` and `seed` set the test order and per-test random seed (see the adapters); `warm`
    False asks the backend for a cold interpreter (a fresh hash seed). `readonly` names
    workspace paths the run may not change (see `RunSpec.readonly`); by default the seed's
    tests and the files configuring the run (`runners.protect`), as when the verifier grades.
    `compile_bytecode` makes the run write the workspace's bytecode and collect instead of
    testing (see
    `taskmint.runners.bytecode`). `keep_workspace` False: the caller deletes the workspace
    unread, so the run's changes need not be copied back to it.

    On a backend that supports it, the nonce, the selection and the report travel through the
    out-of-band channel (see `RunSpec`): the code under test can read none of them by any
    path, and no report folder is mounted unless coverage needs one.
    """
    result, report = _execute(
        sandbox,
        workspace,
        manifest,
        env,
        adapter=adapter,
        limits=limits,
        test_ids=test_ids,
        nonce=nonce,
        coverage_out=coverage_out,
        fail_fast=fail_fast,
        order=order,
        seed=seed,
        warm=warm,
        readonly=readonly,
        compile_bytecode=compile_bytecode,
        keep_workspace=keep_workspace,
        parse=lambda adapter, folder, nonce: adapter.parse(folder, nonce),
    )
    return dataclasses.replace(
        report,
        exit_code=result.exit_code,
        timed_out=result.timed_out,
        wall_time=round(result.wall_time, 4),
        output_tail=result.output[-4000:],
    )


def run_batch(
    sandbox: Sandbox,
    workspace: Path,
    manifest: SeedManifest,
    env: Environment,
    *,
    adapter: Adapter,
    limits: Limits,
    test_ids: tuple[str, ...] | None,
    batch: BatchSpec,
) -> tuple[BatchReport, RunResult]:
    """Collect the files of `test_ids` (None: the whole suite) over `workspace` once and serve
    `batch`'s runs as forks of that collection (`runners/inside/forked_runs.py`). A runner
    that `forks` (pytest) over the out-of-band channel only: `ValueError` otherwise."""
    if not adapter.forks or not sandbox.supports_channel:
        raise ValueError(
            f"forked runs need a runner that forks (not {adapter.runner}) and a sandbox with a "
            "report channel"
        )
    result, report = _execute(
        sandbox,
        workspace,
        manifest,
        env,
        adapter=adapter,
        limits=limits,
        test_ids=test_ids,
        keep_workspace=False,
        batch=batch,
        parse=lambda adapter, folder, nonce: adapter.parse_batch(folder, nonce),
    )
    return report, result


def _execute(
    sandbox: Sandbox,
    workspace: Path,
    manifest: SeedManifest,
    env: Environment,
    *,
    adapter: Adapter,
    limits: Limits,
    parse: Callable[[Adapter, Path, str], T],
    test_ids: tuple[str, ...] | None = None,
    nonce: str | None = None,
    coverage_out: Path | None = None,
    fail_fast: bool = False,
    order: str = "declared",
    seed: int | None = None,
    warm: bool = True,
    readonly: tuple[str, ...] | None = None,
    compile_bytecode: bool = False,
    keep_workspace: bool = True,
    batch: BatchSpec | None = None,
) -> tuple[RunResult, T]:
    if readonly is None:
        readonly = workspace_readonly(manifest, workspace)
    nonce = nonce or secrets.token_hex(16)
    report_dir = make_scratch("taskmint-report-")
    chan_dir = make_scratch("taskmint-channel-")  # never mounted
    channel = sandbox.supports_channel
    coverage = coverage_out is not None
    try:
        if not channel:
            inputs = adapter.inputs(
                manifest, env, nonce=nonce, test_ids=test_ids, coverage=coverage
            )
            for name, data in inputs.items():
                (report_dir / name).write_bytes(data)
        argv, env_vars = adapter.command(
            manifest,
            env,
            nonce=nonce,
            test_ids=test_ids,
            coverage=coverage,
            fail_fast=fail_fast,
            order=order,
            seed=seed,
            compile_bytecode=compile_bytecode,
        )
        channel_input: bytes | None = None
        if channel:
            argv, channel_input = adapter.channel_command(
                argv,
                manifest,
                env,
                nonce=nonce,
                test_ids=test_ids,
                coverage=coverage,
                batch=batch,
            )
        result = sandbox.run(
            RunSpec(
                argv=argv,
                workspace=str(workspace),
                report_dir=str(report_dir) if not channel or coverage else None,
                mounts=tuple(adapter.mounts(env)),
                env=env_vars,
                limits=limits,
                warm=warm,
                channel_input=channel_input,
                channel_report=str(chan_dir / "report.jsonl") if channel else None,
                readonly=readonly,
                keep_workspace=keep_workspace,
            )
        )
        report = parse(adapter, chan_dir if channel else report_dir, nonce)
        if coverage_out is not None:
            adapter.save_coverage(report_dir, coverage_out)
    finally:
        shutil.rmtree(report_dir, ignore_errors=True)
        shutil.rmtree(chan_dir, ignore_errors=True)
    return result, report
