"""Forked broken runs: the same verdicts as ordinary runs, on the cases a code swap must cover.

The `forks` fixture seed holds one function per case: a plain function, one behind a decorator
whose wrapper was made at import, an inner function whose closure was made at import, a method,
a module imported only inside a test (so nothing of it is live when the batch forks), a function
a test runs in a child process, a function run while a test file is collected, a test that
leaves a file in the workspace and one that needs a fresh /tmp. Each candidate is validated both
ways, in the real sandbox, and must get the same verdict; a spy on the sandbox shows which
candidates the batch served and which went the ordinary way.
"""

from __future__ import annotations

import importlib.util
import json
import sys
import types
from pathlib import Path

import pytest

from taskmint.acquire import acquire
from taskmint.index.coverage import coverage_map
from taskmint.languages import build_environment
from taskmint.patches import unified_diff
from taskmint.records import Candidate, SeedApp
from taskmint.runners.adapters import inside_dir
from taskmint.sandbox import LocalSandbox
from taskmint.sandbox.base import RunResult, RunSpec
from taskmint.validate import forked, run_baseline, validate_candidate
from taskmint.validate.forked import unforkable, validate_batch
from taskmint.validate.selection import select_tests
from tests.conftest import LIMITS, SEEDS

LIB = "forks/__init__.py"
KNOWN_FAILURE = "tests/test_forks.py::test_fails_on_the_original"


class Spy(LocalSandbox):
    """The real sandbox, noting each run: the candidates' selections of a batch, or the
    selection of an ordinary run."""

    def __init__(self) -> None:
        super().__init__()
        self.batches: list[list[list[str]]] = []
        self.ordinary: list[list[str] | None] = []

    def run(self, spec: RunSpec) -> RunResult:
        assert spec.channel_input is not None
        options = json.loads(spec.channel_input)["options"]
        if options.get("batch"):
            self.batches.append([c["select"] for c in options["batch"]["candidates"]])
        else:
            self.ordinary.append(options.get("select"))
        return super().run(spec)


def stub(
    seed: SeedApp, name: str, old: str, new: str, rel: str = LIB, strategy: str = "stub_body"
) -> Candidate:
    """A candidate replacing `old` (whole lines of `rel`) with `new`."""
    text = (Path(seed.root) / rel).read_text()
    assert text.count(old) == 1, old
    first = text[: text.index(old)].count("\n") + 1
    broken = text.replace(old, new)
    return Candidate(
        candidate_id=name,
        snapshot_id=seed.snapshot_id,
        seed=seed.name,
        language="python",
        strategy=strategy,
        units=(f"{rel}::{name}",),
        files=(rel,),
        breaking_patch=unified_diff(rel, text, broken),
        gold_patch=unified_diff(rel, broken, text),
        removed_code=old,
        spans=((rel, first, first + max(old.count("\n"), 1) - 1),),
    )


@pytest.fixture(scope="module")
def forks(cache_dir):
    seed = acquire(SEEDS / "forks", cache_dir=cache_dir)
    env = build_environment(seed.manifest, cache_dir=cache_dir)
    box = LocalSandbox()
    baseline = run_baseline(seed, env, box, runs=3, limits=LIMITS, cache_dir=cache_dir)
    assert baseline.failing == (KNOWN_FAILURE,) and not baseline.flaky
    cmap = coverage_map(seed, env, box, limits=LIMITS, cache_dir=cache_dir)
    return seed, env, baseline, cmap


