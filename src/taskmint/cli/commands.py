"""The consumer's commands: `list`, `show`, `workspace`, `verify` (no extras needed)."""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

from taskmint.cli.display import emit_json
from taskmint.config import PipelineConfig
from taskmint.consumer import runtime_for, verify, workspace
from taskmint.errors import TaskmintError
from taskmint.publish import latest_version, load_tasks
from taskmint.records import Task
from taskmint.sandbox import open_sandbox

__all__ = ["cmd_list", "cmd_show", "cmd_verify", "cmd_workspace", "version_dir"]


def version_dir(args: argparse.Namespace, config: PipelineConfig) -> Path:
    """The version `--dataset` names, else the latest local version of the config's dataset."""
    if args.dataset is not None:
        return Path(args.dataset)
    return latest_version(config.datasets_dir / config.dataset_name)


def find_task(version: Path, task_id: str) -> Task:
    for task in load_tasks(version):
        if task.instance_id == task_id:
            return task
    raise TaskmintError(f"no task {task_id!r} in {version}; `taskmint list` lists its tasks")


def _summary(task: Task) -> dict[str, object]:
    return {
        "instance_id": task.instance_id,
        "seed": task.seed,
        "language": task.language,
        "strategy": task.strategy,
        "band": task.band,
        "units": list(task.units),
        "fail_to_pass": len(task.FAIL_TO_PASS),
        "pass_to_pass": len(task.PASS_TO_PASS),
    }


def cmd_list(args: argparse.Namespace, config: PipelineConfig) -> int:
    version = version_dir(args, config)
    tasks = [
        t
        for t in load_tasks(version)
        if (not args.seed or t.seed in args.seed)
        and (not args.strategy or t.strategy in args.strategy)
        and (not args.band or t.band in args.band)
        and (not args.language or t.language in args.language)
    ]
    if args.json:
        emit_json([_summary(t) for t in tasks])
        return 0
    for t in tasks:
        print(
            f"{t.instance_id}  {t.language}  {t.strategy}  band={t.band or '-'}  "
            f"F2P={len(t.FAIL_TO_PASS)} P2P={len(t.PASS_TO_PASS)}"
        )
    print(f"{len(tasks)} task(s) in {version}", file=sys.stderr)
    return 0


def cmd_report(args: argparse.Namespace, config: PipelineConfig) -> int:
    """Write a version's report.html again (from its tasks and its run record)."""
    from taskmint.publish.report import write_report

    if args.version is None:
        version = latest_version(config.datasets_dir / config.dataset_name)
    elif Path(args.version).is_dir():
        version = Path(args.version)
    else:
        version = config.datasets_dir / config.dataset_name / args.version
        if not version.is_dir():
            raise TaskmintError(
                f"no version {args.version!r}: give a version folder or a version name of "
                f"{config.datasets_dir / config.dataset_name}"
            )
    path = write_report(version)
    if args.json:
        emit_json({"report": path})
        return 0
    print(f"report: {path}")
    return 0


def cmd_show(args: argparse.Namespace, config: PipelineConfig) -> int:
    task = find_task(version_dir(args, config), args.task_id)
    if args.json:
        emit_json(task)
        return 0
    print(f"{task.instance_id}  ({task.seed}, {task.language}, {task.strategy})")
    print(f"units: {', '.join(task.units)}")
    print(f"FAIL_TO_PASS: {len(task.FAIL_TO_PASS)}  PASS_TO_PASS: {len(task.PASS_TO_PASS)}")
    if task.mutation_score is not None:
        print(
            f"test strength: mutation score {task.mutation_score:.2f} "
            f"({task.mutants_killed} of {task.mutants} mutants of the gold code killed)"
        )
    print()
    print(task.problem_statement)
    return 0


def cmd_workspace(args: argparse.Namespace, config: PipelineConfig) -> int:
    version = version_dir(args, config)
    task = find_task(version, args.task_id)
    path = workspace(task, args.dir, cache_dir=config.cache_dir)
    if args.json:
        emit_json({"task": task.instance_id, "workspace": str(path)})
    else:
        print(f"wrote the policy view of {task.instance_id} to {path}")
    return 0


def _read_patch(path: Path) -> str:
    if str(path) == "-":
        return sys.stdin.read()
    try:
        return path.read_text(encoding="utf-8", errors="surrogateescape")
    except OSError as exc:
        raise TaskmintError(f"cannot read patch {path}: {exc}") from exc


def cmd_verify(args: argparse.Namespace, config: PipelineConfig) -> int:
    version = version_dir(args, config)
    task = find_task(version, args.task_id)
    patch = _read_patch(args.patch_file)
    seed, env = runtime_for(task, cache_dir=config.cache_dir)
    with open_sandbox(config.sandbox) as sandbox:
        reward = verify(
            task,
            patch,
            seed=seed,
            env=env,
            sandbox=sandbox,
            limits=config.sandbox.limits.with_wall(seed.manifest.timeout),
            config=config.verify,
        )
    if args.json:
        emit_json(reward)
        return 0
    print(
        f"reward: {reward.reward:.1f}  ({reward.passed}/{reward.expected} expected tests "
        f"passed) - {reward.reason}"
    )
    for outcome in reward.outcomes:
        print(f"  {outcome.outcome:8s} {outcome.test_id}")
    for path in reward.rejected_paths:
        print(f"  dropped: {path}")
    return 0
