"""Writing and reading dataset versions."""

from __future__ import annotations

import hashlib
import io
import json
import os
import re
import shutil
import tarfile
import tempfile
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pyarrow as pa
import pyarrow.parquet as pq

from taskmint.acquire.snapshot import copy_tree
from taskmint.errors import DatasetError
from taskmint.records import Calibration, SeedApp, SeedManifest, Task, from_json_dict, to_json_dict

__all__ = [
    "ENVIRONMENT_SCHEMA",
    "FEATURE_NAMES",
    "TASK_SCHEMA",
    "PublishedVersion",
    "latest_version",
    "load_seed",
    "load_tasks",
    "publish",
    "verify_manifest",
]

FEATURE_NAMES = (
    "lines_removed",
    "units",
    "files",
    "complexity",
    "callers",
    "has_docstring",
    "whole_class",
    "scope_change",
    "fail_to_pass",
)
_STR_LIST = pa.list_(pa.string())
_CALIBRATION = pa.struct(
    [
        ("model", pa.string()),
        ("attempts", pa.int64()),
        ("solves", pa.int64()),
        ("rate", pa.float64()),
        ("interval_low", pa.float64()),
        ("interval_high", pa.float64()),
        ("date", pa.string()),
        ("tokens", pa.int64()),
        ("cost", pa.float64()),
    ]
)
TASK_SCHEMA = pa.schema(
    [
        ("instance_id", pa.string()),
        ("seed", pa.string()),
        ("snapshot_id", pa.string()),
        ("env_id", pa.string()),
        ("language", pa.string()),
        ("strategy", pa.string()),
        ("units", _STR_LIST),
        ("files", _STR_LIST),
        ("problem_statement", pa.string()),
        ("hints", _STR_LIST),
        ("breaking_patch", pa.string()),
        ("patch", pa.string()),
        ("FAIL_TO_PASS", _STR_LIST),
        ("PASS_TO_PASS", _STR_LIST),
        ("test_paths", _STR_LIST),
        ("source_paths", _STR_LIST),
        ("test_command", pa.string()),
        ("removed_code", pa.string()),
        ("features", pa.struct([(n, pa.float64()) for n in FEATURE_NAMES])),
        ("calibration", pa.list_(_CALIBRATION)),
        ("flaky_tests", _STR_LIST),
        ("validation_runs", pa.int64()),
        ("validation_wall_time", pa.float64()),
        ("created", pa.string()),
        ("band", pa.string()),
        ("retired", pa.bool_()),
        ("original_runs", pa.int64()),
        ("broken_runs", pa.int64()),
        ("dropped_tests", _STR_LIST),
        ("hidden_tests", _STR_LIST),
    ]
)
ENVIRONMENT_SCHEMA = pa.schema(
    [
        ("snapshot_id", pa.string()),
        ("env_id", pa.string()),
        ("seed", pa.string()),
        ("language", pa.string()),
        ("manifest", pa.string()),
        ("python_version", pa.string()),
        ("dependencies", _STR_LIST),
        ("files", _STR_LIST),
        ("archive", pa.binary()),
    ]
)
_VERSION = re.compile(r"^v(\d{4,})$")


@dataclass(frozen=True, slots=True, kw_only=True)
class PublishedVersion:
    """Where a version landed and what it holds."""

    path: str
    version: str
    tasks: int
    environments: int
    created: bool  # False when the content equalled the latest version, which is reused


def _task_row(task: Task) -> dict[str, Any]:
    row = to_json_dict(task)
    feats = dict(task.features)
    row["features"] = {n: feats.get(n) for n in FEATURE_NAMES}
    row.pop("extra", None)
    return row


def _row_task(row: dict[str, Any]) -> Task:
    row = dict(row)
    row["features"] = tuple(
        (k, float(v)) for k, v in (row.get("features") or {}).items() if v is not None
    )
    row["calibration"] = tuple(from_json_dict(Calibration, c) for c in row.get("calibration") or [])
    return from_json_dict(Task, row)


def _archive(seed: SeedApp) -> bytes:
    """A deterministic tar.gz of the snapshot (sorted names, fixed times and owners)."""
    buf = io.BytesIO()
    with tarfile.open(fileobj=buf, mode="w:gz", compresslevel=9) as tar:
        for rel in seed.files:
            data = (Path(seed.root) / rel).read_bytes()
            info = tarfile.TarInfo(rel)
            info.size = len(data)
            info.mtime = 946684800
            info.mode = 0o755 if os.access(Path(seed.root) / rel, os.X_OK) else 0o644
            tar.addfile(info, io.BytesIO(data))
    raw = buf.getvalue()
    # gzip stores a timestamp in its header; zero it so equal trees give equal bytes.
    return raw[:4] + b"\0\0\0\0" + raw[8:]


