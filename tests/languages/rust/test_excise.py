"""Rust excision: which units, what each strategy's edit is, the candidates of the fixture
crates, and with real cargo that the broken trees compile and their tests fail."""

from __future__ import annotations

import shutil
import subprocess
from collections import Counter
from pathlib import Path
from typing import Any, cast

import pytest

from taskmint.config import FeatureSize
from taskmint.excise import treesitter_edits as ts_edits
from taskmint.index.treesitter import index_files
from taskmint.index.treesitter_defs import definitions
from taskmint.languages.rust.candidates import STRATEGIES, rust_candidates
from taskmint.languages.rust.crates import crates_of, denied_lints
from taskmint.languages.rust.excise import (
    excisable,
    removal_range,
    remove_function,
    remove_impl,
    remove_method,
    stub_body,
    stub_edit,
)
from taskmint.languages.rust.tree import functions
from taskmint.patches import apply_patch
from taskmint.records import Candidate, SeedApp, SeedManifest, SkippedFile, Unit

FIXTURES = Path(__file__).resolve().parents[2] / "fixtures" / "rust_excise"
CARGO = shutil.which("cargo") or (
    str(Path.home() / ".cargo/bin/cargo") if (Path.home() / ".cargo/bin/cargo").exists() else None
)
SMALL_FEATURES = FeatureSize(lines=(1, 1500))


def seed_of(root: Path) -> SeedApp:
    files = tuple(sorted(str(p.relative_to(root)) for p in root.rglob("*") if p.is_file()))
    manifest = SeedManifest(
        name=root.name,
        language=cast(Any, "rust"),
        source_paths=("src",),
        test_paths=("tests",),
        runner=cast(Any, "cargo"),
    )
    return SeedApp(
        name=root.name,
        snapshot_id=f"test-{root.name}",
        root=str(root),
        manifest=manifest,
        files=files,
        origin="local",
    )


def rust_units(seed: SeedApp) -> tuple[list[Unit], list[SkippedFile]]:
    """What the index stage gives, filtered as the excise stage would."""
    units, skipped = index_files("rust", seed.root, seed.files, snapshot_id=seed.snapshot_id)
    kept, left = excisable(seed, units)
    return kept, skipped + left


def candidates(name: str, **kwargs: Any) -> list[Candidate]:
    seed = seed_of(FIXTURES / name)
    units, _ = rust_units(seed)
    kwargs.setdefault("max_candidates", 100)
    kwargs.setdefault("feature_size", SMALL_FEATURES)
    found, _ = rust_candidates(seed, units, **kwargs)
    return found


# --- units --------------------------------------------------------------------------------------


def test_units_are_the_crate_sources_without_tests_const_fns_or_impl_trait():
    units, skipped = rust_units(seed_of(FIXTURES / "shapes"))
    names = {f"{u.file}::{u.qualname}" for u in units}
    assert {
        "src/lib.rs::largest",
        "src/area.rs::Rect.half_perimeter",
        "src/area.rs::Shape.describe",
        "src/area.rs::Rect.fmt",
        "src/text/mod.rs::capitalize",
        "src/text/words.rs::split",
    } <= names
    reasons = {s.path: s.reason for s in skipped}
    assert reasons["src/lib.rs::tests.largest_of_three"] == "test code"
    assert reasons["src/lib.rs::double"].startswith("const fn")
    assert reasons["src/lib.rs::evens"].startswith("returns impl Trait")
    assert reasons["src/text/tests.rs::titles"] == "a test-only module file"
    assert reasons["tests/integration.rs::largest_negative"].startswith("not the crate's sources")
    assert not any("tests." in n or n.startswith("tests/") for n in names)


SEED_APPS = Path(__file__).resolve().parents[3] / "seed_apps"


def test_units_are_named_as_the_index_names_them():
    files = [*FIXTURES.rglob("*.rs"), *SEED_APPS.rglob("*.rs")]
    assert len(files) > 10
    for path in files:
        data = path.read_bytes()
        ours = [(f.qualname, f.kind, f.node.start_byte, f.docstring) for f in functions(data)]
        index = [
            (d.qualname, d.kind, d.node.start_byte, d.docstring)
            for d in definitions("rust", data, str(path))
            if d.kind != "class"
        ]
        assert ours == index, path


