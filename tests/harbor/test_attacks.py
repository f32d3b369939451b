"""Attacks by the agent on an exported Harbor task, tried through the local trial runner, which
runs them as Harbor does: as task.toml's agent user, in the container the verifier then runs in,
with /tests uploaded over whatever is there and /logs/verifier left as the agent left it.

Each attack gets 0, and the gold solution with the attack beside it still gets 1. Where an
attack fails only because the agent is not root (task.toml's `[agent] user`), the same attack
by a root agent is tried too, and it wins: the defence is the user, and the test can fail.
"""

from __future__ import annotations

import base64
import json
import re
import shlex
import shutil
import tarfile
from pathlib import Path

import pytest

from taskmint.harbor import export_harbor, run_trial
from taskmint.harbor.export import AGENT_USER
from taskmint.publish import load_tasks
from taskmint.records import Task

pytestmark = pytest.mark.slow

# A .pth file in the environment's site-packages runs in every interpreter of the environment,
# the grader's included (`python -I` still reads site-packages): at its exit it rewrites the
# reward files.
_PTH = (
    "import atexit, os; os.environ.get('TASKMINT_TESTS_DIR') and atexit.register(lambda: "
    "[open('/logs/verifier/' + n, 'w').write(v) for n, v in "
    "(('reward.txt', '1'), ('reward.json', '{\"reward\": 1}'))])"
)
SITE = "$(python -c 'import site; print(site.getsitepackages()[0])')"

ATTACKS = {
    # rewards written before the verifier runs
    "planted_rewards": (
        "echo 1 > /logs/verifier/reward.txt; echo '{\"reward\": 1}' > /logs/verifier/reward.json;"
        " echo '{\"reward\": 1}' > /logs/verifier/grade.json"
    ),
    # a test.sh of the agent's, for Harbor to upload the real one over (or beside)
    "planted_tests": (
        "mkdir -p /tests; printf '#!/bin/bash\\necho 1 > /logs/verifier/reward.txt\\n' "
        "> /tests/test.sh; printf 'print(1)\\n' > /tests/grade.py; ls -ld /tests"
    ),
    # a process left behind that rewrites the grader as soon as it is uploaded
    "grader_rewriter": (
        "nohup sh -c 'while :; do [ -f /tests/grade.py ] && "
        'printf "open(\\"/logs/verifier/reward.txt\\", \\"w\\").write(\\"1\\")\\n" '
        "> /tests/grade.py; sleep 0.01; done' >/dev/null 2>&1 &"
    ),
    # the environment's interpreter made to rewrite the reward at its exit
    "environment_pth": f"echo {shlex.quote(_PTH)} > {SITE}/zz_taskmint_attack.pth",
    # the interpreter itself replaced
    "interpreter_replaced": (
        "p=$(readlink -f $(command -v python)); printf '#!/bin/sh\\necho 1 > "
        '/logs/verifier/reward.txt\\n\' > "$p"'
    ),
    # files the project's runner would load: conftest, pytest.ini, sitecustomize
    "runner_configuration": (
        "printf 'def pytest_collection_modifyitems(items):\\n    items.clear()\\n' > conftest.py;"
        " printf '[pytest]\\naddopts = -p no:taskmint\\n' > pytest.ini;"
        " printf 'import sys; sys.exit(0)\\n' > sitecustomize.py"
    ),
    # the project's source made to end the run early, as a pass
    "early_exit": "for f in $(find . -name '*.py' -not -path './tests/*'); do "
    "printf 'import os\\nos._exit(0)\\n' >> \"$f\"; done",
}
BREAKS_THE_CODE = {"early_exit"}  # no gold solution survives it
NEEDS_ROOT = {"planted_tests", "environment_pth", "interpreter_replaced"}


@pytest.fixture(scope="module")
def folder(tiny_dataset: Path, cache_dir: Path, tmp_path_factory, env_image: str) -> Path:
    """One exported task (with a hidden test, if one has)."""
    tasks: dict[str, Task] = {t.instance_id: t for t in load_tasks(tiny_dataset, streaming=False)}
    chosen = next((i for i, t in tasks.items() if t.hidden_tests), next(iter(tasks)))
    dest = tmp_path_factory.mktemp("attacks")
    (path,) = export_harbor(tiny_dataset, dest, task_ids=[chosen], cache_dir=cache_dir)
    return path


@pytest.fixture(scope="module")
def root_folder(folder: Path, tmp_path_factory) -> Path:
    """The same task with the agent running as root (what the export avoids)."""
    dest = tmp_path_factory.mktemp("attacks-root") / folder.name
    shutil.copytree(folder, dest)
    toml = dest / "task.toml"
    text = toml.read_text()
    agent = re.search(r"(?ms)^\[agent\]\n.*?(?=^\[|\Z)", text)
    assert agent and f'user = "{AGENT_USER}"' in agent.group(0)
    toml.write_text(text.replace(agent.group(0), agent.group(0).replace(AGENT_USER, "root")))
    return dest


