"""`taskmint export harbor` for Rust: cronplan's tasks as Harbor folders, graded by cargo, for
real.

The tasks `cronplan_tasks` (tests/conftest.py) minted from seed_apps/cronplan as the pipeline
mints them and published are exported; their folders start FROM the Rust environment image
(`build_environment_image` of the seed's cargo environment: the runtime, the toolchain with
execute-only cargo, rustdoc and cargo-nextest, the vendored dependencies, the offline cargo
home, the warm build, the linker and a standard-library venv for the grader), and the trials
run them on this machine's Docker Engine as Harbor does: the oracle (the gold patch) gets 1,
nop (the broken tree, which builds but fails the expected tests) 0, in the separate verifier
the folders ask for and in a shared one that checks the environment's digests, the Rust tools
among them.
"""

from __future__ import annotations

import json
import subprocess
import tarfile
import tomllib
from pathlib import Path

import pytest

from taskmint.harbor import export_harbor, run_trial, run_trials
from taskmint.harbor.export import EXPORT_RECORD
from taskmint.harbor.inside import grade as grader
from taskmint.languages.rust import RUST_PROTECTED_NAMES
from taskmint.languages.rust.harbor import HARBOR_INPUT, HARBOR_WARM
from taskmint.records import Environment, SeedApp, Task
from taskmint.runners.adapters import inside_dir

# slow: a cargo build and run per trial
pytestmark = [pytest.mark.slow, pytest.mark.timeout(3600)]


@pytest.fixture(scope="module")
def cron(cronplan_tasks) -> tuple[SeedApp, Environment, list[Task]]:  # type: ignore[no-untyped-def]
    """cronplan, its environment (the warm build) and the tasks `cronplan_tasks` minted and
    published (tests/conftest.py; the end-to-end tests grade the same ones)."""
    seed, env, tasks, _ = cronplan_tasks
    return seed, env, tasks


@pytest.fixture(scope="module")
def rust_image(cron: tuple[SeedApp, Environment, list[Task]]) -> str:
    from taskmint.harbor.rust_image import register
    from taskmint.sandbox.docker.base_image import build_base_image
    from taskmint.sandbox.docker.client import docker_client
    from taskmint.sandbox.docker.images import build_environment_image

    register()

    client = docker_client()
    return build_environment_image(cron[1], client, base=build_base_image(client))


@pytest.fixture(scope="module")
def exported(
    cronplan_tasks, rust_image: str, cache_dir: Path, tmp_path_factory: pytest.TempPathFactory
) -> list[Path]:
    dataset = cronplan_tasks[3]
    return export_harbor(dataset, tmp_path_factory.mktemp("harbor-rust"), cache_dir=cache_dir)


def _spec(folder: Path) -> dict:
    return json.loads((folder / "tests" / "task.json").read_text())


def _grade_json(result) -> dict:  # type: ignore[no-untyped-def]
    return json.loads(result.logs["verifier/grade.json"])


def test_rust_tasks_export_on_the_rust_environment_image(exported, cron, rust_image):
    _, env, tasks = cron
    assert env.kind == "cargo" and rust_image == f"taskmint-env:{env.env_id}"
    record = json.loads((exported[0].parent / EXPORT_RECORD).read_text())
    assert record["skipped"] == [] and len(exported) == len(tasks)
    assert record["without_environment_digests"] == []
    by_id = {t.instance_id: t for t in tasks}
    for path in exported:
        task = by_id[path.name]
        config = tomllib.loads((path / "task.toml").read_text())
        assert config["metadata"]["language"] == "rust"
        assert f"FROM {rust_image}\n" in (path / "environment" / "Dockerfile").read_text()
        runner = path / "tests" / "runner"
        files = sorted(p.name for p in runner.rglob("*") if p.is_file())
        assert files == ["cargo_runner.py", "harness_io.py"]
        assert (runner / "cargo_runner.py").read_bytes() == (
            inside_dir() / "cargo_runner.py"
        ).read_bytes()
        spec = _spec(path)
        assert spec["runner"] == "cargo" and spec["python"] == "/opt/venv/bin/python"
        assert spec["expected"] == list(dict.fromkeys((*task.FAIL_TO_PASS, *task.PASS_TO_PASS)))
        assert (spec["rust_input"], spec["rust_warm"]) == (HARBOR_INPUT, HARBOR_WARM)
        assert set(RUST_PROTECTED_NAMES) <= set(spec["protected_names"])
        # the warm target's secret name is the image's alone, never in the task's files
        warm = json.loads((Path(env.prefix) / "warm.json").read_text())["name"]
        shipped_files = [p for p in path.rglob("*") if p.is_file()]
        assert all(warm.encode() not in p.read_bytes() for p in shipped_files)
        # the digests cover the Rust tools (and the libraries they load)
        manifest = json.loads((path / "tests" / "environment.json").read_text())
        for tool in ("cargo", "rustc", "rustdoc", "cargo-nextest", "ld", "input.json"):
            assert tool in manifest["tools"], sorted(manifest["tools"])
        assert any("librustc_driver" in p for p in manifest["entries"])
        with tarfile.open(path / "tests" / "tests.tar") as tar:
            shipped = {m.name for m in tar.getmembers() if m.isfile()}
        assert any(n.startswith("tests/") and n.endswith(".rs") for n in shipped)


