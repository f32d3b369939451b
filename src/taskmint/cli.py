"""The `taskmint` command: a thin shell over the library.

Each command calls one library function and turns taskmint's errors into a one-line message and
exit status 2. The long commands (refresh, harder, calibrate) stop on SIGINT or SIGTERM at
once: finished results are already stored, nothing computed after the signal is, the process
exits 130 or 143 saying how to resume, and the reaper (`taskmint.lifecycle`) removes its
sandboxes, servers and scratch folders.
"""

from __future__ import annotations

import argparse
import contextlib
import json
import os
import signal
import sys
from collections.abc import MutableMapping, Sequence
from pathlib import Path
from typing import Any

from taskmint.calibrate.reference import Verifier
from taskmint.config import Limits, PipelineConfig, VerifyConfig, load_config
from taskmint.errors import TaskmintError
from taskmint.lifecycle import restore_signals, stop_on_signals, stop_requested
from taskmint.records import Environment, Reward, SeedApp, Task, to_json_dict
from taskmint.sandbox.base import Sandbox

__all__ = ["build_parser", "main"]


def build_parser() -> argparse.ArgumentParser:
    """The argument parser (exposed so tests can check every command has help)."""
    parser = argparse.ArgumentParser(
        prog="taskmint",
        description="Mint verifiable RL coding tasks from applications with test suites.",
    )
    parser.add_argument("--config", type=Path, help="a taskmint config TOML (all keys optional)")
    parser.add_argument("--output", type=Path, help="output root (default: output/)")
    parser.add_argument(
        "--sandbox", choices=("local", "docker"), help="sandbox backend (default: local)"
    )
    sub = parser.add_subparsers(dest="command", required=True, metavar="COMMAND")

    p = sub.add_parser(
        "refresh",
        help="mint tasks from the seeds and publish a dataset version",
        description="Run the refresh flow (Prefect, ephemeral mode) over the "
        "seeds manifest and publish a new dataset version.",
    )
    p.add_argument("--seeds", type=Path, help="seeds manifest (default: seed_apps/seeds.toml)")
    p.add_argument("--max-candidates", type=int, help="candidates per seed")
    p.add_argument("--workers", type=int, help="parallel sandboxes")
    p.add_argument("--name", help="dataset name (default: taskmint)")
    p.add_argument("--models", type=Path, help="calibration TOML naming models to calibrate with")
    _runner_options(p)

    _add_production_commands(sub)

    def with_dataset(p: argparse.ArgumentParser) -> None:
        p.add_argument(
            "--dataset",
            type=Path,
            help="a dataset version folder (default: the latest local version)",
        )

    p = sub.add_parser(
        "images",
        help="build the docker backend's images",
        description="Build the docker sandbox's base image (debootstrap + docker import, "
        "mirror read from this machine's apt sources), its runtime image, and one image per "
        "seed environment; existing images are reused.",
    )
    p.add_argument("action", choices=("build",))
    p.add_argument("--base", default=None, help="base image tag (or an existing image to use)")
    p.add_argument("--seeds", type=Path, help="seeds manifest (default: seed_apps/seeds.toml)")

    p = sub.add_parser("show", help="print one task", description="Print one task's row.")
    p.add_argument("task_id")
    p.add_argument("--json", action="store_true", help="the whole row as JSON")
    with_dataset(p)

    p = sub.add_parser(
        "workspace",
        help="write a task's policy view to a folder",
        description="Write what a model being trained sees (the broken tree).",
    )
    p.add_argument("task_id")
    p.add_argument("dir", type=Path)
    with_dataset(p)

    p = sub.add_parser(
        "calibrate",
        help="calibrate published tasks and publish the result as a new version",
        description="Calibrate tasks against the models in --models (through the openai "
        "client); with no models, run the reference solvers (null, oracle) alone. The "
        "calibrated tasks are published as a new version of the dataset.",
    )
    p.add_argument("task_ids", nargs="*", metavar="TASK_ID", help="only these tasks")
    p.add_argument("--models", type=Path, help="calibration TOML (see docs/calibration.md)")
    with_dataset(p)

    p = sub.add_parser(
        "verify",
        help="grade a patch against a task",
        description="Grade a patch (as `git diff` writes it, relative to the "
        "task's root) and print the reward and per-test outcomes.",
    )
    p.add_argument("task_id")
    p.add_argument("patch_file", type=Path, help="the patch file, or - for standard input")
    p.add_argument("--json", action="store_true", help="print the reward as JSON")
    with_dataset(p)
    return parser


