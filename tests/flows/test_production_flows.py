"""The production flows run for real by Prefect, under the one session harness
(tests/flows/conftest.py), on the smallest fixture seed with tight limits:

- infrastructure errors are retried, bad input and verdicts are not;
- a harder batch for a band the reference solvers decide finishes with n tasks in it;
- kill-and-resume: a refresh in a subprocess is SIGKILLed mid-run, rerun, and redoes no
  finished work; its output equals an uninterrupted run's, made on a 2-worker Dask
  `LocalCluster` (so this is also the scale-out test);
- alerts reach a real local webhook on failure and past the infrastructure error threshold;
- `taskmint serve` registers the scheduled deployment on the server, and a triggered run
  completes and publishes a version.
"""

from __future__ import annotations

import dataclasses
import json
import os
import signal
import subprocess
import sys
import time
from collections import Counter
from pathlib import Path

import pytest
from prefect import flow

from taskmint.cache import ResultStore
from taskmint.config import FeatureSize, PipelineConfig, SandboxConfig
from taskmint.errors import ManifestError, SandboxError
from taskmint.flows.harder_batch import run_harder_batch
from taskmint.flows.refresh import refresh, run_refresh
from taskmint.flows.runtime import prefect_task
from taskmint.pipeline import Budget, HarderRequest, step
from taskmint.publish import latest_version, load_tasks
from taskmint.records import Verdict
from tests.conftest import SEEDS
from tests.flows.webhook_receiver import WebhookReceiver

ROOT = Path(__file__).resolve().parents[2]
TINY = SEEDS / "seeds.toml"  # the tiny seed alone
CONFIG_TOML = "original_runs = 3\nbroken_runs = 2\nmax_candidates_per_seed = 4\n"

pytestmark = pytest.mark.slow


def _output(work_dir: Path, name: str) -> Path:
    """A fresh output root whose environments are the session's (`tiny_env` builds the tiny
    seed's venv once; `build_environment` resolves the link, so every run uses that one)."""
    out = work_dir / name
    (out / "cache").mkdir(parents=True)
    (out / "cache" / "envs").symlink_to(work_dir / "cache" / "envs", target_is_directory=True)
    return out


def _config(out: Path, **changes) -> PipelineConfig:
    base = PipelineConfig(
        output_root=out,
        seeds_manifest=TINY,
        original_runs=3,
        broken_runs=2,
        max_candidates_per_seed=4,
        workers=2,
    )
    return dataclasses.replace(base, **changes)


def _comparable(version: Path) -> dict[str, tuple]:
    return {
        t.instance_id: (
            t.patch,
            t.breaking_patch,
            t.FAIL_TO_PASS,
            t.PASS_TO_PASS,
            tuple((c.label, c.attempts, c.solves) for c in t.calibration),
        )
        for t in load_tasks(version)
    }


# --- retries --------------------------------------------------------------------------------


def test_infrastructure_errors_are_retried_and_bad_input_and_verdicts_are_not(prefect_harness):
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

    @step("verdict", infra=True, retry_delay=0)
    def rejected() -> Verdict:
        calls["verdict"] += 1
        return Verdict(candidate_id="c1", status="no_failing_tests", reason="breaks nothing")

    @flow(name="retry-policy")
    def policy() -> tuple[str, bool, str]:
        ran = prefect_task(starts_on_the_third_try)()
        failed = prefect_task(bad_input)(return_state=True).is_failed()
        return ran, failed, prefect_task(rejected)().status

    assert policy() == ("ran", True, "no_failing_tests")
    assert calls == {"sandbox": 3, "bad": 1, "verdict": 1}


# --- harder batch ---------------------------------------------------------------------------


