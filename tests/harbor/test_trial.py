"""The local Harbor trial runner, tried for real on the machine's Docker Engine.

Each test builds a small Harbor task folder by hand: a bash "app" whose add.sh subtracts,
tests/test.sh that checks the sum and writes /logs/verifier/reward.txt, and solution/solve.sh
that fixes it. Its image is built once (tagged by the environment's hash) from the base image
the docker sandbox tests use; the reward parsing and task.toml reading are tried without Docker.
"""

from __future__ import annotations

import contextlib
import io
import json
import shlex
import tarfile
from pathlib import Path

import pytest

from taskmint.errors import SandboxUnavailableError, TaskmintError
from taskmint.harbor.trial import (
    TaskSettings,
    base_images,
    built_image_tag,
    image_tag,
    read_reward,
    read_task_settings,
    run_trial,
    run_trials,
)

PHASES = ["read", "build", "start", "agent", "verify", "collect", "teardown", "total"]

TASK_TOML = """\
version = "1.0"

[metadata]
author_name = "taskmint tests"
difficulty = "easy"
category = "programming"
tags = ["bash"]

[verifier]
timeout_sec = {verifier_timeout}

[agent]
timeout_sec = {agent_timeout}

[environment]
build_timeout_sec = 600.0
cpus = 1
memory_mb = 512
storage_mb = 1024
"""

APP = "#!/bin/bash\n# add.sh A B: prints A + B\necho $(( $1 - $2 ))\n"

TEST_SH = """\
#!/bin/bash
mkdir -p /logs/verifier
if [ "$(bash /app/add.sh 2 3)" = 5 ] && [ "$(bash /app/add.sh 10 -4)" = 6 ]; then
    echo PASS; echo 1 > /logs/verifier/reward.txt
else
    echo FAIL; echo 0 > /logs/verifier/reward.txt
fi
"""

SOLVE_SH = "#!/bin/bash\nsed -i 's/\\$1 - \\$2/$1 + $2/' /app/add.sh\n"
FIX = SOLVE_SH.splitlines()[1]


SEPARATE = 'artifacts = ["/app"]\n' + TASK_TOML.replace(
    "[verifier]\n", '[verifier]\nenvironment_mode = "separate"\n'
)


def make_task(
    root: Path,
    base_image: str,
    name: str = "add-fix",
    *,
    dockerfile: str | None = None,
    test_sh: str = TEST_SH,
    agent_timeout: float = 120.0,
    verifier_timeout: float = 120.0,
    separate: bool = False,
) -> Path:
    task = root / name
    for sub in ("environment", "tests", "solution"):
        (task / sub).mkdir(parents=True)
    (task / "task.toml").write_text(
        (SEPARATE if separate else TASK_TOML).format(
            agent_timeout=agent_timeout, verifier_timeout=verifier_timeout
        )
    )
    (task / "instruction.md").write_text("add.sh should print the sum of its two arguments.\n")
    (task / "environment" / "Dockerfile").write_text(
        dockerfile or f"FROM {base_image}\nWORKDIR /app\nCOPY add.sh /app/add.sh\n"
    )
    (task / "environment" / "add.sh").write_text(APP)
    (task / "tests" / "test.sh").write_text(test_sh)
    (task / "solution" / "solve.sh").write_text(SOLVE_SH)
    return task


@pytest.fixture(scope="module")
def base_image() -> str:
    from taskmint.sandbox.docker.base_image import build_base_image
    from taskmint.sandbox.docker.client import docker_client

    try:
        client = docker_client()
    except SandboxUnavailableError as exc:
        pytest.skip(f"the Docker daemon is not reachable: {exc}")
    return build_base_image(client)


@pytest.fixture(scope="module")
def api(base_image: str):  # type: ignore[no-untyped-def]
    from taskmint.sandbox.docker.client import docker_client

    return docker_client().api


def _built_tag(folder: Path) -> str:
    from taskmint.sandbox.docker.client import docker_client

    return built_image_tag(docker_client(), folder)


def gone(api, cid: str | None) -> bool:  # type: ignore[no-untyped-def]
    assert cid
    return not api.containers(all=True, filters={"id": cid})


# -- with Docker --------------------------------------------------------------------------------