def test_stub_and_removal_edits_are_the_tree_sitter_engines():
    for path in [*FIXTURES.rglob("*.rs"), *SEED_APPS.rglob("*.rs")]:
        data = path.read_bytes()
        every = 1 if FIXTURES in path.parents else 7  # a seed's: a sample, each reparses
        for f in functions(data)[::every]:
            if f.body is None:
                continue
            start, end, text = stub_edit(data, f)
            assert data[:start] + text + data[end:] == ts_edits.stub_body("rust", data, f.qualname)
            strategy = "remove_method" if f.kind == "method" else "remove_function"
            start, end = removal_range(data, f)
            theirs = ts_edits.edit_range(strategy, "rust", data, f.qualname)
            assert (start, end) == theirs[:2], (path, f.qualname)


SNIPPET = b"""\
/// Doc.
pub fn keep(a: u8) -> u8 {
    a + 1
}

#[cfg(test)]
fn only_in_tests() -> u8 {
    1
}

#[cfg(not(test))]
fn never_in_tests() -> u8 {
    2
}

fn declares_impl() {
    struct X;
    impl X {}
}

mod tests {
    #![cfg(test)]
    fn inner() -> u8 {
        3
    }
}
"""


def test_refusals_name_the_reason():
    for qual, why in [
        ("only_in_tests", "test code"),
        ("never_in_tests", "compiled only outside tests"),
        ("declares_impl", "the body declares an impl"),
        ("tests.inner", "test code"),
    ]:
        with pytest.raises(LookupError, match=why):
            stub_body(SNIPPET, qual)
    assert b"todo!()" in stub_body(SNIPPET, "keep")


# --- edits --------------------------------------------------------------------------------------

SRC = b"""\
use std::fmt;

/// Parses a number.
///
/// More text.
#[inline]
pub fn parse(text: &str) -> Option<u32> {
    let digits = only_digits(text);
    digits.parse().ok()
}

fn only_digits(text: &str) -> String {
    text.chars().filter(|c| is_digit(*c)).collect()
}

fn is_digit(c: char) -> bool {
    c.is_ascii_digit()
}

/// Used by others too.
pub fn shared(c: char) -> bool {
    is_shared(c)
}

fn is_shared(c: char) -> bool {
    c == 'x'
}

pub struct Meter(u32);

impl Meter {
    /// The value.
    pub fn value(&self) -> u32 {
        self.raw()
    }

    fn raw(&self) -> u32 {
        self.0
    }

    pub fn twice(&self) -> u32 {
        self.raw() * 2
    }
}

impl fmt::Display for Meter {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}m", self.0)
    }
}
"""
OTHER = {"src/main.rs": b"fn main() { let _ = shapes::is_shared('x'); }\n"}


def test_stub_body_keeps_signature_doc_and_every_other_byte():
    out = stub_body(SRC, "parse")
    assert out == SRC.replace(
        b"{\n    let digits = only_digits(text);\n    digits.parse().ok()\n}",
        b"{\n    todo!()\n}",
    )
    crlf = SRC.replace(b"\n", b"\r\n")
    assert stub_body(crlf, "parse") == out.replace(b"\n", b"\r\n")


def test_stub_body_uses_the_parameters_when_the_crate_denies_warnings():
    src = (
        b"pub fn clamp(mut v: i32, (lo, _hi): (i32, i32), _unused: u8, self_: &str) -> i32 {\n"
        b"    v\n}\n"
    )
    out = stub_body(src, "clamp", denied=frozenset({"warnings"}))
    assert b"let _ = (&mut v, &lo, &self_);\n    todo!()" in out
    method = (
        b"struct S;\nimpl S {\n    fn f(mut self, x: u8) -> u8 {\n        x\n    }\n"
        b"    fn g(&mut self) -> u8 {\n        1\n    }\n}\n"
    )
    assert b"let _ = (&mut self, &x);" in stub_body(method, "S.f", denied=frozenset({"unused"}))
    assert b"let _" not in stub_body(method, "S.g", denied=frozenset({"unused"}))


