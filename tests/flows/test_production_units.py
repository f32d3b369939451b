"""The pipeline's production logic, without Prefect: alerts (against a real
local HTTP receiver), the resume store, the retry policy, the harder batch's knobs, target and
budget, summaries, the prefect.yaml reader and the config's bands."""

from __future__ import annotations

import dataclasses
import subprocess
import sys
import time
from collections import Counter
from pathlib import Path

import httpx
import openai
import pytest

from taskmint.cache import (
    OTHER_FIELDS,
    VERDICT_FIELDS,
    ResultStore,
    config_fingerprint,
    content_key,
)
from taskmint.calibrate import DEFAULT_BANDS, fit_predictor
from taskmint.config import (
    FeatureSize,
    Knobs,
    PipelineConfig,
    SandboxConfig,
    StrengthConfig,
    VerifyConfig,
    load_config,
)
from taskmint.errors import ManifestError, PatchError, SandboxError, SandboxUnavailableError
from taskmint.flows.deploy import DeploymentSpec, load_specs
from taskmint.pipeline import MintResult, SeedSummary
from taskmint.pipeline.alerts import AlertConfig, post_alert, should_alert
from taskmint.pipeline.failures import failure_verdict, is_infrastructure_error
from taskmint.pipeline.harder import (
    Budget,
    HarderRequest,
    in_target,
    knobs_for,
    level_config,
    move_on,
    next_level,
    over_budget,
    prefilter,
    target_side,
)
from taskmint.pipeline.refresh import result_or_failure
from taskmint.pipeline.steps import LocalExecutor, step
from taskmint.pipeline.summary import summary_markdown, summary_rows
from taskmint.records import Calibration, Candidate, Verdict
from tests.flows.webhook_receiver import WebhookReceiver

ROOT = Path(__file__).resolve().parents[2]


# --- alerts ---------------------------------------------------------------------------------


def test_an_alert_is_a_slack_compatible_json_post():
    with WebhookReceiver() as hook:
        outcome = post_alert(
            AlertConfig(webhook_url=hook.url), "taskmint: refresh failed", ["boom"], {"seeds": 5}
        )
    assert outcome.sent and outcome.status == 200
    (body,) = hook.bodies
    assert hook.content_types == ["application/json"]
    assert body["text"].startswith("*taskmint: refresh failed*") and "boom" in body["text"]
    assert body["blocks"][0]["type"] == "section"
    assert body["blocks"][1]["fields"][0]["text"] == "*seeds*\n5"


def test_a_failing_or_absent_webhook_is_a_value_not_an_exception():
    with WebhookReceiver(status=500) as hook:
        outcome = post_alert(AlertConfig(webhook_url=hook.url), "x")
    assert not outcome.sent and outcome.status == 500 and len(hook.bodies) == 1
    url = hook.url  # the server is shut down now
    outcome = post_alert(AlertConfig(webhook_url=url, timeout=2), "x")
    assert not outcome.sent and "unreachable" in (outcome.error or "")
    assert not post_alert(AlertConfig(), "x").sent
    with pytest.raises(ValueError, match="http"):
        AlertConfig(webhook_url="ftp://x")


def test_the_threshold_is_on_the_infrastructure_error_rate():
    config = AlertConfig(webhook_url="http://127.0.0.1:9/", infra_error_threshold=0.25)
    assert not should_alert(0, 0, config)
    assert not should_alert(1, 4, config)  # 25% is not past 25%
    assert should_alert(2, 4, config)


# --- resume ---------------------------------------------------------------------------------


