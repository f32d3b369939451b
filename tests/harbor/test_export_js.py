"""`taskmint export harbor` for JavaScript: the tinyjs fixture seed's task as a Harbor folder,
graded by node, for real.

The task is minted from tests/fixtures/seeds/tinyjs and published; its folder starts FROM the
node environment image (`build_environment_image` of the seed's node environment: the runtime,
this machine's node, a standard-library venv for the grader), and the trials run it on the
machine's Docker Engine as Harbor does (tests uploaded after the agent's turn, test.sh as the
verifier user, the agent as task.toml's agent user).
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import tarfile
import tomllib
from pathlib import Path

import pytest

from taskmint.harbor import export_harbor, run_trial, run_trials
from taskmint.harbor.export import EXPORT_RECORD
from taskmint.harbor.inside import grade as grader
from taskmint.publish import load_tasks, publish
from taskmint.records import Environment, SeedApp, Task
from taskmint.runners.adapters import REPORT_FILE, RUNNER_DIR, NodeAdapter, inside_dir
from taskmint.runners.report import parse_node_report
from taskmint.verify import grade

NODE = shutil.which("node")


@pytest.fixture(scope="module")
def js_seed(tinyjs: tuple[SeedApp, Environment, list[Task]]) -> SeedApp:
    return tinyjs[0]


@pytest.fixture(scope="module")
def js_env(tinyjs: tuple[SeedApp, Environment, list[Task]]) -> Environment:
    return tinyjs[1]


@pytest.fixture(scope="module")
def js_dataset(
    tinyjs: tuple[SeedApp, Environment, list[Task]], tmp_path_factory: pytest.TempPathFactory
) -> Path:
    """A version of the tinyjs seed's tasks alone (the session's `tinyjs`)."""
    seed, env, tasks = tinyjs
    version = publish(
        tasks,
        [(seed, env.env_id, env.python_version)],
        root=tmp_path_factory.mktemp("datasets"),
        name="tinyjs",
    )
    return Path(version.path)


@pytest.fixture(scope="module")
def js_image(js_env: Environment) -> str:
    from taskmint.sandbox.docker.base_image import build_base_image
    from taskmint.sandbox.docker.client import docker_client
    from taskmint.sandbox.docker.images import build_environment_image

    client = docker_client()
    return build_environment_image(js_env, client, base=build_base_image(client))


@pytest.fixture(scope="module")
def tasks(js_dataset: Path) -> dict[str, Task]:
    return {t.instance_id: t for t in load_tasks(js_dataset, streaming=False)}


@pytest.fixture(scope="module")
def exported(
    js_dataset: Path, cache_dir: Path, js_image: str, tmp_path_factory: pytest.TempPathFactory
) -> list[Path]:
    return export_harbor(js_dataset, tmp_path_factory.mktemp("harbor-js"), cache_dir=cache_dir)


@pytest.fixture(scope="module")
def folder(exported: list[Path]) -> Path:
    return exported[0]


def _spec(folder: Path) -> dict:
    return json.loads((folder / "tests" / "task.json").read_text())


# --- the folder --------------------------------------------------------------------------------


def test_javascript_tasks_export_on_the_node_environment_image(exported, tasks, js_env, js_image):
    assert js_env.kind == "node" and js_image == f"taskmint-env:{js_env.env_id}"
    record = json.loads((exported[0].parent / EXPORT_RECORD).read_text())
    assert record["skipped"] == [] and sorted(record["exported"]) == sorted(tasks)
    reporter = (inside_dir() / "node_reporter.mjs").read_bytes()
    for path in exported:
        task = tasks[path.name]
        assert task.language == "javascript"
        config = tomllib.loads((path / "task.toml").read_text())
        assert config["metadata"]["language"] == "javascript"
        assert config["metadata"]["env_id"] == js_env.env_id
        assert f"FROM {js_image}\n" in (path / "environment" / "Dockerfile").read_text()
        # the runner files are the node reporter alone, byte for byte taskmint's
        runner = path / "tests" / "runner"
        assert sorted(p.name for p in runner.rglob("*") if p.is_file()) == ["node_reporter.mjs"]
        assert (runner / "node_reporter.mjs").read_bytes() == reporter
        spec = _spec(path)
        assert spec["runner"] == "node"
        assert spec["node"] == js_env.interpreter == os.path.realpath(NODE or "")
        assert spec["python"] == "/opt/venv/bin/python"  # the image's standard-library venv
        assert spec["expected"] == list(dict.fromkeys((*task.FAIL_TO_PASS, *task.PASS_TO_PASS)))
        with tarfile.open(path / "tests" / "tests.tar") as tar:
            shipped = {m.name for m in tar.getmembers() if m.isfile()}
        assert {t.split("::", 1)[0] for t in spec["expected"]} <= shipped
        assert "package.json" in shipped  # protected: restored from the task, never the agent's


def test_the_node_image_holds_node_and_the_graders_python(js_image, js_env):
    proc = subprocess.run(
        [
            "docker",
            "run",
            "--rm",
            "--network",
            "none",
            js_image,
            "sh",
            "-c",
            f"{js_env.interpreter} --version && node --version && "
            "/opt/venv/bin/python -I -c 'import json, tarfile, secrets; print(\"ok\")'",
        ],
        capture_output=True,
        text=True,
        timeout=300,
    )
    version = subprocess.run([NODE or "node", "--version"], capture_output=True, text=True)
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout.split() == [version.stdout.strip(), version.stdout.strip(), "ok"]


def test_the_grader_runs_the_node_adapters_command(folder, js_seed, js_env):
    """The grader's command line is `NodeAdapter.command`'s for the expected ids, but for the
    reporter's folder (its own copy) and the destination (its standard output, out of band)."""
    spec = _spec(folder)
    ids = spec["expected"]
    argv, env = NodeAdapter().command(js_seed.manifest, js_env, nonce="n", test_ids=tuple(ids))
    ours = grader.node_command(spec, "/private/runner", ids)
    reporter = f"--test-reporter={RUNNER_DIR}/node_reporter.mjs"
    destination = f"--test-reporter-destination={REPORT_FILE}"
    assert reporter in argv and destination in argv
    swapped = {
        reporter: "--test-reporter=/private/runner/node_reporter.mjs",
        destination: "--test-reporter-destination=stdout",
    }
    assert ours == [swapped.get(a, a) for a in argv]
    assert dict(spec["env"]) == {**dict(env), "TASKMINT_NONCE": ""}  # the grader's nonce


