"""Strategy `feature`: a whole feature removed across files, found from the real coverage map
of the `shop` fixture seed, validated in the real sandbox, described at both levels."""

from __future__ import annotations

import dataclasses
import random
from pathlib import Path

import pytest

from taskmint.config import FeatureSize, KnobsError, PipelineConfig, load_config
from taskmint.excise import feature
from taskmint.excise.context import build_context
from taskmint.excise.feature import candidates, group_tests
from taskmint.index import index_seed
from taskmint.pipeline import mint_candidate
from taskmint.pipeline.mint import too_broad
from taskmint.records import Candidate, SkippedFile, Verdict
from taskmint.sandbox import LocalSandbox
from taskmint.validate import validate_candidate
from tests.conftest import LIMITS, with_coverage

SMALL = FeatureSize(lines=(20, 400))
GROUP = "tests/test_discounts.py"


@pytest.fixture(scope="module")
def shop(cache_dir: Path, sandbox: LocalSandbox):  # type: ignore[no-untyped-def]
    seed, env, baseline, cmap = with_coverage("shop", cache_dir, sandbox)
    ctx = build_context(seed, index_seed(seed), coverage=cmap)
    return seed, env, baseline, cmap, ctx


def _made(ctx, size: FeatureSize = SMALL) -> tuple[list[Candidate], list[SkippedFile]]:  # type: ignore[no-untyped-def]
    found = list(candidates(ctx, rng=random.Random(0), size=size))
    return (
        [c for c in found if isinstance(c, Candidate)],
        [s for s in found if isinstance(s, SkippedFile)],
    )


def test_groups_are_files_classes_and_folders():
    tests = ("a/t1.py::test_x", "a/t1.py::T::test_y", "a/t2.py::test_z", "b/t3.py::test_w")
    groups = group_tests(tests)
    assert groups["a/t1.py"] == {0, 1}
    assert groups["a/t1.py::T"] == {1}
    assert groups["a/"] == {0, 1, 2}
    assert "b/" not in groups  # a folder with one test file is that file's group


def test_the_discounts_feature_goes_across_two_files(shop):  # type: ignore[no-untyped-def]
    ctx = shop[4]
    made, _ = _made(ctx)
    assert len(made) == 1, [c.units for c in made]
    cand = made[0]
    assert cand.strategy == "feature"
    assert cand.files == ("shop/cart.py", "shop/discounts.py")
    units = set(cand.units)
    # the class goes whole (only the feature's test file imports it), with its methods
    assert {"shop/discounts.py::Coupon", "shop/discounts.py::Coupon.saving"} <= units
    # the private helpers only the feature calls come along
    assert {"shop/discounts.py::_percent_of", "shop/discounts.py::_units"} <= units
    assert "shop/cart.py::Cart.discounted_total" in units
    # the core the rest of the suite needs stays
    assert not any("money.py" in u or u.endswith(("Cart.add", "Cart.total")) for u in units)
    broken = cand.breaking_patch
    assert "-class Coupon:" in broken and "-def parse_coupon(text):" in broken
    # shop/__init__.py imports best_coupon by name: it stays, stubbed
    assert "+    raise NotImplementedError" in broken and "-def best_coupon" not in broken
    f = cand.features
    assert f is not None and f.files == 2 and f.units == len(cand.units)
    assert 40 <= f.lines_removed <= 120


def test_the_broken_tree_imports_and_the_rest_of_the_suite_passes(shop, sandbox):  # type: ignore[no-untyped-def]
    seed, env, baseline, cmap, ctx = shop
    cand = _made(ctx)[0][0]
    verdict = validate_candidate(
        cand, seed, env, baseline, sandbox, runs=2, limits=LIMITS, coverage=cmap
    )
    assert verdict.accepted, verdict.reason
    assert {t.partition("::")[0] for t in verdict.fail_to_pass} == {GROUP}
    assert len(verdict.fail_to_pass) == 9
    assert len(verdict.pass_to_pass) == 12
    rest = {t.partition("::")[0] for t in verdict.pass_to_pass}
    assert rest == {"tests/test_cart.py", "tests/test_money.py"}