def _env_row(seed: SeedApp, env_id: str, python_version: str) -> dict[str, Any]:
    return {
        "snapshot_id": seed.snapshot_id,
        "env_id": env_id,
        "seed": seed.name,
        "language": seed.manifest.language,
        "manifest": json.dumps(to_json_dict(seed.manifest), sort_keys=True),
        "python_version": python_version,
        "dependencies": list(seed.manifest.dependencies),
        "files": list(seed.files),
        "archive": _archive(seed),
    }


def _sha256(path: Path) -> str:
    h = hashlib.sha256()
    with open(path, "rb") as fh:
        for chunk in iter(lambda: fh.read(1 << 20), b""):
            h.update(chunk)
    return h.hexdigest()


def _card(name: str, version: str, tasks: list[Task], parent: str | None) -> str:
    seeds = sorted({t.seed for t in tasks})
    return f"""---
configs:
- config_name: tasks
  data_files:
  - split: train
    path: tasks/*.parquet
  default: true
- config_name: environments
  data_files:
  - split: train
    path: environments/*.parquet
license: apache-2.0
task_categories:
- text-generation
tags:
- code
- reinforcement-learning
- taskmint
---

# {name} {version}

Verifiable coding tasks minted by taskmint: a feature was removed from a working application,
and the tests named in `FAIL_TO_PASS` fail until it is restored (those in `PASS_TO_PASS` must
keep passing). Columns follow SWE-bench where one exists (`instance_id`, `problem_statement`,
`patch` is the gold diff, `FAIL_TO_PASS`, `PASS_TO_PASS`).

- tasks: {len(tasks)}
- seeds: {", ".join(seeds)}
- parent version: {parent or "none"}

Configs: `tasks` (one row per task) and `environments` (one row per seed snapshot, holding the
original tree as a tar.gz in `archive`; a task's broken tree is that tree with `breaking_patch`
applied). Load with `datasets.load_dataset("<this folder>", "tasks")`.
"""


def _versions(base: Path) -> list[str]:
    if not base.is_dir():
        return []
    return sorted(
        (d.name for d in base.iterdir() if d.is_dir() and _VERSION.match(d.name)),
        key=lambda n: int(n[1:]),
    )


def latest_version(base: Path) -> Path:
    """The version `LATEST` points to under a dataset folder (`<root>/<name>`)."""
    base = Path(base)
    pointer = base / "LATEST"
    if pointer.is_file():
        version = pointer.read_text().strip()
        if (base / version / "manifest.json").is_file():
            return base / version
    complete = [v for v in _versions(base) if (base / v / "manifest.json").is_file()]
    if not complete:
        raise DatasetError(
            f"no published version under {base}; run `taskmint refresh` (or `make demo`) first"
        )
    return base / complete[-1]