def test_the_rust_image_holds_the_toolchain_offline_and_hides_the_warm_build(rust_image, cron):
    """As the agent's user (any uid but root): cargo runs (execute-only, so unreadable), the
    vendored registry and offline config are there, the warm folder cannot be listed and its
    name cannot be read; root reads the harness's fixed input and the warm path."""
    script = (
        "/opt/rust/toolchain/bin/cargo --version && /opt/rust/bin/cargo-nextest --version "
        "&& ! cat /opt/rust/toolchain/bin/cargo > /dev/null 2>&1 && echo unreadable "
        "&& grep -q 'offline = true' /opt/rust/cargo-home/config.toml && echo offline "
        "&& ! ls /opt/rust/warm > /dev/null 2>&1 && echo unlisted "
        "&& ! cat /opt/rust/harbor/warm.json > /dev/null 2>&1 && echo secret"
    )
    proc = subprocess.run(
        [
            "docker",
            "run",
            "--rm",
            "--network",
            "none",
            "-u",
            "10002",
            rust_image,
            "sh",
            "-c",
            script,
        ],
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout.split()[-4:] == ["unreadable", "offline", "unlisted", "secret"]
    root = subprocess.run(
        ["docker", "run", "--rm", "--network", "none", "-u", "0", rust_image, "cat", HARBOR_WARM],
        capture_output=True,
        text=True,
        timeout=300,
    )
    warm = json.loads(root.stdout)["warm"]
    assert warm.startswith("/opt/rust/warm/") and warm.endswith("/target")


def test_the_grader_hands_the_harness_the_adapters_input(exported, cron):
    """The grader's cargo input is `CargoAdapter.harness_input`'s for the environment, with the
    run's own nonce, selection, workspace and home."""
    from taskmint.languages.rust import CargoAdapter

    seed, env, _ = cron
    folder = exported[0]
    spec = _spec(folder)
    theirs = CargoAdapter().harness_input(
        seed.manifest, env, nonce="n", test_ids=tuple(spec["expected"])
    )
    fixed = {k: theirs[k] for k in ("cargo", "nextest", "env", "target_dir", "expected", "skip")}  # type: ignore[literal-required]
    work = folder.parent / "fake-image"
    work.mkdir(exist_ok=True)
    (work / "input.json").write_text(json.dumps(fixed))
    (work / "warm.json").write_text(json.dumps({"warm": theirs["warm"]}))
    moved = {**spec, "rust_input": str(work / "input.json"), "rust_warm": str(work / "warm.json")}
    ours = grader.cargo_input(moved, "/workspace", spec["expected"], "n", owns_uid=True)
    assert ours == {**theirs, "sweep": True, "sweep_any_parent": True}
    moved["tool_home"] = "/tmp/home-x"
    env_of = dict(grader.cargo_input(moved, "/elsewhere", spec["expected"], "n")["env"])
    assert env_of["HOME"] == env_of["TMPDIR"] == "/tmp/home-x"
    assert env_of["CARGO_TARGET_DIR"] == "/elsewhere/target"


def test_oracle_scores_1_and_nop_0_in_local_trials(exported):
    oracle = run_trials(exported, "oracle")
    nop = run_trials(exported, "nop")
    print("seconds:", [r.seconds for r in oracle + nop])
    assert [r.error for r in oracle + nop] == [None] * (2 * len(exported))
    assert [r.reward for r in oracle] == [1.0] * len(exported), [r.logs for r in oracle]
    assert [r.reward for r in nop] == [0.0] * len(exported), [r.details for r in nop]
    assert all(r.details["expected"] >= 1 and not r.details["tampered"] for r in oracle + nop)
    assert {r.verifier_mode for r in oracle + nop} == {"separate"}
    for result in nop:  # the broken tree builds; its expected tests fail, none is missing
        outcomes = _grade_json(result)["outcomes"]
        assert "failed" in outcomes.values() and "missing" not in outcomes.values(), outcomes
    # a harness that shares the agent's container: the digests (the Rust tools among them)
    # find nothing changed
    shared = run_trial(exported[0], "oracle", verifier_mode="shared")
    assert shared.reward == 1.0, shared.logs
    assert _grade_json(shared)["environment_checked"] is True


def test_a_changed_rust_tool_is_a_tampered_environment(exported):
    """A root agent in a shared container that swaps rustc for a wrapper gets 0, "tampered
    environment", before any cargo runs."""
    agent = (
        "cp /opt/rust/toolchain/bin/rustc /tmp/rustc.real && "
        "printf '#!/bin/sh\\nexec /tmp/rustc.real \"$@\"\\n' > /opt/rust/toolchain/bin/rustc"
    )
    folder = exported[0]
    config = folder / "task.toml"
    text = config.read_text()
    config.write_text(text.replace('user = "agent"', 'user = "root"'))
    try:
        result = run_trial(folder, agent, verifier_mode="shared")
    finally:
        config.write_text(text)
    assert result.agent_exit_code == 0, result.logs.get("agent")
    grade = _grade_json(result)
    assert result.reward == 0.0 and grade["tampered"], grade
    assert "/opt/rust/toolchain/bin/rustc" in grade["reason"], grade["reason"]


def test_a_broken_build_fails_the_expected_tests(exported, cron):
    """An agent whose code does not compile: every expected test of the targets that did not
    build fails (none missing), the reward is 0 and nothing is tampered."""
    _, _, tasks = cron
    folder = exported[0]
    task = next(t for t in tasks if t.instance_id == folder.name)
    source = next(p for p in task.source_paths)
    agent = f"echo 'this is not rust' >> /app/{source}/lib.rs"
    result = run_trial(folder, agent)
    grade = _grade_json(result)
    assert result.reward == 0.0 and not grade["tampered"], grade
    assert set(grade["outcomes"].values()) == {"failed"}, grade["outcomes"]
    assert grade["kept_paths"] == [f"{source}/lib.rs"]
