"""The original suite's warm runs as forks of one collection: the baseline they give is the one
ordinary warm runs give, and a batch that cannot serve them leaves them to ordinary runs."""

from __future__ import annotations

import json

from taskmint.acquire import acquire
from taskmint.languages import build_environment
from taskmint.sandbox import LocalSandbox
from taskmint.sandbox.base import RunResult, RunSpec
from taskmint.validate import baseline as baseline_module
from taskmint.validate import run_baseline
from tests.conftest import LIMITS, SEEDS


class Counting(LocalSandbox):
    """The real sandbox, counting batch runs and ordinary runs."""

    def __init__(self) -> None:
        super().__init__()
        self.batches = 0
        self.ordinary = 0

    def run(self, spec: RunSpec) -> RunResult:
        options = json.loads(spec.channel_input or b"{}").get("options", {})
        if options.get("batch"):
            self.batches += 1
        else:
            self.ordinary += 1
        return super().run(spec)


def test_forked_warm_runs_give_the_ordinary_baseline(cache_dir, monkeypatch) -> None:
    # `forks` has a test that fails on the original, one that leaves a file in the workspace
    # and one that needs a fresh /tmp: what each fork changed is put back before the next
    seed = acquire(SEEDS / "forks", cache_dir=cache_dir)
    env = build_environment(seed.manifest, cache_dir=cache_dir)
    box = Counting()
    forked = run_baseline(seed, env, box, runs=5, limits=LIMITS)
    assert [p.split("/")[2] for p in forked.plans] == ["cold", "forked", "cold", "forked", "cold"]
    assert (box.batches, box.ordinary) == (1, 3)

    monkeypatch.setattr(baseline_module, "_forked_runs", lambda *args, **kwargs: {})
    plain_box = Counting()
    plain = run_baseline(seed, env, plain_box, runs=5, limits=LIMITS, workers=2)
    assert [p.split("/")[2] for p in plain.plans] == ["cold", "warm", "cold", "warm", "cold"]
    assert (plain_box.batches, plain_box.ordinary) == (0, 5)
    assert forked.stable_passed and forked.failing
    assert (forked.stable_passed, forked.failing, forked.flaky, forked.collection_errors) == (
        plain.stable_passed,
        plain.failing,
        plain.flaky,
        plain.collection_errors,
    )
    assert {t for t, _ in forked.durations} == {t for t, _ in plain.durations}


def test_a_batch_that_serves_nothing_leaves_its_runs_to_ordinary_ones(tmp_path, cache_dir) -> None:
    # importing this seed starts a thread: a process with threads is never forked, so the
    # batch stops before its first run and both warm runs are ordinary ones
    root = tmp_path / "threaded"
    (root / "threaded").mkdir(parents=True)
    (root / "tests").mkdir()
    (root / "taskmint.toml").write_text(
        (SEEDS / "tiny" / "taskmint.toml")
        .read_text()
        .replace('"tiny"', '"threaded"')
        .replace('"tinylib"', '"threaded"')
    )
    (root / "threaded" / "__init__.py").write_text(
        "import threading\n\n_STOP = threading.Event()\n"
        "threading.Thread(target=_STOP.wait, daemon=True).start()\n\n\n"
        "def double(x):\n    return 2 * x\n"
    )
    (root / "tests" / "test_threaded.py").write_text(
        "from threaded import double\n\n\ndef test_double():\n    assert double(2) == 4\n"
    )
    seed = acquire(root, cache_dir=cache_dir)
    env = build_environment(seed.manifest, cache_dir=cache_dir)
    box = Counting()
    baseline = run_baseline(seed, env, box, runs=5, limits=LIMITS, workers=2)
    assert (box.batches, box.ordinary) == (1, 5)
    assert [p.split("/")[2] for p in baseline.plans] == ["cold", "warm", "cold", "warm", "cold"]
    assert baseline.runs == 5 and baseline.stable_passed == ("tests/test_threaded.py::test_double",)
