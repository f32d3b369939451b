"""Endpoint faults: one broken model among healthy ones never breaks calibration.

A real HTTP server on loopback (`FakeOpenAIServer`) plays the broken endpoint, one fault per
case: a body that is not JSON, HTML error pages, truncated JSON, JSON that is no chat
completion, a tool call naming an unknown tool, 500 forever, a connection reset mid-body, a
reply dripped slower than the request timeout allows, 401, 404. Another server plays two
healthy models: `solver` applies the gold patch and submits, `quitter` gives up.

Per fault, `run_attempt` against the broken endpoint gives an infrastructure error (or, for the
unknown tool, a graded failure of the model) with a readable reason, retried only when retrying
can help; and `taskmint calibrate` with all three models finishes, publishes the healthy
models' rows and reports the broken one's reason. Run with `-s` to see the table of outcomes.
"""

from __future__ import annotations

import json
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest

from taskmint.calibrate import campaign
from taskmint.calibrate.endpoint import make_client
from taskmint.calibrate.models import (
    AgentBudget,
    CalibrationConfig,
    ModelConfig,
    load_calibration_config,
)
from taskmint.calibrate.results import Attempt
from taskmint.calibrate.rollout import run_attempt
from taskmint.cli import main
from taskmint.publish import latest_version, load_tasks
from tests.calibrate.fake_openai_server import (
    Call,
    Drip,
    FakeOpenAIServer,
    Forever,
    Raw,
    Reset,
    Status,
    Text,
    ToolCalls,
)
from tests.conftest import LIMITS

pytestmark = pytest.mark.slow  # each test runs the CLI over a real seed

TIMEOUT = 1.0  # seconds per request
BUDGET = AgentBudget(
    max_turns=4,
    request_timeout=TIMEOUT,
    max_retries=1,
    backoff_base=0.05,
    backoff_max=0.2,
    wall_seconds=60,
)

HTML = (
    "<!DOCTYPE html>\n<html>\n<head><title>{title}</title></head>\n"
    "<body><center><h1>{title}</h1></center><hr><center>nginx</center></body>\n</html>\n"
)


@dataclass(frozen=True)
class Fault:
    """One way the broken endpoint fails, and what the attempt must record about it."""

    step: Any  # what the broken endpoint answers, every time
    says: tuple[str, ...]  # substrings of the recorded reason
    requests: int = 2  # per attempt: 2 when the fault is retried (max_retries = 1), else 1
    infra: bool = True  # False: the model's own fault, graded like any failure


FAULTS: dict[str, Fault] = {
    "non-json-200": Fault(
        Raw("upstream says hi, not JSON"), ("HTTP 200", "not JSON", "JSONDecodeError")
    ),
    "html-200": Fault(
        Raw(HTML.format(title="Welcome to nginx!"), 200, "text/html"),
        ("HTTP 200", "not JSON", "text/html", "Welcome to nginx!"),
    ),
    "html-502": Fault(
        Raw(HTML.format(title="502 Bad Gateway"), 502, "text/html"),
        ("HTTP 502", "text/html", "502 Bad Gateway", "after 1 retries"),
    ),
    "truncated-json": Fault(
        Raw('{"id": "chatcmpl-1", "object": "chat.completion", "choices": [{"index": 0, "mes'),
        ("HTTP 200", "not JSON", "Unterminated string"),
    ),
    "no-choices": Fault(
        Raw('{"id": "chatcmpl-1", "object": "chat.completion", "model": "m"}'),
        ("HTTP 200", "not a chat completion", "no choices"),
    ),
    "choice-without-message": Fault(
        Raw(
            '{"id": "chatcmpl-1", "object": "chat.completion", "model": "m", '
            '"choices": [{"index": 0, "finish_reason": "stop"}]}'
        ),
        ("HTTP 200", "not a chat completion", "no message"),
    ),
    "unknown-tool": Fault(
        ToolCalls((Call("rm_rf", {"path": "/"}),)),
        ("no submission within 4 turns", "no changes"),
        requests=4,
        infra=False,
    ),
    "500-forever": Fault(
        Status(500, "the model server crashed"),
        ("HTTP 500", "the model server crashed", "after 1 retries"),
    ),
    "reset-mid-body": Fault(Reset(sent=40), ("the connection to", "Connection reset")),
    "slow-drip": Fault(
        Drip(Text("I am thinking. " * 20), chunk=16, interval=0.2),
        ("timed out", f"{TIMEOUT:g} s"),
    ),
    "401": Fault(
        Status(401, "Incorrect API key provided"),
        ("HTTP 401", "Incorrect API key provided", "API key"),
        requests=1,
    ),
    "404-model": Fault(
        Status(404, "The model `m/broken` does not exist"),
        ("HTTP 404", "does not exist", "model name"),
        requests=1,
    ),
}