def cases(seed: SeedApp) -> dict[str, Candidate]:
    return {
        "add": stub(seed, "add", "    return a + b\n", "    return a - b\n"),
        "add2": stub(seed, "add2", "    return a + b\n", "    return a * b\n"),
        "square": stub(seed, "square", "    return n * n\n", "    return n + n\n"),
        "bump": stub(
            seed,
            "bump",
            "        return value + step + start\n",
            "        return value + step - start\n",
        ),
        "area": stub(seed, "area", "        return self.side * self.side\n", "        return 0\n"),
        "triple": stub(seed, "triple", "    return 3 * x\n", "    return 2 * x\n", "forks/lazy.py"),
        "greeting": stub(
            seed, "greeting", '    return "hello " + name\n', '    return "bye " + name\n'
        ),
        # the same tests again: passes only if the batch removed what the first one's tests
        # left in the workspace and in /tmp
        "greeting2": stub(
            seed, "greeting2", '    return "hello " + name\n', '    return "hi " + name\n'
        ),
        # changes the wrapper's free variables: the batch refuses it, the host runs it
        "wrapper": stub(
            seed,
            "wrapper",
            "        if n not in cache:\n            cache[n] = func(n)\n        return cache[n]\n",
            "        return func(n) + 1\n",
        ),
        # ran while the test file was collected (parametrize): never forked
        "parametrized": stub(
            seed, "parametrized", "    return [1, 2, 3]\n", "    return [1, 2, 3, 4]\n"
        ),
        # module-level code: the broken tree's own collection, the full suite; the failing
        # test now passes
        "counter": stub(
            seed,
            "counter",
            "BUMP = make_counter(10)",
            "BUMP = make_counter(11)",
            strategy="remove_block",
        ),
        # a definition removed: the broken tree's own collection, the removal's selection
        "no_area": stub(
            seed,
            "no_area",
            "    def area(self):\n        return self.side * self.side\n",
            "",
            strategy="remove_function",
        ),
        # hangs: a timeout both ways
        "touch": stub(
            seed,
            "touch",
            '    with open(path, "w") as fh:\n        fh.write("x")\n    return path\n',
            "    while True:\n        pass\n",
        ),
    }


def key(verdict):  # type: ignore[no-untyped-def]
    return (verdict.status, verdict.fail_to_pass, verdict.pass_to_pass, verdict.broken_runs)


def test_forked_verdicts_are_the_ordinary_ones(forks) -> None:
    seed, env, baseline, cmap = forks
    named = cases(seed)
    order = [
        "square",
        "bump",
        "area",
        "triple",
        "greeting",
        "greeting2",
        "wrapper",
        "parametrized",
        "counter",
        "no_area",
        "touch",
    ]
    cands = [named[n] for n in order]
    spy = Spy()
    heard: list[tuple[str, str]] = []
    batch = validate_batch(
        cands,
        seed,
        env,
        baseline,
        spy,
        runs=2,
        limits=LIMITS,
        coverage=cmap,
        workers=1,
        on_verdict=lambda c, v: heard.append((c.candidate_id, v.status)),
    )
    # each verdict is heard once as it comes, from a forked batch or an ordinary run alike
    assert sorted(heard) == sorted(
        (c.candidate_id, v.status) for c, v in zip(cands, batch, strict=True)
    )
    ordinary_runs = len(spy.ordinary)
    plain = [
        validate_candidate(c, seed, env, baseline, spy, runs=2, limits=LIMITS, coverage=cmap)
        for c in cands
    ]
    got = {c.candidate_id: (key(b), key(p)) for c, b, p in zip(cands, batch, plain, strict=True)}
    for name, (via_batch, ordinary) in got.items():
        assert via_batch == ordinary, name
    f2p = {c.candidate_id: v.fail_to_pass for c, v in zip(cands, batch, strict=True)}
    assert f2p["square"] == ("tests/test_forks.py::test_square",)
    assert f2p["bump"] == ("tests/test_forks.py::test_bump",)
    assert f2p["area"] == ("tests/test_forks.py::test_area",)
    assert f2p["triple"] == ("tests/test_forks.py::test_lazy",)
    assert f2p["greeting"] == ("tests/test_forks.py::test_greeting_in_a_child_process",)
    assert f2p["greeting2"] == f2p["greeting"]
    assert f2p["wrapper"] == ("tests/test_forks.py::test_square",)
    assert batch[order.index("touch")].status == "timeout"
    assert batch[order.index("counter")].status == "side_effects"  # the failing test passes
    assert f2p["counter"] == ("tests/test_forks.py::test_bump",)
    assert f2p["no_area"] == ("tests/test_forks.py::test_area",)
    # One batch of forked runs over the original took every body-level candidate but the one
    # whose body ran at collection; that one, the module-level edit and the removal each had a
    # batch of its own, over its own broken tree.
    assert len(spy.batches) == 4
    assert len(spy.batches[0]) == len(cands) - 3
    assert [len(b) for b in spy.batches[1:]] == [1, 1, 1]
    full = [b[0] for b in spy.batches[1:] if KNOWN_FAILURE in b[0]]
    # the module-level edit (and the removal, if its selection is the full suite) ask for
    # every test, the failing one too: it might pass on the broken tree
    assert full and all(set(f) == set(baseline.stable_passed) | {KNOWN_FAILURE} for f in full)
    assert unforkable(named["parametrized"], cmap, ("x",)).endswith("collected")
    # The batch handed back the wrapper (its closure changed): only it ran the ordinary way
    # (the file the full runs' tests change is put back: no batch stopped).
    wrapper = plain[order.index("wrapper")]
    assert ordinary_runs == wrapper.broken_runs == 2


