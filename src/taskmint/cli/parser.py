"""The `taskmint` command line: its arguments (`build_parser`)."""

from __future__ import annotations

import argparse
from collections.abc import Callable
from pathlib import Path

__all__ = ["build_parser"]


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
    p.add_argument(
        "--parallel-seeds",
        type=int,
        help="seeds minted at once (default 1: in turn); the sandboxes stay bounded by --workers",
    )
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
    _json_option(p, "the images built as JSON")

    p = sub.add_parser(
        "report",
        help="write a dataset version's report.html",
        description="Write the self-contained HTML report of a published version (plots of "
        "its tasks, and of the run that published it when it left its run.json) into the "
        "version folder, as a refresh does at publish.",
    )
    p.add_argument(
        "version", nargs="?", help="a version folder or name (vNNNN); default: the latest"
    )
    _json_option(p, "where the report was written, as JSON")

    p = sub.add_parser("show", help="print one task", description="Print one task's row.")
    p.add_argument("task_id")
    _json_option(p, "the whole row as JSON")
    with_dataset(p)

    p = sub.add_parser(
        "list",
        help="list a dataset version's tasks",
        description="List the tasks of a published version (default: the latest local one), "
        "a line each, filtered by seed, strategy, band or language (each filter may repeat).",
    )
    p.add_argument("--seed", action="append", default=[], help="only tasks of this seed")
    p.add_argument("--strategy", action="append", default=[], help="only this strategy")
    p.add_argument(
        "--band", action="append", default=[], help='only this band ("" for uncalibrated)'
    )
    p.add_argument("--language", action="append", default=[], help="only this language")
    _json_option(p, "the tasks' summaries as a JSON list")
    with_dataset(p)

    p = sub.add_parser(
        "workspace",
        help="write a task's policy view to a folder",
        description="Write what a model being trained sees (the broken tree).",
    )
    p.add_argument("task_id")
    p.add_argument("dir", type=Path)
    _json_option(p, "say what was written as JSON")
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
    _json_option(p, "the calibrated tasks' rows and the published version as JSON")
    with_dataset(p)

    p = sub.add_parser(
        "verify",
        help="grade a patch against a task",
        description="Grade a patch (as `git diff` writes it, relative to the "
        "task's root) and print the reward and per-test outcomes.",
    )
    p.add_argument("task_id")
    p.add_argument("patch_file", type=Path, help="the patch file, or - for standard input")
    _json_option(p, "print the reward as JSON")
    with_dataset(p)

    p = sub.add_parser(
        "export",
        help="export a dataset version's tasks to another format (harbor)",
        description="Write a published version's tasks (all, or the ids given) as Harbor task "
        "folders under DEST: task.toml, instruction.md, environment/ (a Dockerfile on the "
        "seed's environment image, built by `taskmint images build`, with the broken tree), "
        "tests/ (taskmint's grader) and solution/.",
    )
    p.add_argument("format", choices=("harbor",))
    p.add_argument("dest", type=Path, help="the folder to write the task folders into")
    p.add_argument("task_ids", nargs="*", metavar="TASK_ID", help="only these tasks")
    p.add_argument("--hint-level", type=int, default=0, help="hints put in instruction.md")
    p.add_argument(
        "--base-image",
        help="the image the environment starts FROM (default: the seed's environment image)",
    )
    _json_option(p, "the folders written and the tasks skipped as JSON")
    with_dataset(p)

    _add_openenv_command(sub, with_dataset)
    _add_reward_command(sub)
    return parser


def _json_option(p: argparse.ArgumentParser, what: str) -> None:
    p.add_argument("--json", action="store_true", help=what)


def _runner_options(p: argparse.ArgumentParser) -> None:
    _json_option(p, "print the run's result as JSON (progress goes to standard error)")
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


def _add_reward_command(sub: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    p = sub.add_parser(
        "serve-reward",
        help="serve verify over HTTP for training loops  [serve]",
        description="Serve rewards over HTTP (uvicorn): POST /verify and /verify/batch grade "
        "patches with the library's grading path, with bounded concurrency, a bounded queue "
        "(429 + Retry-After when full), deadlines, retries on sandbox faults and results kept "
        "by request_id; GET /tasks/{id}, /healthz, /metrics. SIGTERM drains. See "
        "docs/reward-service.md.",
    )
    p.add_argument(
        "--dataset",
        type=Path,
        action="append",
        help="a dataset or version folder or fsspec URL; repeat for several "
        "(default: the latest local version)",
    )
    p.add_argument("--host", default="127.0.0.1", help="address to listen on (default 127.0.0.1)")
    p.add_argument("--port", type=int, default=8000, help="port to listen on (default 8000)")
    p.add_argument("--token", help="require this bearer token (default: $TASKMINT_REWARD_TOKEN)")
    p.add_argument("--concurrency", type=int, help="gradings at once (default: the cores)")
    p.add_argument("--queue", type=int, help="gradings waiting at most (default 8 per grader)")
    p.add_argument("--queue-per-env", type=int, help="gradings waiting at most per environment")
    p.add_argument(
        "--deadline", type=float, default=900.0, help="default request deadline (s, 900)"
    )
    p.add_argument("--max-patch-bytes", type=int, default=1 << 20, help="patch size limit (1 MiB)")
    p.add_argument("--retries", type=int, default=2, help="regrades after a sandbox fault (2)")
    p.add_argument("--no-warm-up", action="store_true", help="skip grading a gold patch per env")
    p.add_argument("--state-dir", type=Path, help="where results are kept by request_id")
    p.add_argument("--drain", type=float, default=120.0, help="seconds SIGTERM waits (120)")
    p.add_argument("--log-level", default="warning", help="uvicorn's log level (warning)")


def _add_openenv_command(
    sub: argparse._SubParsersAction[argparse.ArgumentParser],
    with_dataset: Callable[[argparse.ArgumentParser], None],
) -> None:
    p = sub.add_parser(
        "serve-openenv",
        help="serve a dataset version as an OpenEnv environment  [openenv]",
        description="Serve a published version's tasks as an OpenEnv environment (OpenEnv's "
        "server under uvicorn): one task per episode, the tools run in the sandbox, submit "
        "returns verify's reward; OpenEnv's Task API lists the splits and tasks. See "
        "docs/openenv.md.",
    )
    p.add_argument("--host", default="127.0.0.1", help="address to listen on (default 127.0.0.1)")
    p.add_argument("--port", type=int, default=8000, help="port to listen on (default 8000)")
    p.add_argument("--max-sessions", type=int, default=4, help="concurrent episodes (default 4)")
    p.add_argument(
        "--session-timeout",
        type=float,
        help="close sessions idle this many seconds (default: never)",
    )
    p.add_argument(
        "--command-timeout",
        type=float,
        default=60.0,
        help="a shell command's default time limit in seconds (default 60)",
    )
    p.add_argument(
        "--max-command-timeout",
        type=float,
        default=600.0,
        help="the most a shell command may ask for (default 600)",
    )
    p.add_argument("--log-level", default="info", help="uvicorn's log level (default info)")
    with_dataset(p)
