"""Every task gets a clean statement in both styles and at least three hint levels.

Two populations: the tasks the real pipeline mints and publishes from the tiny fixture seed
(real FAIL_TO_PASS ids and the assertion messages of the real broken runs), and every candidate
the bundled seeds yield at the demo's settings, all strategies (feature clusters from the real
coverage map), described with the ids of the tests that name the removed unit. The published
tasks of a demo are a subset of the latter.
"""

from __future__ import annotations

import re
from collections import Counter
from pathlib import Path

import datasets
import pytest

from taskmint.acquire import acquire, load_seed_list
from taskmint.config import PipelineConfig
from taskmint.describe import HINT_LEVELS, describe, find_leaks
from taskmint.excise import excise
from taskmint.index import index_seed
from taskmint.index.coverage import coverage_map
from taskmint.languages import build_environment
from taskmint.records import Candidate, SeedApp, Verdict
from tests.conftest import LIMITS

SEED_LIST = Path(__file__).resolve().parents[2] / "seed_apps" / "seeds.toml"
_RUST_TEST = re.compile(r"#\[test\]\s*(?:#\[[^\]]*\]\s*)*fn\s+(\w+)")
_TEST_DEF = re.compile(
    r"^\s*(?:async\s+)?def\s+(test_\w+)|^\s*(?:test|it)\(\s*['\"](.+?)['\"]", re.M
)


def _all_texts(task_or_description) -> tuple[str, str, str]:
    t = task_or_description
    return (
        getattr(t, "problem_statement", None) or t.statement,
        t.statement_spec,
        t.statement_issue,
    )


def test_every_published_task_has_a_clean_statement_and_three_hint_levels(published_tasks):
    assert published_tasks
    for task in published_tasks:
        assert task.problem_statement.strip() and len(task.hints) >= 3, task.instance_id
        assert task.statement_style == "spec" and task.statement_source == "template"
        assert task.problem_statement == task.statement_spec
        assert task.statement_issue and task.statement_issue != task.statement_spec
        statement, spec, issue = _all_texts(task)
        leaks = find_leaks(
            task.removed_code,
            statement,
            task.hints,
            language=task.language,
            extra=(("spec", spec), ("issue", issue)),
        )
        assert leaks == [], (task.instance_id, [leak.describe() for leak in leaks])


def test_statements_carry_the_real_failure_messages(published_tasks):
    with_messages = [
        t for t in published_tasks if "They fail with messages like" in t.statement_spec
    ]
    assert with_messages, "no task shows the assertion messages of its failing tests"
    assert any("NotImplementedError" in t.problem_statement for t in with_messages)
    assert not any(re.search(r"0x[0-9a-f]{6}", t.problem_statement) for t in published_tasks)


def test_the_statement_columns_load_with_datasets(tiny_dataset, published_tasks, tmp_path):
    rows = datasets.load_dataset(
        str(tiny_dataset), "tasks", split="train", cache_dir=str(tmp_path / "hf")
    )
    for name in ("statement_style", "statement_spec", "statement_issue", "statement_source"):
        assert name in rows.column_names
    by_id = {r["instance_id"]: r for r in rows}
    for task in published_tasks:
        row = by_id[task.instance_id]
        assert row["statement_issue"] == task.statement_issue
        assert len(row["hints"]) == HINT_LEVELS


def _test_index(seed: SeedApp) -> dict[str, list[str]]:
    """Test file -> its test ids (pytest style; node tests as file::name; Rust integration
    tests as the cargo harness names them, `test:<package>/<target>::name`)."""
    out: dict[str, list[str]] = {}
    roots = tuple(p.rstrip("/") + "/" for p in seed.manifest.test_paths)
    for rel in seed.files:
        if not rel.startswith(roots) or not rel.endswith((".py", ".js", ".mjs", ".rs")):
            continue
        text = (Path(seed.root) / rel).read_text(encoding="utf-8")
        if rel.endswith(".rs"):
            target = Path(rel).stem
            names = _RUST_TEST.findall(text)
            if names:
                out[rel] = [f"test:{seed.name}/{target}::{n}" for n in names]
            continue
        names = [a or b for a, b in _TEST_DEF.findall(text)]
        if names:
            out[rel] = [f"{rel}::{n}" for n in names]
    return out


def _failing_ids(seed: SeedApp, cand: Candidate, tests: dict[str, list[str]]) -> tuple[str, ...]:
    """The ids of tests whose file names one of the removed units (at most 8)."""
    names = {u.partition("::")[2].split("#")[0].rsplit(".", 1)[-1] for u in cand.units}
    found: list[str] = []
    for rel, ids in sorted(tests.items()):
        text = (Path(seed.root) / rel).read_text(encoding="utf-8")
        if any(re.search(rf"\b{re.escape(n)}\b", text) for n in names):
            found += ids[:3]
    return tuple(found[:8]) or (next(iter(sorted(tests.values())))[0],)