def test_a_harder_batch_for_a_reference_band_finishes_with_n_tasks(
    prefect_harness, work_dir, tiny_env
):
    from prefect.client.orchestration import get_client
    from prefect.client.schemas.filters import ArtifactFilter, ArtifactFilterKey

    config = _config(_output(work_dir, "harder"), max_candidates_per_seed=5)
    band = {"reference/oracle": (1.0, 1.0), "reference/null": (0.0, 0.0)}
    request = HarderRequest(
        n=3, rates=band, start_level=2, candidates_per_round=4, dataset_name="hard3"
    )
    result = run_harder_batch(request, config)
    assert result.stop_reason == "found" and len(result.tasks) == 3
    assert result.published is not None
    tasks = load_tasks(Path(result.published))
    assert len(tasks) == 3 and Path(result.published).parent.name == "hard3"
    assert (Path(result.published) / "report.html").is_file()  # and its run's record
    assert json.loads((Path(result.published) / "run.json").read_text())["kind"] == "harder"
    for t in tasks:  # the knobs at level 2: 6 lines or more removed
        assert t.features is not None and t.features.lines_removed >= 6
        rates = {c.label: c.rate for c in t.calibration}
        assert rates["reference/oracle"] == 1.0 and rates["reference/null"] == 0.0
    assert result.spend["rollouts"] >= 6 and result.levels[0] == 2
    with get_client(sync_client=True) as client:
        keys = ["taskmint-harder-batch-table", "taskmint-harder-batch-summary"]
        found = client.read_artifacts(
            artifact_filter=ArtifactFilter(key=ArtifactFilterKey(any_=keys))
        )
    assert {a.key for a in found} == set(keys)
    summary = next(a for a in found if a.type == "markdown")
    assert "| rollouts |" in str(summary.data) and "3/3 (found)" in str(summary.data)

    # a budget stops the batch short of n; it reports what it spent
    short = dataclasses.replace(request, n=50, budget=Budget(rollouts=2), dataset_name="short")
    stopped = run_harder_batch(short, config)
    assert stopped.stop_reason == "budget" and len(stopped.tasks) < 50
    assert stopped.spend["rollouts"] >= 2


def test_a_harder_batch_at_the_feature_levels_mints_whole_features_described_by_behaviour(
    prefect_harness, work_dir, tiny_env
):
    config = _config(
        _output(work_dir, "harder-feature"),
        seeds_manifest=SEEDS / "shop.toml",
        feature=FeatureSize(lines=(20, 400)),
    )
    band = {"reference/oracle": (1.0, 1.0), "reference/null": (0.0, 0.0)}
    request = HarderRequest(
        n=1, rates=band, start_level=5, max_level=5, max_rounds=1, dataset_name="features"
    )
    result = run_harder_batch(request, config)
    assert result.stop_reason == "found", result.summaries
    assert result.published is not None
    (task,) = load_tasks(Path(result.published))
    assert task.strategy == "feature" and task.statement_level == 2
    assert task.features is not None and task.features.files == 2
    assert "def " not in task.problem_statement


def test_a_harder_batch_that_runs_dry_at_a_level_moves_on_and_says_why_it_stopped(
    work_dir, tiny_env
):
    """Asked for more tasks than the seed holds, from the feature level: a round with no new
    candidate moves to another level (not counted as a round), and the batch stops saying
    what it tried, round by round, and why."""
    from taskmint.pipeline.harder import harder
    from taskmint.pipeline.steps import LocalExecutor

    config = _config(_output(work_dir, "harder-dry"), max_candidates_per_seed=3)
    request = HarderRequest(
        n=50, rates={"reference/null": (0.0, 0.0)}, start_level=4, max_level=4, max_rounds=2
    )
    with LocalExecutor(2) as ex:
        result = harder(request, config, ex)
    assert result.stop_reason in ("rounds", "exhausted"), result.rounds
    assert result.levels[0] == 4 and len(result.rounds) == len(result.levels)
    dry = [i for i, line in enumerate(result.rounds) if " 0 new candidates" in line]
    assert dry, result.rounds  # the seed runs dry at some level
    for i in dry:  # ... and the next round is at another level
        assert i + 1 == len(result.levels) or result.levels[i + 1] != result.levels[i]
    assert len(result.rounds) - len(dry) <= request.max_rounds
    assert result.why.startswith(f"found {len(result.tasks)} of 50")
    assert "levels tried: 4, 3" in result.why, result.why


# --- kill and resume; Dask ------------------------------------------------------------------


