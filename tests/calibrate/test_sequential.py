"""Sequential solve-rate estimation, the calibration config, and calibrating tasks end to end
against a real chat-completions server."""

from __future__ import annotations

import random
from pathlib import Path

import numpy as np
import pytest

from taskmint.calibrate.campaign import calibrate_models
from taskmint.calibrate.models import (
    AgentBudget,
    CalibrationConfig,
    MissingApiKeyError,
    ModelConfig,
    load_calibration_config,
    resolve_api_key,
)
from taskmint.calibrate.policy import SequentialPolicy
from taskmint.calibrate.posterior import band_posterior, fit_prior
from taskmint.calibrate.sequential import run_sequential
from taskmint.errors import ManifestError
from taskmint.publish import load_seed
from tests.calibrate.fake_openai_server import Call, FakeOpenAIServer, Text, ToolCalls
from tests.conftest import LIMITS


def _sampler(truth: dict, seed: int = 0):
    rng = random.Random(seed)
    calls: list[list] = []

    def sample(keys: list) -> list[bool | None]:
        calls.append(list(keys))
        return [rng.random() < truth[k] for k in keys]

    return sample, calls


def test_clear_cases_stop_early_and_edge_cases_run_to_the_cap() -> None:
    truth = {"never": 0.0, "always": 1.0, "edge": 0.5}
    sample, calls = _sampler(truth)
    policy = SequentialPolicy(prior="uniform", cap=16, confidence=0.95, margin=0.05)
    est = run_sequential(list(truth), sample, policy)
    assert est["always"].decided and est["always"].band == "easy"
    assert est["always"].attempts < 16 and est["always"].rate == 1.0
    assert est["never"].decided and est["never"].attempts < 16 and est["never"].solves == 0
    assert est["never"].band in ("unsolved", "frontier")
    assert est["edge"].attempts == 16 and not est["edge"].decided
    assert est["edge"].interval_low < 0.5 < est["edge"].interval_high
    assert sum(len(c) for c in calls) == sum(e.attempts for e in est.values())
    assert calls[0] == ["never", "always", "edge"] and calls[-1] == ["edge"]


def test_a_pooled_prior_places_a_polarized_population_with_fewer_attempts() -> None:
    rng = np.random.default_rng(3)
    truth = {i: float(p) for i, p in enumerate(rng.choice([0.0, 0.02, 0.97, 1.0], 200))}
    totals = {}
    for prior in ("uniform", "pooled"):
        sample, _ = _sampler(truth, seed=1)
        est = run_sequential(list(truth), sample, SequentialPolicy(prior=prior))
        totals[prior] = sum(e.attempts for e in est.values())
        wrong = sum((e.band == "easy") != (truth[k] > 0.5) for k, e in est.items())
        assert wrong <= 4  # 2%: each stop is 95% sure up to the margin
    assert totals["pooled"] < 0.6 * totals["uniform"]


def test_infrastructure_failures_are_not_counted_and_stop_a_key() -> None:
    seen = {"broken": 0, "ok": 0}

    def sample(keys: list[str]) -> list[bool | None]:
        out: list[bool | None] = []
        for k in keys:
            seen[k] += 1
            out.append(None if k == "broken" or seen[k] == 1 else True)
        return out

    est = run_sequential(["broken", "ok"], sample, SequentialPolicy(max_infra_errors=3))
    assert est["broken"].attempts == 0 and est["broken"].band is None
    assert est["broken"].error and "3 attempts in a row" in est["broken"].error
    assert (
        est["ok"].infra_errors == 1
        and est["ok"].attempts >= 2
        and est["ok"].solves == est["ok"].attempts
    )


def test_band_posterior_and_prior_shapes() -> None:
    s, n = np.array([0, 5, 10]), np.array([10, 10, 10])
    prior = fit_prior(s, n)
    assert prior.shape == (200,) and prior.sum() == pytest.approx(1.0) and prior.min() > 0
    names, strict = band_posterior(s, n, prior)
    assert names == ["unsolved", "frontier", "hard", "medium", "easy"]
    assert np.allclose(strict.sum(axis=1), 1.0)
    assert strict[0].argmax() == 0 and strict[2].argmax() == 4
    _, wide = band_posterior(s, n, prior, margin=0.1)
    assert (wide >= strict - 1e-12).all()