def test_oracle_scores_1_in_harbor_order_and_leaves_no_container(base_image, api, tmp_path):
    task = make_task(tmp_path, base_image)
    result = run_trial(task, "oracle")
    print("seconds per phase:", result.seconds)
    assert result.error is None
    assert result.reward == 1.0, result.logs
    assert result.reward_reason is None
    assert result.agent_exit_code == 0 and not result.agent_timed_out
    assert result.verifier_exit_code == 0 and not result.verifier_timed_out
    assert list(result.seconds) == PHASES
    assert result.logs["verifier/reward.txt"].strip() == "1"
    assert "PASS" in result.logs["verifier"]
    assert result.image == _built_tag(task / "environment")
    assert gone(api, result.container)
    # the image is reused the second time
    again = run_trial(task, "oracle")
    assert again.reward == 1.0 and again.logs["build"].startswith("reused")


def test_nop_scores_0(base_image, api, tmp_path):
    result = run_trial(make_task(tmp_path, base_image), "nop")
    assert result.reward == 0.0 and result.reward_reason is None
    assert result.agent_exit_code is None
    assert "FAIL" in result.logs["verifier"]
    assert gone(api, result.container)


def test_an_argv_agent_runs_as_given_in_the_working_directory(base_image, tmp_path):
    result = run_trial(make_task(tmp_path, base_image), ["bash", "-c", "pwd; " + FIX])
    assert result.agent == shlex.join(["bash", "-c", "pwd; " + FIX])
    assert result.logs["agent"].splitlines()[0] == "/app"  # the Dockerfile's WORKDIR
    assert result.agent_exit_code == 0 and result.reward == 1.0


def test_what_the_agent_plants_stays_as_under_harbor(base_image, api, tmp_path):
    """Harbor uploads tests/ over what /tests holds and does not empty /logs/verifier, and the
    runner does the same: a task whose agent is root and whose test.sh trusts the log folder is
    fooled by a planted reward.json (Harbor reads it first). Exported tasks defend themselves
    (an agent user, root's /tests, a test.sh that clears the reward files): test_attacks.py."""
    agent = (
        "mkdir -p /logs/verifier /tests && "
        "echo '{\"reward\": 1.0}' > /logs/verifier/reward.json && "
        "echo planted > /tests/extra.sh"
    )
    test_sh = TEST_SH.replace("#!/bin/bash\n", "#!/bin/bash\nls /tests\n", 1)
    result = run_trial(make_task(tmp_path, base_image, test_sh=test_sh), agent)
    assert result.agent_exit_code == 0, result.logs["agent"]
    assert "FAIL" in result.logs["verifier"]  # the task's own test failed...
    assert result.reward == 1.0 and result.details == {"reward": 1.0}  # ...the plant won
    assert "extra.sh" in result.logs["verifier"].split()  # the upload went over the plant
    assert gone(api, result.container)


def test_a_verifier_that_writes_no_reward_scores_0_with_the_reason(base_image, tmp_path):
    task = make_task(tmp_path, base_image, test_sh="#!/bin/bash\necho nothing written\n")
    result = run_trial(task, "oracle")
    assert result.reward == 0.0
    assert result.reward_reason and "no reward.txt" in result.reward_reason
    assert result.verifier_exit_code == 0


def test_a_verifier_over_its_timeout_scores_0(base_image, tmp_path):
    test_sh = "#!/bin/bash\necho 1 > /logs/verifier/reward.txt\nsleep 500\n"
    task = make_task(tmp_path, base_image, test_sh=test_sh, verifier_timeout=3)
    result = run_trial(task, "oracle")
    assert result.verifier_timed_out and result.verifier_exit_code is None
    assert result.reward == 0.0 and "timed out" in (result.reward_reason or "")
    assert result.seconds["verify"] < 60


def test_the_agent_has_no_network(base_image, api, tmp_path):
    agent = (
        "ls /sys/class/net; "
        "if (exec 3<>/dev/tcp/1.1.1.1/53) 2>/dev/null; then echo ONLINE; " + FIX + "; "
        "else echo OFFLINE; exit 7; fi"
    )
    result = run_trial(make_task(tmp_path, base_image), agent)
    assert result.agent_exit_code == 7, result.logs["agent"]
    assert "OFFLINE" in result.logs["agent"]
    assert result.logs["agent"].split()[:2] == ["lo", "OFFLINE"]  # lo is the only interface
    assert result.reward == 0.0
    assert gone(api, result.container)