def _runner_options(p: argparse.ArgumentParser) -> None:
    p.add_argument(
        "--task-runner",
        choices=("threads", "dask"),
        default="threads",
        help="threads (default), or dask: a LocalCluster of --workers processes, or the "
        "cluster at --dask-address",
    )
    p.add_argument("--dask-address", help="an existing Dask scheduler, e.g. tcp://host:8786")


def _add_production_commands(sub: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    p = sub.add_parser(
        "serve",
        help="serve the prefect.yaml deployments (scheduled refresh) on a Prefect server",
        description="Register the deployments of prefect.yaml (the nightly refresh and its "
        "cron schedule) on the Prefect server PREFECT_API_URL or --api-url names, starting "
        "one on 127.0.0.1 when none is set, and run their runs until interrupted.",
    )
    p.add_argument("--spec", type=Path, default=Path("prefect.yaml"), help="the prefect.yaml")
    p.add_argument("--api-url", help="a Prefect server's API URL (default: PREFECT_API_URL)")
    p.add_argument("--port", type=int, default=4200, help="port of a server started here")
    p.add_argument("--limit", type=int, help="most flow runs at once")

    p = sub.add_parser(
        "harder",
        help="mint a batch of harder tasks in a target band",
        description="Turn the excision knobs up until n tasks in the target band (or "
        "solve-rate ranges) are found or the budget is spent; publish them as a version.",
    )
    p.add_argument("-n", type=int, required=True, help="tasks wanted")
    p.add_argument("--band", help="target band (needs --models)")
    p.add_argument(
        "--rate",
        action="append",
        default=[],
        metavar="SOLVER=LOW:HIGH",
        help="solve-rate range per solver, e.g. gpt-x=0:0.3 or reference/oracle=1:1",
    )
    p.add_argument("--seeds", type=Path, help="seeds manifest (default: seed_apps/seeds.toml)")
    p.add_argument("--models", type=Path, help="calibration TOML naming models")
    p.add_argument("--languages", help="comma-separated languages")
    p.add_argument("--strategies", help="comma-separated strategies")
    p.add_argument("--level", type=int, default=1, help="the knob level to start at")
    p.add_argument("--rounds", type=int, default=4, help="most rounds")
    p.add_argument("--max-rollouts", type=int, help="budget: solver attempts")
    p.add_argument("--max-tokens", type=int, help="budget: model tokens")
    p.add_argument("--max-wall", type=float, help="budget: wall seconds")
    p.add_argument("--predictor-from", type=Path, help="a calibrated dataset version")
    p.add_argument("--name", help="dataset name to publish under")
    p.add_argument("--workers", type=int, help="parallel sandboxes")
    _runner_options(p)


def _config(args: argparse.Namespace) -> PipelineConfig:
    config = _load(args)
    if args.sandbox:
        import dataclasses

        config = dataclasses.replace(
            config, sandbox=dataclasses.replace(config.sandbox, backend=args.sandbox)
        )
    return config


def _load(args: argparse.Namespace) -> PipelineConfig:
    overrides = {
        "output_root": args.output,
        "seeds_manifest": getattr(args, "seeds", None),
        "max_candidates_per_seed": getattr(args, "max_candidates", None),
        "workers": getattr(args, "workers", None),
        "dataset_name": getattr(args, "name", None),
        "models": getattr(args, "models", None),
        "alert_webhook": os.environ.get("TASKMINT_ALERT_WEBHOOK") or None,
    }
    return load_config(args.config, **overrides)


def _version_dir(args: argparse.Namespace, config: PipelineConfig) -> Path:
    from taskmint.publish import latest_version

    if args.dataset is not None:
        return Path(args.dataset)
    return latest_version(config.datasets_dir / config.dataset_name)


def _find_task(version: Path, task_id: str) -> Task:
    from taskmint.publish import load_tasks

    for task in load_tasks(version):
        if task.instance_id == task_id:
            return task
    raise TaskmintError(f"no task {task_id!r} in {version}; `taskmint show` lists none by that id")


def _cmd_refresh(args: argparse.Namespace, config: PipelineConfig) -> int:
    from rich.console import Console
    from rich.table import Table

    from flows.refresh import run_refresh

    result = run_refresh(config, task_runner=args.task_runner, dask_address=args.dask_address)
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


def _cmd_show(args: argparse.Namespace, config: PipelineConfig) -> int:
    task = _find_task(_version_dir(args, config), args.task_id)
    if args.json:
        print(json.dumps(to_json_dict(task), indent=2))
        return 0
    print(f"{task.instance_id}  ({task.seed}, {task.language}, {task.strategy})")
    print(f"units: {', '.join(task.units)}")
    print(f"FAIL_TO_PASS: {len(task.FAIL_TO_PASS)}  PASS_TO_PASS: {len(task.PASS_TO_PASS)}")
    print()
    print(task.problem_statement)
    return 0


def _seed_env(version: Path, task: Task, config: PipelineConfig):  # type: ignore[no-untyped-def]
    from taskmint.envs import build_environment
    from taskmint.publish import load_seed

    seed = load_seed(version, task.snapshot_id, cache_dir=config.cache_dir)
    return seed, build_environment(seed.manifest, cache_dir=config.cache_dir)


def _cmd_workspace(args: argparse.Namespace, config: PipelineConfig) -> int:
    from taskmint.publish import load_seed
    from taskmint.verify import policy_view

    version = _version_dir(args, config)
    task = _find_task(version, args.task_id)
    seed = load_seed(version, task.snapshot_id, cache_dir=config.cache_dir)
    policy_view(task, seed, args.dir)
    print(f"wrote the policy view of {task.instance_id} to {args.dir}")
    return 0


def _cmd_verify(args: argparse.Namespace, config: PipelineConfig) -> int:
    from taskmint.sandbox import open_sandbox
    from taskmint.verify import verify

    version = _version_dir(args, config)
    task = _find_task(version, args.task_id)
    if str(args.patch_file) == "-":
        patch = sys.stdin.read()
    else:
        try:
            patch = args.patch_file.read_text(encoding="utf-8", errors="surrogateescape")
        except OSError as exc:
            raise TaskmintError(f"cannot read patch {args.patch_file}: {exc}") from exc
    seed, env = _seed_env(version, task, config)
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
        print(json.dumps(to_json_dict(reward), indent=2))
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


def _verifier(
    seed: SeedApp,
    env: Environment,
    sandbox: Sandbox,
    limits: Limits,
    config: VerifyConfig,
) -> Verifier:
    """Grades as `verify` does, with the run's `[verify]` settings."""
    from taskmint.verify import verify

    def grade(task: Task, patch: str, fail_fast: bool) -> Reward:
        return verify(
            task,
            patch,
            seed=seed,
            env=env,
            sandbox=sandbox,
            limits=limits,
            fail_fast=fail_fast,
            config=config,
        )

    return grade


def _cmd_calibrate(args: argparse.Namespace, config: PipelineConfig) -> int:
    import dataclasses
    import os

    from flows.resume import ResultStore
    from taskmint.calibrate import calibrate_reference
    from taskmint.pipeline import calibrate_with_models
    from taskmint.publish import load_tasks, publish
    from taskmint.sandbox import open_sandbox

    store = ResultStore(config.cache_dir / "results")  # a stopped run keeps its attempts
    version = _version_dir(args, config)
    tasks = load_tasks(version)
    wanted = set(args.task_ids) or {t.instance_id for t in tasks}
    unknown = wanted - {t.instance_id for t in tasks}
    if unknown:
        raise TaskmintError(f"no task {sorted(unknown)[0]!r} in {version}")
    by_snapshot: dict[str, list[Task]] = {}
    for task in tasks:
        by_snapshot.setdefault(task.snapshot_id, []).append(task)
    out: list[Task] = []
    seeds = []
    with open_sandbox(config.sandbox) as sandbox:
        for group in by_snapshot.values():
            seed, env = _seed_env(version, group[0], config)
            seeds.append((seed, env.env_id, env.python_version))
            chosen = [t for t in group if t.instance_id in wanted]
            rest = [t for t in group if t.instance_id not in wanted]
            limits = config.sandbox.limits.with_wall(seed.manifest.timeout)
            if config.models is not None:
                chosen, errors = calibrate_with_models(
                    chosen, seed, env, sandbox, config, environ=os.environ, store=store
                )
                for error in errors[:20]:
                    print(f"calibration: {error}", file=sys.stderr)
            else:
                redone = []
                for task in chosen:
                    rows, failure = calibrate_reference(
                        task,
                        _verifier(seed, env, sandbox, limits, config.verify),
                        solvers=config.reference_solvers,
                    )
                    if failure is not None:
                        print(f"{task.instance_id}: {failure}", file=sys.stderr)
                    kept = tuple(
                        c for c in task.calibration if not c.model.startswith("reference/")
                    )
                    redone.append(dataclasses.replace(task, calibration=(*rows, *kept)))
                chosen = redone
            out.extend(chosen + rest)
            for task in chosen:
                rates = ", ".join(
                    f"{c.model} {c.solves}/{c.attempts} "
                    f"[{c.interval_low:.2f}, {c.interval_high:.2f}]"
                    for c in task.calibration
                )
                band = f" band={task.band}" if task.band else ""
                print(f"{task.instance_id}:{band} {rates}")
    published = publish(
        out, seeds, root=config.datasets_dir, name=config.dataset_name, shard_rows=config.shard_rows
    )
    print(f"dataset: {published.path} ({published.tasks} tasks)")
    return 0


def _cmd_images(args: argparse.Namespace, config: PipelineConfig) -> int:
    from taskmint.acquire.sources import acquire_source, load_seed_sources
    from taskmint.envs import build_environment
    from taskmint.sandbox.images import (
        DEFAULT_BASE_IMAGE,
        build_base_image,
        build_environment_image,
        build_runtime_image,
    )

    base = build_base_image(tag=args.base or DEFAULT_BASE_IMAGE, log=print)
    print(f"base image: {base}")
    print(f"runtime image: {build_runtime_image(base=base)}")
    for source in load_seed_sources(config.seeds_manifest):
        seed = acquire_source(source, cache_dir=config.cache_dir)
        if seed.manifest.language != "python":
            print(f"{seed.name}: skipped (the docker backend runs Python seeds only so far)")
            continue
        env = build_environment(seed.manifest, cache_dir=config.cache_dir)
        print(f"{seed.name}: {build_environment_image(env, base=base)}")
    return 0


def _cmd_serve(args: argparse.Namespace, config: PipelineConfig) -> int:
    from flows.deploy import ensure_server, load_specs, serve

    specs = load_specs(args.spec)
    url, started = ensure_server(args.api_url, port=args.port)
    names = ", ".join(
        f"{s.name} ({', '.join(c for c, _ in s.crons) or 'no schedule'})" for s in specs
    )
    print(f"serving {names} on {url}", flush=True)
    try:
        serve(specs, url, limit=args.limit)
    finally:
        if started is not None:
            started.terminate()
            started.wait(timeout=30)
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


def _cmd_harder(args: argparse.Namespace, config: PipelineConfig) -> int:
    from flows.harder_batch import Budget, HarderRequest, run_harder_batch

    def split(value: str | None) -> tuple[str, ...] | None:
        return tuple(v.strip() for v in value.split(",") if v.strip()) if value else None

    request = HarderRequest(
        n=args.n,
        band=args.band,
        rates=_rates(args.rate),
        languages=split(args.languages),
        strategies=split(args.strategies),
        knobs=config.knobs,
        start_level=args.level,
        max_rounds=args.rounds,
        budget=Budget(
            rollouts=args.max_rollouts, tokens=args.max_tokens, wall_seconds=args.max_wall
        ),
        predictor_from=args.predictor_from,
        dataset_name=args.name,
    )
    result = run_harder_batch(
        request, config, task_runner=args.task_runner, dask_address=args.dask_address
    )
    found = f"{len(result.tasks)}/{args.n}"
    print(f"found {found} tasks ({result.stop_reason}); knob levels {result.levels}")
    print("spent: " + ", ".join(f"{k}={v}" for k, v in result.spend.items()))
    print(f"dataset: {result.published}" if result.published else "nothing published")
    return 0


_COMMANDS = {
    "serve": _cmd_serve,
    "harder": _cmd_harder,
    "images": _cmd_images,
    "calibrate": _cmd_calibrate,
    "refresh": _cmd_refresh,
    "show": _cmd_show,
    "workspace": _cmd_workspace,
    "verify": _cmd_verify,
}


# Prefect gives its ephemeral API server 20 s to start; on a loaded 2-core machine it can take
# longer (`make demo` failed so once after the test suite), so the CLI allows 120 s unless the
# user set it. Its analytics would try to reach the network (none here: an ERROR line per run).
PREFECT_DEFAULTS = {
    "PREFECT_SERVER_EPHEMERAL_STARTUP_TIMEOUT_SECONDS": "120",
    "PREFECT_SERVER_ANALYTICS_ENABLED": "false",
}


def prefect_defaults(
    environ: MutableMapping[str, str] = os.environ, output_root: Path | None = None
) -> None:
    """Set taskmint's defaults for Prefect settings the user did not set (before any flow).

    Prefect's home (its temporary server's database) goes under the output root, as `make`
    sets it, rather than the user's shared `~/.prefect`, so runs on different outputs do not
    share (and lock) one database; unless the user configured Prefect there (a profiles file).
    """
    for key, value in PREFECT_DEFAULTS.items():
        environ.setdefault(key, value)
    configured = (Path.home() / ".prefect" / "profiles.toml").exists()  # `prefect config set`
    if output_root is not None and not configured and "PREFECT_HOME" not in environ:
        home = Path(output_root).resolve() / "prefect"
        home.mkdir(parents=True, exist_ok=True)  # Prefect makes the last level only
        environ["PREFECT_HOME"] = str(home)


_LONG = {"refresh", "harder", "calibrate"}


def _stop_on_signals(config: PipelineConfig) -> tuple[Any, Any]:
    """SIGINT and SIGTERM end the process at once, keeping every finished result."""

    def stop(signum: int, frame: object) -> None:
        stop_requested()  # from now on nothing is stored: the sandboxes are about to die
        name = signal.Signals(signum).name
        message = (
            f"\ntaskmint: stopped by {name}. Finished results are kept in "
            f"{config.cache_dir / 'results'}; run the same command again to resume.\n"
        )
        with contextlib.suppress(OSError, ValueError):
            sys.stdout.flush()
        with contextlib.suppress(OSError):
            os.write(2, message.encode())
        # No unwinding: worker threads would each finish their sandbox run first (a minute
        # or more). The interpreter ends here; bubblewrap dies with it and the reaper removes
        # the fork servers, containers, Prefect's temporary server and the scratch folders.
        os._exit(128 + signum)

    return stop_on_signals(stop)


def main(argv: Sequence[str] | None = None) -> int:
    """Entry point of the `taskmint` console script."""
    args = build_parser().parse_args(argv)
    previous = None
    try:
        config = _config(args)
        prefect_defaults(output_root=config.output_root)
        if args.command in _LONG:
            previous = _stop_on_signals(config)
        return _COMMANDS[args.command](args, config)
    except TaskmintError as exc:
        print(f"taskmint: error: {exc}", file=sys.stderr)
        return 2
    except FileExistsError as exc:
        print(f"taskmint: error: {exc}", file=sys.stderr)
        return 2
    finally:
        if previous is not None:  # main() called in a process that goes on (tests, scripts)
            restore_signals(previous)


if __name__ == "__main__":  # pragma: no cover
    raise SystemExit(main())