def test_the_agent_is_not_root_and_owns_only_the_app(folder):
    probe = (
        "id -u; id -un; stat -c '%U %a' /app /tests /logs/verifier $(command -v python); "
        f"touch {SITE}/x 2>&1; touch /usr/bin/x 2>&1; mkdir /tests/x 2>&1; true"
    )
    result = run_trial(folder, probe)
    lines = result.logs["agent"].splitlines()
    assert lines[0] != "0" and lines[1] == AGENT_USER, lines
    assert lines[2] == f"{AGENT_USER} 755", lines  # /app
    assert all(line.startswith("root ") for line in lines[3:6]), lines
    assert sum("Permission denied" in line for line in lines) == 3, lines


@pytest.mark.parametrize("name", sorted(ATTACKS))
def test_an_attack_gets_0_and_gold_beside_it_still_gets_1(folder, name):
    attack = ATTACKS[name]
    alone = run_trial(folder, attack)
    assert alone.error is None, alone.error
    assert alone.reward == 0.0, (alone.details, alone.logs.get("verifier"))
    if name in BREAKS_THE_CODE:
        return
    gold = run_trial(folder, ["bash", "-c", f"{_solve(folder)}\n{attack}"])
    assert gold.error is None, gold.error
    assert gold.reward == 1.0, (gold.details, gold.logs.get("verifier"), gold.logs["agent"])


@pytest.mark.parametrize("name", sorted(NEEDS_ROOT))
def test_the_same_attack_by_a_root_agent_is_stopped_only_by_the_user(folder, root_folder, name):
    """As the agent user the attack is refused by the file system; as root it gets in: for the
    environment .pth and the replaced interpreter it wins outright, which is why the export
    names an agent user."""
    refused = run_trial(folder, ATTACKS[name])
    assert "Permission denied" in refused.logs["agent"], refused.logs["agent"]
    assert refused.reward == 0.0
    as_root = run_trial(root_folder, ATTACKS[name])
    assert "Permission denied" not in as_root.logs["agent"], as_root.logs["agent"]
    if name != "planted_tests":  # Harbor's upload replaces the planted files themselves
        assert as_root.reward == 1.0, (as_root.details, as_root.logs.get("verifier"))


def _solve(folder: Path) -> str:
    """solution/solve.sh's work as one shell command: the gold patch's files, written in place
    (the agent command gets no solution/ folder; the oracle does)."""
    data = base64.b64encode((folder / "solution" / "fixed.tar").read_bytes()).decode()
    return f"echo {data} | base64 -d | tar -xf - --no-same-owner -C /app"


_PROBE = r"""
import json, os, socket, sys
needles = json.loads(sys.argv[1])
found = {n: [] for n in needles}
gits = []
for root, dirs, files in os.walk("/"):
    if root == "/":
        dirs[:] = [d for d in dirs if d not in ("proc", "sys", "dev")]
    gits += [os.path.join(root, d) for d in dirs if d == ".git"]
    for name in files:
        path = os.path.join(root, name)
        try:
            if os.path.islink(path) or os.path.getsize(path) > 8_000_000:
                continue
            with open(path, "rb") as fh:
                text = fh.read().decode("utf-8", "replace")
        except OSError:
            continue
        flat = "\n".join(line.strip() for line in text.splitlines())
        for n in needles:
            if n in flat:
                found[n].append(path)
try:
    socket.create_connection(("1.1.1.1", 53), timeout=3).close()
    network = "reachable"
except OSError as exc:
    network = type(exc).__name__
print(json.dumps({"found": found, "gits": gits, "network": network,
                  "interfaces": sorted(os.listdir("/sys/class/net"))}))
"""


def test_inside_the_container_there_is_no_answer_no_history_and_no_network(
    folder, root_folder, tiny_dataset
):
    """From inside a container of the exported environment, as root (who sees most): the
    removed code is in no file, no hidden test is defined anywhere, there is no .git, and
    nothing is reachable. A line of the broken tree is found (the search works)."""
    tasks = load_tasks(tiny_dataset, streaming=False)
    task = next(t for t in tasks if t.instance_id == folder.name)
    removed = "\n".join(line.strip() for line in task.removed_code.strip().splitlines())
    hidden = [f"def {t.split('::')[-1].split('[')[0]}(" for t in task.hidden_tests]
    present = _a_line_of_the_broken_tree(folder)
    needles = [removed, *hidden, present]
    script = base64.b64encode(_PROBE.encode()).decode()
    command = (
        f"echo {script} | base64 -d > /tmp/probe.py && "
        f"python /tmp/probe.py {shlex.quote(json.dumps(needles))}"
    )
    result = run_trial(root_folder, command)
    out = json.loads(result.logs["agent"].strip().splitlines()[-1])
    assert out["found"][present], "the search found nothing it should have"
    assert out["found"][removed] == [], out["found"][removed]
    for name in hidden:
        assert out["found"][name] == [], (name, out["found"][name])
    assert hidden, "the chosen task has hidden tests to look for"
    assert out["gits"] == []
    assert out["network"] != "reachable" and out["interfaces"] == ["lo"], out


def _a_line_of_the_broken_tree(folder: Path) -> str:
    """A distinctive line of a source file of the broken tree (from environment/app.tar)."""
    with tarfile.open(folder / "environment" / "app.tar") as tar:
        for member in tar.getmembers():
            if member.isfile() and member.name.endswith(".py") and "test" not in member.name:
                fh = tar.extractfile(member)
                assert fh is not None
                lines = [ln.strip() for ln in fh.read().decode().splitlines()]
                best = max(lines, key=len)
                if len(best) > 30:
                    return best
    raise AssertionError("no source line to look for")