def test_an_agent_over_its_timeout_is_stopped_and_still_graded(base_image, api, tmp_path):
    task = make_task(tmp_path, base_image, agent_timeout=3)
    agent = FIX + "; (sleep 500 &); echo fixed; sleep 500"
    result = run_trial(task, agent)
    assert result.agent_timed_out and result.agent_exit_code is None
    assert "fixed" in result.logs["agent"] and "agent timeout of 3 s" in result.logs["agent"]
    assert result.seconds["agent"] < 60
    assert result.reward == 1.0  # graded on the state the agent left
    assert gone(api, result.container)
    # `timeout=` replaces the task's agent timeout
    quick = run_trial(task, "sleep 500", timeout=2)
    assert quick.agent_timed_out and quick.reward == 0.0 and quick.seconds["agent"] < 60


def test_an_agent_that_leaves_a_process_behind_ends_when_its_command_does(base_image, tmp_path):
    result = run_trial(make_task(tmp_path, base_image), FIX + "; (sleep 500 &); echo done")
    assert not result.agent_timed_out and result.agent_exit_code == 0
    assert "done" in result.logs["agent"]
    assert result.seconds["agent"] < 60 and result.reward == 1.0


def test_a_task_that_fails_to_build_is_recorded_and_the_batch_goes_on(base_image, api, tmp_path):
    bad = make_task(tmp_path, base_image, "broken", dockerfile=f"FROM {base_image}\nRUN exit 3\n")
    good = make_task(tmp_path, base_image, "good")
    with pytest.raises(TaskmintError, match="failed to build"):
        run_trial(bad, "oracle")
    results = run_trials([bad, tmp_path / "missing", good], "oracle")
    assert [r.task for r in results] == ["broken", "missing", "good"]
    assert results[0].error and "failed to build" in results[0].error
    assert results[0].reward == 0.0 and results[0].container is None
    assert results[1].error and "not a folder" in results[1].error
    assert results[2].error is None and results[2].reward == 1.0
    assert gone(api, results[2].container)


def test_keep_leaves_the_container_for_inspection(base_image, api, tmp_path):
    result = run_trial(make_task(tmp_path, base_image), "oracle", keep=True)
    try:
        assert result.reward == 1.0
        assert not gone(api, result.container)
        assert api.inspect_container(result.container)["State"]["Running"]
    finally:
        api.remove_container(result.container, force=True)


# -- a separate verifier ------------------------------------------------------------------------

# The agent fixes add.sh and leaves, around it, what must not reach a separate verifier: a planted
# reward, a file outside /app, a process, and in /app links out of it, a setuid file and a fifo.
LEAVINGS = (
    FIX + "; echo '{\"reward\": 1}' > /logs/verifier/reward.json; touch /tmp/agent-was-here; "
    "(exec -a taskmint-stray sleep 500 &); cd /app && ln -s /etc/passwd out && ln -s ../etc up && "
    "ln -s add.sh in && "
    "echo x > suid && chmod 4777 suid && mkfifo pipe && mkdir -p /logs/artifacts && "
    "echo kept > /logs/artifacts/note"
)
LOOK = """\
#!/bin/bash
ls /tests; cd /app && stat -c '%A %U %n' *; cat /logs/artifacts/note
[ -e /tmp/agent-was-here ] && echo LEAKED-FILE
grep -l 'taskmint-str[a]y' /proc/[0-9]*/cmdline 2>/dev/null && echo LEAKED-PROCESS
"""


