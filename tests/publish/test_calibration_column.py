"""The `calibration` column: the solver as three fields, and versions written before that.

A version an older taskmint wrote holds one `model` string per row (`reference/null`,
`gpt-x@hint2`); it still loads, and a `retract` republishes its rows in the current layout
without losing a value.
"""

from __future__ import annotations

import hashlib
import json
from pathlib import Path

import pyarrow as pa
import pyarrow.parquet as pq

from taskmint.publish import load_tasks, publish, retract
from taskmint.publish.schema import TASK_FEATURES
from taskmint.records import Calibration, Environment, SeedApp, Task


def _to_legacy(version: Path) -> None:
    """Rewrite a version's task shards as an older taskmint wrote them (and its manifest)."""
    manifest = json.loads((version / "manifest.json").read_text())
    for entry in manifest["splits"]["tasks"]["train"]:
        if not entry["rows"]:
            continue
        path = version / entry["path"]
        rows = pq.read_table(path).to_pylist()
        for row in rows:
            row["calibration"] = [
                {
                    "model": Calibration.format_label(
                        c.pop("solver_kind"), c.pop("solver_name"), c.pop("hint_level")
                    ),
                    **c,
                }
                for c in row["calibration"]
            ]
        pq.write_table(pa.Table.from_pylist(rows), path)
        data = path.read_bytes()
        meta = {"sha256": hashlib.sha256(data).hexdigest(), "bytes": len(data)}
        entry.update(meta)
        manifest["files"][entry["path"]].update(meta)
    (version / "manifest.json").write_text(json.dumps(manifest))


def _solvers(tasks: list[Task]) -> dict[str, tuple[Calibration, ...]]:
    return {t.instance_id: t.calibration for t in tasks}


def test_the_column_is_a_struct_of_the_solver_fields() -> None:
    struct = TASK_FEATURES["calibration"].feature
    assert list(struct)[:3] == ["solver_kind", "solver_name", "hint_level"]
    assert "model" not in struct
    assert str(struct["solver_kind"]) == "Value('string')"
    assert str(struct["hint_level"]) == "Value('int64')"


def test_an_older_version_loads_and_retracts_without_losing_a_value(
    tiny_tasks: list[Task], tiny_seed: SeedApp, tiny_env: Environment, tmp_path: Path
) -> None:
    seeds = [(tiny_seed, tiny_env.env_id, tiny_env.python_version)]
    first = publish(tiny_tasks, seeds, root=tmp_path, name="old")
    _to_legacy(Path(first.path))
    raw = pq.read_table(next(Path(first.path).glob("tasks/*.parquet"))).schema
    assert "model" in str(raw.field("calibration").type)  # it really is the older layout
    want = _solvers(tiny_tasks)
    assert _solvers(load_tasks(first.path, streaming=False)) == want

    gone = tiny_tasks[0].instance_id
    second = retract(tmp_path, "old", {gone: "a test"})
    kept = load_tasks(second.path, streaming=False)
    assert _solvers(kept) == {k: v for k, v in want.items() if k != gone}
    assert any(c.solver_kind == "reference" for t in kept for c in t.calibration)