def test_a_file_a_run_changes_is_put_back(forks) -> None:
    """`add` and `add2` are broken so that the test calling `add` still rewrites a data file of
    the workspace (after checking it is pristine): the batch puts the file back after each run,
    so the second candidate's run passes that test too, as a fresh tree would."""
    seed, env, baseline, cmap = forks
    named = cases(seed)
    cands = [named["add"], named["add2"], named["square"]]
    spy = Spy()
    batch = validate_batch(
        cands, seed, env, baseline, spy, runs=2, limits=LIMITS, coverage=cmap, workers=1
    )
    assert spy.ordinary == [] and len(spy.batches) == 1 and len(spy.batches[0]) == 3
    plain = [
        validate_candidate(
            c, seed, env, baseline, LocalSandbox(), runs=2, limits=LIMITS, coverage=cmap
        )
        for c in cands
    ]
    assert [key(v) for v in batch] == [key(v) for v in plain]
    assert batch[0].fail_to_pass == batch[1].fail_to_pass == ("tests/test_forks.py::test_add",)


def test_without_a_copy_of_the_tree_a_changed_file_stops_the_batch(forks, monkeypatch) -> None:
    """With no room for a copy of the tree, the run that changed the file stops the batch, and
    the candidates after it go the ordinary way, with the verdicts they get there."""
    seed, env, baseline, cmap = forks
    monkeypatch.setattr(forked, "SNAPSHOT_BYTES", 0)
    named = cases(seed)
    cands = [named["add"], named["square"], named["area"]]
    spy = Spy()
    batch = validate_batch(
        cands, seed, env, baseline, spy, runs=2, limits=LIMITS, coverage=cmap, workers=1
    )
    plain = [
        validate_candidate(
            c, seed, env, baseline, LocalSandbox(), runs=2, limits=LIMITS, coverage=cmap
        )
        for c in cands
    ]
    assert [key(v) for v in batch] == [key(v) for v in plain]
    assert batch[0].fail_to_pass == ("tests/test_forks.py::test_add",)
    assert len(spy.batches) == 1 and spy.batches[0][0] == sorted(
        select_tests(named["add"], cmap, baseline.stable_passed, seed) or ()
    )
    # square and area each ran the ordinary way after the stop (run 1 and the rerun)
    ordinary = [set(s or ()) for s in spy.ordinary]
    assert {"tests/test_forks.py::test_square"} in ordinary
    assert {"tests/test_forks.py::test_area"} in ordinary


def test_two_workers_give_the_same_verdicts(forks) -> None:
    seed, env, baseline, cmap = forks
    named = cases(seed)
    cands = [named[n] for n in ("square", "bump", "area", "triple", "greeting", "wrapper")]
    one = validate_batch(
        cands, seed, env, baseline, LocalSandbox(), runs=2, limits=LIMITS, coverage=cmap
    )
    two = validate_batch(
        cands,
        seed,
        env,
        baseline,
        LocalSandbox(),
        runs=2,
        limits=LIMITS,
        coverage=cmap,
        workers=2,
    )
    assert [key(v) for v in one] == [key(v) for v in two]
    assert all(v.status == "accepted" for v in one)


