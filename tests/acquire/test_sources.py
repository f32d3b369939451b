"""Seed sources: a git repository at a commit (a local bare repository over file://), a PyPI
sdist (the download cache pre-filled with a crafted sdist; the real download runs in
`make bench-pypi`), and a Docker image made from the machine's base image."""

from __future__ import annotations

import io
import os
import shutil
import subprocess
import tarfile
import tempfile
from pathlib import Path

import pytest

from taskmint.acquire import acquire
from taskmint.acquire.archive import ArchiveError
from taskmint.acquire.manifest import load_manifest, parse_manifest
from taskmint.acquire.sources import (
    SeedSource,
    SourceError,
    acquire_source,
    fetch_tree,
    load_seed_sources,
)
from taskmint.config import PipelineConfig
from taskmint.envs import build_environment
from taskmint.errors import ManifestError
from taskmint.excise import excise
from taskmint.index import index_seed
from taskmint.pipeline import mint_candidate
from taskmint.validate import run_baseline
from tests.conftest import LIMITS, SEEDS


def _git(cwd: Path, *args: str) -> str:
    env = {
        "PATH": os.environ["PATH"],
        "HOME": str(cwd),
        "GIT_AUTHOR_NAME": "t",
        "GIT_AUTHOR_EMAIL": "t@example.invalid",
        "GIT_COMMITTER_NAME": "t",
        "GIT_COMMITTER_EMAIL": "t@example.invalid",
    }
    out = subprocess.run(["git", *args], cwd=cwd, env=env, capture_output=True, text=True)
    assert out.returncode == 0, out.stderr
    return out.stdout.strip()


@pytest.fixture(scope="module")
def bare_repo(tmp_path_factory: pytest.TempPathFactory) -> tuple[str, str, str]:
    """A bare repository holding the tiny seed without its taskmint.toml (so the layout is
    detected), and a second commit that changes a source file."""
    root = tmp_path_factory.mktemp("git")
    os.chmod(root, 0o755)
    work = root / "work"
    shutil.copytree(SEEDS / "tiny", work, ignore=shutil.ignore_patterns("__pycache__"))
    (work / "taskmint.toml").unlink()
    _git(work, "init", "--quiet", "-b", "main")
    _git(work, "add", "-A")
    _git(work, "commit", "--quiet", "-m", "one")
    first = _git(work, "rev-parse", "HEAD")
    text = work / "tinylib" / "text.py"
    text.write_text(text.read_text() + "\n\ndef extra():\n    return 1\n")
    _git(work, "commit", "--quiet", "-am", "two")
    second = _git(work, "rev-parse", "HEAD")
    _git(root, "clone", "--quiet", "--bare", str(work), str(root / "tiny.git"))
    return f"file://{root / 'tiny.git'}", first, second


def _task_ids(source: SeedSource, work: Path, env_cache: Path) -> list[str]:
    seed = acquire_source(source, cache_dir=work / "cache")
    env = build_environment(seed.manifest, cache_dir=env_cache)  # shared: one venv build
    from taskmint.sandbox import LocalSandbox

    sandbox = LocalSandbox()
    baseline = run_baseline(seed, env, sandbox, runs=3, limits=LIMITS)
    config = PipelineConfig(output_root=work / "out")
    excised = excise(seed, index_seed(seed), max_candidates=3)
    results = [mint_candidate(c, seed, env, baseline, sandbox, config) for c in excised.candidates]
    return sorted(r.task.instance_id for r in results if r.task is not None)


def test_a_git_seed_at_a_pinned_commit_gives_the_same_task_ids_twice(bare_repo, tmp_path):
    url, first, _ = bare_repo
    source = SeedSource(kind="git", location=url, ref=first)
    os.chmod(tmp_path, 0o755)
    one = _task_ids(source, tmp_path / "a", tmp_path / "envs")
    two = _task_ids(source, tmp_path / "b", tmp_path / "envs")  # cloned and detected again
    assert one, "the git seed should mint tasks"
    assert one == two
    assert all(t.startswith("tiny__") for t in one)


