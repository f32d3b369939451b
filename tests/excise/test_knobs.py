"""Knobs: ranges, matching, the call graph and the features every strategy records."""

from __future__ import annotations

import dataclasses
import random

import pytest

from taskmint.config import FeatureSize, PipelineConfig
from taskmint.errors import ManifestError
from taskmint.excise import feature
from taskmint.excise.knobs import Knobs, KnobsError, matches
from taskmint.excise.select import STRATEGIES, candidates_for
from taskmint.index.coverage import CoverageMap
from taskmint.records import Candidate, Features
from tests.excise.test_remove_function import make_ctx

SOURCE = """\
class Stack:
    def __init__(self):
        self.items = []

    def push(self, x):
        self.items.append(x)
        return self

    def pop(self):
        if not self.items:
            raise IndexError("empty")
        return self.items.pop()


def fill(n):
    s = Stack()
    for i in range(n):
        s.push(i)
    return s


def drain(s):
    out = []
    while s.items:
        out.append(s.pop())
    return out
"""


def test_knob_ranges_are_checked():
    with pytest.raises(KnobsError, match="swap them"):
        Knobs(files=(3, 1))
    with pytest.raises(KnobsError, match="pair"):
        Knobs(units=(1,))  # type: ignore[arg-type]
    with pytest.raises(KnobsError, match=r"knobs\.strategies: unknown strategy 'stub'"):
        Knobs(strategies=("stub",))  # type: ignore[arg-type]
    with pytest.raises(ManifestError, match="strategies: unknown strategy 'remove_blocks'"):
        PipelineConfig(strategies=("remove_blocks",))  # type: ignore[arg-type]


def test_every_feature_knob_names_a_feature():
    """`matches` reads the feature a knob ranges over by the knob's name."""
    knobs = {f.name for f in dataclasses.fields(Knobs)} - {"strategies"}
    assert knobs <= {f.name for f in dataclasses.fields(Features)}


def test_matches_checks_every_range_and_the_strategy():
    cand = Candidate(
        candidate_id="c",
        snapshot_id="s",
        seed="seed",
        language="python",
        strategy="remove_block",
        units=("m.py::f",),
        files=("m.py",),
        breaking_patch="",
        gold_patch="",
        removed_code="",
        features=Features(
            lines_removed=12, units=1, files=1, callers=4, complexity=3, has_docstring=True
        ),
    )
    assert matches(cand, Knobs())
    assert matches(cand, Knobs(files=(1, 3), lines_removed=(10, None)))
    assert not matches(cand, Knobs(lines_removed=(None, 11)))
    assert not matches(cand, Knobs(callers=(5, None)))
    assert not matches(cand, Knobs(strategies=("stub_body",)))
    assert matches(cand, Knobs(strategies=("remove_block",), has_docstring=True))
    assert not matches(cand, Knobs(has_docstring=False))
    unmeasured = dataclasses.replace(cand, features=None)  # a hand-made candidate
    assert matches(unmeasured, Knobs(strategies=("remove_block",)))
    assert not matches(unmeasured, Knobs(files=(1, 2)))  # a missing feature fails
    assert not matches(unmeasured, Knobs(has_docstring=True))


def test_call_graph_resolves_calls_by_name_and_attribute(tmp_path):
    ctx = make_ctx(tmp_path, {"pkg/mod.py": SOURCE})
    assert ctx.callers["pkg/mod.py::Stack.push"] == {"pkg/mod.py::fill"}
    assert ctx.callers["pkg/mod.py::Stack.pop"] == {"pkg/mod.py::drain"}
    assert ctx.callers["pkg/mod.py::Stack.__init__"] == {"pkg/mod.py::fill"}  # Stack()
    assert "pkg/mod.py::fill" not in ctx.callers


def test_every_strategy_records_the_same_features(tmp_path, monkeypatch):
    # the one test file is the whole suite: let its feature be all of it
    monkeypatch.setattr(feature, "MAX_FAILING_SHARE", 1.0)
    lines = {
        2: (0,),
        3: (0,),
        6: (0,),
        7: (0,),
        10: (1,),
        11: (1,),
        12: (1,),
        16: (0,),
        17: (0,),
        18: (0,),
        19: (0,),
        23: (1,),
        24: (1,),
        25: (1,),
        26: (1,),
    }
    cmap = CoverageMap(
        snapshot_id="x",
        tests=("tests/test_x.py::test_fill", "tests/test_x.py::test_drain"),
        lines={"pkg/mod.py": lines},
    )
    ctx = make_ctx(tmp_path, {"pkg/mod.py": SOURCE}, coverage=cmap, min_body_lines=1)
    seen = set()
    for name in STRATEGIES:
        # a feature of any size: the module is small and alone
        anything = FeatureSize(lines=(1, None), units=(1, None), files=(1, None))
        for cand in candidates_for(name, ctx, rng=random.Random(0), feature_size=anything):
            if not isinstance(cand, Candidate):
                continue
            seen.add(name)
            feats = cand.features
            assert cand.strategy == name and feats is not None
            assert feats.lines_removed >= 1 and feats.files == len(cand.files)
            assert feats.units >= 1 and feats.complexity >= 1
            assert feats.fail_to_pass is None  # a task's, set when minted
            assert (feats.whole_class is not None) == (name == "remove_class")
            assert (feats.scope_change is not None) == (name == "remove_block")
            assert cand.spans and all(f in cand.files for f, _, _ in cand.spans)
    assert seen == set(STRATEGIES)
    fill = next(
        c
        for c in candidates_for("stub_body", ctx, rng=random.Random(0))
        if isinstance(c, Candidate) and c.units == ("pkg/mod.py::Stack.push",)
    )
    assert fill.features is not None and fill.features.callers == 1
    with pytest.raises(LookupError, match="choose one of"):
        candidates_for("rewrite_everything", ctx, rng=random.Random(0))