# --- the report --------------------------------------------------------------------------------

EXTRA_TESTS = """\
import { describe, test } from "node:test";
test("later", { todo: true }, () => {});
test("twin", () => {});
test("twin", () => { throw new Error("second twin fails"); });
describe("outer", () => {
  describe("inner", () => { test("deep", () => {}); });
  test("skipped here", { skip: true }, () => {});
});
"""


@pytest.mark.skipif(NODE is None, reason="node is not installed")
def test_node_report_reading_and_grading_are_taskmints(js_seed, tmp_path):
    """A real report of taskmint's reporter (a failing test, a todo, twins, nested suites, a
    file that does not load), then the same with a forged record and without its end: the
    grader reads each as `parse_node_report` does, and grades as `verify.grade` does."""
    ws = tmp_path / "ws"
    shutil.copytree(js_seed.root, ws)
    src = ws / "src" / "strings.js"
    src.write_text(src.read_text().replace('.join("")', '.join("-")'))
    (ws / "test" / "extra.test.js").write_text(EXTRA_TESTS)
    (ws / "test" / "broken.test.js").write_text("import {;\n")
    nonce = "0123abcd" * 4
    report = tmp_path / "report.jsonl"
    subprocess.run(
        [
            NODE or "node",
            "--test",
            f"--test-reporter={inside_dir() / 'node_reporter.mjs'}",
            f"--test-reporter-destination={report}",
            "test/strings.test.js",
            "test/extra.test.js",
            "test/broken.test.js",
        ],
        cwd=ws,
        env={"PATH": "/usr/local/bin:/usr/bin:/bin", "TASKMINT_NONCE": nonce, "HOME": str(ws)},
        capture_output=True,
        timeout=120,
    )
    real = report.read_text()
    outcomes = parse_node_report(report, nonce).outcome_map()
    # the run gave every kind of record the grader must read
    assert set(outcomes.values()) == {"passed", "failed", "skipped"}, outcomes
    assert '"type":"file_error"' in real and '"is_suite":true' in real
    assert "test/extra.test.js::twin #2" in outcomes
    forged = json.dumps({"type": "test", "id": "test/extra.test.js::twin #2", "outcome": "passed"})
    variants = {
        "real": real,
        "forged": real + forged + "\n",
        "cut": "".join(ln for ln in real.splitlines(True) if '"type":"finish"' not in ln),
        "junk": real.replace('"outcome":"failed"', '"outcome":"weird"', 1) + "not json\n",
    }
    candidates = [
        "test/strings.test.js::strings > reverse flips the order",
        "test/strings.test.js::strings > vowels counts a e i o u",
        "test/strings.test.js::strings > a skipped case",
        "test/extra.test.js::later",
        "test/extra.test.js::twin",
        "test/extra.test.js::twin #2",
        "test/extra.test.js::outer > inner > deep",
        "test/extra.test.js::outer > inner",
        "test/broken.test.js",
        "test/none.test.js::nothing",
    ]
    for name, text in variants.items():
        report.write_text(text)
        ours = parse_node_report(report, nonce)
        records, ok = grader.read_report(str(report), nonce)
        got, complete = grader.node_outcomes_of(records)
        assert (got, complete, ok) == (ours.outcome_map(), ours.complete, ours.nonce_ok), name
        for expected in [[c] for c in candidates] + [candidates[1:2] + candidates[4:5]]:
            reward, reason, passed = grade(ours, tuple(expected))
            verdict = grader.judge(
                got,
                expected,
                complete=complete,
                nonce_ok=ok,
                timed_out=False,
                changed=False,
                canaries=None,
            )
            assert (verdict[0], verdict[2]) == (reward, passed), (name, expected)
            assert verdict[1] == reason or verdict[1].startswith("tampered"), (name, expected)
    assert grader.node_outcomes_of(grader.read_report(str(report), "other")[0]) == ({}, False)