def test_the_store_keeps_results_across_instances_and_journals_computations(tmp_path):
    store = ResultStore(tmp_path)
    calls = []

    def compute() -> dict[str, int]:
        calls.append(1)
        return {"answer": 42}

    key = content_key("mint", "snap", "cand", "cfg")
    assert not store.has(key)
    assert store.cached(key, compute) == {"answer": 42}
    assert store.has(key)
    again = ResultStore(tmp_path)  # a new process after a crash sees the same files
    assert again.cached(key, compute) == {"answer": 42}
    assert len(calls) == 1 and again.hits == 1
    assert store.journal() == [key]
    assert not list(tmp_path.rglob(".tmp-*"))  # no temporary file left behind
    # a half-written file (a crash outside the atomic rename) is a miss, redone
    broken = content_key("other")
    path = tmp_path / broken[:2] / f"{broken}.pkl"
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_bytes(b"\x80\x05truncated")
    assert store.get(broken) == (False, None)


def test_keys_are_content_hashes_of_the_parts():
    assert content_key("ab", "c") != content_key("a", "bc")
    assert content_key("a", "b") == content_key("a", "b")


def _changed(tmp_path: Path) -> dict[str, object]:
    """A different value for every field of `PipelineConfig`."""
    models = tmp_path / "models.toml"
    models.write_text("# a models file\n")
    return {
        "output_root": Path("/elsewhere"),
        "dataset_name": "other",
        "seeds_manifest": Path("other-seeds.toml"),
        "sandbox": dataclasses.replace(SandboxConfig(), backend="docker"),
        "original_runs": 7,
        "broken_runs": 3,
        "max_candidates_per_seed": 5,
        "min_body_lines": 4,
        "workers": 7,
        "parallel_seeds": 3,
        "random_seed": 1,
        "shard_rows": 10,
        "reference_solvers": ("oracle",),
        "strategies": ("stub_body",),
        "knobs": Knobs(lines_removed=(5, None)),
        "models": models,
        "statement_style": "issue",
        "statement_level": 2,
        "feature": FeatureSize(lines=(50, 500)),
        "strength": StrengthConfig(mutants=4, min_mutation_score=0.25),
        "describe_model": "rewriter",
        "min_tests": 2,
        "max_tests": 10,
        "verify": dataclasses.replace(VerifyConfig(), scan_zeroes_reward=True),
        "bands": (("hard", 0.5), ("easy", 0.0)),
        "alert_webhook": "http://127.0.0.1:9/hook",
        "infra_error_threshold": 0.5,
    }


def test_every_config_field_is_placed_in_or_out_of_the_resume_key(tmp_path):
    # A new field fails here until it is put in one of the two sets, on purpose.
    names = {f.name for f in dataclasses.fields(PipelineConfig)}
    assert names == VERDICT_FIELDS | OTHER_FIELDS
    assert not VERDICT_FIELDS & OTHER_FIELDS
    changes = _changed(tmp_path)
    assert set(changes) == names
    base = PipelineConfig()
    for name, value in changes.items():
        changed = config_fingerprint(dataclasses.replace(base, **{name: value}))
        if name in VERDICT_FIELDS:
            assert changed != config_fingerprint(base), f"{name} must change the key"
        else:
            assert changed == config_fingerprint(base), f"{name} must not change the key"


def test_the_candidate_budget_and_the_webhook_keep_stored_results(tmp_path):
    # `--max-candidates 5` or TASKMINT_ALERT_WEBHOOK used to recompute every candidate.
    base = PipelineConfig(output_root=tmp_path)
    other = dataclasses.replace(
        base, max_candidates_per_seed=5, alert_webhook="http://127.0.0.1:9/hook"
    )
    assert config_fingerprint(other) == config_fingerprint(base)
    models = tmp_path / "models.toml"
    models.write_text("# one\n")
    first = config_fingerprint(dataclasses.replace(base, models=models))
    models.write_text("# two\n")  # the file's contents count, not only its path
    assert config_fingerprint(dataclasses.replace(base, models=models)) != first


def test_the_config_fingerprint_ignores_where_output_goes_but_not_what_decides_verdicts():
    base = PipelineConfig()
    assert config_fingerprint(base) == config_fingerprint(
        dataclasses.replace(base, output_root=Path("/elsewhere"), workers=7, dataset_name="x")
    )
    assert config_fingerprint(base) != config_fingerprint(dataclasses.replace(base, broken_runs=3))
    assert config_fingerprint(base) != config_fingerprint(
        dataclasses.replace(base, bands=(("hard", 0.5), ("easy", 0.0)))
    )