def _healthy(patch: str):  # type: ignore[no-untyped-def]
    """`m/solver` applies the gold patch then submits; `m/quitter` gives up."""

    def respond(body: dict[str, Any]) -> ToolCalls | Text:
        if body["model"] == "m/quitter":
            return Text("I give up.")
        if not any(m["role"] == "tool" for m in body["messages"]):
            return ToolCalls((Call("apply_patch", {"patch": patch}),))
        return ToolCalls((Call("submit", {}),))

    return respond


@pytest.fixture(scope="module")
def task_and_seed(stub_task_and_seed):  # type: ignore[no-untyped-def]
    return stub_task_and_seed


@pytest.fixture(scope="module")
def healthy(task_and_seed):  # type: ignore[no-untyped-def]
    task, _ = task_and_seed
    with FakeOpenAIServer() as server:
        server.script([Forever(_healthy(task.patch))])
        yield server


@pytest.fixture(scope="module")
def cli_root(tmp_path_factory) -> Path:  # type: ignore[no-untyped-def]
    """One output root for the CLI runs, so the seed's environment is built once."""
    return tmp_path_factory.mktemp("faults")


COLUMNS = ("exit code / finished", "bad model's reason", "solver", "quitter", "published")


@pytest.fixture(scope="module")
def table():  # type: ignore[no-untyped-def]
    """Per fault, what the run showed (printed at the end of the module: run with -s)."""
    rows: dict[str, dict[str, str]] = {name: {} for name in FAULTS}
    yield rows
    if any(rows.values()):
        print("\n\n| fault | " + " | ".join(COLUMNS) + " |\n|---|" + "---|" * len(COLUMNS))
        for name, row in rows.items():
            print(f"| {name} | " + " | ".join(row.get(c, "") for c in COLUMNS) + " |")


def _shown(reason: str, url: str) -> str:
    """The first 100 characters of a reason, as a table cell (the random port elided)."""
    return reason.replace(url, "http://127.0.0.1:PORT/v1")[:100].replace("|", "/")


def _attempt(server: FakeOpenAIServer, task_and_seed, env, sandbox, tmp_path) -> Attempt:  # type: ignore[no-untyped-def]
    task, seed = task_and_seed
    model = ModelConfig(name="broken", base_url=server.base_url, model="m/broken", budget=BUDGET)
    with make_client(model, "test-key") as client:
        return run_attempt(
            task,
            seed=seed,
            env=env,
            sandbox=sandbox,
            limits=LIMITS,
            model=model,
            client=client,
            workdir=tmp_path,
        )


