"""`taskmint export harbor`: the tiny dataset's tasks as Harbor task folders, graded for real.

The exported environment is built with Docker on the tiny seed's environment image (built as
tests/sandbox/test_docker.py builds it), and `tests/test.sh` runs in a container of it with no
network, the tests folder copied in after the agent's turn, as Harbor does.
"""

from __future__ import annotations

import dataclasses
import hashlib
import json
import shutil
import subprocess
import tarfile
import tomllib
import uuid
from collections.abc import Iterator
from pathlib import Path

import pytest

from taskmint.cli import main
from taskmint.harbor import (
    HarborExportError,
    content_hash,
    export_harbor,
    export_task,
    run_trials,
)
from taskmint.harbor.export import AGENT_USER, EXPORT_RECORD, SCHEMA_VERSION
from taskmint.harbor.inside import grade as grader
from taskmint.publish import load_tasks
from taskmint.records import Task
from taskmint.verify.scope import refusal

# Harbor's task format (harbor-framework/harbor: the task docs and TaskConfig): the files of a
# task folder, and the task.toml keys taskmint writes, by section.
HARBOR_FILES = ("task.toml", "instruction.md", "environment/Dockerfile", "tests/test.sh")
HARBOR_KEYS = {
    "": {"schema_version", "artifacts"},
    "task": {"name", "description", "keywords"},
    "verifier": {"timeout_sec", "user", "environment_mode"},
    "agent": {"timeout_sec"},
    "environment": {"build_timeout_sec", "cpus", "memory_mb", "storage_mb", "network_mode"},
}
LOGS = "/logs/verifier"
METADATA_KEYS = {
    "instance_id",
    "seed",
    "strategy",
    "language",
    "band",
    "dataset_version",
    "content_sha256",
}


@pytest.fixture(scope="module")
def exported(tiny_dataset: Path, cache_dir: Path, tmp_path_factory, env_image: str) -> list[Path]:
    dest = tmp_path_factory.mktemp("harbor")
    return export_harbor(tiny_dataset, dest, hint_level=1, cache_dir=cache_dir)


@pytest.fixture(scope="module")
def tasks(tiny_dataset: Path) -> dict[str, Task]:
    return {t.instance_id: t for t in load_tasks(tiny_dataset, streaming=False)}


@pytest.fixture(scope="module")
def folder(exported: list[Path], tasks: dict[str, Task]) -> Path:
    """The first exported task with a hidden test (else the first)."""
    hidden = [p for p in exported if tasks[p.name].hidden_tests]
    return (hidden or exported)[0]


@pytest.fixture(scope="module")
def image(folder: Path) -> Iterator[str]:
    tag = f"taskmint-harbor-test:{uuid.uuid4().hex[:12]}"
    subprocess.run(
        ["docker", "build", "-q", "--network", "none", "-t", tag, str(folder / "environment")],
        check=True,
        capture_output=True,
        timeout=600,
    )
    yield tag
    subprocess.run(["docker", "rmi", "-f", tag], capture_output=True, timeout=120)


def _members(archive: Path) -> dict[str, bytes]:
    with tarfile.open(archive) as tar:
        out = {}
        for m in tar.getmembers():
            if m.isfile():
                fh = tar.extractfile(m)
                assert fh is not None
                out[m.name] = fh.read()
        return out