def test_the_pin_holds_and_the_layout_is_detected(bare_repo, tmp_path):
    url, first, second = bare_repo
    a = acquire_source(SeedSource(kind="git", location=url, ref=first), cache_dir=tmp_path)
    b = acquire_source(SeedSource(kind="git", location=url, ref=second), cache_dir=tmp_path)
    assert a.snapshot_id != b.snapshot_id
    assert "def extra" not in (Path(a.root) / "tinylib/text.py").read_text()
    assert a.manifest.source_paths == ("tinylib",) and a.manifest.test_paths == ("tests",)
    assert a.name == "tiny"
    assert ".git" not in {p.split("/")[0] for p in a.files}
    detected = next((tmp_path / "sources").glob("*/taskmint.detected.toml"))
    assert "source_paths" in detected.read_text()
    with pytest.raises(SourceError, match="is the commit there"):
        fetch_tree(SeedSource(kind="git", location=url, ref="0" * 40), cache_dir=tmp_path)


def test_seeds_manifest_with_every_kind_and_its_errors(tmp_path):
    pinned = tmp_path / "pinned.toml"
    shutil.copy(SEEDS / "tiny" / "taskmint.toml", pinned)
    good = tmp_path / "seeds.toml"
    good.write_text(
        '[[seed]]\npath = "tiny"\n\n'
        f'[[seed]]\ngit = "file:///x/r.git"\ncommit = "{"a" * 40}"\nsubdir = "pkg"\n\n'
        '[[seed]]\npypi = "inflection"\nversion = "0.5.1"\nmanifest = "pinned.toml"\n\n'
        '[[seed]]\ndocker = "img:1"\nimage_path = "/src/app"\n'
    )
    sources = load_seed_sources(good)
    assert [s.kind for s in sources] == ["path", "git", "pypi", "docker"]
    assert sources[0].location == str(tmp_path / "tiny")
    assert sources[1].subdir == "pkg" and sources[2].manifest == str(pinned)
    assert [s.label for s in sources] == ["tiny", "r@aaaaaaaaaaaa", "inflection==0.5.1", "img:1"]
    for body, message in [
        ('[[seed]]\ngit = "file:///r"\ncommit = "main"\n', "40-hex"),
        ('[[seed]]\npypi = "x"\n', "exact `version`"),
        ('[[seed]]\npath = "a"\npypi = "b"\n', "exactly one of"),
        ('[[seed]]\nname = "a"\n', "exactly one of"),
        ('[[seed]]\ngit = "file:///r"\ncommit = "' + "a" * 40 + '"\nsubdir = "../x"\n', "inside"),
        ('[[seed]]\ndocker = "i"\nimage_path = "rel"\n', "absolute"),
    ]:
        bad = tmp_path / "bad.toml"
        bad.write_text(body)
        with pytest.raises(ManifestError, match=message):
            load_seed_sources(bad)


def _sdist(folder: Path, name: str, members: dict[str, bytes]) -> None:
    folder.mkdir(parents=True, exist_ok=True)
    with tarfile.open(folder / f"{name}-1.0.tar.gz", "w:gz") as tf:
        for rel, data in members.items():
            info = tarfile.TarInfo(rel)
            info.size = len(data)
            tf.addfile(info, io.BytesIO(data))


def test_a_pypi_sdist_is_unpacked_safely_and_detected(tmp_path):
    files = {
        f"tinylib-1.0/{p.relative_to(SEEDS / 'tiny').as_posix()}": p.read_bytes()
        for p in sorted((SEEDS / "tiny").rglob("*.py"))
        if "__pycache__" not in p.parts
    }
    files["tinylib-1.0/setup.py"] = b"from setuptools import setup\nsetup(name='tinylib')\n"
    _sdist(tmp_path / "sdists" / "tinylib-1.0", "tinylib", files)
    seed = acquire_source(
        SeedSource(kind="pypi", location="tinylib", ref="1.0"), cache_dir=tmp_path
    )
    assert seed.name == "tinylib"
    assert seed.manifest.source_paths == ("tinylib",)
    assert "setup.py" in seed.files and "tinylib/text.py" in seed.files

    _sdist(tmp_path / "sdists" / "evil-1.0", "evil", {"evil-1.0/../../escape.py": b"x"})
    with pytest.raises(ArchiveError, match="climbs out"):
        fetch_tree(SeedSource(kind="pypi", location="evil", ref="1.0"), cache_dir=tmp_path)
    assert not (tmp_path / "escape.py").exists()
    assert not list((tmp_path / "sources").glob("*/tree/escape.py"))