# --- retries --------------------------------------------------------------------------------


def _status_error(code: int) -> openai.APIStatusError:
    request = httpx.Request("POST", "http://127.0.0.1/v1/chat/completions")
    return openai.APIStatusError("x", response=httpx.Response(code, request=request), body=None)


def test_infrastructure_errors_are_retried_and_everything_else_is_not():
    assert is_infrastructure_error(SandboxUnavailableError("no docker"))
    assert is_infrastructure_error(SandboxError("bwrap did not start"))
    assert is_infrastructure_error(ConnectionResetError())
    assert is_infrastructure_error(_status_error(503))
    assert not is_infrastructure_error(_status_error(400))
    assert not is_infrastructure_error(ManifestError("bad manifest"))
    assert not is_infrastructure_error(PatchError("bad patch"))
    try:
        try:
            raise SandboxError("start failed")
        except SandboxError as inner:
            raise RuntimeError("wrapped") from inner
    except RuntimeError as outer:
        assert is_infrastructure_error(outer)


def test_the_local_executor_retries_infrastructure_errors_only():
    calls: Counter[str] = Counter()

    @step("sandbox-start", infra=True, retry_delay=0)
    def starts_on_the_third_try() -> str:
        calls["sandbox"] += 1
        if calls["sandbox"] < 3:
            raise SandboxError("bwrap: cannot start the sandbox")
        return "ran"

    @step("bad-input", infra=True, retry_delay=0)
    def bad_input() -> None:
        calls["bad"] += 1
        raise ManifestError("malformed manifest")

    @step("plain")
    def not_infra() -> None:
        calls["plain"] += 1
        raise SandboxError("a step not marked infra is not retried")

    with LocalExecutor(2) as ex:
        assert ex.call(starts_on_the_third_try) == "ran"
        with pytest.raises(ManifestError):
            ex.call(bad_input)
        (failed,) = ex.map(lambda _: not_infra(), [0])
    assert isinstance(failed, SandboxError)
    assert calls == {"sandbox": 3, "bad": 1, "plain": 1}


def test_a_candidate_whose_task_raised_is_recorded_with_its_real_type_and_message():
    # Before: every failure became `sandbox_error` ("infrastructure error after retries"),
    # including a bug such as CPython's AST recursion-depth SystemError.
    candidates = [
        Candidate(
            candidate_id=f"c{i}",
            snapshot_id="snap",
            seed="s",
            language="python",
            strategy="stub_body",
            units=("m.py::f",),
            files=("m.py",),
            breaking_patch="",
            gold_patch="",
            removed_code="",
        )
        for i in range(3)
    ]
    bug = SystemError("AST constructor recursion depth mismatch (before=21, after=8)")
    outage = SandboxError("bwrap: cannot start the sandbox")
    accepted = MintResult(
        verdict=Verdict(candidate_id="c2", status="no_failing_tests", reason="breaks nothing")
    )
    outcomes: list[BaseException | MintResult] = [bug, outage, accepted]

    @step("try", infra=True, retry_delay=0)
    def attempt(i: int) -> MintResult:
        if isinstance(outcomes[i], BaseException):
            raise outcomes[i]  # type: ignore[misc]
        return outcomes[i]  # type: ignore[return-value]

    with LocalExecutor(2) as ex:
        values = ex.map(attempt, [0, 1, 2])
    results = [result_or_failure(v, c) for v, c in zip(values, candidates, strict=True)]
    assert [r.verdict.status for r in results] == [
        "internal_error",
        "sandbox_error",
        "no_failing_tests",
    ]
    assert "SystemError: AST constructor recursion depth mismatch" in results[0].verdict.reason
    assert "SandboxError: bwrap: cannot start the sandbox" in results[1].verdict.reason
    assert results[2] is accepted
    assert failure_verdict("c9", RuntimeError("x")).candidate_id == "c9"


# --- harder batch ---------------------------------------------------------------------------


