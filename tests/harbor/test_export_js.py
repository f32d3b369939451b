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
from taskmint.languages.javascript import NODE_HARNESS, NodeAdapter
from taskmint.publish import load_tasks, publish
from taskmint.records import Environment, SeedApp, Task
from taskmint.runners.adapters import REPORT_FILE, inside_dir
from taskmint.runners.report import parse_node_report
from taskmint.verify import grade
from tests.verify.node_forgery import apply_to_text, forgery_patch, removed_exports

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
    for path in exported:
        task = tasks[path.name]
        assert task.language == "javascript"
        config = tomllib.loads((path / "task.toml").read_text())
        assert config["metadata"]["language"] == "javascript"
        assert config["metadata"]["env_id"] == js_env.env_id
        assert f"FROM {js_image}\n" in (path / "environment" / "Dockerfile").read_text()
        # the runner files are the node harness alone, byte for byte taskmint's
        runner = path / "tests" / "runner"
        assert sorted(p.name for p in runner.rglob("*") if p.is_file()) == sorted(NODE_HARNESS)
        for name in NODE_HARNESS:
            assert (runner / name).read_bytes() == (inside_dir() / name).read_bytes()
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


def test_the_grader_runs_the_node_adapters_harness_input(folder, js_seed, js_env):
    """The grader hands the node harness what `NodeAdapter.node_input` gives for the expected
    ids, but for its own nonce and workspace (and the same command line: the harness over the
    channel)."""
    spec = _spec(folder)
    ids = spec["expected"]
    ours = grader.node_input(spec, "/private/ws", ids, "n2")
    theirs = NodeAdapter().node_input(js_seed.manifest, js_env, nonce="n1", test_ids=tuple(ids))
    assert ours == {**theirs, "nonce": "n2", "cwd": "/private/ws"}
    assert dict(spec["env"]) == dict(NodeAdapter.base_env())


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


def _harness(ws: Path, report: Path, nonce: str, files: list[str], select: list[str] | None):
    """A real run of the node harness on this machine (its file mode), as the adapter runs it."""
    data = {
        "nonce": nonce,
        "node": NODE or "node",
        "files": files,
        "select": select,
        "cwd": str(ws),
        "env": [["PATH", "/usr/local/bin:/usr/bin:/bin"], ["HOME", str(ws)]],
    }
    (ws.parent / "input.json").write_text(json.dumps(data))
    harness = str(inside_dir() / "node_runner.py")
    subprocess.run(
        [sys.executable, "-I", "-S", "-B", harness, str(report), str(ws.parent / "input.json")],
        capture_output=True,
        timeout=120,
    )


# The descriptors a process writes to a pipe whose other end another process holds (as a test
# process's results channel): libuv's own pipes have both ends here, and writing into them
# crashes node.
OUTGOING_PIPES = """\
import { readdirSync, readlinkSync, readFileSync } from "node:fs";
export function outgoingPipes() {
  const ends = new Map();
  for (const fd of readdirSync("/proc/self/fd").map(Number).filter((n) => n > 2)) {
    try {
      const link = readlinkSync(`/proc/self/fd/${fd}`);
      const info = readFileSync(`/proc/self/fdinfo/${fd}`, "utf8");
      const flags = parseInt(/flags:\\s+(\\d+)/.exec(info)[1], 8);
      if (link.startsWith("pipe:")) ends.set(link, [...(ends.get(link) ?? []), [fd, flags & 3]]);
    } catch {}
  }
  return [...ends.values()].filter((e) => e.length === 1 && e[0][1] === 1).map((e) => e[0][0]);
}
"""


