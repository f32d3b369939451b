"""`taskmint export harbor`: a published version's tasks as Harbor task folders."""

from __future__ import annotations

import argparse
import json
import sys

from taskmint.cli.commands import version_dir
from taskmint.cli.display import emit_json
from taskmint.config import PipelineConfig
from taskmint.harbor import export_harbor
from taskmint.harbor.export import EXPORT_RECORD

__all__ = ["cmd_export"]


def cmd_export(args: argparse.Namespace, config: PipelineConfig) -> int:
    version = version_dir(args, config)
    written = export_harbor(
        version,
        args.dest,
        task_ids=args.task_ids or None,
        hint_level=args.hint_level,
        base_image=args.base_image,
        cache_dir=config.cache_dir,
    )
    record = json.loads((args.dest / EXPORT_RECORD).read_text(encoding="utf-8"))
    if args.json:
        emit_json(
            {
                "dataset_version": record["dataset_version"],
                "exported": [str(p) for p in written],
                "skipped": record["skipped"],
            }
        )
    else:
        for path in written:
            print(path)
        for item in record["skipped"]:
            print(f"skipped {item['instance_id']}: {item['reason']}", file=sys.stderr)
    return 0