def test_the_size_bounds_what_is_offered(shop):  # type: ignore[no-untyped-def]
    ctx = shop[4]
    made, skipped = _made(ctx, FeatureSize())  # 100 lines at least: the fixture is smaller
    assert made == []
    why = [s.reason for s in skipped if GROUP in s.path]
    assert why and "outside the feature size" in why[0]
    one_file = FeatureSize(lines=(20, 400), files=(3, None))
    assert _made(ctx, one_file)[0] == []
    # what is certain before the edits is skipped before them; the bound never drops a
    # feature the edits would bring inside the size
    assert why[0].startswith("at most ") and "lines" in why[0]
    (made,) = _made(ctx, FeatureSize(lines=(1, None)))[0]
    exact = made.features.lines_removed
    assert _made(ctx, FeatureSize(lines=(exact, None)))[0] == [made]
    assert _made(ctx, FeatureSize(lines=(exact + 1, None)))[0] == []


def test_a_feature_most_of_the_suite_runs_is_no_feature(shop, monkeypatch):  # type: ignore[no-untyped-def]
    ctx = shop[4]
    # the discounts' code is run by the 9 discount tests of the 21: within half the suite
    assert len(_made(ctx)[0]) == 1
    monkeypatch.setattr(feature, "MAX_FAILING_SHARE", 0.25)
    made, skipped = _made(ctx)
    assert made == []
    why = [s.reason for s in skipped if GROUP in s.path]
    assert why and "9 of 21 tests run its code" in why[0], why


def test_without_a_coverage_map_it_says_so(shop):  # type: ignore[no-untyped-def]
    seed = shop[0]
    ctx = build_context(seed, index_seed(seed))
    made, skipped = _made(ctx)
    assert made == [] and "coverage map" in skipped[0].reason


def test_feature_size_settings(tmp_path):
    with pytest.raises(KnobsError):
        FeatureSize(lines=(500, 100))
    with pytest.raises(KnobsError):
        FeatureSize(files=(2,))  # type: ignore[arg-type]
    path = tmp_path / "c.toml"
    path.write_text("statement_level = 2\n[feature]\nlines = [50, 900]\nfiles = [3, 8]\n")
    config = load_config(path)
    assert config.feature == FeatureSize(lines=(50, 900), files=(3, 8))
    assert config.statement_level == 2
    with pytest.raises(Exception, match="statement_level"):
        load_config(None, statement_level=3)


@pytest.mark.parametrize("level", [1, 2])
def test_a_feature_task_at_each_statement_level(shop, sandbox, tmp_path, level):  # type: ignore[no-untyped-def]
    seed, env, baseline, cmap, ctx = shop
    cand = _made(ctx)[0][0]
    config = PipelineConfig(output_root=tmp_path, statement_level=level, feature=SMALL)
    result = mint_candidate(cand, seed, env, baseline, sandbox, config, coverage=cmap)
    task = result.task
    assert task is not None, result.verdict.reason
    assert task.strategy == "feature" and task.statement_level == level
    text = task.problem_statement
    assert "tests/test_discounts.py::test_parse_coupon" in text
    if level == 1:  # the interface: every removed signature
        assert "def parse_coupon(text)" in text and "class Coupon" in text
        assert "def _percent_of(total, percent)" in text
    else:  # the behaviour: no signature, no internal name, the docstrings' first sentences
        assert "def " not in text and "(self" not in text
        assert "_percent_of" not in text and "_units" not in text
        assert "A discount code" in text  # Coupon's docstring, in product terms
        assert "`Coupon`" in text and "`parse_coupon`" in text  # what the tests use
        assert "percent coupon" in text  # a behaviour from a test's name
        assert "A fixed-amount coupon applies only from its minimum spend." in text


def test_a_feature_whose_removal_fails_most_of_the_suite_is_too_broad(shop):  # type: ignore[no-untyped-def]
    cand = _made(shop[4])[0][0]
    tests = tuple(f"t.py::test_{i}" for i in range(10))
    fine = Verdict(
        candidate_id=cand.candidate_id,
        status="accepted",
        reason="",
        fail_to_pass=tests[:5],
        pass_to_pass=tests[5:],
    )
    assert too_broad(cand, fine) is fine  # half the suite: still a feature
    broad = too_broad(
        cand, dataclasses.replace(fine, fail_to_pass=tests[:6], pass_to_pass=tests[6:])
    )
    assert broad.status == "too_broad" and "fails 6 of 10 tests" in broad.reason
    other = dataclasses.replace(cand, strategy="stub_body")
    assert too_broad(other, broad) is broad  # only whole features are judged so
    assert too_broad(other, dataclasses.replace(fine, fail_to_pass=tests[:9])).accepted