def publish(
    tasks: list[Task],
    seeds: list[tuple[SeedApp, str, str]],
    *,
    root: Path,
    name: str,
    shard_rows: int = 500,
) -> PublishedVersion:
    """The `publish` verb: write `tasks` (and their seeds' environments) as a new version.

    `seeds` holds (seed, env_id, python_version) for every snapshot the tasks reference. If the
    content equals the latest version's, no version is added and the latest is returned.
    """
    base = Path(root) / name
    base.mkdir(parents=True, exist_ok=True)
    tasks = sorted(tasks, key=lambda t: t.instance_id)
    ids = [t.instance_id for t in tasks]
    if len(set(ids)) != len(ids):
        raise DatasetError("duplicate instance_id in the tasks to publish")
    used = {t.snapshot_id for t in tasks}
    env_rows = sorted(
        (_env_row(s, e, v) for s, e, v in seeds if s.snapshot_id in used),
        key=lambda r: r["snapshot_id"],
    )
    versions = _versions(base)
    parent = versions[-1] if versions else None
    content_hash = hashlib.sha256(
        json.dumps([_task_row(t) for t in tasks], sort_keys=True).encode()
    ).hexdigest()
    if parent is not None:
        try:
            old = json.loads((base / parent / "manifest.json").read_text())
            if old.get("content_sha256") == content_hash:
                return PublishedVersion(
                    path=str(base / parent),
                    version=parent,
                    tasks=len(tasks),
                    environments=len(env_rows),
                    created=False,
                )
        except (OSError, json.JSONDecodeError):
            pass
    version = f"v{(int(parent[1:]) + 1) if parent else 1:04d}"
    tmp = Path(tempfile.mkdtemp(prefix=f".{version}.", dir=base))
    try:
        files: dict[str, Path] = {}
        n_shards = max(1, -(-len(tasks) // shard_rows))
        for i in range(n_shards):
            chunk = tasks[i * shard_rows : (i + 1) * shard_rows]
            rel = f"tasks/train-{i:05d}-of-{n_shards:05d}.parquet"
            files[rel] = tmp / rel
            files[rel].parent.mkdir(parents=True, exist_ok=True)
            table = pa.Table.from_pylist([_task_row(t) for t in chunk], schema=TASK_SCHEMA)
            pq.write_table(table, files[rel], row_group_size=100)
        rel = "environments/train-00000-of-00001.parquet"
        files[rel] = tmp / rel
        files[rel].parent.mkdir(parents=True, exist_ok=True)
        pq.write_table(pa.Table.from_pylist(env_rows, schema=ENVIRONMENT_SCHEMA), files[rel])
        (tmp / "README.md").write_text(_card(name, version, tasks, parent), "utf-8")
        files["README.md"] = tmp / "README.md"
        manifest = {
            "name": name,
            "version": version,
            "parent": parent,
            "content_sha256": content_hash,
            "tasks": len(tasks),
            "environments": len(env_rows),
            "files": {
                k: {"sha256": _sha256(p), "bytes": p.stat().st_size}
                for k, p in sorted(files.items())
            },
        }
        # The manifest is written last: a version without one is incomplete and never loaded.
        (tmp / "manifest.json.tmp").write_text(json.dumps(manifest, indent=2), "utf-8")
        os.replace(tmp / "manifest.json.tmp", tmp / "manifest.json")
        os.chmod(tmp, 0o755)
        os.rename(tmp, base / version)
    finally:
        shutil.rmtree(tmp, ignore_errors=True)
    pointer_tmp = base / f".LATEST.{os.getpid()}"
    pointer_tmp.write_text(version + "\n")
    os.replace(pointer_tmp, base / "LATEST")
    return PublishedVersion(
        path=str(base / version),
        version=version,
        tasks=len(tasks),
        environments=len(env_rows),
        created=True,
    )


def verify_manifest(version_dir: Path) -> dict[str, Any]:
    """Check every file of a version against its manifest; returns the manifest."""
    version_dir = Path(version_dir)
    try:
        manifest: dict[str, Any] = json.loads((version_dir / "manifest.json").read_text())
    except FileNotFoundError:
        raise DatasetError(
            f"{version_dir} has no manifest.json: the version is incomplete; use another version"
        ) from None
    except (OSError, json.JSONDecodeError) as exc:
        raise DatasetError(f"{version_dir}/manifest.json is unreadable: {exc}") from exc
    for rel, meta in manifest.get("files", {}).items():
        path = version_dir / rel
        if not path.is_file():
            raise DatasetError(f"{path} is missing; republish the version or load another one")
        if _sha256(path) != meta["sha256"]:
            raise DatasetError(
                f"{path} does not match its sha256 in manifest.json (corrupt or modified); "
                "republish the version or load another one"
            )
    return manifest


def load_tasks(version_dir: Path, *, check: bool = True) -> list[Task]:
    """Every task of a version, as records."""
    version_dir = Path(version_dir)
    if check:
        verify_manifest(version_dir)
    tasks: list[Task] = []
    for shard in sorted((version_dir / "tasks").glob("*.parquet")):
        tasks.extend(_row_task(r) for r in pq.read_table(shard).to_pylist())
    return tasks


def load_seed(version_dir: Path, snapshot_id: str, *, cache_dir: Path) -> SeedApp:
    """The seed snapshot a task references, unpacked into the snapshot cache."""
    table = pq.read_table(Path(version_dir) / "environments")
    rows = [r for r in table.to_pylist() if r["snapshot_id"] == snapshot_id]
    if not rows:
        raise DatasetError(f"snapshot {snapshot_id} is not in {version_dir}/environments")
    row = rows[0]
    manifest = from_json_dict(SeedManifest, json.loads(row["manifest"]))
    final = Path(cache_dir) / "snapshots" / snapshot_id
    if not (final / "tree").is_dir():
        final.parent.mkdir(parents=True, exist_ok=True)
        tmp = Path(tempfile.mkdtemp(prefix=f".{snapshot_id}.", dir=final.parent))
        try:
            with tarfile.open(fileobj=io.BytesIO(row["archive"]), mode="r:gz") as tar:
                tar.extractall(tmp / "unpacked", filter="data")
            copy_tree(tmp / "unpacked", tmp / "tree", row["files"])
            shutil.rmtree(tmp / "unpacked")
            os.chmod(tmp, 0o755)
            try:
                os.rename(tmp, final)
            except OSError:
                if not (final / "tree").is_dir():
                    raise
        finally:
            shutil.rmtree(tmp, ignore_errors=True)
    return SeedApp(
        name=row["seed"],
        snapshot_id=snapshot_id,
        root=str(final / "tree"),
        manifest=manifest,
        files=tuple(row["files"]),
        origin=f"{version_dir}#environments/{snapshot_id}",
    )