def test_remove_function_drops_the_doc_and_the_helpers_only_it_used():
    out = remove_function(SRC, "parse", path="src/lib.rs").decode()
    assert "/// Parses a number." not in out and "#[inline]\npub fn parse" in out
    assert "pub fn parse(text: &str) -> Option<u32> {\n    todo!()\n}" in out
    assert "fn only_digits" not in out and "fn is_digit" not in out  # transitively
    assert "fn is_shared" in out and "/// Used by others too." in out
    # a helper named anywhere else in the crate stays
    kept = remove_function(SRC, "shared", path="src/lib.rs", others=OTHER).decode()
    assert "fn is_shared" in kept
    gone = remove_function(SRC, "shared", path="src/lib.rs").decode()
    assert "fn is_shared" not in gone


def test_remove_method_and_remove_impl():
    out = remove_method(SRC, "Meter.value", path="src/lib.rs").decode()
    assert "/// The value." not in out and "fn raw" in out  # `twice` still calls raw
    block = remove_impl(SRC, "impl Meter", path="src/lib.rs").decode()
    assert "fn raw" not in block  # only the block used it: deleted, not stubbed
    assert block.count("todo!()") == 2 and "impl fmt::Display for Meter" in block
    assert "write!" not in remove_impl(SRC, "impl Display for Meter").decode()
    with pytest.raises(LookupError):
        remove_impl(SRC, "impl Nothing")
    with pytest.raises(LookupError):
        remove_method(SRC, "parse")  # a function, not a method


def test_denied_lints_from_attributes_manifests_and_cargo_config():
    assert denied_lints([b"#![deny(warnings, missing_docs)]\n#![forbid(unsafe_code)]"]) == {
        "warnings",
        "missing_docs",
        "unsafe_code",
    }
    assert denied_lints([b'#![cfg_attr(feature = "x", deny(dead_code))]']) == {"dead_code"}
    assert denied_lints([b"#![deny(clippy::all, clippy::pedantic)]"]) == frozenset()
    manifest = (
        '[package]\nname="x"\n[lints.rust]\nunused = "deny"\nmissing-docs = { level = "forbid" }\n'
    )
    assert denied_lints([], manifest) == {"unused", "missing_docs"}
    assert denied_lints([], "", ['[build]\nrustflags = ["-D", "warnings"]']) == {"warnings"}
    crates = crates_of(
        FIXTURES, [f"{c}/{f}" for c in ("shapes", "strict") for f in ("Cargo.toml", "src/lib.rs")]
    )
    assert crates["strict"].denied == {"warnings", "missing_docs"} and crates["strict"].docs_linted
    assert crates["shapes"].denied == frozenset()


# --- candidates ---------------------------------------------------------------------------------


def test_candidates_of_every_strategy_are_deterministic_and_round_trip(tmp_path):
    found = candidates("shapes", max_candidates=20)
    again = candidates("shapes", max_candidates=20)
    assert [c.candidate_id for c in found] == [c.candidate_id for c in again]
    assert len(Counter(c.strategy for c in found)) >= 4
    seen: set[str] = set()
    for c in found:
        assert not seen & set(c.units), "a unit is used by one candidate only"
        seen |= set(c.units)
        assert c.language == "rust" and c.removed_code and c.features is not None
        work = tmp_path / c.candidate_id
        shutil.copytree(FIXTURES / "shapes", work)
        apply_patch(work, c.breaking_patch)
        for rel in c.files:
            assert b"todo!()" in (work / rel).read_bytes() or c.strategy == "remove_function"
        apply_patch(work, c.gold_patch)
        for rel in c.files:
            assert (work / rel).read_bytes() == (FIXTURES / "shapes" / rel).read_bytes()
    for strategy in STRATEGIES:  # each strategy alone has targets in the fixture
        assert candidates("shapes", strategies=(strategy,)), strategy
    features = {c.units: c for c in candidates("shapes", strategies=("feature",))}
    assert all(c.features is not None and c.features.files >= 2 for c in features.values())
    # `split`, the unit of another file that calls it, and the helper only that one calls
    words = (
        "src/text/words.rs::split",
        "src/text/mod.rs::title_case",
        "src/text/mod.rs::capitalize",
    )
    assert "-fn capitalize(word: &str) -> String {" in features[words].breaking_patch