def test_a_killed_refresh_resumes_without_redoing_work_and_matches_an_uninterrupted_run(
    prefect_harness, work_dir, tiny_env
):
    killed_out = _output(work_dir, "killed")
    (work_dir / "resume.toml").write_text(CONFIG_TOML)
    cmd = [
        sys.executable,
        "-m",
        "taskmint.cli",
        "--config",
        str(work_dir / "resume.toml"),
        "--output",
        str(killed_out),
        "refresh",
        "--seeds",
        str(TINY),
        "--workers",
        "1",
    ]
    journal = ResultStore(killed_out / "cache" / "results")
    proc = subprocess.Popen(
        cmd, cwd=ROOT, start_new_session=True, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL
    )
    try:
        deadline = time.monotonic() + 600
        while len(journal.journal()) < 2 and proc.poll() is None and time.monotonic() < deadline:
            time.sleep(0.2)
    finally:
        os.killpg(proc.pid, signal.SIGKILL)
        proc.wait(timeout=60)
    assert proc.returncode == -signal.SIGKILL, "the run ended before it could be killed"
    before = journal.journal()
    assert len(before) >= 2
    assert not (killed_out / "datasets").exists()  # killed before publishing

    rerun = subprocess.run(cmd, cwd=ROOT, capture_output=True, text=True, timeout=900)
    assert rerun.returncode == 0, rerun.stderr[-3000:]
    after = journal.journal()
    assert after[: len(before)] == before
    assert len(after) == len(set(after)), "a finished result was computed again"

    # the same refresh, uninterrupted, on a 2-worker Dask LocalCluster
    fresh = _config(_output(work_dir, "uninterrupted"))
    result = run_refresh(fresh, task_runner="dask")
    assert result.published is not None
    resumed = _comparable(latest_version(killed_out / "datasets" / "taskmint"))
    assert resumed == _comparable(Path(result.published.path))
    assert len(resumed) >= 2
    # and did the same amount of work in total
    assert len(ResultStore(fresh.cache_dir / "results").journal()) == len(after)


def test_seeds_minted_at_once_on_dask_give_the_version_of_one_at_a_time(
    prefect_harness, work_dir, tiny_env
):
    """Two seeds (Python and JavaScript) at once on a 2-worker Dask cluster, against the same
    refresh taking them in turn on threads: the same tasks, and the run record in the seeds
    file's order."""
    manifest = work_dir / "two_seeds.toml"
    manifest.write_text(
        f'[[seed]]\npath = "{SEEDS / "tinyjs"}"\n\n[[seed]]\npath = "{SEEDS / "tiny"}"\n'
    )
    one_at_a_time = run_refresh(
        _config(_output(work_dir, "in-turn"), seeds_manifest=manifest), task_runner="threads"
    )
    at_once = run_refresh(
        _config(_output(work_dir, "at-once"), seeds_manifest=manifest, parallel_seeds=2),
        task_runner="dask",
    )
    assert one_at_a_time.published is not None and at_once.published is not None
    first = _comparable(Path(one_at_a_time.published.path))
    assert first == _comparable(Path(at_once.published.path))
    assert {t.seed for t in load_tasks(Path(at_once.published.path))} == {"tiny", "tinyjs"}
    assert [s.seed for s in at_once.summaries] == ["tinyjs", "tiny"]
    record = json.loads((Path(at_once.published.path) / "run.json").read_text())
    assert record["parallel_seeds"] == 2 and [s["seed"] for s in record["seeds"]] == [
        "tinyjs",
        "tiny",
    ]


# --- alerts ---------------------------------------------------------------------------------


def test_a_failed_run_alerts_the_webhook(prefect_harness, work_dir):
    with WebhookReceiver() as hook:
        config = _config(
            work_dir / "alert-fail",
            seeds_manifest=work_dir / "missing.toml",
            alert_webhook=hook.url,
        )
        with pytest.raises(ManifestError):
            refresh(config)
    (body,) = hook.bodies
    assert "refresh failed" in body["text"] and "missing.toml" in body["text"]


def test_a_deployment_run_with_a_bad_parameter_alerts_the_webhook(prefect_harness, work_dir):
    from taskmint.flows.refresh import nightly

    with WebhookReceiver() as hook, pytest.raises(Exception, match="only local paths"):
        nightly(seeds=str(TINY), output="s3://bucket/taskmint", alert_webhook=hook.url)
    (body,) = hook.bodies
    assert "nightly refresh failed" in body["text"] and "s3://bucket" in body["text"]


