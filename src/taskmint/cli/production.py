"""The producer's commands: `refresh`, `harder` and `serve` run the Prefect flows (the `flows`
extra); `calibrate` runs the pipeline's calibration directly."""

from __future__ import annotations

import argparse
import importlib
import sys
from collections.abc import Callable
from types import ModuleType
from typing import TYPE_CHECKING, TypeVar

from rich.console import Console
from rich.table import Table

from taskmint.cli.commands import version_dir
from taskmint.cli.display import RunDisplay, emit_json
from taskmint.config import PipelineConfig
from taskmint.errors import TaskmintError
from taskmint.pipeline import Budget, HarderRequest, RefreshResult, calibrate_version, reporting
from taskmint.records import Task, as_language, as_strategy
from taskmint.sandbox import open_sandbox

if TYPE_CHECKING:
    from taskmint.openenv import TaskCatalog

__all__ = ["cmd_calibrate", "cmd_harder", "cmd_refresh", "cmd_serve", "cmd_serve_openenv"]

T = TypeVar("T")


def _flows(name: str) -> ModuleType:
    """`taskmint.flows.<name>`, imported only now: importing Prefect reads its settings (and
    makes its home folder), so it must come after `prefect_defaults` has set them for this run;
    and Prefect is the optional `flows` extra."""
    try:
        return importlib.import_module(f"taskmint.flows.{name}")
    except ImportError as exc:
        raise TaskmintError(
            f"this command runs the Prefect flows, which are not installed ({exc}); "
            "install them with: pip install 'taskmint[flows]'"
        ) from exc


def _refresh_tables(result: RefreshResult) -> None:
    table = Table(title="taskmint refresh")
    for col in ("seed", "candidates", "accepted", "rejected (by reason)", "wall s"):
        table.add_column(col)
    for s in result.summaries:
        rejected = ", ".join(f"{k}: {v}" for k, v in s.rejected.items()) or "-"
        if s.error:
            rejected = "SEED ERROR (below)"
        table.add_row(s.seed, str(s.candidates), str(s.accepted), rejected, f"{s.wall_time:.0f}")
    table.add_row(
        "total",
        str(sum(s.candidates for s in result.summaries)),
        str(sum(s.accepted for s in result.summaries)),
        "",
        f"{result.wall_time:.0f}",
    )
    Console().print(table)
    strategies = sorted({k for s in result.summaries for k in s.by_strategy})
    if strategies:
        ytable = Table(title="yield (accepted / candidates) by strategy")
        ytable.add_column("seed")
        for name in strategies:
            ytable.add_column(name)
        for s in result.summaries:
            cells = []
            for name in strategies:
                made, ok = s.by_strategy.get(name, (0, 0))
                cells.append(f"{ok}/{made}" if made else "-")
            ytable.add_row(s.seed, *cells)
        Console().print(ytable)


def cmd_refresh(args: argparse.Namespace, config: PipelineConfig) -> int:
    flows = _flows("refresh")
    with RunDisplay("taskmint refresh") as display, reporting(display):
        result = flows.run_refresh(
            config, task_runner=args.task_runner, dask_address=args.dask_address
        )
    if args.json:
        emit_json(
            {
                "published": str(result.published.path) if result.published else None,
                "tasks": result.published.tasks if result.published else 0,
                "wall_time": result.wall_time,
                "infra_errors": result.infra_errors,
                "work_items": result.items,
                "spend": dict(result.spend),
                "seeds": list(result.summaries),
            }
        )
        return 0
    _refresh_tables(result)
    for s in result.summaries:
        if s.tests_selected:
            print(
                f"{s.seed}: {s.tests_selected} tests selected by the project "
                f"({s.tests_deselected} deselected by its configuration), {s.tests_kept} kept, "
                f"{s.tests_excluded} excluded"
            )
        for line in s.report:
            print(f"  {line}")
        if s.error:
            print(f"seed error: {s.seed}: {s.error}")
    if result.published is not None:
        print(f"dataset: {result.published.path} ({result.published.tasks} tasks)")
    else:
        print("no task was accepted; nothing published")
    return 0


def _rates(items: list[str]) -> dict[str, tuple[float, float]] | None:
    out = {}
    for item in items:
        solver, _, rng = item.rpartition("=")
        low, _, high = rng.partition(":")
        try:
            out[solver] = (float(low), float(high or low))
        except ValueError as exc:
            raise TaskmintError(f"--rate {item!r}: write SOLVER=LOW:HIGH, e.g. m=0:0.3") from exc
        if not solver:
            raise TaskmintError(f"--rate {item!r}: name the solver, e.g. m=0:0.3")
    return out or None