def test_layout_and_task_toml_follow_harbor(exported, tasks, tiny_dataset):
    assert exported and len(exported) == len(tasks)
    record = json.loads((exported[0].parent / EXPORT_RECORD).read_text())
    assert record["without_environment_digests"] == []
    assert record["skipped"] == [] and sorted(record["exported"]) == sorted(
        p.name for p in exported
    )
    for path in exported:
        task = tasks[path.name]
        for rel in (*HARBOR_FILES, "solution/solve.sh", "environment/app.tar"):
            assert (path / rel).is_file(), rel
        config = tomllib.loads((path / "task.toml").read_text())
        assert config["schema_version"] == SCHEMA_VERSION
        for section, keys in HARBOR_KEYS.items():
            table = config if not section else config[section]
            assert keys <= set(table), (section, keys - set(table))
        assert config["environment"]["network_mode"] == "no-network"
        # graded in a fresh container of environment/, with the agent's /app carried over
        assert config["verifier"]["environment_mode"] == "separate"
        assert config["artifacts"] == ["/app"] and "environment" not in config["verifier"]
        # with the digests of the environment image, for a harness that shares the container
        manifest = json.loads((path / "tests" / "environment.json").read_text())
        assert manifest["python"] in manifest["bootstrap"] and manifest["trees"]
        assert manifest["entries"]["/etc/ld.so.preload"] == "absent"
        assert (path / "tests" / "environment.py").is_file()
        assert manifest["python"] in (path / "tests" / "test.sh").read_text()
        meta = config["metadata"]
        assert set(meta) >= METADATA_KEYS
        assert meta["instance_id"] == task.instance_id and meta["seed"] == task.seed
        assert meta["dataset_version"].rstrip("/").endswith(tiny_dataset.name)
        assert meta["content_sha256"] == content_hash(path)
        assert len(meta.get("calibration", [])) == len(task.calibration)
        for row, cal in zip(meta.get("calibration", []), task.calibration, strict=True):
            assert (row["solver_name"], row["attempts"], row["solves"]) == (
                cal.solver_name,
                cal.attempts,
                cal.solves,
            )
        text = (path / "instruction.md").read_text()
        assert task.problem_statement.strip() in text
        assert all(h.strip() in text for h in task.hints[:1])
        assert all(h.strip() not in text for h in task.hints[1:] if h.strip() not in task.hints[0])
        dockerfile = (path / "environment" / "Dockerfile").read_text()
        assert f"FROM taskmint-env:{task.env_id}" in dockerfile
        assert "ADD app.tar /app/" in dockerfile


def test_environment_holds_the_broken_tree_and_nothing_of_the_answer(exported, tasks, tiny_seed):
    for path in exported:
        task = tasks[path.name]
        files = _members(path / "environment" / "app.tar")
        assert files and not any(n == ".git" or n.startswith(".git/") for n in files)
        assert not any("__pycache__" in n for n in files)
        # the removed code is gone: its files are not the seed's, and its text is in none
        source = b"\n".join(files.values()).decode("utf-8", "replace")
        assert task.removed_code.strip() and task.removed_code.strip() not in source
        body = "\n".join(ln.strip() for ln in task.removed_code.strip().splitlines())
        flat = "\n".join(ln.strip() for ln in source.splitlines())
        assert body not in flat, task.units
        for rel in task.files:
            assert files[rel] != (Path(tiny_seed.root) / rel).read_bytes(), rel
        for test_id in task.hidden_tests:
            file, name = test_id.split("::", 1)[0], test_id.split("::")[-1].split("[")[0]
            assert f"def {name}(" not in files[file].decode()
            # the grader has it: the pristine tests hold every hidden test
            assert f"def {name}(" in _members(path / "tests" / "tests.tar")[file].decode()
        assert _members(path / "tests" / "broken.tar") == files
    assert any(tasks[p.name].hidden_tests for p in exported)


def test_export_of_chosen_ids_and_a_content_hash_that_is_stable(
    tiny_dataset, cache_dir, exported, tmp_path
):
    first = exported[0]
    again = export_harbor(tiny_dataset, tmp_path, task_ids=[first.name], cache_dir=cache_dir)
    assert [p.name for p in again] == [first.name]
    a = tomllib.loads((again[0] / "task.toml").read_text())["metadata"]["content_sha256"]
    b = tomllib.loads((first / "task.toml").read_text())["metadata"]["content_sha256"]
    # hint_level differs (0 here, 1 there): the instruction and so the hash differ
    assert a != b and a == content_hash(again[0])
    with pytest.raises(Exception, match="no task 'nope'"):
        export_harbor(tiny_dataset, tmp_path, task_ids=["nope"], cache_dir=cache_dir)


