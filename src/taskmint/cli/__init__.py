"""The `taskmint` command: a thin shell over the library.

Each command calls one library function and turns taskmint's errors into a one-line message and
exit status 2; every command that prints takes `--json`. The long commands (refresh, harder,
calibrate) show their progress (`display`) and stop on SIGINT or SIGTERM at once: finished
results are already stored, nothing computed after the signal is, the process exits 130 or 143
saying how to resume, and the reaper (`taskmint.lifecycle`) removes its sandboxes, servers and
scratch folders.
"""

from __future__ import annotations

import argparse
import contextlib
import dataclasses
import os
import signal
import sys
from collections.abc import Callable, MutableMapping, Sequence
from pathlib import Path
from typing import Any

from taskmint.cli.commands import cmd_list, cmd_report, cmd_show, cmd_verify, cmd_workspace
from taskmint.cli.export import cmd_export
from taskmint.cli.images import cmd_images
from taskmint.cli.parser import build_parser
from taskmint.cli.production import (
    cmd_calibrate,
    cmd_harder,
    cmd_refresh,
    cmd_serve,
    cmd_serve_openenv,
)
from taskmint.cli.reward import cmd_serve_reward
from taskmint.config import PipelineConfig, load_config
from taskmint.errors import TaskmintError
from taskmint.lifecycle import restore_signals, stop_on_signals, stop_requested

__all__ = ["build_parser", "main", "prefect_defaults"]

_COMMANDS: dict[str, Callable[[argparse.Namespace, PipelineConfig], int]] = {
    "serve": cmd_serve,
    "harder": cmd_harder,
    "images": cmd_images,
    "calibrate": cmd_calibrate,
    "refresh": cmd_refresh,
    "list": cmd_list,
    "show": cmd_show,
    "report": cmd_report,
    "workspace": cmd_workspace,
    "verify": cmd_verify,
    "export": cmd_export,
    "serve-openenv": cmd_serve_openenv,
    "serve-reward": cmd_serve_reward,
}


def _config(args: argparse.Namespace) -> PipelineConfig:
    config = _load(args)
    if args.sandbox:
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
        "parallel_seeds": getattr(args, "parallel_seeds", None),
        "dataset_name": getattr(args, "name", None),
        "models": getattr(args, "models", None),
        "alert_webhook": os.environ.get("TASKMINT_ALERT_WEBHOOK") or None,
    }
    return load_config(args.config, **overrides)


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
    except (TaskmintError, FileExistsError) as exc:
        print(f"taskmint: error: {exc}", file=sys.stderr)
        return 2
    finally:
        if previous is not None:  # main() called in a process that goes on (tests, scripts)
            restore_signals(previous)