# --- the code swap itself, in this process --------------------------------------------------


def forked_runs() -> types.ModuleType:
    spec = importlib.util.spec_from_file_location("forked_runs", inside_dir() / "forked_runs.py")
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


SOURCE = """\
import functools


def deco(func):
    @functools.wraps(func)
    def wrapper(*args):
        return func(*args)

    return wrapper


@deco
def value():
    return 1


def outer():
    def inner():
        return "inner"

    return inner


INNER = outer()


class Box:
    def size(self):
        return 2


def later():
    raise ValueError("where")
"""


def load(tmp_path: Path, name: str) -> tuple[types.ModuleType, Path]:
    path = tmp_path / f"{name}.py"
    path.write_text(SOURCE)
    spec = importlib.util.spec_from_file_location(name, path)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules[name] = module
    spec.loader.exec_module(module)
    return module, path


def test_hot_patch_reaches_every_live_function(tmp_path: Path) -> None:
    fr = forked_runs()
    mod, path = load(tmp_path, "swapme")
    try:
        alias = mod.value  # a reference taken before the swap sees the new code too
        new = (
            SOURCE.replace("    return 1\n", "    x = 5\n    return x\n")
            .replace('        return "inner"\n', '        return "changed"\n')
            .replace("        return 2\n", "        return 3\n")
        )
        index = fr.function_index(str(tmp_path))
        changed = fr.hot_patch(str(path), SOURCE.encode(), new.encode(), index)
        assert changed >= 4
        assert (mod.value(), alias(), mod.INNER(), mod.Box().size()) == (5, 5, "changed", 3)
        # a function below the edit now carries the broken file's line numbers
        with pytest.raises(ValueError) as info:
            mod.later()
        # (both 0-based; the original file has the raise one line higher)
        assert info.traceback[-1].lineno == new.splitlines().index('    raise ValueError("where")')
    finally:
        sys.modules.pop("swapme", None)


@pytest.mark.parametrize(
    ("old", "new", "why"),
    [
        ("INNER = outer()\n", "INNER = None\n", "runs at import"),
        ("    return 1\n", "    return 1\n\n\nEXTRA = 1\n", "runs at import"),
        ("        return func(*args)\n", "        return 1\n", "closure"),
    ],
)
def test_hot_patch_refuses_what_a_swap_cannot_do(
    tmp_path: Path, old: str, new: str, why: str
) -> None:
    fr = forked_runs()
    _, path = load(tmp_path, "refuse")
    try:
        index = fr.function_index(str(tmp_path))
        with pytest.raises(fr.Unforkable, match=why):
            fr.hot_patch(str(path), SOURCE.encode(), SOURCE.replace(old, new).encode(), index)
    finally:
        sys.modules.pop("refuse", None)


def test_hot_patch_refuses_live_code_its_source_does_not_compile_to(tmp_path: Path) -> None:
    fr = forked_runs()
    mod, path = load(tmp_path, "stranger")
    try:
        mod.value.__wrapped__.__code__ = compile(
            "def x():\n  return 9\n", str(path), "exec"
        ).co_consts[0]
        index = fr.function_index(str(tmp_path))
        with pytest.raises(fr.Unforkable, match="not what its source compiles to"):
            fr.hot_patch(str(path), SOURCE.encode(), SOURCE.encode(), index)
    finally:
        sys.modules.pop("stranger", None)


def test_a_batch_refuses_to_fork_a_process_with_threads() -> None:
    """A thread the collection left running would be missing from every fork, with whatever
    locks it holds: the batch then serves nothing (the host runs every candidate itself)."""
    import threading

    fr = forked_runs()
    records: list[dict[str, object]] = []
    batch = fr.Batch({"runs": 2, "plans": [], "candidates": [{"files": []}]}, records.append)
    stop = threading.Event()
    thread = threading.Thread(target=stop.wait)
    thread.start()
    try:
        batch.serve(object(), lambda *_: None)  # never reaches the session
    finally:
        stop.set()
        thread.join()
    assert records == [{"type": "batch_stop", "reason": "the collection left threads running"}]
