"""The reward service end to end: a real `taskmint serve-reward` process (uvicorn), driven over
HTTP by plain requests, by `taskmint.RewardClient` and by `taskmint.verify` with
TASKMINT_REWARD_URL set; every reward is compared with the library's for the same pair."""

from __future__ import annotations

import io
import shutil
import tarfile
import tempfile
import threading
import uuid
from pathlib import Path

import pytest
from prometheus_client.parser import text_string_to_metric_families

import taskmint
from taskmint import RewardClient
from taskmint.client import RewardRequestError
from taskmint.consumer import load_tasks, verify, workspace
from taskmint.records import Task
from tests.service.helpers import (
    Server,
    comparable,
    http,
    running,
    start_server,
    wrong_patch,
)
from tests.verify.node_forgery import forgery_patch, removed_exports

pytestmark = pytest.mark.slow


@pytest.fixture(scope="module")
def tasks(mixed_dataset: Path) -> list[Task]:
    return sorted(load_tasks(mixed_dataset, streaming=False), key=lambda t: t.instance_id)


def _pick(tasks: list[Task]) -> list[Task]:
    """Two Python tasks and one JavaScript task."""
    py = [t for t in tasks if t.language == "python"][:2]
    js = [t for t in tasks if t.language == "javascript"][:1]
    assert py and js
    return [*py, *js]