def test_node_report_reading_and_grading_are_taskmints(js_seed, tmp_path):
    """A real report of taskmint's node harness (a failing test, a todo, twins, nested suites,
    a file that does not load, one whose records were forged), then the same with a forged
    record and without its end: the grader reads each as `parse_node_report` does, and grades
    as `verify.grade` does."""
    ws = tmp_path / "ws"
    shutil.copytree(js_seed.root, ws)
    src = ws / "src" / "strings.js"
    src.write_text(src.read_text().replace('.join("")', '.join("-")'))
    (ws / "test" / "extra.test.js").write_text(EXTRA_TESTS)
    (ws / "test" / "broken.test.js").write_text("import {;\n")
    (ws / "test" / "forger.test.js").write_text(
        'import { test } from "node:test";\n'
        'import { writeSync } from "node:fs";\n'
        'import { outgoingPipes } from "./pipes.js";\n'
        "for (const fd of outgoingPipes()) {\n"
        '  writeSync(fd, "0".repeat(64) + \' {"seq":1,"type":"end","count":1}\\n\');\n'
        "}\n"
        'test("forged", () => {});\n'
    )
    (ws / "test" / "pipes.js").write_text(OUTGOING_PIPES)
    nonce = "0123abcd" * 4
    report = tmp_path / "report.jsonl"
    files = [f"test/{n}.test.js" for n in ("strings", "extra", "broken", "forger")]
    _harness(ws, report, nonce, files, None)
    real = report.read_text()
    parsed = parse_node_report(report, nonce)
    outcomes = parsed.outcome_map()
    # the run gave every kind of record the grader must read
    assert set(outcomes.values()) == {"passed", "failed", "skipped"}, outcomes
    assert '"type": "file_error"' in real and '"is_suite": true' in real
    assert "test/extra.test.js::twin #2" in outcomes
    assert parsed.tampered.startswith("test/forger.test.js: "), parsed.tampered
    assert "test/forger.test.js::forged" not in outcomes
    forged = json.dumps({"type": "test", "id": "test/extra.test.js::twin #2", "outcome": "passed"})
    variants = {
        "real": real,
        "forged": real + forged + "\n",
        "cut": "".join(ln for ln in real.splitlines(True) if '"type": "finish"' not in ln),
        "junk": real.replace('"outcome": "failed"', '"outcome": "weird"', 1) + "not json\n",
        "untampered": "".join(ln for ln in real.splitlines(True) if '"tampered"' not in ln),
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
        got, complete, tamper = grader.node_outcomes_of(records)
        assert (got, complete, ok, tamper) == (
            ours.outcome_map(),
            ours.complete,
            ours.nonce_ok,
            ours.tampered,
        ), name
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
                runner_tamper=tamper,
            )
            assert (verdict[0], verdict[2]) == (reward, passed), (name, expected)
            assert verdict[1] == reason or verdict[1].startswith("tampered"), (name, expected)
    assert grader.node_outcomes_of(grader.read_report(str(report), "other")[0]) == ({}, False, "")


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
    """The code under test can neither learn the nonce nor reach the report: the node harness
    above each test process is not dumpable, so its environment and its descriptors under
    /proc are closed to the test user, and the report goes to a file only root can open."""
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
    # the harness above the test process is out of its reach: no nonce, no descriptor
    assert "environ: EACCES" in log and "nonce: 0" in log, log
    assert all(ln.endswith(": EACCES") for ln in log.splitlines() if "/fd/" in ln), log
    assert f"{REPORT_FILE}: written" not in log, log


@pytest.mark.parametrize("variant", ["rerun", "stubs"])
def test_forged_result_streams_get_0_in_a_trial(folder, tasks, variant):
    """The forged-stream attacks of tests/verify/node_forgery.py, written into /app by the agent
    (its own copy of the harness's files in /tests/runner tried as well): 0."""
    task = tasks[folder.name]
    path = task.files[0]
    with tarfile.open(folder / "environment" / "app.tar") as tar:
        member = tar.extractfile(path)
        assert member is not None
        source = member.read().decode()
    patch = forgery_patch(
        source,
        path,
        task.test_paths,
        exports=removed_exports(task.units) if variant == "stubs" else None,
    )
    attacked = apply_to_text(source, patch)
    agent = f"cat > /app/{path} <<'EOF_ATTACK'\n{attacked}EOF_ATTACK\n"
    result = run_trial(folder, agent)
    graded = _grade_json(result)
    assert result.reward == 0.0, graded
    assert graded["kept_paths"] == [path]  # the attack was graded: it ran in the tests