@pytest.mark.parametrize("name", list(FAULTS))
def test_an_endpoint_fault_is_recorded_on_the_attempt(
    name, task_and_seed, tiny_env, sandbox, tmp_path, table
):
    fault = FAULTS[name]
    with FakeOpenAIServer() as broken:
        broken.script([Forever(fault.step)])
        started = time.monotonic()
        attempt = _attempt(broken, task_and_seed, tiny_env, sandbox, tmp_path)
        elapsed = time.monotonic() - started
        sent = len(broken.requests)
    table[name]["bad model's reason"] = _shown(attempt.reason, broken.base_url)
    for text in fault.says:
        assert text in attempt.reason, (name, attempt.reason)
    assert attempt.reward == 0.0 and not attempt.solved
    assert sent == fault.requests, (name, sent, attempt.reason)
    if fault.infra:
        assert attempt.infra_error and attempt.stop == "api_error", attempt
        assert broken.base_url in attempt.reason, attempt.reason
        assert attempt.retries == fault.requests - 1
        assert attempt.turns == 0 and attempt.patch == ""
    else:  # the model's fault: told so, and graded
        assert not attempt.infra_error and attempt.stop == "max_turns", attempt
        assert attempt.tool_errors == attempt.tool_calls == 4
        shown = [m["content"] for m in broken.requests[-1]["messages"] if m["role"] == "tool"]
        assert shown and all(s.startswith("error: unknown tool 'rm_rf'") for s in shown)
    # a request is over when its timeout says, however slowly the bytes come
    assert elapsed < fault.requests * (TIMEOUT + 1.0) + 2.0, elapsed


def _models_toml(path: Path, healthy: str, broken: str) -> Path:
    budget = (
        f"budget = {{ max_turns = 4, request_timeout = {TIMEOUT}, max_retries = 1, "
        "backoff_base = 0.05, backoff_max = 0.2, wall_seconds = 60 }\n"
    )
    text = "[calibration]\ncap = 2\nmin_attempts = 2\n"
    for name, url in (("solver", healthy), ("quitter", healthy), ("broken", broken)):
        text += (
            f'\n[[model]]\nname = "{name}"\nbase_url = "{url}"\nmodel = "m/{name}"\n'
            f'api_key_env = ""\n{budget}'
        )
    path.write_text(text)
    return path


def _rate(rows: dict[str, Any], name: str) -> str:
    row = rows.get(name)
    return "no row" if row is None else f"{row.solves}/{row.attempts} (rate {row.rate:g})"


@pytest.mark.parametrize("name", list(FAULTS))
def test_calibrate_finishes_and_publishes_the_healthy_models_rows(
    name, task_and_seed, tiny_dataset, healthy, cli_root, table, capsys
):
    """`taskmint calibrate` end to end, the broken model third of three."""
    task, _ = task_and_seed
    fault = FAULTS[name]
    dataset = f"faults-{name}"
    config = cli_root / f"{name}.toml"
    config.write_text(f'dataset_name = "{dataset}"\n')
    with FakeOpenAIServer() as broken:
        broken.script([Forever(fault.step)])
        models = _models_toml(cli_root / f"{name}-models.toml", healthy.base_url, broken.base_url)
        argv = ["--config", str(config), "--output", str(cli_root), "calibrate", task.instance_id]
        argv += ["--dataset", str(tiny_dataset), "--models", str(models)]
        code = main(argv)
    out, err = capsys.readouterr()
    versions = cli_root / "datasets" / dataset
    published = (versions / "LATEST").exists()
    rows: dict[str, Any] = {}
    if published:
        calibrated = {t.instance_id: t for t in load_tasks(latest_version(versions))}
        rows = {c.label: c for c in calibrated[task.instance_id].calibration}
    table[name].update(
        {
            "exit code / finished": f"{code} / {'yes' if code == 0 else 'no'}",
            "solver": _rate(rows, "solver"),
            "quitter": _rate(rows, "quitter"),
            "published": "yes" if published else "no",
        }
    )
    assert code == 0, err
    assert published and f"({len(load_tasks(tiny_dataset))} tasks)" in out
    assert (rows["solver"].solves, rows["solver"].attempts) == (2, 2)
    assert (rows["quitter"].solves, rows["quitter"].attempts) == (0, 2)
    assert {r for r in rows if r.startswith("reference/")} == {
        "reference/null",
        "reference/oracle",
    }
    if fault.infra:
        assert "broken" not in rows, rows["broken"]
        [line] = [line for line in err.splitlines() if line.startswith("calibration: broken")]
        assert "3 attempts in a row failed outside the model" in line
        for text in fault.says:
            assert text in line, (name, line)
    else:
        assert (rows["broken"].solves, rows["broken"].attempts) == (0, 2)
        assert "calibration:" not in err
    assert "Traceback" not in err