def _task(published, **rates: float):
    solvers = {m: Calibration.parse_label(m.replace("__", "/")) for m in rates}
    calibration = tuple(
        Calibration(
            solver_kind=solvers[m][0],
            solver_name=solvers[m][1],
            hint_level=solvers[m][2],
            attempts=4,
            solves=round(r * 4),
            rate=r,
            interval_low=0,
            interval_high=1,
            date="2026-01-01",
        )
        for m, r in rates.items()
    )
    return dataclasses.replace(published, calibration=calibration)


def test_knobs_turn_up_with_the_level_within_the_researchers_maxima():
    assert knobs_for(None, 0) is None
    k3 = knobs_for(Knobs(lines_removed=(2, 7)), 3)
    assert k3 is not None
    assert k3.lines_removed == (7, 7)  # 9 wanted, capped at the researcher's 7
    assert k3.units == (2.0, None) and k3.callers == (1.0, None)
    k1 = knobs_for(None, 1)
    assert k1 is not None and k1.lines_removed == (3.0, None) and k1.units == (1.0, None)


def test_the_levels_move_to_behaviour_statements_and_then_to_whole_features():
    config = PipelineConfig(feature=FeatureSize(lines=(100, 1500)))
    request = HarderRequest(n=1, rates={"m": (0.0, 0.3)})
    seen = {}
    for level in range(1, 8):
        c = level_config(config, level, request)
        seen[level] = (c.statement_level, c.strategies == ("feature",), c.feature.lines[0])
    assert seen[1] == seen[2] == (1, False, 100)
    assert seen[3] == (2, False, 100)  # small edits, behaviour only
    assert seen[4] == (1, True, 100)  # whole features, interface given
    assert seen[5] == (2, True, 100)
    assert seen[6] == (2, True, 200) and seen[7] == (2, True, 300)
    capped = level_config(PipelineConfig(feature=FeatureSize(lines=(100, 250))), 7, request)
    assert capped.feature.lines == (250, 250)  # never past the researcher's maximum
    # a request that names its strategies keeps them; the statements still move up
    mine = level_config(config, 6, dataclasses.replace(request, strategies=("stub_body",)))
    assert mine.strategies == config.strategies and mine.statement_level == 2


def test_the_target_and_the_next_level(published_tasks):
    t = published_tasks[0]
    ref = HarderRequest(n=2, rates={"reference/oracle": (1.0, 1.0), "reference/null": (0.0, 0.0)})
    assert in_target(_task(t, reference__oracle=1.0, reference__null=0.0), ref, DEFAULT_BANDS)
    hard = HarderRequest(n=2, rates={"m": (0.0, 0.3)})
    assert target_side(_task(t, m=0.75), hard, DEFAULT_BANDS) == 1  # too easy
    assert target_side(_task(t, m=0.25), hard, DEFAULT_BANDS) == 0
    assert target_side(_task(t), hard, DEFAULT_BANDS) == -1  # not calibrated for m
    banded = HarderRequest(n=1, band="hard")
    assert target_side(dataclasses.replace(t, band="easy"), banded, DEFAULT_BANDS) == 1
    assert target_side(dataclasses.replace(t, band="hard"), banded, DEFAULT_BANDS) == 0
    assert next_level(2, [1, 1, 0], hard) == 3
    assert next_level(2, [0, 0, 1], hard) == 2
    assert next_level(2, [-1, -1], banded) == 1
    # a level that ran dry: the nearest above that has not, else below; None when none is left
    assert move_on(4, {4}, hard) == 5 and move_on(6, {6}, hard) == 5
    assert move_on(4, {4, 5, 6}, hard) == 3 and move_on(0, set(range(7)), hard) is None
    with pytest.raises(Exception, match="exactly one target"):
        HarderRequest(n=1)