def test_rewards_are_the_librarys(
    reward_server: Server, tasks: list[Task], cache_dir: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    client = RewardClient(reward_server.url)
    seen = set()
    for task in _pick(tasks):
        for kind, patch in (
            ("gold", task.patch),
            ("empty", ""),
            ("wrong", wrong_patch(task, cache_dir)),
        ):
            local = verify(task, patch, cache_dir=cache_dir, reward_url="")
            status, answer = http(
                "POST",
                f"{reward_server.url}/verify",
                {"instance_id": task.instance_id, "patch": patch},
            )
            assert status == 200, answer
            assert answer["status"] == "graded"
            assert answer["dataset_version"] and answer["attempts"] == 1
            assert comparable(answer) == comparable(local), (kind, task.instance_id)
            remote = client.verify(task.instance_id, patch)
            assert comparable(remote) == comparable(local)
            seen.add((kind, local.reward))
    assert ("gold", 1.0) in seen and ("empty", 0.0) in seen and ("wrong", 0.0) in seen

    # one setting moves `taskmint.verify` from local to remote grading
    task = _pick(tasks)[0]
    before = reward_server.health()["gradings"]
    monkeypatch.setenv("TASKMINT_REWARD_URL", reward_server.url)
    assert taskmint.verify(task, task.patch).reward == 1.0
    assert taskmint.verify(task, "").reward == 0.0
    assert reward_server.health()["gradings"] == before + 2


def test_batch(reward_server: Server, tasks: list[Task], cache_dir: Path) -> None:
    py, _, js = _pick(tasks)
    items = [
        {"instance_id": py.instance_id, "patch": py.patch},
        {"instance_id": "no-such-task", "patch": ""},
        {"instance_id": js.instance_id, "patch": js.patch},
        {"instance_id": py.instance_id, "patch": 7},
        {"instance_id": js.instance_id, "patch": ""},
    ]
    status, body = http("POST", f"{reward_server.url}/verify/batch", {"items": items})
    assert status == 200, body
    results = body["results"]
    assert [r["status"] for r in results] == ["graded", "rejected", "graded", "rejected", "graded"]
    assert [r.get("reward") for r in results] == [1.0, None, 1.0, None, 0.0]
    assert results[1]["code"] == 404 and results[3]["code"] == 422
    assert comparable(results[4]) == comparable(verify(js, "", cache_dir=cache_dir, reward_url=""))
    answers = RewardClient(reward_server.url).verify_batch([(py.instance_id, "")])
    assert answers[0]["reward"] == 0.0


def test_task_view_and_workspace(
    reward_server: Server, tasks: list[Task], cache_dir: Path, tmp_path: Path
) -> None:
    task = next(t for t in tasks if t.hints)
    client = RewardClient(reward_server.url)
    view = client.task(task.instance_id)
    assert view["problem_statement"] == task.problem_statement
    assert view["hints"] == [] and view["hints_available"] == len(task.hints)
    assert client.task(task.instance_id, hints=1)["hints"] == [task.hints[0]]
    assert client.task(task.instance_id, hints=99)["hints"] == list(task.hints)
    assert not set(view["failing_tests"]) & set(task.hidden_tests)
    assert "patch" not in view and "removed_code" not in view
    got = client.workspace(task.instance_id, tmp_path / "remote")
    want = workspace(task, tmp_path / "local", cache_dir=cache_dir)
    files = sorted(p.relative_to(got).as_posix() for p in got.rglob("*") if p.is_file())
    assert files == sorted(p.relative_to(want).as_posix() for p in want.rglob("*") if p.is_file())
    for rel in files:
        assert (got / rel).read_bytes() == (want / rel).read_bytes(), rel
    status, raw = http("GET", f"{reward_server.url}/tasks/{task.instance_id}/workspace")
    assert status == 200
    with tarfile.open(fileobj=io.BytesIO(raw)) as tar:
        assert all(m.uid == 0 and not m.name.startswith(("/", "..")) for m in tar.getmembers())


def test_idempotent_request_ids(reward_server: Server, tasks: list[Task]) -> None:
    task = _pick(tasks)[0]
    rid = f"test-{uuid.uuid4().hex}"
    body = {"instance_id": task.instance_id, "patch": task.patch, "request_id": rid}
    before = reward_server.health()["gradings"]
    answers: list[tuple[int, dict]] = []

    def send() -> None:
        answers.append(http("POST", f"{reward_server.url}/verify", body))

    threads = [threading.Thread(target=send) for _ in range(4)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    again = http("POST", f"{reward_server.url}/verify", body)
    assert again[0] == 200 and again[1]["cached"] is True
    assert {s for s, _ in answers} == {200}
    assert len({(a["reward"], a["reason"], a["wall_time"]) for _, a in [*answers, again]}) == 1
    assert reward_server.health()["gradings"] == before + 1  # graded once for five requests
    status, conflict = http("POST", f"{reward_server.url}/verify", {**body, "patch": ""})
    assert status == 409, conflict


def test_metrics_and_health(reward_server: Server, tasks: list[Task]) -> None:
    task = _pick(tasks)[0]
    http("POST", f"{reward_server.url}/verify", {"instance_id": task.instance_id, "patch": ""})
    health = reward_server.health()
    assert health["http_status"] == 200 and health["ready"] and health["tasks"] == len(tasks)
    assert all(w.get("gold_reward") == 1.0 for w in health["warm_up"].values()), health
    families = {
        f.name: f for f in text_string_to_metric_families(RewardClient(reward_server.url).metrics())
    }
    for name in (
        "taskmint_reward_requests",
        "taskmint_reward_request_seconds",
        "taskmint_reward_grading_seconds",
        "taskmint_reward_outcomes",
        "taskmint_reward_queue_depth",
        "taskmint_reward_load",
        "taskmint_sandbox_pool_started",
        "taskmint_process_resident_memory_bytes",
    ):
        assert name in families, sorted(families)
    outcomes = {
        s.labels["outcome"]: s.value
        for s in families["taskmint_reward_outcomes"].samples
        if s.name.endswith("_total")
    }
    assert outcomes.get("passed", 0) >= 1 and outcomes.get("tests_failed", 0) >= 1
    verify_ok = [
        s
        for s in families["taskmint_reward_requests"].samples
        if s.labels.get("route") == "verify" and s.labels.get("code") == "200"
    ]
    assert verify_ok and verify_ok[0].value >= 1
    assert families["taskmint_sandbox_pool_started"].samples[0].value >= 1


BAD = "\u00e9".encode("latin-1")


@pytest.mark.parametrize(
    ("method", "path", "body", "headers", "status"),
    [
        ("POST", "/verify", b"{not json", {}, 400),
        ("POST", "/verify", b'{"instance_id": "x", "patch": "' + BAD + b'"}', {}, 400),
        ("POST", "/verify", b"[1, 2]", {}, 422),
        ("POST", "/verify", {"patch": ""}, {}, 422),
        ("POST", "/verify", {"instance_id": "{task}", "patch": None}, {}, 422),
        ("POST", "/verify", {"instance_id": "{task}", "patch": "", "colour": 1}, {}, 422),
        ("POST", "/verify", {"instance_id": "no-such-task", "patch": ""}, {}, 404),
        ("POST", "/verify", {"instance_id": "{task}", "patch": "x" * (2 << 20)}, {}, 413),
        ("POST", "/verify", {"instance_id": "{task}", "patch": "a\u0000b"}, {}, 422),
        (
            "POST",
            "/verify",
            {"instance_id": "{task}", "patch": "diff --git a/x b/x\nGIT binary patch\nliteral 3\n"},
            {},
            422,
        ),
        ("POST", "/verify", b'{"instance_id": "{task}", "patch": "\\ud800"}', {}, 422),
        ("POST", "/verify", {"instance_id": "{task}", "patch": "", "deadline": -1}, {}, 422),
        ("POST", "/verify", {"instance_id": "{task}", "patch": "", "deadline": "soon"}, {}, 422),
        ("POST", "/verify", {"instance_id": "{task}", "patch": "", "request_id": "a b"}, {}, 422),
        (
            "POST",
            "/verify",
            {"instance_id": "{task}", "patch": "", "dataset_version": "v9999"},
            {},
            404,
        ),
        ("POST", "/verify", b"instance_id=x", {"Content-Type": "text/plain"}, 415),
        ("GET", "/verify", None, {}, 405),
        ("POST", "/verify/batch", {"items": []}, {}, 422),
        ("POST", "/verify/batch", {"items": [{"instance_id": "x", "patch": ""}] * 65}, {}, 413),
        ("POST", "/verify/batch", {"things": []}, {}, 422),
        ("GET", "/tasks/no-such-task", None, {}, 404),
        ("GET", "/tasks/{task}?hints=lots", None, {}, 422),
        ("GET", "/nowhere", None, {}, 404),
    ],
)
def test_bad_requests(
    reward_server: Server,
    tasks: list[Task],
    method: str,
    path: str,
    body: object,
    headers: dict[str, str],
    status: int,
) -> None:
    task = tasks[0]
    if isinstance(body, dict):
        body = {k: (task.instance_id if v == "{task}" else v) for k, v in body.items()}
    elif isinstance(body, bytes):
        body = body.replace(b"{task}", task.instance_id.encode())
    got, answer = http(
        method, reward_server.url + path.replace("{task}", task.instance_id), body, headers
    )
    assert got == status, answer
    assert answer["status"] == "rejected" and answer["error"], answer
    # and the service goes on
    ok, graded = http(
        "POST", f"{reward_server.url}/verify", {"instance_id": task.instance_id, "patch": ""}
    )
    assert ok == 200 and graded["reward"] == 0.0


def test_client_raises_on_refusal(reward_server: Server) -> None:
    with pytest.raises(RewardRequestError) as info:
        RewardClient(reward_server.url).verify("no-such-task", "")
    assert info.value.status == 404


def test_bearer_token(tiny_dataset: Path, work_dir: Path, published_tasks: list[Task]) -> None:
    task = published_tasks[0]
    with running(
        tiny_dataset, work_dir, work_dir / "reward-token.log", "--token", "s3cret", "--no-warm-up"
    ) as server:
        body = {"instance_id": task.instance_id, "patch": ""}
        assert http("POST", f"{server.url}/verify", body)[0] == 401
        assert (
            http("POST", f"{server.url}/verify", body, {"Authorization": "Bearer nope"})[0] == 401
        )
        assert http("GET", f"{server.url}/metrics")[0] == 401
        assert http("GET", f"{server.url}/healthz")[0] == 200  # open to load balancers
        with pytest.raises(RewardRequestError):
            RewardClient(server.url).verify(task.instance_id, "")
        assert RewardClient(server.url, token="s3cret").verify(task.instance_id, "").reward == 0.0


def test_a_corrupt_version_is_refused_at_start(tiny_dataset: Path, work_dir: Path, tmp_path: Path):
    version = tmp_path / "tiny" / tiny_dataset.name
    shutil.copytree(tiny_dataset, version)
    shard = next(p for p in sorted(version.rglob("*.parquet")) if "environments" in str(p))
    shard.write_bytes(shard.read_bytes()[:-10] + b"0123456789")  # same size, other bytes
    server = start_server(version, work_dir, tmp_path / "corrupt.log", "--no-warm-up")
    assert server.proc.wait(timeout=300) == 2
    log = (tmp_path / "corrupt.log").read_text()
    assert "does not match its sha256" in log, log


def test_forged_node_streams_get_0_through_the_service(
    reward_server: Server, tasks: list[Task], cache_dir: Path
) -> None:
    """The forged-stream attacks of tests/verify/node_forgery.py on every JavaScript task of the
    version, over HTTP: 0, as the library gives; gold beside them, 1."""
    client = RewardClient(reward_server.url)
    js = [t for t in tasks if t.language == "javascript"]
    assert js
    for task in js:
        with tempfile.TemporaryDirectory() as tmp:
            ws = workspace(task, Path(tmp) / "ws", cache_dir=cache_dir)
            source = (Path(ws) / task.files[0]).read_text(encoding="utf-8")
        for exports in (None, removed_exports(task.units)):
            patch = forgery_patch(source, task.files[0], task.test_paths, exports=exports)
            remote = client.verify(task.instance_id, patch)
            assert remote.reward == 0.0, remote.reason
            assert not remote.rejected_paths  # the attack was graded
        assert client.verify(task.instance_id, task.patch).reward == 1.0