def test_a_task_of_another_language_or_runner_is_refused_clearly(tasks, cache_dir, tmp_path):
    task = next(iter(tasks.values()))
    # a language with no profile (Go has a tree-sitter syntax only)
    with pytest.raises(HarborExportError, match="go tasks cannot be exported"):
        export_task(
            dataclasses.replace(task, language="go"),
            tmp_path,
            version_url="x",
            base_image="img",
            cache_dir=cache_dir,
        )
    # a JavaScript task is graded by node: one whose seed runs pytest is refused
    with pytest.raises(HarborExportError, match="javascript seeds run by pytest cannot be"):
        export_task(
            dataclasses.replace(task, language="javascript"),
            tmp_path,
            version_url="x",
            base_image="img",
            cache_dir=cache_dir,
        )


def test_tasks_that_cannot_be_exported_are_recorded_and_the_rest_go_on(
    tiny_dataset, cache_dir, tmp_path, monkeypatch
):
    from taskmint.harbor import export as export_module

    real = export_module.load_tasks(tiny_dataset, streaming=False)[:3]
    other = dataclasses.replace(real[1], language="go")
    monkeypatch.setattr(export_module, "load_tasks", lambda *a, **k: [real[0], other, real[2]])
    written = export_harbor(tiny_dataset, tmp_path, base_image="img:1", cache_dir=cache_dir)
    assert [p.name for p in written] == [real[0].instance_id, real[2].instance_id]
    record = json.loads((tmp_path / EXPORT_RECORD).read_text())
    assert [s["instance_id"] for s in record["skipped"]] == [other.instance_id]
    assert "go tasks cannot be exported to Harbor yet" in record["skipped"][0]["reason"]
    assert not (tmp_path / other.instance_id).exists()


def test_cli_export_harbor(tiny_dataset, cache_dir, tmp_path, capsys, tasks):
    task_id = sorted(tasks)[0]
    code = main(
        [
            "--output",
            str(tmp_path / "output"),
            "export",
            "harbor",
            "--dataset",
            str(tiny_dataset),
            "--base-image",
            "some-image:1",
            "--json",
            str(tmp_path / "out"),
            task_id,
        ]
    )
    assert code == 0
    out = json.loads(capsys.readouterr().out)
    assert [Path(p).name for p in out["exported"]] == [task_id]
    assert (
        "FROM some-image:1" in (tmp_path / "out" / task_id / "environment/Dockerfile").read_text()
    )


def test_grader_scope_is_the_verifiers(folder, tasks):
    spec = json.loads((folder / "tests" / "task.json").read_text())
    task = tasks[folder.name]
    paths = [
        *task.test_paths,
        *(t.split("::")[0] for t in task.hidden_tests),
        *task.files,
        "conftest.py",
        "pyproject.toml",
        "x/.git/config",
        "pkg.egg-info/PKG-INFO",
        "../etc/passwd",
        "/abs.py",
        "new_module.py",
        "setup.cfg",
        "a/b.pth",
    ]
    for path in paths:
        assert (grader.refusal(path, spec) is None) == (refusal(path, task) is None), path


# --- the grader, run for real in a container of the exported environment ----------------------


def _exec(name: str, script: str, user: str = "root") -> subprocess.CompletedProcess[str]:
    proc = subprocess.run(
        ["docker", "exec", "-u", user, name, "bash", "-c", script],
        capture_output=True,
        text=True,
        timeout=600,
    )
    assert proc.returncode == 0, proc.stdout + proc.stderr
    return proc