def test_a_docker_image_seed_snapshots_like_the_folder(tmp_path):
    from taskmint.sandbox.images import docker_client

    try:
        client = docker_client()
        base = next(t for i in client.images.list() for t in i.tags if "taskmint-base" in t)
    except Exception as exc:  # pragma: no cover - the machine has no Docker Engine
        pytest.skip(f"no Docker Engine or base image here: {exc}")
    buf = io.BytesIO()
    with tarfile.open(fileobj=buf, mode="w") as tf:
        tf.add(SEEDS / "tiny", arcname="tiny", filter=lambda i: None if "pycache" in i.name else i)
    container = client.containers.create(base, command=["true"])
    tag = f"taskmint-test-seed:{os.getpid()}"
    try:
        assert container.put_archive("/", buf.getvalue())
        container.commit(repository=tag.split(":")[0], tag=tag.split(":")[1])
    finally:
        container.remove(force=True)
    try:
        from_image = acquire_source(
            SeedSource(kind="docker", location=tag, subdir="/tiny"), cache_dir=tmp_path
        )
        from_folder = acquire(SEEDS / "tiny", cache_dir=tmp_path)
        assert from_image.snapshot_id == from_folder.snapshot_id
        assert load_manifest(Path(from_image.root)).name == "tiny"
        with pytest.raises(SourceError, match="not on this machine"):
            fetch_tree(
                SeedSource(kind="docker", location="no-such:img", subdir="/x"), cache_dir=tmp_path
            )
    finally:
        client.images.remove(tag, force=True)
        client.close()


def test_the_bundled_pypi_seeds_are_pinned_with_their_manifests():
    root = Path(__file__).resolve().parents[2] / "seed_apps"
    sources = load_seed_sources(root / "pypi_seeds.toml")
    assert len(sources) >= 5 and all(s.kind == "pypi" for s in sources)
    for s in sources:
        assert s.ref and s.manifest, s
        text = Path(s.manifest).read_text(encoding="utf-8")
        parsed = parse_manifest(text, where=s.manifest)
        assert parsed.name == s.location and parsed.language == "python"


def test_the_sdist_download_is_confined(tmp_path):
    """pip runs an sdist's build code to read its metadata: that code may write only `dest`."""
    import sys

    from taskmint.acquire.sources import _confined

    dest, outside = tmp_path / "dest", tmp_path / "outside"
    dest.mkdir()
    outside.mkdir()
    code = (
        "import os, pathlib, sys\n"
        "pathlib.Path(sys.argv[1], 'ok').write_text('x')\n"
        "for p in (sys.argv[2], os.path.expanduser('~'), os.environ.get('REAL_HOME', '/root')):\n"
        "    try:\n"
        "        pathlib.Path(p, 'evil').write_text('x')\n"
        "    except OSError:\n"
        "        continue\n"
        "    print('wrote', p)\n"
    )
    home = os.path.realpath(os.environ.get("HOME", "/root"))
    argv = [*_confined(dest), sys.executable, "-c", code, str(dest), str(outside)]
    out = subprocess.run(
        argv, capture_output=True, text=True, env={**os.environ, "REAL_HOME": home}
    )
    assert out.returncode == 0, out.stderr
    assert (dest / "ok").read_text() == "x"
    assert not (outside / "evil").exists() and not Path(home, "evil").exists()


def test_the_confined_download_sees_an_interpreter_that_lives_under_tmp(tmp_path, monkeypatch):
    """A checkout (and its venv) under /tmp must stay visible through the sandbox's empty /tmp."""
    import sys
    import venv

    from taskmint.acquire.sources import _confined

    env_dir = Path(tempfile.mkdtemp(prefix="taskmint-venv-", dir="/tmp"))
    try:
        venv.create(env_dir, with_pip=False, symlinks=True)
        monkeypatch.setattr(sys, "prefix", str(env_dir))
        dest = tmp_path / "dest"
        dest.mkdir()
        python = env_dir / "bin" / "python"
        argv = [*_confined(dest), str(python), "-c", "import sys; print(sys.prefix)"]
        out = subprocess.run(argv, capture_output=True, text=True)
        assert out.returncode == 0, out.stderr
        assert out.stdout.strip() == str(env_dir)
    finally:
        shutil.rmtree(env_dir, ignore_errors=True)
