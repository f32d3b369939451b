"""The exported folders read by Harbor's own task model: harbor's wheel (0.25.0, from PyPI) and
its `harbor.models.task.task.Task`, which parses task.toml with Harbor's TaskConfig (pydantic,
unknown keys ignored) and checks the folder (instruction.md, environment/, tests/test.sh, the
paths under tests/ and solution/).

Harbor needs Python 3.12 and cannot be installed here (3.11): only its wheel is downloaded, and
its task-model modules run in a child interpreter with `typing.override` (3.12) supplied, its
package `__init__` files skipped (they import the whole harness). Those modules need pydantic,
toml and pathspec, which the dev install has.
"""

from __future__ import annotations

import json
import subprocess
import sys
import zipfile
from pathlib import Path

import pytest

from taskmint.harbor import export_harbor
from taskmint.harbor.export import AGENT_USER, SCHEMA_VERSION, VERIFIER_USER

HARBOR = "harbor==0.25.0"

_READ = r"""
import json, sys, types, typing
if not hasattr(typing, "override"):
    typing.override = lambda f: f
root = sys.argv[1]
sys.path.insert(0, root)
for name in ("harbor", "harbor.models", "harbor.models.task", "harbor.utils"):
    module = types.ModuleType(name)
    module.__path__ = [root + "/" + name.replace(".", "/")]
    sys.modules[name] = module
from harbor.models.task.task import Task
from harbor.models.task.verifier_mode import (
    resolve_task_verifier_mode,
    resolve_verifier_environment_definition,
)
out = {}
for folder in sys.argv[2:]:
    valid = Task.is_valid_dir(folder)
    task = Task(folder)
    c = task.config
    out[folder] = {
        "valid": valid,
        "name": task.name,
        "schema_version": c.schema_version,
        "instruction": task.instruction,
        "network_mode": getattr(c.environment.network_mode, "value", None),
        "agent_user": c.agent.user,
        "verifier_user": c.verifier.user,
        "agent_timeout": c.agent.timeout_sec,
        "verifier_timeout": c.verifier.timeout_sec,
        "cpus": c.environment.cpus,
        "memory_mb": c.environment.memory_mb,
        "metadata": c.metadata,
        "verifier_mode": resolve_task_verifier_mode(c).value,
        "artifacts": [a if isinstance(a, str) else a.source for a in c.artifacts],
    }
    definition = resolve_verifier_environment_definition(c, task.paths)
    if definition is not None:
        out[folder]["verifier_environment"] = {
            "directory": str(definition.directory),
            "bundled_tests": definition.bundled_tests,
            "network_mode": getattr(definition.config.network_mode, "value", None),
            "cpus": definition.config.cpus,
            "memory_mb": definition.config.memory_mb,
        }
print(json.dumps(out))
"""


@pytest.fixture(scope="module")
def harbor_wheel(tmp_path_factory) -> Path:
    dest = tmp_path_factory.mktemp("harbor-wheel")
    subprocess.run(
        [
            *(sys.executable, "-m", "pip", "download", "--quiet", "--no-deps"),
            *("--only-binary=:all:", "--python-version", "3.12", "-d", str(dest), HARBOR),
        ],
        check=True,
        timeout=300,
    )
    (wheel,) = dest.glob("harbor-*.whl")
    with zipfile.ZipFile(wheel) as archive:
        archive.extractall(dest / "site")
    return dest / "site"


def _read_with_harbor(site: Path, folders: list[Path]) -> dict[str, dict]:
    proc = subprocess.run(
        [sys.executable, "-c", _READ, str(site), *map(str, folders)],
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert proc.returncode == 0, proc.stderr[-3000:]
    return json.loads(proc.stdout)


def test_harbors_task_model_reads_every_exported_folder(
    harbor_wheel, tiny_dataset, cache_dir, tmp_path
):
    folders = export_harbor(tiny_dataset, tmp_path, hint_level=1, cache_dir=cache_dir)
    assert folders
    read = _read_with_harbor(harbor_wheel, folders)
    for folder in folders:
        task = read[str(folder)]
        assert task["valid"] is True
        assert task["name"] == f"taskmint/{folder.name}"
        assert task["schema_version"] == SCHEMA_VERSION
        assert task["instruction"] == (folder / "instruction.md").read_text()
        assert task["network_mode"] == "no-network"
        assert (task["agent_user"], task["verifier_user"]) == (AGENT_USER, VERIFIER_USER)
        assert task["agent_timeout"] > 0 and task["verifier_timeout"] > 0
        assert task["metadata"]["instance_id"] == folder.name
        assert len(task["metadata"]["content_sha256"]) == 64
        # a separate verifier: a fresh container built from environment/ (a copy of
        # [environment]: no network), the tests uploaded, the agent's /app carried over
        assert task["verifier_mode"] == "separate"
        assert task["artifacts"] == ["/app"]
        assert task["verifier_environment"] == {
            "directory": str(folder / "environment"),
            "bundled_tests": False,
            "network_mode": "no-network",
            "cpus": task["cpus"],
            "memory_mb": task["memory_mb"],
        }


@pytest.mark.parametrize(
    ("damage", "message"),
    [
        ("network", "network_mode"),
        ("test_sh", "test.sh"),
        ("user", "user"),
        ("mode", "environment_mode"),
    ],
)
def test_harbors_task_model_refuses_a_broken_folder(
    harbor_wheel, tiny_dataset, cache_dir, tmp_path, damage, message
):
    """The check can fail: a misspelt network mode or verifier mode, a missing tests/test.sh or
    a user that is neither a name nor a uid is refused by Harbor's own model."""
    (folder,) = export_harbor(
        tiny_dataset, tmp_path, task_ids=[_first_id(tiny_dataset)], cache_dir=cache_dir
    )
    toml = folder / "task.toml"
    if damage == "network":
        toml.write_text(toml.read_text().replace('"no-network"', '"offline"'))
    elif damage == "test_sh":
        (folder / "tests" / "test.sh").unlink()
    elif damage == "mode":
        toml.write_text(toml.read_text().replace('"separate"', '"apart"'))
    else:
        toml.write_text(toml.read_text().replace(f'user = "{AGENT_USER}"', "user = [1]"))
    proc = subprocess.run(
        [sys.executable, "-c", _READ, str(harbor_wheel), str(folder)],
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert proc.returncode != 0 and message in proc.stderr, proc.stderr[-2000:]


def _first_id(dataset: Path) -> str:
    from taskmint.publish import load_tasks

    return next(iter(load_tasks(dataset, streaming=False))).instance_id
