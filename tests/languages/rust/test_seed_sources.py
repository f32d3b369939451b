"""Rust seeds in a seeds manifest: `crate = "..."` entries, git commits of cargo projects
prepared at acquisition (locked, vendored) through the profile's `prepare_tree`, and refusals
that become the seed's recorded error while the rest of the refresh goes on."""

from __future__ import annotations

import os
import shutil
import subprocess
from pathlib import Path

import pytest

from taskmint.acquire.manifest import render_manifest
from taskmint.acquire.sources import SourceError, acquire_source, load_seed_sources
from taskmint.config import PipelineConfig, StrengthConfig
from taskmint.errors import ManifestError
from taskmint.languages import profile
from taskmint.languages.rust import detect_manifest, find_toolchain
from taskmint.languages.rust.environment import lock_digest
from taskmint.pipeline.refresh import refresh
from taskmint.pipeline.steps import LocalExecutor
from tests.languages.rust.conftest import TINYRS


def _git_repo(root: Path) -> str:
    """Commit the tree at `root`; its commit hash."""
    env = {**os.environ, "GIT_CONFIG_GLOBAL": "/dev/null", "GIT_CONFIG_SYSTEM": "/dev/null"}
    identity = ["-c", "user.name=t", "-c", "user.email=t@example.invalid"]

    def git(*args: str) -> str:
        return subprocess.run(
            ["git", *identity, *args], cwd=root, env=env, check=True, capture_output=True, text=True
        ).stdout.strip()

    git("init", "-q")
    git("add", "-A")
    git("commit", "-qm", "seed")
    return git("rev-parse", "HEAD")


def _manifest(tmp_path: Path, body: str) -> Path:
    path = tmp_path / "seeds.toml"
    path.write_text(body)
    return path


def test_a_crate_entry_is_read_with_its_exact_version(tmp_path):
    (source,) = load_seed_sources(
        _manifest(tmp_path, '[[seed]]\ncrate = "Unicode_Width"\nversion = "0.2.3"\n')
    )
    assert (source.kind, source.location, source.ref) == ("crate", "Unicode_Width", "0.2.3")
    assert source.name == "unicode_width" and source.label == "Unicode_Width 0.2.3"
    for bad, why in [
        ('crate = "semver"\n', "exact `version`"),
        ('crate = "semver"\nversion = "^1.0"\n', "exact `version`"),
        ('crate = "semver"\nversion = "1"\n', "exact `version`"),
        ('crate = "sem ver"\nversion = "1.0.0"\n', "not a crate name"),
        ('crate = "semver"\npypi = "semver"\nversion = "1.0.0"\n', "exactly one of"),
    ]:
        with pytest.raises(ManifestError, match=why):
            load_seed_sources(_manifest(tmp_path, "[[seed]]\n" + bad))


def test_every_profile_prepares_trees_and_only_rust_does_something(tmp_path, cache_dir):
    tree = tmp_path / "py"
    tree.mkdir()
    (tree / "a.py").write_text("x = 1\n")
    profile("python").prepare_tree(tree, cache_dir, label="py")  # the default: nothing
    assert sorted(p.name for p in tree.iterdir()) == ["a.py"]
    rust = tmp_path / "rs"
    shutil.copytree(TINYRS, rust)
    profile("rust").prepare_tree(rust, cache_dir, label="rs")
    assert (rust / "Cargo.lock").is_file()


def test_a_git_commit_of_a_cargo_project_is_locked_and_vendored_at_acquisition(tmp_path, cache_dir):
    repo = tmp_path / "tinyrs"
    shutil.copytree(TINYRS, repo)
    (repo / "target").mkdir()  # a committed build folder goes
    (repo / "target" / "junk.rlib").write_bytes(b"\0")
    commit = _git_repo(repo)
    (source,) = load_seed_sources(
        _manifest(tmp_path, f'[[seed]]\ngit = "{repo}"\ncommit = "{commit}"\n')
    )
    seed = acquire_source(source, cache_dir=cache_dir)
    assert seed.name == "tinyrs" and seed.manifest.language == "rust"
    assert seed.manifest.runner == "cargo" and seed.manifest.source_paths == ("src",)
    assert "Cargo.lock" in seed.files and not any(f.startswith("target/") for f in seed.files)
    vendor = cache_dir / "rust" / "vendor" / lock_digest(Path(seed.root))
    assert (vendor / ".taskmint-ready").is_file()  # vendored here, not at the environment build
    assert not (repo / "Cargo.lock").exists()  # the repository itself is not written to


@pytest.mark.parametrize(
    ("case", "why"),
    [
        ("notests", "ships no tests.*git repository at the release's commit"),
        ("lostdep", "cannot be resolved.*fix Cargo.toml"),
    ],
)
def test_a_bad_rust_git_tree_is_a_source_error_saying_what_to_do(tmp_path, cache_dir, case, why):
    repo = tmp_path / case
    shutil.copytree(TINYRS, repo)
    if case == "notests":
        shutil.rmtree(repo / "tests")
        for rs in (repo / "src").rglob("*.rs"):
            text = rs.read_text().replace("#[test]", "").replace("#[cfg(test)]", "")
            rs.write_text(text.replace("```", ""))
    else:
        cargo = repo / "Cargo.toml"
        cargo.write_text(cargo.read_text() + '\n[dependencies]\ngone = { path = "../gone" }\n')
    commit = _git_repo(repo)
    (source,) = load_seed_sources(
        _manifest(tmp_path, f'[[seed]]\ngit = "{repo}"\ncommit = "{commit}"\n')
    )
    (cache_dir / "sources").mkdir(parents=True, exist_ok=True)
    before = sorted(p.name for p in (cache_dir / "sources").iterdir())
    with pytest.raises(SourceError, match=why):
        acquire_source(source, cache_dir=cache_dir)
    # nothing half-made is kept: the next acquisition tries again
    assert sorted(p.name for p in (cache_dir / "sources").iterdir()) == before