def _run(image: str, folder: Path, script: str, after: str = "") -> dict:
    """As Harbor runs a trial: a container (no network) with solution/ in it, the 'agent'
    (`script`) in one `docker exec`, then tests/ copied in and test.sh run in another; the
    reward files (and what `after` prints, under "after")."""
    name = f"taskmint-harbor-{uuid.uuid4().hex[:12]}"
    subprocess.run(
        ["docker", "create", "--name", name, "--network", "none", image, "sleep", "600"],
        check=True,
        capture_output=True,
        timeout=120,
    )

    def copy(sub: str) -> None:
        subprocess.run(
            ["docker", "cp", f"{folder / sub}/.", f"{name}:/{sub}"],  # over what is there
            check=True,
            capture_output=True,
            timeout=120,
        )

    try:
        subprocess.run(["docker", "start", name], check=True, capture_output=True, timeout=120)
        copy("solution")
        _exec(name, script, user=AGENT_USER)  # task.toml's [agent] user
        copy("tests")
        _exec(name, "bash /tests/test.sh")
        txt = _exec(name, f"cat {LOGS}/reward.txt").stdout
        numbers = json.loads(_exec(name, f"cat {LOGS}/reward.json").stdout)
        # Harbor reads reward.json first, and takes numbers only
        assert set(numbers) == {"reward", "passed", "expected", "tampered"}, numbers
        assert all(type(v) is int for v in numbers.values()), numbers
        result = json.loads(_exec(name, f"cat {LOGS}/grade.json").stdout)
        assert numbers == {
            "reward": int(result["reward"]),
            "passed": result["passed"],
            "expected": result["expected"],
            "tampered": int(result["tampered"]),
        }
        result["txt"] = txt.strip()
        result["after"] = _exec(name, after).stdout if after else ""
        return result
    finally:
        subprocess.run(["docker", "rm", "-f", name], capture_output=True, timeout=120)


def test_gold_solution_gets_1(image, folder, tasks):
    result = _run(image, folder, "bash /solution/solve.sh")
    assert result["txt"] == "1", result
    assert result["reward"] == 1.0 and result["passed"] == result["expected"] > 0
    assert not result["tampered"] and result["rejected_paths"] == []
    # the hidden tests were graded too, and passed
    assert all(result["outcomes"][t] == "passed" for t in tasks[folder.name].hidden_tests)


def test_untouched_tree_gets_0(image, folder):
    result = _run(image, folder, "true")
    assert result["txt"] == "0", result
    assert result["reward"] == 0.0 and not result["tampered"]
    assert "did not pass" in result["reason"]


def test_edited_tests_are_graded_on_the_pristine_ones(image, folder, tasks):
    """The gold patch plus an edit that would make every test pass trivially: the edit is
    dropped (and reported), the pristine tests grade, and the gold code still earns 1; an edit
    to the tests alone earns 0."""
    task = tasks[folder.name]
    test_file = next(t.split("::")[0] for t in task.FAIL_TO_PASS)
    edit = (
        f"printf 'import pytest\\n@pytest.fixture(autouse=True)\\ndef _x():\\n    yield\\n'"
        f" > /app/conftest.py\nsed -i 's/assert /assert True or /' /app/{test_file}\n"
    )
    cheat = _run(image, folder, edit)
    assert cheat["txt"] == "0", cheat
    assert any(p.startswith(test_file) for p in cheat["rejected_paths"]), cheat
    assert any(p.startswith("conftest.py") for p in cheat["rejected_paths"]), cheat
    both = _run(image, folder, "bash /solution/solve.sh\n" + edit)
    assert both["txt"] == "1", both
    assert any(p.startswith(test_file) for p in both["rejected_paths"]), both


def test_a_reporter_patch_is_caught_by_the_canaries(image, folder, tasks):
    """Code that turns every failure into a pass (through pytest's report) is tampering."""
    task = tasks[folder.name]
    source = next(f for f in task.files if f.endswith(".py"))
    hack = (
        "import _pytest.reports as _r\n"
        "_orig = _r.TestReport.from_item_and_call\n"
        "def _fake(item, call):\n"
        "    rep = _orig(item, call)\n"
        "    rep.outcome = 'passed'\n"
        "    return rep\n"
        "_r.TestReport.from_item_and_call = staticmethod(_fake)\n"
    )
    digest = hashlib.sha256(hack.encode()).hexdigest()[:8]
    script = f"cat >> /app/{source} <<'EOF_{digest}'\n{hack}EOF_{digest}\n"
    result = _run(image, folder, script)
    assert result["txt"] == "0", result
    assert result["tampered"] and "canary" in result["reason"], result
    assert result["findings"], result  # the static scan saw it too


