"""Acquiring Rust seeds and building their environments, with the real toolchain: detection,
vendoring, the warm target, and every refusal with its reason."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
from pathlib import Path

import pytest

from taskmint.acquire.rust import acquire_crate, acquire_folder, acquire_git
from taskmint.acquire.sources import SourceError
from taskmint.config import Limits
from taskmint.errors import EnvironmentBuildError
from taskmint.files import copy_tree
from taskmint.languages import adapter_for, detect_profile, environment_id, profile
from taskmint.languages import build_environment as build_any
from taskmint.languages.rust import (
    ToolchainMissing,
    build_environment,
    detect_manifest,
    find_toolchain,
    is_rust_tree,
)
from taskmint.runners import run_tests
from tests.languages.rust.conftest import TINYRS

LIB = "//! x\n\npub fn double(x: u32) -> u32 {\n    x * 2\n}\n"


def _crate(root: Path, body: str = LIB, extra: str = "", tests: bool = True) -> Path:
    (root / "src").mkdir(parents=True)
    (root / "Cargo.toml").write_text(
        f'[package]\nname = "{root.name}"\nversion = "0.1.0"\nedition = "2021"\n\n'
        f"[dependencies]\n{extra}"
    )
    (root / "src" / "lib.rs").write_text(body)
    if tests:
        (root / "tests").mkdir()
        (root / "tests" / "t.rs").write_text(
            f"#[test]\nfn doubles() {{ assert_eq!({root.name}::double(2), 4); }}\n"
        )
    return root


def test_a_cargo_toml_makes_a_rust_seed_manifest(tmp_path):
    assert is_rust_tree(TINYRS) and not is_rust_tree(tmp_path)
    manifest = detect_manifest(TINYRS, name="tinyrs")
    assert manifest.language == "rust" and manifest.runner == "cargo"
    assert manifest.source_paths == ("src",) and manifest.test_paths == ("tests",)
    assert "Rust runner" in manifest.description


def test_a_workspace_lists_every_members_folders(tmp_path):
    root = tmp_path / "ws"
    root.mkdir()
    (root / "Cargo.toml").write_text('[workspace]\nmembers = ["a", "b"]\nresolver = "2"\n')
    _crate(root / "a")
    _crate(root / "b", tests=False)
    manifest = detect_manifest(root, name="ws")
    assert manifest.source_paths == ("a/src", "b/src")
    assert manifest.test_paths == ("a/tests",)


def test_a_folder_is_copied_locked_and_vendored(rust_seed, cache_dir):
    assert not (TINYRS / "Cargo.lock").exists()  # the folder itself is never written to
    assert {"Cargo.lock", "taskmint.toml", "tests/api.rs"} <= set(rust_seed.files)
    assert rust_seed.manifest.language == "rust"
    again = acquire_folder(TINYRS, cache_dir=cache_dir)
    assert again.snapshot_id == rust_seed.snapshot_id


def test_the_environment_is_offline_warm_and_keeps_its_warm_build_private(rust_env, rust_seed):
    prefix = Path(rust_env.prefix)
    config = (prefix / "cargo-home" / "config.toml").read_text()
    assert "offline = true" in config and 'directory = "/opt/rust/vendor"' in config
    warm = prefix / "warm"
    assert warm.stat().st_mode & 0o777 == 0o711 and warm.stat().st_uid == 0
    (secret,) = os.listdir(warm)  # only the host can list it
    assert secret in (prefix / "warm.json").read_text()
    assert (prefix / "warm.json").stat().st_mode & 0o077 == 0
    fingerprints = os.listdir(warm / secret / "target" / "debug" / ".fingerprint")
    assert not [f for f in fingerprints if f.startswith("tinyrs-")]  # always rebuilt
    assert "lib:tinyrs::tests::adds_small_numbers" in json.loads(
        (prefix / "tests.json").read_text()
    )
    assert rust_env.kind == "cargo" and rust_env.dependencies == ()


def test_a_crate_without_tests_is_refused(tmp_path, cache_dir):
    root = _crate(tmp_path / "notests", tests=False)
    with pytest.raises(SourceError, match="ships no tests"):
        acquire_folder(root, cache_dir=cache_dir)


def test_a_dependency_that_cannot_be_resolved_is_refused(tmp_path, cache_dir):
    root = _crate(tmp_path / "lost", extra='gone = { path = "../gone" }\n')
    with pytest.raises(SourceError, match="cannot be resolved"):
        acquire_folder(root, cache_dir=cache_dir)


def test_a_missing_toolchain_is_refused(tmp_path, cache_dir, monkeypatch):
    root = _crate(tmp_path / "tc")
    monkeypatch.setenv("PATH", "/usr/bin:/bin")
    monkeypatch.setenv("HOME", str(tmp_path))
    monkeypatch.delenv("CARGO_HOME", raising=False)
    find_toolchain.cache_clear()
    try:
        with pytest.raises(ToolchainMissing, match="cargo not found"):
            find_toolchain()
        with pytest.raises(SourceError, match="install it with rustup"):
            acquire_folder(root, cache_dir=cache_dir)
    finally:
        find_toolchain.cache_clear()


def test_a_seed_that_does_not_build_is_refused(tmp_path, cache_dir, sandbox):
    root = _crate(tmp_path / "broken", body=LIB.replace("x * 2", '"two"'))
    seed = acquire_folder(root, cache_dir=cache_dir)
    with pytest.raises(EnvironmentBuildError, match=r"does not build.*mismatched types"):
        build_environment(seed, cache_dir=cache_dir, sandbox=sandbox)


@pytest.mark.network
@pytest.mark.slow
def test_a_published_crate_is_acquired_vendored_and_run_offline(cache_dir, sandbox, tmp_path):
    """strsim 0.11.1 from the Rust crate registry: its package ships unit tests, an
    integration test file and doctests; after acquisition everything runs offline."""
    seed = acquire_crate("strsim", "0.11.1", cache_dir=cache_dir)
    assert seed.manifest.language == "rust" and "Cargo.lock" in seed.files
    assert "tests/lib.rs" in seed.files and ".cargo-checksum.json" not in seed.files
    env = build_environment(seed, cache_dir=cache_dir, sandbox=sandbox)
    ws = tmp_path / "ws"
    copy_tree(Path(seed.root), ws, seed.files)
    report = run_tests(
        sandbox,
        ws,
        seed.manifest,
        env,
        adapter=profile("rust").adapter,
        limits=Limits(wall_seconds=600),
    )
    outcomes = report.outcome_map()
    assert report.complete and not report.collection_errors
    kinds = {tid.split(":", 1)[0] for tid in outcomes}
    assert kinds == {"lib", "test", "doc"}, kinds
    assert len(outcomes) > 50 and set(outcomes.values()) == {"passed"}
    with pytest.raises(SourceError, match=r"has strsim at exactly 0\.0\.999"):
        acquire_crate("strsim", "0.0.999", cache_dir=cache_dir)
    shutil.rmtree(ws, ignore_errors=True)


def test_a_git_commit_is_acquired_like_a_folder(tmp_path, cache_dir):
    repo = tmp_path / "tinygit"
    shutil.copytree(TINYRS, repo)
    (repo / "target").mkdir()  # a build folder someone committed
    (repo / "target" / "junk.rlib").write_bytes(b"\0")

    def git(*args: str) -> str:
        env = {"PATH": "/usr/bin:/bin", "HOME": str(tmp_path), "GIT_CONFIG_NOSYSTEM": "1"}
        identity = ["-c", "user.name=t", "-c", "user.email=t@t"]
        out = subprocess.run(
            ["git", *identity, *args], cwd=repo, env=env, check=True, capture_output=True, text=True
        )
        return out.stdout.strip()

    git("init", "-q")
    git("add", "-A")
    git("commit", "-qm", "tinyrs")
    commit = git("rev-parse", "HEAD")
    seed = acquire_git(str(repo), commit, cache_dir=cache_dir)
    assert seed.name == "tinygit" and seed.manifest.runner == "cargo"
    assert "Cargo.lock" in seed.files and not any(f.startswith("target/") for f in seed.files)
    assert {f for f in seed.files if f.endswith(".rs")} == {
        "src/lib.rs",
        "src/math.rs",
        "src/text.rs",
        "tests/api.rs",
    }
    with pytest.raises(SourceError, match="full 40-hex commit"):
        acquire_git(str(repo), "HEAD", cache_dir=cache_dir)


def test_test_targets_that_cannot_build_are_left_out(tmp_path, cache_dir, sandbox):
    """A test file that does not build on the original (a published package without the
    dev-dependency it needs) is left out of the suite, not the seed; one whose features are
    off is not built at all, as `cargo test` does."""
    root = _crate(tmp_path / "partial", extra="\n[features]\nextra = []\n")
    with open(root / "Cargo.toml", "a") as fh:
        fh.write(
            '\n[[test]]\nname = "needs"\npath = "tests/needs.rs"\nrequired-features = ["extra"]\n'
        )
    (root / "tests" / "needs.rs").write_text("#[test]\nfn x() { assert!(false); }\n")
    (root / "tests" / "bad.rs").write_text('#[test]\nfn y() { let _: u8 = "s"; }\n')
    seed = acquire_folder(root, cache_dir=cache_dir)
    env = build_environment(seed, cache_dir=cache_dir, sandbox=sandbox)
    prefix = Path(env.prefix)
    assert json.loads((prefix / "broken.json").read_text()) == ["test:partial/bad"]
    assert json.loads((prefix / "tests.json").read_text()) == ["test:partial/t::doubles"]
    ws = tmp_path / "ws"
    copy_tree(Path(seed.root), ws, seed.files)
    report = run_tests(
        sandbox,
        ws,
        seed.manifest,
        env,
        adapter=profile("rust").adapter,
        limits=Limits(wall_seconds=300),
    )
    assert report.outcome_map() == {"test:partial/t::doubles": "passed"}
    assert not report.collection_errors


def test_a_2024_edition_crates_merged_doctests_are_read(tmp_path, cache_dir, sandbox):
    body = (
        LIB.replace(
            "pub fn double", "/// ```\n/// assert_eq!(ed24::double(2), 4);\n/// ```\npub fn double"
        )
        + '\n/// ```compile_fail\n/// let x: u8 = "s";\n/// ```\npub fn nothing() {}\n'
    )
    root = _crate(tmp_path / "ed24", body=body)
    text = (root / "Cargo.toml").read_text().replace('edition = "2021"', 'edition = "2024"')
    (root / "Cargo.toml").write_text(text)
    seed = acquire_folder(root, cache_dir=cache_dir)
    env = build_environment(seed, cache_dir=cache_dir, sandbox=sandbox)
    ws = tmp_path / "ws"
    copy_tree(Path(seed.root), ws, seed.files)
    report = run_tests(
        sandbox,
        ws,
        seed.manifest,
        env,
        adapter=profile("rust").adapter,
        limits=Limits(wall_seconds=300),
    )
    assert report.outcome_map() == {
        "doc:ed24::src/lib.rs - double": "passed",
        "doc:ed24::src/lib.rs - nothing": "passed",
        "test:ed24/t::doubles": "passed",
    }
    assert not report.tampered and not report.collection_errors


def test_the_rust_profile_is_registered_and_builds_from_the_seed(rust_seed, rust_env, cache_dir):
    rust = profile("rust")
    assert rust.runner == "cargo" and rust.own_edits
    assert detect_profile(TINYRS, name="tinyrs") is profile("rust")
    assert adapter_for(rust_seed.manifest) is profile("rust").adapter
    assert profile("rust").adapter.inside_files == ("cargo_runner.py", "harness_io.py")
    with pytest.raises(EnvironmentBuildError, match="built from the seed itself"):
        profile("rust").build_environment(rust_seed.manifest, cache_dir=Path("/nonexistent"))
    # the stages' verb, given the seed, builds (here: reuses) the snapshot's environment
    again = build_any(rust_seed, cache_dir=cache_dir)
    assert again == rust_env and environment_id(rust_seed) == rust_env.env_id