# --- grading ------------------------------------------------------------------------------------


def _app(folder: Path, dest: Path, *, gold: bool) -> Path:
    dest.mkdir()
    with tarfile.open(folder / "environment" / "app.tar") as tar:
        tar.extractall(dest, filter="data")
    if gold:
        subprocess.run(
            ["bash", str(folder / "solution" / "solve.sh")],
            check=True,
            env={"PATH": "/usr/bin:/bin", "TASKMINT_APP": str(dest)},
            timeout=120,
        )
    return dest


@pytest.mark.skipif(NODE is None, reason="node is not installed")
def test_grader_on_the_host_without_docker(folder, tmp_path):
    """test.sh with its paths moved by environment variables, this interpreter for the grader
    and this machine's node: the gold tree passes, the broken one does not."""
    for gold in (True, False):
        root = tmp_path / f"gold-{gold}"
        root.mkdir()
        env = {
            "PATH": "/usr/local/bin:/usr/bin:/bin",
            "TASKMINT_APP": str(_app(folder, root / "app", gold=gold)),
            "TASKMINT_LOGS": str(root / "logs"),
            "TASKMINT_GRADE_WS": str(root / "ws"),
            "TASKMINT_PYTHON": sys.executable,
            "TASKMINT_RUN_AS": "self",
            "TASKMINT_CHECK_ENVIRONMENT": "0",  # the digests are the image's
        }
        test_sh = str(folder / "tests" / "test.sh")
        subprocess.run(["bash", test_sh], env=env, check=True, timeout=300)
        result = json.loads((root / "logs" / "grade.json").read_text())
        assert result["reward"] == (1.0 if gold else 0.0), result
        assert not result["tampered"] and result["expected"] == len(_spec(folder)["expected"])
        assert (root / "logs" / "reward.txt").read_text().strip() == str(int(gold))


def test_oracle_scores_1_and_nop_0_in_local_trials(exported):
    oracle = run_trials(exported, "oracle")
    nop = run_trials(exported, "nop")
    print("seconds:", [r.seconds for r in oracle + nop])
    assert [r.error for r in oracle + nop] == [None] * (2 * len(exported))
    assert [r.reward for r in oracle] == [1.0] * len(exported), [r.logs for r in oracle]
    assert [r.reward for r in nop] == [0.0] * len(exported), [r.details for r in nop]
    assert all(r.details["expected"] >= 1 and not r.details["tampered"] for r in oracle + nop)
    assert {r.verifier_mode for r in oracle + nop} == {"separate"}  # the tasks ask for it
    # as a harness that shares the agent's container grades: the environment check (node among
    # the digests of the image) finds nothing changed
    shared = run_trial(exported[0], "oracle", verifier_mode="shared")
    assert shared.reward == 1.0, shared.logs
    assert _grade_json(shared)["environment_checked"] is True


def _gold_agent(folder: Path) -> str:
    """Shell lines that write the gold files into /app (an agent gets no /solution)."""
    lines = ["set -e"]
    with tarfile.open(folder / "solution" / "fixed.tar") as tar:
        for member in tar:
            data = tar.extractfile(member) if member.isfile() else None
            if data is not None:
                text = data.read().decode()
                assert text.endswith("\n") and "EOF_GOLD" not in text
                lines.append(f"cat > /app/{member.name} <<'EOF_GOLD'\n{text}EOF_GOLD")
    return "\n".join(lines) + "\n"