def test_the_models_file_of_the_cli_runs_has_the_small_budgets(tmp_path):
    config = load_calibration_config(
        _models_toml(tmp_path / "m.toml", "http://a/v1", "http://b/v1")
    )
    assert [m.name for m in config.models] == ["solver", "quitter", "broken"]
    assert all(m.budget == BUDGET for m in config.models)


def test_an_odd_but_usable_answer_is_used(task_and_seed, tiny_env, sandbox, tmp_path):
    """A tool call without an id whose arguments are an object, not a string: the call runs."""
    odd = {
        "id": "chatcmpl-odd",
        "object": "chat.completion",
        "model": "odd-1",
        "choices": [
            {
                "index": 0,
                "finish_reason": "tool_calls",
                "message": {
                    "role": "assistant",
                    "content": None,
                    "tool_calls": [
                        {"type": "function", "function": {"name": "list_files", "arguments": {}}}
                    ],
                },
            }
        ],
    }
    with FakeOpenAIServer() as server:
        server.script([Raw(json.dumps(odd)), Text("done"), Text("done")])
        attempt = _attempt(server, task_and_seed, tiny_env, sandbox, tmp_path)
        sent = server.requests
    assert not attempt.infra_error and attempt.stop == "gave_up", attempt.reason
    assert attempt.tool_calls == 1 and attempt.tool_errors == 0
    assert attempt.model_id == "odd-1"
    [listing] = [m for m in sent[1]["messages"] if m["role"] == "tool"]
    assert "tests/" in listing["content"] and listing["tool_call_id"] == "call_0"


def test_an_attempt_that_raises_is_an_infra_error_of_its_own_model(
    task_and_seed, tiny_env, sandbox, healthy, tmp_path, monkeypatch
):
    """Whatever escapes `run_attempt` is recorded on the attempt; the other models go on."""
    task, seed = task_and_seed
    real = campaign.run_attempt

    def flaky(task, *, model, **kw):  # type: ignore[no-untyped-def]
        if model.name == "broken":
            raise RuntimeError("the sandbox fell over")
        return real(task, model=model, **kw)

    monkeypatch.setattr(campaign, "run_attempt", flaky)
    models = tuple(
        ModelConfig(name=name, base_url=healthy.base_url, model=f"m/{name}", budget=BUDGET)
        for name in ("solver", "broken", "quitter")
    )
    [result] = campaign.calibrate_models(
        [task],
        config=CalibrationConfig(models=models, cap=2, min_attempts=2),
        seed_for=lambda t: seed,
        env_for=lambda t: tiny_env,
        sandbox=sandbox,
        limits=LIMITS,
        environ={},
        workdir=tmp_path,
    )
    rows = {c.label: c for c in result.calibrations}
    assert set(rows) == {"solver", "quitter"}
    assert (rows["solver"].solves, rows["solver"].attempts) == (2, 2)
    assert (rows["quitter"].solves, rows["quitter"].attempts) == (0, 2)
    broken = [a for a in result.attempts if a.model == "broken"]
    assert len(broken) == 3  # max_infra_errors in a row, then the key stops
    for a in broken:
        assert a.infra_error and a.stop == "api_error" and a.reward == 0.0
        assert a.reason.startswith("the attempt failed: RuntimeError: the sandbox fell over (at ")
    [error] = result.errors
    assert error.startswith("broken: 3 attempts in a row failed outside the model: ")
    assert "RuntimeError: the sandbox fell over" in error