def test_a_crate_or_rust_git_seed_without_the_toolchain_is_refused(tmp_path, monkeypatch):
    repo = tmp_path / "tinyrs"
    shutil.copytree(TINYRS, repo)
    commit = _git_repo(repo)
    sources = load_seed_sources(
        _manifest(
            tmp_path,
            f'[[seed]]\ngit = "{repo}"\ncommit = "{commit}"\n\n'
            '[[seed]]\ncrate = "strsim"\nversion = "0.11.1"\n',
        )
    )
    monkeypatch.setenv("PATH", "/usr/bin:/bin")
    monkeypatch.setenv("HOME", str(tmp_path))
    monkeypatch.delenv("CARGO_HOME", raising=False)
    find_toolchain.cache_clear()
    try:
        for source in sources:
            with pytest.raises(SourceError, match=r"cargo not found.*install it with rustup"):
                acquire_source(source, cache_dir=tmp_path / "cache")
    finally:
        find_toolchain.cache_clear()


@pytest.mark.network
def test_a_crate_entry_goes_through_the_registry_and_a_pinned_manifest_is_kept(tmp_path, cache_dir):
    pinned = tmp_path / "strsim.toml"
    manifest = detect_manifest(TINYRS, name="strsim")  # any valid Rust manifest: a pin
    pinned.write_text(render_manifest(manifest).replace("timeout = 900", "timeout = 321"))
    sources = load_seed_sources(
        _manifest(
            tmp_path,
            '[[seed]]\ncrate = "strsim"\nversion = "0.11.1"\nname = "strsim-plain"\n\n'
            '[[seed]]\ncrate = "strsim"\nversion = "0.11.1"\nmanifest = "strsim.toml"\n\n'
            '[[seed]]\ncrate = "strsim"\nversion = "0.0.999"\nname = "strsim-none"\n',
        )
    )
    plain = acquire_source(sources[0], cache_dir=cache_dir)
    assert plain.name == "strsim-plain" and plain.manifest.language == "rust"
    assert "Cargo.lock" in plain.files and "tests/lib.rs" in plain.files
    assert plain.manifest.timeout == 900  # detected
    assert (
        cache_dir / "rust" / "vendor" / lock_digest(Path(plain.root)) / ".taskmint-ready"
    ).is_file()
    kept = acquire_source(sources[1], cache_dir=cache_dir)
    assert kept.manifest.timeout == 321 and kept.name == "strsim"
    with pytest.raises(SourceError, match=r"has strsim at exactly 0\.0\.999"):
        acquire_source(sources[2], cache_dir=cache_dir)


@pytest.mark.network
@pytest.mark.slow
def test_a_refresh_records_a_bad_rust_seed_and_mints_from_the_good_one(tmp_path):
    """One crate the registry does not have, one cargo project without tests at a git commit,
    one good folder: the two bad ones are the seeds' recorded errors, the folder is minted."""
    folder = tmp_path / "tinyrs"
    shutil.copytree(TINYRS, folder)
    (tmp_path / "tinyrs.toml").write_text(render_manifest(detect_manifest(TINYRS, name="tinyrs")))
    bare = tmp_path / "bare"
    shutil.copytree(TINYRS, bare)
    shutil.rmtree(bare / "tests")
    for rs in (bare / "src").rglob("*.rs"):
        rs.write_text(
            rs.read_text().replace("#[test]", "").replace("#[cfg(test)]", "").replace("```", "")
        )
    commit = _git_repo(bare)
    seeds = _manifest(
        tmp_path,
        '[[seed]]\ncrate = "strsim"\nversion = "0.0.999"\n\n'
        f'[[seed]]\ngit = "{bare}"\ncommit = "{commit}"\n\n'
        '[[seed]]\npath = "tinyrs"\nmanifest = "tinyrs.toml"\n',
    )
    out = tmp_path / "out"
    out.mkdir()
    os.chmod(out, 0o755)
    config = PipelineConfig(
        output_root=out,
        seeds_manifest=seeds,
        workers=2,
        max_candidates_per_seed=2,
        strength=StrengthConfig(mutants=0),
    )
    with LocalExecutor(2) as ex:
        result = refresh(config, ex)
    crate, bare_seed, good = result.summaries  # named as the seeds file names them
    assert (crate.seed, bare_seed.seed, good.seed) == ("strsim", "bare", "tinyrs")
    assert "has strsim at exactly 0.0.999" in (crate.error or "")
    assert (bare_seed.error or "").startswith(f"bare@{commit[:12]}")  # the pin that failed
    assert "ships no tests" in (bare_seed.error or "")
    assert good.error is None and good.candidates >= 1, good
    assert good.accepted == len(result.tasks) and all(t.seed == "tinyrs" for t in result.tasks)
    if result.tasks:
        assert result.published is not None