def _grade_json(result) -> dict:  # type: ignore[no-untyped-def]
    return json.loads(result.logs["verifier/grade.json"])


def test_edited_tests_are_graded_on_the_pristine_ones(folder, tasks):
    """An edit that makes the failing test pass trivially is dropped and reported: 0 alone, and
    the gold code with it still earns 1."""
    task = tasks[folder.name]
    test_file = task.FAIL_TO_PASS[0].split("::", 1)[0]
    edit = (
        f"sed -i 's/assert.equal(/true || assert.equal(/' /app/{test_file} && "
        f"grep -q 'true || assert' /app/{test_file}"
    )
    cheat = run_trial(folder, edit)
    assert cheat.agent_exit_code == 0, cheat.logs["agent"]
    assert cheat.reward == 0.0, _grade_json(cheat)
    dropped = f"{test_file}: test files are restored from the task"
    assert dropped in _grade_json(cheat)["rejected_paths"]
    both = run_trial(folder, _gold_agent(folder) + edit)
    assert both.reward == 1.0, _grade_json(both)
    assert any(p.startswith(test_file) for p in _grade_json(both)["rejected_paths"])


# Code under test that reads the run's nonce from its parent's (the node runner's) environment,
# writes a whole passing report, with that nonce, everywhere the report could be, and ends its
# process before any test runs. Where the report is reachable, this earns the reward.
FORGER = """\
import * as __fs from "node:fs";
{
  const log = [];
  let nonce = "";
  try {
    const env = __fs.readFileSync(`/proc/${process.ppid}/environ`, "latin1").split("\\0");
    nonce = (env.find((e) => e.startsWith("TASKMINT_NONCE=")) ?? "").slice(15);
  } catch (e) { log.push(`environ: ${e.code}`); }
  log.push(`nonce: ${nonce.length}`);
  const line = (rec) => JSON.stringify({ nonce, ...rec }) + "\\n";
  const report = IDS.map((id) => line({ type: "test", id, file: id.split("::")[0], name: id,
    outcome: "passed", duration: 0, message: null, is_suite: false })).join("")
    + line({ type: "finish", counts: {}, node_summary: {} });
  const targets = [1, 2, 3, 4, 5, 6, 7, 8, 9].map((fd) => `/proc/${process.ppid}/fd/${fd}`);
  for (const target of [...targets, "REPORT_FILE"]) {
    try { __fs.appendFileSync(target, report); log.push(`${target}: written`); }
    catch (e) { log.push(`${target}: ${e.code}`); }
  }
  __fs.writeFileSync("/tmp/taskmint-forger.log", log.join("\\n") + "\\n");
  process.exit(0);
}
"""


def test_a_forged_report_does_not_count(folder, tasks):
    """The code under test learns the nonce (node's environment is readable to the test user)
    but cannot reach the report: node writes it to its standard output, a root-owned file in a
    folder only root can enter, which /proc/<node>/fd/1 does not open either."""
    task = tasks[folder.name]
    source = next(f for f in task.files if f.endswith(".js"))
    ids = json.dumps(_spec(folder)["expected"])
    forger = FORGER.replace("IDS", ids).replace("REPORT_FILE", REPORT_FILE)
    agent = (
        f"cat > /tmp/forger.js <<'EOF_FORGER'\n{forger}EOF_FORGER\n"
        f"cat /tmp/forger.js /app/{source} > /tmp/forged.js && cp /tmp/forged.js /app/{source}"
    )
    result = run_trial(folder, agent, keep=True)
    try:
        assert result.agent_exit_code == 0, result.logs["agent"]
        graded = _grade_json(result)
        assert result.reward == 0.0, graded
        assert graded["kept_paths"] == [source]  # the forger was graded: it ran in the tests
        assert set(graded["outcomes"].values()) == {"missing"}, graded
        graded_in = result.verifier_container or result.container  # where the tests ran
        log = subprocess.run(
            ["docker", "exec", str(graded_in), "cat", "/tmp/taskmint-forger.log"],
            capture_output=True,
            text=True,
            timeout=60,
        ).stdout
    finally:
        for cid in (result.container, result.verifier_container):
            if cid:
                subprocess.run(["docker", "rm", "-f", cid], capture_output=True)
    assert "nonce: 32" in log, log  # it had the nonce ...
    # ... and the report was out of its reach
    assert any(ln.endswith("/fd/1: EACCES") for ln in log.splitlines()), log
    assert f"{REPORT_FILE}: written" not in log, log