def test_a_private_function_goes_whole_and_its_callers_are_stubbed():
    found = candidates("shapes", strategies=("remove_function",))
    checked = next(c for c in found if c.units[0] == "src/area.rs::checked")
    assert set(checked.units) == {
        "src/area.rs::checked",
        "src/area.rs::Circle.new",
        "src/area.rs::Rect.new",
    }
    assert "-fn checked(v: f64) -> f64 {" in checked.breaking_patch
    assert checked.signature == "fn checked(v: f64) -> f64"


def test_a_strict_crate_gets_no_edit_that_leaves_a_warning():
    seed = seed_of(FIXTURES / "strict")
    units, _ = rust_units(seed)
    stubs, skipped = rust_candidates(seed, units, max_candidates=50, strategies=("stub_body",))
    reasons = [s.reason for s in skipped]
    assert any("would leave `normalize` unused" in r for r in reasons)  # stub of word_counts
    _, skipped = rust_candidates(seed, units, max_candidates=50, strategies=("remove_class",))
    assert any("would leave `n` unused" in s.reason for s in skipped)  # every Counter method
    found, _ = rust_candidates(seed, units, max_candidates=50)
    assert any("+    let _ = (&mut value, &lo, &hi);" in c.breaking_patch for c in stubs)
    for c in found:  # missing_docs is denied: no doc comment goes
        assert not any(line.startswith("-///") for line in c.breaking_patch.splitlines())


def test_unknown_strategy_is_refused():
    with pytest.raises(ValueError, match="unknown Rust strategy"):
        candidates("shapes", strategies=("remove_block",))


# --- with cargo ---------------------------------------------------------------------------------


def cargo(work: Path, *args: str) -> subprocess.CompletedProcess[str]:
    assert CARGO is not None
    return subprocess.run(
        [CARGO, *args, "--offline"],
        cwd=work,
        capture_output=True,
        text=True,
        timeout=600,
        env={
            "PATH": f"{Path(CARGO).parent}:/usr/bin:/bin",
            "HOME": str(Path.home()),
            "CARGO_TARGET_DIR": str(work.parent / "target"),
            "CARGO_TERM_COLOR": "never",
        },
    )


def test_a_removed_private_function_compiles_and_fails_its_callers_tests(tmp_path):
    c = next(
        c
        for c in candidates("shapes", strategies=("remove_function",))
        if c.units[0] == "src/area.rs::checked"
    )
    work = tmp_path / "shapes"
    shutil.copytree(FIXTURES / "shapes", work)
    apply_patch(work, c.breaking_patch)
    run = cargo(work, "test", "--no-fail-fast")
    assert "error[" not in run.stderr, run.stderr[-2000:]
    assert "test area::tests::rect_area_and_perimeter ... FAILED" in run.stdout, run.stdout
    assert "test text::tests::titles ... ok" in run.stdout


@pytest.mark.slow
@pytest.mark.parametrize("crate", ["shapes", "strict"])
def test_every_candidate_of_the_fixtures_compiles_and_breaks_a_test(tmp_path, crate):
    work = tmp_path / crate
    shutil.copytree(FIXTURES / crate, work)
    assert cargo(work, "test", "--no-run").returncode == 0
    found = candidates(crate)
    assert found
    for c in found:
        saved = {f: (work / f).read_bytes() for f in c.files}
        apply_patch(work, c.breaking_patch)
        run = cargo(work, "test", "--no-fail-fast")
        assert "could not compile" not in run.stderr, f"{c.units}: {run.stderr[-1500:]}"
        assert " FAILED" in run.stdout, f"{c.units} breaks no test"
        for f, data in saved.items():
            (work / f).write_bytes(data)