def test_processes_the_agent_left_running_are_stopped(image, folder):
    script = (
        "bash /solution/solve.sh\n"
        "nohup bash -c 'exec -a taskmint-stray sleep 1000' >/dev/null 2>&1 &\n"
    )
    after = "grep -l 'taskmint-str[a]y' /proc/[0-9]*/cmdline 2>/dev/null || true"
    result = _run(image, folder, script, after=after)
    assert result["txt"] == "1", result
    assert result["stopped_processes"] >= 1 and result["after"].strip() == "", result


def test_report_reading_and_grading_are_the_verifiers(tmp_path):
    from taskmint.runners.report import parse_pytest_report
    from taskmint.verify import grade

    nonce = "n0nce"
    recs = [
        {"type": "collected", "ids": ["t::a", "t::b", "t::c", "t::d", "t::e"]},
        *(
            {"type": "phase", "nodeid": t, "when": w, "outcome": o}
            for t, w, o in [
                ("t::a", "setup", "passed"),
                ("t::a", "call", "passed"),
                ("t::b", "call", "failed"),
                ("t::c", "setup", "skipped"),
                ("t::d", "call", "passed"),
                ("t::d", "teardown", "failed"),
            ]
        ),
    ]
    for finished in (True, False):
        for forged in (False, True):
            lines = [{**r, "nonce": nonce} for r in recs]
            lines += [{"type": "finish", "nonce": nonce}] if finished else []
            lines += [{"type": "phase", "nodeid": "t::b", "outcome": "passed"}] if forged else []
            report = tmp_path / "report.jsonl"
            report.write_text("".join(json.dumps(r) + "\n" for r in lines))
            ours = parse_pytest_report(report, nonce)
            records, ok = grader.read_report(str(report), nonce)
            outcomes, complete = grader.outcomes_of(records)
            assert (outcomes, complete, ok) == (ours.outcome_map(), ours.complete, ours.nonce_ok)
            for expected in (["t::a"], ["t::a", "t::b"], ["t::c"], ["t::d"], ["t::e"], ["t::z"]):
                reward, reason, passed = grade(ours, tuple(expected))
                got = grader.judge(
                    outcomes,
                    expected,
                    complete=complete,
                    nonce_ok=ok,
                    timed_out=False,
                    changed=False,
                    canaries=None,
                )
                assert (got[0], got[2]) == (reward, passed), expected
                assert got[1] == reason or got[1].startswith("tampered"), expected


def test_grader_on_the_host_without_docker(folder, tiny_env, tmp_path):
    """test.sh with its paths moved by environment variables: the gold tree passes."""
    app = tmp_path / "app"
    app.mkdir()
    with tarfile.open(folder / "environment" / "app.tar") as tar:
        tar.extractall(app, filter="data")
    subprocess.run(
        ["bash", str(folder / "solution" / "solve.sh")],
        check=True,
        env={"PATH": "/usr/bin:/bin", "TASKMINT_APP": str(app)},
        timeout=120,
    )
    env = {
        "PATH": "/usr/local/bin:/usr/bin:/bin",
        "TASKMINT_APP": str(app),
        "TASKMINT_LOGS": str(tmp_path / "logs"),
        "TASKMINT_GRADE_WS": str(tmp_path / "ws"),
        "TASKMINT_PYTHON": str(Path(tiny_env.prefix) / "bin" / "python"),
        "TASKMINT_RUN_AS": "self",
        "TASKMINT_CHECK_ENVIRONMENT": "0",  # the digests are the image's, not this machine's
    }
    subprocess.run(["bash", str(folder / "tests" / "test.sh")], env=env, check=True, timeout=600)
    result = json.loads((tmp_path / "logs" / "grade.json").read_text())
    assert (tmp_path / "logs" / "reward.txt").read_text().strip() == "1", result
    shutil.rmtree(tmp_path / "ws", ignore_errors=True)