def test_a_separate_verifier_gets_the_artifacts_alone_in_a_fresh_container(
    base_image, api, tmp_path
):
    task = make_task(tmp_path, base_image, separate=True, test_sh=TEST_SH + LOOK[12:])
    result = run_trial(task, LEAVINGS)
    assert result.error is None and result.agent_exit_code == 0, result.logs["agent"]
    assert result.verifier_mode == "separate"
    assert list(result.seconds) == [*PHASES[:4], "artifacts", *PHASES[4:]]
    # graded on the agent's add.sh, not on the planted reward (left in the agent's container)
    assert result.reward == 1.0 and result.details == {}, result.logs
    out = result.logs["verifier"]
    assert "PASS" in out and "kept" in out and "LEAKED" not in out, out
    listing = {line.split()[-1]: line.split()[:2] for line in out.splitlines() if " root " in line}
    # the link inside /app is kept; links out, the fifo and the setuid bit are not
    assert set(listing) >= {"add.sh", "in", "suid"} and not {"out", "up", "pipe"} & set(listing)
    assert listing["suid"][0] == "-rwxr-xr-x", listing
    # /app, add.sh, in and suid; and the folder and its note
    assert result.artifacts == {"/app": 4, "/logs/artifacts": 2}, result.artifacts
    assert result.logs["artifacts /app"] == "3 unsafe entries skipped"
    assert result.verifier_container and result.verifier_container != result.container
    assert gone(api, result.container) and gone(api, result.verifier_container)
    # the same task graded in the agent's container: the planted reward wins there
    shared = run_trial(task, LEAVINGS, verifier_mode="shared")
    assert shared.verifier_mode == "shared" and shared.details == {"reward": 1}
    assert "LEAKED-FILE" in shared.logs["verifier"], shared.logs["verifier"]


def test_a_separate_verifier_of_its_own_image_holds_its_tests(base_image, api, tmp_path):
    """tests/Dockerfile is the verifier's image, which holds /tests: nothing is uploaded."""
    task = make_task(tmp_path, base_image, separate=True, test_sh=TEST_SH + "ls /tests\n")
    (task / "tests" / "Dockerfile").write_text(f"FROM {base_image}\nCOPY test.sh /tests/test.sh\n")
    (task / "tests" / "not-in-the-image.txt").write_text("")
    result = run_trial(task, "oracle")
    assert result.reward == 1.0, result.logs
    assert result.verifier_image == _built_tag(task / "tests") != result.image
    assert "not-in-the-image.txt" not in result.logs["verifier"], result.logs["verifier"]
    assert gone(api, result.verifier_container)


# -- without Docker -----------------------------------------------------------------------------


def test_the_verifier_mode_follows_harbors_rules(tmp_path):
    task = make_task(tmp_path, "base")
    toml = task / "task.toml"
    assert read_task_settings(task).verifier_mode == "shared"  # nothing said
    toml.write_text(
        'artifacts = ["/app/", {source = "/data", destination = "d"}]\n'
        '[verifier]\nenvironment_mode = "separate"\n[environment]\ncpus = 2\nmemory_mb = 512\n'
    )
    settings = read_task_settings(task)
    assert (settings.verifier_mode, settings.artifacts) == ("separate", ("/app", "/data"))
    # a copy of [environment]
    assert (settings.verifier_cpus, settings.verifier_memory_mb) == (2, 512)
    # [verifier.environment] alone means separate, with its own resources and image
    toml.write_text('[verifier.environment]\ncpus = 3\ndocker_image = "v:1"\n')
    settings = read_task_settings(task)
    assert (settings.verifier_mode, settings.verifier_cpus) == ("separate", 3)
    assert settings.verifier_image == "v:1"
    for bad, message in [
        ('[verifier]\nenvironment_mode = "shared"\n[verifier.environment]\ncpus = 1\n', "shared"),
        ('[verifier]\nenvironment_mode = "apart"\n', "environment_mode"),
        ('artifacts = ["app"]\n', "absolute"),
        ('artifacts = [{source = "/app", exclude = ["*.pyc"]}]\n', "exclude"),
    ]:
        toml.write_text(bad)
        with pytest.raises(TaskmintError, match=message):
            read_task_settings(task)


def test_read_reward_prefers_reward_json_as_harbor_does():
    files = {"reward.txt": b"0\n", "reward.json": json.dumps({"reward": 0.75, "n": 4}).encode()}
    assert read_reward(files) == (0.75, {"reward": 0.75, "n": 4}, None)
    # a reward.json with no reward falls back to reward.txt, its fields still the details
    assert read_reward({"reward.txt": b" 1 ", "reward.json": b'{"n": 2}'}) == (1.0, {"n": 2}, None)
    assert read_reward({"reward.txt": b"0.5"}) == (0.5, {}, None)