def test_budgets_stop_the_batch():
    assert over_budget({"rollouts": 10}, Budget(rollouts=10), 0.0) is not None
    assert over_budget({"rollouts": 9, "tokens": 5}, Budget(rollouts=10, tokens=6), 1.0) is None
    assert "tokens" in (over_budget({"tokens": 6}, Budget(tokens=6), 0.0) or "")
    assert "wall" in (over_budget({}, Budget(wall_seconds=5), 6.0) or "")


def test_the_predictor_prefilters_candidates(published_tasks, tiny_seed):
    from taskmint.excise import excise
    from taskmint.index import index_seed

    # a predictor that learned "many lines removed = hard"
    lines = [t.features.lines_removed for t in published_tasks]
    cut = sorted(lines)[len(lines) // 2]
    labels = ["hard" if n >= cut else "easy" for n in lines]
    predictor = fit_predictor(published_tasks, labels)
    candidates = list(excise(tiny_seed, index_seed(tiny_seed), max_candidates=20).candidates)
    kept = prefilter(candidates, predictor, "hard", 0.5)
    assert 0 < len(kept) < len(candidates)
    kept_lines = [c.features.lines_removed for c in kept]
    dropped = [c.features.lines_removed for c in candidates if c not in kept]
    assert min(kept_lines) >= min(dropped)
    assert sum(kept_lines) / len(kept_lines) > sum(dropped) / len(dropped)
    assert prefilter(candidates, None, "hard", 0.5) == candidates


# --- summaries, prefect.yaml, config --------------------------------------------------------


def test_the_summary_has_per_seed_and_strategy_yield_bands_and_spend(published_tasks):
    summaries = [
        SeedSummary(
            seed="tiny",
            candidates=4,
            accepted=3,
            by_strategy={"stub_body": (4, 3)},
            wall_time=30.0,
            prepare_seconds=10.0,
            host_seconds=2.0,
            sandbox_runs=40,
            sandbox_seconds=50.0,
        ),
        SeedSummary(seed="bad", error="no test passes reliably"),
    ]
    rows = summary_rows(summaries)
    assert rows[0] == {
        "seed": "tiny",
        "strategy": "stub_body",
        "candidates": 4,
        "accepted": 3,
        "yield": 0.75,
        "wall_s": 30.0,
        "error": "",
    }
    assert rows[1]["error"] == "no test passes reliably"
    md = summary_markdown("run", summaries, published_tasks, {"rollouts": 12}, 3.5, "/v1")
    assert "| tiny | stub_body | 4 | 3 | 0.75 |" in md
    assert f"| uncalibrated | {len(published_tasks)} |" in md
    assert "| rollouts | 12 |" in md and "wall time: 3.5 s" in md
    assert "| tiny | 30 | 10 | 0.50 | 12.5 |" in md  # the costs: per candidate on the right
    scored = [t for t in published_tasks if t.mutation_score is not None]
    assert f"- mutation score of {len(scored)} of {len(published_tasks)} tasks" in md
    weak = [SeedSummary(seed="tiny", candidates=2, accepted=1, rejected={"weak_tests": 1})]
    assert "- rejected as `weak_tests`: 1" in summary_markdown("run", weak, [], {}, 1.0, None)


def test_prefect_yaml_defines_the_scheduled_refresh():
    (spec,) = load_specs(ROOT / "prefect.yaml")
    assert spec.name == "nightly-refresh" and spec.entrypoint == "flows/refresh.py:nightly"
    assert spec.crons == (("0 3 * * *", "UTC"),)
    assert {"seeds", "output", "models", "bands", "max_candidates", "wall_seconds"} <= set(
        spec.parameters
    )
    from taskmint.flows.refresh import nightly

    assert spec.flow() is nightly and spec.flow().name == "taskmint-nightly-refresh"


def test_the_top_level_flows_are_the_packages_flows_and_a_bad_entrypoint_is_clear(tmp_path):
    """flows/ holds thin entry points over `taskmint.flows`: loaded by path, as Prefect loads
    them, each is the package's flow object; a missing file or name is a clear error."""
    from taskmint.flows.harder_batch import harder_batch

    spec = DeploymentSpec(
        name="h", entrypoint="flows/harder.py:harder_batch", crons=(), parameters={}, root=str(ROOT)
    )
    assert spec.flow() is harder_batch
    for entry, message in [
        ("flows/nope.py:nightly", "no flow file"),
        ("flows/refresh.py:nope", "has no 'nope'"),
    ]:
        bad = dataclasses.replace(spec, entrypoint=entry)
        with pytest.raises(ManifestError, match=message):
            bad.flow()


def test_a_malformed_prefect_yaml_is_a_clear_error(tmp_path):
    (tmp_path / "p.yaml").write_text("deployments:\n  - name: x\n")
    with pytest.raises(ManifestError, match="needs a name and an entrypoint"):
        load_specs(tmp_path / "p.yaml")


def test_bands_load_from_the_config_and_are_checked(tmp_path):
    (tmp_path / "c.toml").write_text("[bands]\nhard = 0.0\neasy = 0.7\n")
    assert load_config(tmp_path / "c.toml").bands == (("easy", 0.7), ("hard", 0.0))
    with pytest.raises(ManifestError, match=r"start at 0\.0"):
        PipelineConfig(bands=(("easy", 0.5),))
    (tmp_path / "p.toml").write_text("parallel_seeds = 3\n")
    assert load_config(tmp_path / "p.toml").parallel_seeds == 3
    with pytest.raises(ManifestError, match="parallel_seeds must be at least 1"):
        load_config(tmp_path / "p.toml", parallel_seeds=0)


def test_two_processes_storing_one_key_leave_one_whole_result(tmp_path):
    """Atomic rename: concurrent writers of a key leave one whole result, never a mix."""
    key = content_key("race")
    code = (
        "import sys; from pathlib import Path; from taskmint.cache import ResultStore; "
        "[ResultStore(Path(sys.argv[1])).put(sys.argv[2], sys.argv[3] * 100000) "
        "for _ in range(20)]"
    )
    procs = [subprocess.Popen([sys.executable, "-c", code, str(tmp_path), key, v]) for v in "ab"]
    assert [p.wait(60) for p in procs] == [0, 0]
    found, value = ResultStore(tmp_path).get(key)
    assert found and value in ("a" * 100000, "b" * 100000)
    assert len(ResultStore(tmp_path).journal()) == 40


def test_slots_bound_how_many_blocks_run_at_once():
    import threading

    from taskmint.pipeline.slots import slot

    running = []
    peak = []
    lock = threading.Lock()

    def work() -> None:
        with slot("sandbox", 2):
            with lock:
                running.append(1)
                peak.append(len(running))
            time.sleep(0.05)
            with lock:
                running.pop()

    threads = [threading.Thread(target=work) for _ in range(6)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert max(peak) == 2


def test_a_seeds_candidates_are_stored_and_read_back_until_what_decides_them_changes(
    tiny_seed, tiny_env, tiny_baseline, tmp_path, monkeypatch
):
    """A resumed refresh reads a seed's excision back instead of making it again (minutes of
    CPU on a large seed); another budget, round or set of knobs makes it again."""
    from taskmint.index import index_seed
    from taskmint.pipeline import seed as seeds

    prepared = seeds.PreparedSeed(
        seed=tiny_seed,
        env=tiny_env,
        index=index_seed(tiny_seed),
        baseline=tiny_baseline,
        coverage=None,
    )
    config = PipelineConfig(output_root=tmp_path)
    first = seeds.excise_seed(prepared, config)
    assert len(first.candidates) >= 4
    made = []
    real = seeds.excise
    monkeypatch.setattr(seeds, "excise", lambda *a, **k: made.append(k) or real(*a, **k))
    assert seeds.excise_seed(prepared, config) == first and made == []
    fewer = seeds.excise_seed(prepared, dataclasses.replace(config, max_candidates_per_seed=2))
    assert fewer.candidates == first.candidates[:2] and len(made) == 1
    seeds.excise_seed(prepared, config, round_no=1)
    assert len(made) == 2 and made[-1]["random_seed"] == config.random_seed + 1