def test_sandboxes_that_fail_to_start_alert_past_the_threshold(
    prefect_harness, work_dir, monkeypatch, tiny_env
):
    monkeypatch.setenv("DOCKER_HOST", "unix:///nonexistent/docker.sock")
    with WebhookReceiver() as hook:
        config = _config(
            _output(work_dir, "alert-infra"),
            sandbox=SandboxConfig(backend="docker"),
            alert_webhook=hook.url,
            infra_error_threshold=0.2,
        )
        result = refresh(config)
    assert result.published is None and result.infra_errors == 1 and result.items == 1
    assert "Docker daemon" in (result.summaries[0].error or "")
    (body,) = hook.bodies
    assert "infrastructure error rate 100%" in body["text"]


# --- serve ----------------------------------------------------------------------------------


def test_serve_registers_the_scheduled_refresh_and_a_triggered_run_publishes(
    prefect_harness, work_dir, tiny_env
):
    from prefect.client.orchestration import get_client
    from prefect.deployments import run_deployment

    out = _output(work_dir, "served")
    (work_dir / "served.toml").write_text(CONFIG_TOML)
    log = (work_dir / "serve.log").open("wb")
    proc = subprocess.Popen(
        [sys.executable, "-m", "taskmint.cli", "serve", "--spec", str(ROOT / "prefect.yaml")],
        cwd=ROOT,
        start_new_session=True,
        stdout=log,
        stderr=subprocess.STDOUT,
    )
    name = "taskmint-nightly-refresh/nightly-refresh"
    try:
        deployment = None
        deadline = time.monotonic() + 180
        with get_client(sync_client=True) as client:
            while deployment is None and time.monotonic() < deadline:
                assert proc.poll() is None, (work_dir / "serve.log").read_text()[-3000:]
                try:
                    deployment = client.read_deployment_by_name(name)
                except Exception:
                    time.sleep(1)
        assert deployment is not None, "serve did not register the deployment"
        (schedule,) = deployment.schedules
        assert schedule.schedule.cron == "0 3 * * *" and schedule.active
        run = run_deployment(
            name,
            parameters={
                "seeds": str(TINY),
                "output": str(out),
                "workers": 1,
                "max_candidates": 2,
                "config_file": str(work_dir / "served.toml"),
            },
            timeout=900,
        )
        assert run.state is not None and run.state.is_completed(), run.state
    finally:
        os.killpg(proc.pid, signal.SIGTERM)
        try:
            proc.wait(timeout=30)
        except subprocess.TimeoutExpired:
            os.killpg(proc.pid, signal.SIGKILL)
            proc.wait(timeout=30)
        log.close()
    version = latest_version(out / "datasets" / "taskmint")
    assert load_tasks(version)


def test_a_harder_batch_for_a_model_band_calibrates_through_an_endpoint(
    prefect_harness, work_dir, tiny_env
):
    """The band comes from a model on a real local OpenAI-compatible server (one that never
    solves), with the run's own bands overriding the models file's."""
    from tests.calibrate.fake_openai_server import FakeOpenAIServer, Text

    with FakeOpenAIServer() as server:
        server.script([Text("I cannot solve this.")] * 200)
        models = work_dir / "models.toml"
        models.write_text(
            "[calibration]\ncap = 2\nmin_attempts = 2\n\n"
            f'[[model]]\nname = "fake"\nbase_url = "{server.base_url}"\nmodel = "fake/coder"\n'
            'api_key_env = ""\nprice_input_per_mtok = 2.0\nprice_output_per_mtok = 8.0\n'
            "[model.budget]\nmax_turns = 4\nrequest_timeout = 30\nmax_retries = 0\n"
        )
        config = _config(
            _output(work_dir, "harder-band"),
            models=models,
            bands=(("solved", 0.5), ("beyond", 0.0)),
        )
        request = HarderRequest(
            n=2, band="beyond", start_level=1, candidates_per_round=3, dataset_name="beyond2"
        )
        result = run_harder_batch(request, config)
    assert result.stop_reason == "found" and len(result.tasks) == 2
    assert result.published is not None
    for t in load_tasks(Path(result.published)):
        assert t.band == "beyond"
        row = next(c for c in t.calibration if c.solver_name == "fake")
        assert row.attempts == 2 and row.solves == 0
    assert result.spend["model_rollouts"] >= 4 and result.spend["tokens"] > 0
