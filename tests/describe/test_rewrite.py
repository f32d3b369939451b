"""LLM rewriting through the real `openai` client against a real chat-completions server.

The server (tests/calibrate/fake_openai_server.py) listens on loopback and answers from a
script; every fallback path (server error, timeout, refused connection, empty, leaking or
fact-dropping answers) must leave the template statement in place.
"""

from __future__ import annotations

import socket
from pathlib import Path

import pytest

from taskmint.calibrate.models import MissingApiKeyError, ModelConfig
from taskmint.describe import LeakChecker, Rewriter, describe, load_rewriter
from taskmint.errors import ManifestError
from taskmint.excise import excise
from taskmint.index import index_seed
from taskmint.pipeline import mint_candidate
from taskmint.publish import load_tasks, publish
from taskmint.records import Verdict
from tests.calibrate.fake_openai_server import FakeOpenAIServer, Hang, Status, Text


@pytest.fixture(scope="module")
def server():
    with FakeOpenAIServer(model_id="fake-writer") as s:
        yield s


def _rewriter(base_url: str, timeout: float = 5.0) -> Rewriter:
    model = ModelConfig(name="writer", base_url=base_url, model="fake-writer", seed=7)
    return Rewriter(model=model, api_key="unused", timeout=timeout)


@pytest.fixture(scope="module")
def case(tiny_seed):
    cands = excise(tiny_seed, index_seed(tiny_seed), max_candidates=60).candidates
    cand = next(c for c in cands if c.units[0].endswith("::top_words"))
    verdict = Verdict(
        candidate_id=cand.candidate_id,
        status="accepted",
        reason="",
        fail_to_pass=("tests/test_text.py::test_top_words_breaks_ties_alphabetically",),
    )
    return cand, verdict


def _reworded(body: dict) -> Text:
    template = body["messages"][-1]["content"].split("\n\n", 1)[1]
    return Text("A user reports: " + template.replace("## ", "### "))


def test_a_rewrite_becomes_the_statement_and_the_template_is_kept(server, case, tiny_seed):
    cand, verdict = case
    server.script([_reworded])
    d = describe(
        cand,
        verdict,
        ("tinylib",),
        seed=tiny_seed,
        style="issue",
        rewriter=_rewriter(server.base_url),
    )
    assert d.ok and d.source == "llm:writer"
    assert d.statement.startswith("A user reports: ") and "### " in d.statement
    assert d.statement_issue.startswith("# ") and d.statement != d.statement_issue
    (request,) = server.requests
    assert request["model"] == "fake-writer" and request["temperature"] == 0.0
    assert request["seed"] == 7 and request["max_tokens"] == 4096
    assert "bug report" in request["messages"][-1]["content"]
    assert d.statement_issue.strip() in request["messages"][-1]["content"]


@pytest.mark.parametrize(
    "steps",
    [
        [Status(500, "boom"), Status(500, "boom again")],  # the client retries once
        [Status(400, "bad request")],
        [Text("")],
        [Text("Rewritten, but the function's name and the tests are gone.")],
        ["leak"],
        [Text("x" * 100_000)],
    ],
    ids=["server-error", "refused-request", "empty", "drops-facts", "leaks", "oversized"],
)
def test_any_failed_rewrite_falls_back_to_the_template(server, case, tiny_seed, steps):
    cand, verdict = case
    line = next(iter(LeakChecker(cand.removed_code).protected.values()))

    def leaking(body: dict) -> Text:
        return Text(_reworded(body).content + f"\n\nThe original did `{line}`.\n")

    server.script([leaking if s == "leak" else s for s in steps])
    d = describe(cand, verdict, ("tinylib",), seed=tiny_seed, rewriter=_rewriter(server.base_url))
    plain = describe(cand, verdict, ("tinylib",), seed=tiny_seed)
    assert d.ok and d.source == "template"
    assert d == plain
    assert server.requests, "the rewriter never reached the server"


def test_a_server_that_never_answers_or_is_not_there_falls_back(server, case, tiny_seed):
    cand, verdict = case
    plain = describe(cand, verdict, ("tinylib",), seed=tiny_seed)
    server.script([Hang(), Hang()])
    slow = describe(
        cand, verdict, ("tinylib",), seed=tiny_seed, rewriter=_rewriter(server.base_url, 0.5)
    )
    assert slow == plain
    with socket.socket() as sock:  # a port nobody listens on
        sock.bind(("127.0.0.1", 0))
        port = sock.getsockname()[1]
    gone = describe(
        cand,
        verdict,
        ("tinylib",),
        seed=tiny_seed,
        rewriter=_rewriter(f"http://127.0.0.1:{port}/v1"),
    )
    assert gone == plain


def test_mint_candidate_publishes_the_rewritten_statement(
    server, case, tiny_seed, tiny_env, tiny_baseline, sandbox, pipeline_config, tmp_path
):
    cand, _ = case
    server.script([_reworded])
    result = mint_candidate(
        cand,
        tiny_seed,
        tiny_env,
        tiny_baseline,
        sandbox,
        pipeline_config,
        rewriter=_rewriter(server.base_url),
    )
    assert result.task is not None, result.verdict
    version = publish(
        [result.task],
        [(tiny_seed, tiny_env.env_id, tiny_env.python_version)],
        root=tmp_path,
        name="rewritten",
    )
    (task,) = load_tasks(Path(version.path))
    assert task.statement_source == "llm:writer"
    assert task.problem_statement.startswith("A user reports: ")
    assert task.statement_spec.startswith("# Implement `top_words`")


def test_load_rewriter_reads_the_calibration_config(tmp_path):
    models = tmp_path / "models.toml"
    models.write_text(
        '[[model]]\nname = "writer"\nbase_url = "http://127.0.0.1:9/v1"\nmodel = "m"\n'
        'api_key_env = "WRITER_KEY"\n'
    )
    assert load_rewriter(models, None, {}) is None
    rewriter = load_rewriter(models, "writer", {"WRITER_KEY": "k"})
    assert rewriter is not None and rewriter.api_key == "k" and rewriter.source == "llm:writer"
    with pytest.raises(MissingApiKeyError, match="WRITER_KEY"):
        load_rewriter(models, "writer", {})
    with pytest.raises(ManifestError, match="no model 'other'"):
        load_rewriter(models, "other", {"WRITER_KEY": "k"})
    with pytest.raises(ManifestError, match="--models"):
        load_rewriter(None, "writer", {})