@pytest.mark.parametrize(
    ("files", "reason"),
    [
        ({}, "no reward.txt or reward.json"),
        ({"reward.txt": b""}, "empty"),
        ({"reward.txt": b"passed"}, "not a number"),
        ({"reward.txt": b"nan"}, "not finite"),
        ({"reward.json": b"{"}, "not JSON"),
        ({"reward.json": b"[1]"}, "not a JSON object"),
        ({"reward.json": b'{"reward": true}', "reward.txt": b"1"}, "not a number"),
        ({"reward.json": b'{"n": 1}'}, "no reward"),
    ],
)
def test_a_missing_or_unparsable_reward_is_0_with_the_reason(files, reason):
    reward, _details, why = read_reward(files)
    assert reward == 0.0
    assert why and reason in why


def test_task_settings_come_from_task_toml_with_harbors_defaults(tmp_path):
    task = make_task(tmp_path, "base", agent_timeout=30, verifier_timeout=45)
    assert read_task_settings(task) == TaskSettings(
        agent_timeout=30,
        verifier_timeout=45,
        build_timeout=600,
        cpus=1,
        memory_mb=512,
        verifier_memory_mb=512,  # a separate verifier's are [environment]'s
    )
    (task / "task.toml").write_text('version = "1.0"\n[agent]\nuser = "agent"\n')
    assert read_task_settings(task) == TaskSettings(agent_user="agent")
    (task / "task.toml").write_text("[agent]\ntimeout_sec = -1\n")
    with pytest.raises(TaskmintError, match="positive"):
        read_task_settings(task)
    (task / "task.toml").write_text("[agent\n")
    with pytest.raises(TaskmintError, match="TOML"):
        read_task_settings(task)
    (task / "task.toml").unlink()
    with pytest.raises(TaskmintError, match=r"no task\.toml"):
        read_task_settings(task)


def test_the_image_tag_follows_the_environment_content(tmp_path):
    task = make_task(tmp_path, "base")
    env = task / "environment"
    tag = image_tag(env)
    assert tag.startswith("taskmint-harbor:") and image_tag(env) == tag
    (task / "tests" / "test.sh").write_text("changed")  # not part of the image
    assert image_tag(env) == tag
    (env / "add.sh").write_text(APP + "# changed\n")
    assert image_tag(env) != tag


def test_the_froms_are_the_dockerfiles_base_images(tmp_path):
    env = tmp_path / "environment"
    env.mkdir()
    (env / "Dockerfile").write_text(
        "FROM --platform=linux/amd64 builder:1 AS build\nRUN true\n"
        "from build\nFROM scratch\nFROM taskmint-base:bookworm\n"
    )
    assert base_images(env) == ["builder:1", "taskmint-base:bookworm"]
    assert image_tag(env, ["sha256:aa"]) != image_tag(env, ["sha256:bb"])


def test_a_base_rebuilt_under_its_tag_is_not_built_on_again(base_image, api, tmp_path):
    """The trial image of a task whose base was rebuilt (same tag, another image) is a new
    image on the new base, not the one built on the old base."""
    base = f"taskmint-test-base:{tmp_path.name[-12:].lower()}"
    images = []
    try:
        for marker in ("old", "new"):
            api.tag(base_image, *base.split(":"))
            made = api.create_container(base_image, command=["true"], entrypoint=[])
            api.put_archive(made["Id"], "/", _tar({"marker": marker.encode()}))
            images.append(api.commit(made["Id"], *base.split(":"))["Id"])
            api.remove_container(made["Id"], force=True)
            task = make_task(tmp_path / marker, base, test_sh=MARKER_TEST)
            result = run_trial(task, "nop")
            assert result.error is None, result.logs
            assert result.reward == (1.0 if marker == "new" else 0.0), result.logs
    finally:
        for ref in [base, *images]:
            with contextlib.suppress(Exception):
                api.remove_image(ref, force=True)


MARKER_TEST = """\
#!/bin/bash
mkdir -p /logs/verifier
if [ "$(cat /marker)" = new ]; then echo 1; else echo 0; fi > /logs/verifier/reward.txt
"""


def _tar(files: dict[str, bytes]) -> bytes:
    buffer = io.BytesIO()
    with tarfile.open(fileobj=buffer, mode="w") as tar:
        for name, data in files.items():
            info = tarfile.TarInfo(name)
            info.size = len(data)
            tar.addfile(info, io.BytesIO(data))
    return buffer.getvalue()
