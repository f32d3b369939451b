"""The stages ask the Rust profile: `excise` makes Rust's own candidates (every strategy the
profile names), the test-strength gate's `mutants_of` Rust's own mutants, with no stage naming
the language."""

from __future__ import annotations

from collections import Counter

from taskmint.acquire import acquire
from taskmint.excise import excise
from taskmint.index import index_seed
from taskmint.languages import profile, profile_for_seed
from taskmint.strength.mutants import Mutant, mutants_of
from tests.conftest import FIXTURES

CRONPLAN = FIXTURES.parents[1] / "seed_apps" / "cronplan"


def test_excise_makes_the_rust_profiles_candidates(cache_dir):
    seed = acquire(CRONPLAN, cache_dir=cache_dir)
    rust = profile_for_seed(seed)
    assert rust is profile("rust") and rust.own_edits
    result = excise(seed, index_seed(seed), max_candidates=30, random_seed=3)
    assert len(result.candidates) == 30
    kinds = Counter(c.strategy for c in result.candidates)
    # every strategy of the profile is used, stubs the most
    assert set(kinds) == set(rust.strategies), kinds
    assert kinds.most_common(1)[0][0] == "stub_body"
    for c in result.candidates:
        assert c.language == "rust" and c.breaking_patch.startswith("diff --git a/")
        assert all(f.endswith(".rs") for f in c.files), c.files
    stubs = [c for c in result.candidates if c.strategy == "stub_body"]
    assert all("todo!()" in c.breaking_patch for c in stubs)
    # the same inputs, the same ids
    again = excise(seed, index_seed(seed), max_candidates=30, random_seed=3)
    assert [c.candidate_id for c in again.candidates] == [c.candidate_id for c in result.candidates]


def test_mutants_of_a_rust_file_are_the_profiles_as_mutant_records():
    path = "src/cron/expr.rs"
    data = (CRONPLAN / path).read_bytes()
    lines = set(range(1, data.count(b"\n") + 1))
    found = mutants_of(path, data, lines)
    assert len(found) > 20 and all(isinstance(m, Mutant) for m in found)
    operators = {m.operator for m in found}
    assert {"compare", "arithmetic", "early_return"} <= operators, operators
    for m in found[:50]:
        mutated = m.apply(data)
        assert mutated != data and m.file == path
