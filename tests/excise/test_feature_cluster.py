"""The feature-cluster strategy: clusters from a coverage map, stubbed together."""

from __future__ import annotations

import random

from taskmint.excise.feature_cluster import candidates, clusters, stub_units
from taskmint.index.coverage import CoverageMap
from taskmint.records import Candidate, SkippedFile
from tests.excise.test_remove_function import make_ctx

PARSE = """\
def tokenize(text):
    parts = text.split()
    return parts


def parse(text):
    tokens = tokenize(text)
    return [t.upper() for t in tokens]


def hub(x):
    y = x
    return y
"""

RENDER = """\
def render(tree):
    out = " ".join(tree)
    return out


def shared(x):
    y = x
    return y
"""

TESTS = (
    "tests/test_p.py::TestParse::test_a",
    "tests/test_p.py::TestParse::test_b",
    "tests/test_r.py::test_render",
    "tests/test_r.py::test_other",
    "tests/test_r.py::test_third",
)


def _cmap() -> CoverageMap:
    # test indices: 0, 1 = TestParse; 2, 3, 4 = tests/test_r.py
    return CoverageMap(
        snapshot_id="x",
        tests=TESTS,
        lines={
            "pkg/parse.py": {2: (0, 1), 3: (0, 1), 7: (0,), 8: (0,), 12: (0, 1, 2, 3, 4), 13: ()},
            "pkg/render.py": {2: (0, 1, 2), 3: (0, 1, 2), 7: (-1,), 8: (2,)},
        },
    )


def test_clusters_pick_specific_units_across_files(tmp_path):
    ctx = make_ctx(tmp_path, {"pkg/parse.py": PARSE, "pkg/render.py": RENDER})
    found = dict(clusters(ctx.index.units, _cmap(), max_outside=1))
    parse_group = {u.qualname for u in found["tests/test_p.py::TestParse"]}
    # hub: 3 outside tests > max_outside; shared: ran at import (-1)
    assert parse_group == {"tokenize", "parse", "render"}
    assert "tests/test_r.py" not in found  # only `render` is specific enough: < 2 units


def test_candidate_stubs_every_unit_and_records_every_span(tmp_path):
    ctx = make_ctx(tmp_path, {"pkg/parse.py": PARSE, "pkg/render.py": RENDER}, coverage=_cmap())
    out = list(candidates(ctx, rng=random.Random(0), max_outside=1))
    cand = next(c for c in out if isinstance(c, Candidate))
    assert cand.strategy == "feature_cluster"
    assert cand.files == ("pkg/parse.py", "pkg/render.py")
    assert cand.units == ("pkg/parse.py::parse", "pkg/parse.py::tokenize", "pkg/render.py::render")
    assert cand.spans == (
        ("pkg/parse.py", 2, 3),
        ("pkg/parse.py", 7, 8),
        ("pkg/render.py", 2, 3),
    )
    assert cand.features is not None
    assert cand.features.units == 3 and cand.features.files == 2
    assert cand.breaking_patch.count("+    raise NotImplementedError") == 3
    edits = stub_units(ctx.sources, [u for u in ctx.index.units if u.qualname != "hub"])
    assert edits["pkg/parse.py"].count(b"raise NotImplementedError") == 2


def test_without_a_coverage_map_it_says_so(tmp_path):
    ctx = make_ctx(tmp_path, {"pkg/parse.py": PARSE})
    (only,) = list(candidates(ctx, rng=random.Random(0)))
    assert isinstance(only, SkippedFile) and "coverage map" in only.reason
