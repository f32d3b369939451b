"""The consumer installs alone: `pip install taskmint` (no extras) into a fresh venv gives
`load_tasks`, `workspace`, `verify` and `RewardClient`, and none of Prefect, Dask, docker,
openai, openenv, starlette or uvicorn.

The wheel is built from this checkout and installed with pip (the package index must be
reachable, as for `make setup`); the published version is the session's tiny dataset.
"""

from __future__ import annotations

import json
import os
import subprocess
import venv
from pathlib import Path

import pytest

pytestmark = pytest.mark.slow  # builds a venv and installs taskmint's dependencies into it

ROOT = Path(__file__).resolve().parents[1]

CONSUMER = r"""
import importlib, json, sys, tempfile
from pathlib import Path

absent = {}
for name in (
    "prefect", "prefect_dask", "dask", "distributed", "docker", "openai", "openenv", "starlette",
    "uvicorn",
):
    try:
        importlib.import_module(name)
    except ImportError:
        absent[name] = True
    else:
        absent[name] = False

from taskmint import RewardClient, load_tasks, verify, workspace

version, cache = sys.argv[1], sys.argv[2]
streamed = list(load_tasks(version))
task = streamed[0]
ws = workspace(task, Path(tempfile.mkdtemp()) / "ws", cache_dir=cache)
gold = verify(task, task.patch, cache_dir=cache)
empty = verify(task, "", cache_dir=cache)
print(json.dumps({
    "absent": absent,
    "tasks": len(streamed),
    "workspace_files": sum(1 for p in ws.rglob("*") if p.is_file()),
    "gold": gold.reward,
    "empty": empty.reward,
    "empty_reason": empty.reason,
    "client": RewardClient("http://127.0.0.1:9").url,
    "loaded_modules": sorted(m for m in sys.modules if m.split(".")[0] in absent),
}))
"""


def test_pip_install_without_extras_gives_a_working_consumer(tiny_dataset, cache_dir, tmp_path):
    env_dir = tmp_path / "consumer-venv"
    venv.EnvBuilder(with_pip=True).create(env_dir)
    python = env_dir / "bin" / "python"
    install = subprocess.run(
        [str(python), "-m", "pip", "install", "--quiet", str(ROOT)],
        capture_output=True,
        text=True,
        timeout=900,
        env={**os.environ, "PIP_DISABLE_PIP_VERSION_CHECK": "1"},
    )
    assert install.returncode == 0, install.stderr[-3000:]
    run = subprocess.run(
        [str(python), "-c", CONSUMER, str(tiny_dataset), str(cache_dir)],
        capture_output=True,
        text=True,
        timeout=900,
        cwd=tmp_path,  # not the checkout: the installed package, not the source tree
    )
    assert run.returncode == 0, run.stderr[-3000:]
    out = json.loads(run.stdout.strip().splitlines()[-1])
    assert out["absent"] == dict.fromkeys(out["absent"], True), out["absent"]
    assert out["loaded_modules"] == []
    assert out["tasks"] >= 1 and out["workspace_files"] > 0
    assert out["gold"] == 1.0
    assert out["empty"] == 0.0, out["empty_reason"]
    # the CLI's consumer commands work; a producer command says which extra it needs
    taskmint = str(env_dir / "bin" / "taskmint")
    listed = subprocess.run(
        [taskmint, "list", "--dataset", str(tiny_dataset), "--json"],
        capture_output=True,
        text=True,
        timeout=300,
        cwd=tmp_path,
    )
    assert listed.returncode == 0, listed.stderr[-3000:]
    assert len(json.loads(listed.stdout)) == out["tasks"]
    refresh = subprocess.run(
        [taskmint, "--output", str(tmp_path / "out"), "refresh"],
        capture_output=True,
        text=True,
        timeout=300,
        cwd=tmp_path,
    )
    assert refresh.returncode == 2
    assert "pip install 'taskmint[flows]'" in refresh.stderr
    assert out["client"] == "http://127.0.0.1:9"  # the reward service's client needs no extra
    for command, extra in (("serve-openenv", "openenv"), ("serve-reward", "serve")):
        served = subprocess.run(
            [taskmint, "--output", str(tmp_path / "out"), command, "--dataset", str(tiny_dataset)],
            capture_output=True,
            text=True,
            timeout=300,
            cwd=tmp_path,
        )
        assert served.returncode == 2, (command, served.stderr[-2000:])
        assert f"pip install 'taskmint[{extra}]'" in served.stderr