def test_policy_and_config_validation(tmp_path: Path) -> None:
    with pytest.raises(ManifestError):
        SequentialPolicy(min_attempts=5, cap=4)
    with pytest.raises(ManifestError):
        SequentialPolicy(confidence=1.0)
    path = tmp_path / "models.toml"
    path.write_text(
        """
[calibration]
cap = 8
hint_levels = [0, 2]
[calibration.bands]
solved = 0.5
unsolved = 0.0

[[model]]
name = "local"
base_url = "http://127.0.0.1:8000/v1"
model = "qwen"
concurrency = 2
price_input_per_mtok = 0.5
[model.budget]
max_turns = 7
"""
    )
    config = load_calibration_config(path)
    assert config.cap == 8 and config.hint_levels == (0, 2)
    assert config.bands == (("solved", 0.5), ("unsolved", 0.0))
    model = config.model("local")
    assert model.concurrency == 2 and model.budget.max_turns == 7
    assert model.cost(2_000_000, 0) == pytest.approx(1.0)
    assert SequentialPolicy.from_config(config).cap == 8
    assert resolve_api_key(model, {}) == "unused"

    keyed = ModelConfig(
        name="x", base_url="https://example.invalid/v1", model="m", api_key_env="TASKMINT_TEST_KEY"
    )
    assert resolve_api_key(keyed, {"TASKMINT_TEST_KEY": "k"}) == "k"
    with pytest.raises(MissingApiKeyError, match="set the environment variable TASKMINT_TEST_KEY"):
        resolve_api_key(keyed, {})

    path.write_text('[[model]]\nname = "x"\nbase_url = "http://h/v1"\nmodel = "m"\napi_key = "s"\n')
    with pytest.raises(ManifestError, match="never hold keys"):
        load_calibration_config(path)
    path.write_text('[[model]]\nname = "x"\nbase_url = "ftp://h"\nmodel = "m"\n')
    with pytest.raises(ManifestError, match="base_url"):
        load_calibration_config(path)
    path.write_text("[calibration]\ncapp = 3\n")
    with pytest.raises(ManifestError, match="unknown keys"):
        load_calibration_config(path)


def _responder(patch: str):
    """A stateless model: `m/solver` applies the gold patch then submits; `m/giver` gives up."""

    def respond(body: dict) -> ToolCalls | Text:
        if body["model"] == "m/giver":
            return Text("I give up.")
        tools = [m for m in body["messages"] if m["role"] == "tool"]
        if not tools:
            return ToolCalls((Call("apply_patch", {"patch": patch}),))
        return ToolCalls((Call("submit", {}),))

    return respond


def test_calibrating_a_task_against_two_models_with_a_hint_ladder(
    published_tasks, tiny_dataset, cache_dir, tiny_env, sandbox, tmp_path
):
    task = next(t for t in published_tasks if t.units[0].endswith("::top_words"))
    seed = load_seed(tiny_dataset, task.snapshot_id, cache_dir=cache_dir)
    budget = AgentBudget(max_turns=6, request_timeout=10, max_retries=1, backoff_base=0.05)
    with FakeOpenAIServer() as server:
        server.script([_responder(task.patch)] * 200)
        config = CalibrationConfig(
            models=(
                ModelConfig(
                    name="solver",
                    base_url=server.base_url,
                    model="m/solver",
                    concurrency=2,
                    price_output_per_mtok=10.0,
                    budget=budget,
                ),
                ModelConfig(
                    name="giver",
                    base_url=server.base_url,
                    model="m/giver",
                    api_key_env="TASKMINT_FAKE_KEY",
                    budget=budget,
                ),
            ),
            cap=3,
            min_attempts=2,
            hint_levels=(0, 1),
        )
        with pytest.raises(MissingApiKeyError):
            calibrate_models(
                [task],
                config=config,
                seed_for=lambda t: seed,
                env_for=lambda t: tiny_env,
                sandbox=sandbox,
                limits=LIMITS,
                environ={},
            )
        assert server.requests == []
        [result] = calibrate_models(
            [task],
            config=config,
            seed_for=lambda t: seed,
            env_for=lambda t: tiny_env,
            sandbox=sandbox,
            limits=LIMITS,
            environ={"TASKMINT_FAKE_KEY": "secret"},
            today="2025-06-01",
            workdir=tmp_path,
        )
    assert {(c.solver_kind, c.solver_name, c.hint_level) for c in result.calibrations} == {
        ("model", "solver", 0),
        ("model", "solver", 1),
        ("model", "giver", 0),
        ("model", "giver", 1),
    }
    rows = {c.solver_name: c for c in result.calibrations if c.hint_level == 0}
    assert rows["solver"].solves == rows["solver"].attempts == 3 and rows["solver"].rate == 1.0
    assert rows["giver"].solves == 0 and rows["giver"].attempts == 3
    assert rows["solver"].date == "2025-06-01" and rows["solver"].tokens > 0
    assert rows["solver"].cost > 0 and rows["giver"].cost == 0
    assert rows["giver"].interval_high < 0.75
    assert dict(result.bands)["solver"] == "easy"
    assert dict(result.min_hint_level) == {"solver": 0, "giver": None}
    assert not result.retired  # the giver never solves it
    assert dict(result.model_ids) == {"solver": "fake-coder-1", "giver": "fake-coder-1"}
    assert result.errors == () and result.wall_time > 0
    hinted = [b for b in server.requests if task.hints[0] in b["messages"][1]["content"]]
    assert hinted and len(hinted) < len(server.requests)