@pytest.fixture(scope="module")
def bundled_candidates(cache_dir, sandbox):
    """(candidate, a verdict with the tests that name its units, seed) for every candidate of
    the bundled seeds, every default strategy."""
    config = PipelineConfig()
    out = []
    for seed_dir in load_seed_list(SEED_LIST):
        seed = acquire(seed_dir, cache_dir=cache_dir)
        cmap = None
        if seed.manifest.language == "python":
            env = build_environment(seed.manifest, cache_dir=cache_dir)
            cmap = coverage_map(
                seed, env, sandbox, limits=LIMITS.with_wall(300), cache_dir=cache_dir
            )
        candidates = excise(
            seed,
            index_seed(seed),
            max_candidates=config.max_candidates_per_seed,
            min_body_lines=config.min_body_lines,
            strategies=config.strategies,
            coverage=cmap,
        ).candidates
        tests = _test_index(seed)
        for cand in candidates:
            f2p = _failing_ids(seed, cand, tests)
            verdict = Verdict(
                candidate_id=cand.candidate_id,
                status="accepted",
                reason="",
                fail_to_pass=f2p,
                failure_messages=((f2p[0], "NotImplementedError: not implemented"),),
            )
            out.append((cand, verdict, seed))
    return out


@pytest.fixture(scope="module")
def bundled_descriptions(bundled_candidates):
    # one call makes both styles: `statement` is the spec, `statement_issue` the issue
    return [
        (cand, describe(cand, verdict, seed.manifest.source_paths, seed=seed))
        for cand, verdict, seed in bundled_candidates
    ]


def test_level_2_statements_describe_behaviour_without_signatures(bundled_candidates):
    checked = Counter()
    for cand, verdict, seed in bundled_candidates:
        d = describe(cand, verdict, seed.manifest.source_paths, seed=seed, level=2)
        assert d.ok and d.level == 2, (cand.units[0], d.reason)
        for text in (d.statement, d.statement_spec, d.statement_issue):
            assert "## What the tests check" in text and "## Rules" in text
            # no signature of anything removed, and no private name
            for ref in cand.units:
                name = ref.partition("::")[2].split("#")[0].rsplit(".", 1)[-1]
                shape = rf"\b(def|function|class)\s+{re.escape(name)}\s*[(:]"
                assert not re.search(shape, text), (cand.units[0], name)
                if name.startswith("_") and not name.startswith("__"):
                    assert not re.search(rf"(?<!\w){re.escape(name)}(?!\w)", text), name
            assert "(self" not in text
        leaks = find_leaks(
            cand.removed_code,
            d.statement,
            d.hints,
            language=cand.language,
            extra=(("spec", d.statement_spec), ("issue", d.statement_issue)),
        )
        assert leaks == [], (cand.units[0], [leak.describe() for leak in leaks])
        checked[cand.strategy] += 1
    assert checked["feature"] >= 3 and checked["stub_body"] >= 3, checked


def test_every_candidate_of_the_bundled_seeds_gets_a_clean_description(bundled_descriptions):
    strategies = Counter(c.strategy for c, _ in bundled_descriptions)
    seeds = {c.seed for c, _ in bundled_descriptions}
    assert len(seeds) == 6 and {"python", "javascript", "rust"} <= {
        c.language for c, _ in bundled_descriptions
    }
    assert set(strategies) >= {
        "stub_body",
        "remove_function",
        "remove_method",
        "remove_class",
        "remove_block",
        "feature_cluster",
        "feature",
    }, strategies
    rejected = [(c.units[0], d.reason) for c, d in bundled_descriptions if not d.ok]
    assert rejected == []
    for cand, d in bundled_descriptions:
        assert d.statement.strip() and len(d.hints) >= 3
        leaks = find_leaks(
            cand.removed_code,
            d.statement,
            d.hints,
            language=cand.language,
            extra=(("spec", d.statement_spec), ("issue", d.statement_issue)),
        )
        assert leaks == [], (cand.units[0], [leak.describe() for leak in leaks])
    levels = Counter(d.detail for _, d in bundled_descriptions)
    print(
        f"\n{len(bundled_descriptions)} candidates, {dict(strategies)}, "
        f"detail levels {dict(levels)}"
    )


def test_statements_say_where_the_code_goes_and_hints_grow_more_specific(bundled_descriptions):
    for cand, d in bundled_descriptions:
        file = cand.units[0].partition("::")[0]
        assert f"`{file}`" in d.statement, cand.units[0]
        assert "## Rules" in d.statement and "Do not edit" in d.statement
        first, *_, last = d.hints
        assert "outline" in last and "```" in last
        assert len(first) < len(d.statement)
        if cand.strategy in ("remove_function", "remove_method", "remove_class"):
            name = (
                cand.units[0]
                .partition("::")[2]
                .split(".")[-1 if cand.strategy != "remove_class" else 0]
            )
            assert name in d.statement, (cand.units[0], name)


def test_descriptions_are_deterministic(bundled_descriptions, cache_dir):
    cand, d = bundled_descriptions[0]
    seed = acquire(Path(SEED_LIST.parent / cand.seed), cache_dir=cache_dir)
    verdict = Verdict(
        candidate_id=cand.candidate_id,
        status="accepted",
        reason="",
        fail_to_pass=_failing_ids(seed, cand, _test_index(seed)),
        failure_messages=(),
    )
    again = describe(cand, verdict, seed.manifest.source_paths, seed=seed, style=d.style)
    assert again == describe(cand, verdict, seed.manifest.source_paths, seed=seed, style=d.style)
    assert again.hints[0] == d.hints[0]