def _each(value: str | None, parse: Callable[..., T], option: str) -> tuple[T, ...] | None:
    """A comma-separated option's values, each checked (a clear error names the choices)."""
    if not value:
        return None
    return tuple(
        parse(v.strip(), error=TaskmintError, where=option) for v in value.split(",") if v.strip()
    )


def cmd_harder(args: argparse.Namespace, config: PipelineConfig) -> int:
    flows = _flows("harder_batch")
    request = HarderRequest(
        n=args.n,
        band=args.band,
        rates=_rates(args.rate),
        languages=_each(args.languages, as_language, "--languages"),
        strategies=_each(args.strategies, as_strategy, "--strategies"),
        knobs=config.knobs,
        start_level=args.level,
        max_rounds=args.rounds,
        budget=Budget(
            rollouts=args.max_rollouts, tokens=args.max_tokens, wall_seconds=args.max_wall
        ),
        predictor_from=args.predictor_from,
        dataset_name=args.name,
    )
    with RunDisplay("taskmint harder") as display, reporting(display):
        result = flows.run_harder_batch(
            request, config, task_runner=args.task_runner, dask_address=args.dask_address
        )
    if args.json:
        emit_json(
            {
                "found": len(result.tasks),
                "wanted": args.n,
                "stop_reason": result.stop_reason,
                "levels": list(result.levels),
                "rounds": list(result.rounds),
                "why": result.why,
                "spend": result.spend,
                "published": result.published,
                "tasks": [t.instance_id for t in result.tasks],
            }
        )
        return 0
    for line in result.rounds:
        print(line)
    print(f"{result.why} ({result.stop_reason}); knob levels {result.levels}")
    print("spent: " + ", ".join(f"{k}={v}" for k, v in result.spend.items()))
    print(f"dataset: {result.published}" if result.published else "nothing published")
    return 0


def _rates_line(task: Task) -> str:
    rates = ", ".join(
        f"{c.label} {c.solves}/{c.attempts} [{c.interval_low:.2f}, {c.interval_high:.2f}]"
        for c in task.calibration
    )
    band = f" band={task.band}" if task.band else ""
    return f"{task.instance_id}:{band} {rates}"


def cmd_calibrate(args: argparse.Namespace, config: PipelineConfig) -> int:
    done: list[Task] = []

    def on_task(task: Task) -> None:
        done.append(task)
        print(_rates_line(task), file=sys.stderr if args.json else sys.stdout, flush=True)

    with RunDisplay("taskmint calibrate") as display, reporting(display):
        published = calibrate_version(version_dir(args, config), args.task_ids, config, on_task)
    if args.json:
        emit_json(
            {
                "published": str(published.path),
                "tasks": published.tasks,
                "calibrated": {t.instance_id: list(t.calibration) for t in done},
            }
        )
        return 0
    print(f"dataset: {published.path} ({published.tasks} tasks)")
    return 0


def cmd_serve(args: argparse.Namespace, config: PipelineConfig) -> int:
    flows = _flows("deploy")
    specs = flows.load_specs(args.spec)
    url, started = flows.ensure_server(args.api_url, port=args.port)
    names = ", ".join(
        f"{s.name} ({', '.join(c for c, _ in s.crons) or 'no schedule'})" for s in specs
    )
    print(f"serving {names} on {url}", flush=True)
    try:
        flows.serve(specs, url, limit=args.limit)
    finally:
        if started is not None:
            started.terminate()
            started.wait(timeout=30)
    return 0


def cmd_serve_openenv(args: argparse.Namespace, config: PipelineConfig) -> int:
    """Serve a version as an OpenEnv environment (the `openenv` extra) until interrupted."""
    try:
        # imported only now: openenv-core is the optional `openenv` extra
        openenv = importlib.import_module("taskmint.openenv")
    except ImportError as exc:
        raise TaskmintError(
            f"serving an OpenEnv environment needs openenv-core, which is not installed ({exc}); "
            "install it with: pip install 'taskmint[openenv]'"
        ) from exc
    version = version_dir(args, config)

    def ready(catalog: TaskCatalog) -> None:
        splits = ", ".join(f"{name} ({len(catalog.split(name))})" for name in catalog.split_names())
        print(
            f"serving {version} as an OpenEnv environment on http://{args.host}:{args.port} "
            f"(splits: {splits})",
            flush=True,
        )

    with open_sandbox(config.sandbox) as sandbox:
        openenv.serve(
            version,
            host=args.host,
            port=args.port,
            max_sessions=args.max_sessions,
            session_timeout=args.session_timeout,
            cache_dir=config.cache_dir,
            sandbox=sandbox,
            limits=config.sandbox.limits,
            config=openenv.CatalogConfig(
                command_seconds=args.command_timeout,
                max_command_seconds=args.max_command_timeout,
                verify=config.verify,
            ),
            log_level=args.log_level,
            on_ready=ready,
        )
    return 0