def test_grader_takes_only_allowed_changes(folder, tasks, tmp_path):
    """What the grader keeps of an agent's tree: changed and new source files; never tests,
    configuration, deletions, links, binaries, or a folder made outside the source paths
    (one line for the whole folder)."""
    spec = json.loads((folder / "tests" / "task.json").read_text())
    task = tasks[folder.name]
    pristine, app = tmp_path / "pristine", tmp_path / "app"
    for root in (pristine, app):
        root.mkdir()
        with tarfile.open(folder / "tests" / "broken.tar") as tar:
            tar.extractall(root, filter="data")
    source = next(f for f in task.files if f.endswith(".py"))
    src_dir = task.source_paths[0].rstrip("/")
    test_file = next(t.split("::")[0] for t in task.FAIL_TO_PASS)
    (app / source).write_text((app / source).read_text() + "\nX = 1\n")
    (app / src_dir / "helper_new.py").write_text("Y = 2\n")
    (app / src_dir / "blob.py").write_bytes(b"a\0b")
    (app / src_dir / "link.py").symlink_to(app / source)
    (app / test_file).write_text("def test_x():\n    pass\n")
    (app / "conftest.py").write_text("")
    for i in range(50):
        (app / ".venv" / "lib" / f"m{i}").mkdir(parents=True)
        (app / ".venv" / "lib" / f"m{i}" / "x.py").write_text("")
    deleted = next(
        p
        for p in sorted(pristine.rglob("*.py"))
        if p.relative_to(pristine).as_posix() != source
        and not p.relative_to(pristine).as_posix().startswith(test_file)
    )
    (app / deleted.relative_to(pristine)).unlink()
    kept, rejected, diff = grader.agent_changes(str(app), str(pristine), spec)
    assert sorted(kept) == sorted([source, f"{src_dir}/helper_new.py"])
    assert "+X = 1" in diff and f"+++ b/{source}" in diff
    reasons = "\n".join(rejected)
    for expected in (
        f"{src_dir}/blob.py: binary content refused",
        f"{src_dir}/link.py: symlinks and special files are refused",
        f"{test_file}: test files are restored from the task",
        "conftest.py: test, build, CI or interpreter configuration",
        ".venv/: a new folder: outside the task's source paths",
        f"{deleted.relative_to(pristine).as_posix()}: deleting files is refused",
    ):
        assert expected in rejected, (expected, reasons)
    assert len(rejected) == 6, reasons


@pytest.mark.slow
def test_exported_tasks_of_every_strategy_score_1_with_the_oracle_and_0_with_nop(exported):
    """The exporter and the trial runner together, in Harbor's order (build, start, agent, tests
    uploaded, test.sh, reward), on one task of each strategy of the version (every task of a
    version: `tests/bench/test_harbor_trials.py`)."""
    by_strategy: dict[str, Path] = {}
    for folder in exported:
        strategy = tomllib.loads((folder / "task.toml").read_text())["metadata"]["strategy"]
        by_strategy.setdefault(strategy, folder)
    chosen = list(by_strategy.values())
    assert len(chosen) >= 3, sorted(by_strategy)
    oracle = run_trials(chosen, "oracle")
    nop = run_trials(chosen, "nop")
    assert [r.error for r in oracle + nop] == [None] * (2 * len(chosen))
    assert [r.reward for r in oracle] == [1.0] * len(chosen), [r.details for r in oracle]
    assert [r.reward for r in nop] == [0.0] * len(chosen)
    assert all(r.details.get("expected", 0) >= 1 for r in oracle)
