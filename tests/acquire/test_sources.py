"""Seed sources: a git repository at a commit (a local bare repository over file://), a PyPI
sdist (the download cache pre-filled with a crafted sdist; the real download runs in
`make bench-pypi`), and a Docker image made from the machine's base image."""

from __future__ import annotations

import dataclasses
import io
import os
import re
import shutil
import subprocess
import sys
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
from taskmint.errors import ManifestError
from taskmint.excise import excise
from taskmint.index import index_seed
from taskmint.languages import build_environment
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


def test_a_renamed_git_seed_is_detected_under_its_new_name(bare_repo, tmp_path):
    url, first, _ = bare_repo
    plain = acquire_source(SeedSource(kind="git", location=url, ref=first), cache_dir=tmp_path)
    renamed = acquire_source(
        SeedSource(kind="git", location=url, ref=first, name="Tiny.Fork"), cache_dir=tmp_path
    )
    assert plain.name == plain.manifest.name == "tiny"
    assert renamed.name == renamed.manifest.name == "Tiny.Fork"
    # the detected manifest holds the name, so the renamed seed has its own cached tree
    assert load_manifest(Path(renamed.root)).name == "Tiny.Fork"
    assert load_manifest(Path(plain.root)).name == "tiny"
    assert len(list((tmp_path / "sources").glob("*/tree"))) == 2
    assert renamed.snapshot_id != plain.snapshot_id


def test_a_seed_that_cannot_be_fetched_is_named_as_the_seeds_file_names_it(bare_repo, tmp_path):
    """A refused seed's row carries its name (the entry's `name`, else the derived one), and
    its reason the pin that failed."""
    from taskmint.pipeline.refresh import mint_seed
    from taskmint.pipeline.steps import LocalExecutor

    url, first, _ = bare_repo
    missing = "0" * 40  # a commit the repository does not have
    config = PipelineConfig(output_root=tmp_path / "out")
    with LocalExecutor(1) as ex:
        source = SeedSource(kind="git", location=url, ref=missing)
        named = mint_seed(ex, dataclasses.replace(source, name="ours"), config)
        plain = mint_seed(ex, source, config)
    assert (named.summary.seed, plain.summary.seed) == ("ours", "tiny")
    for outcome in (named, plain):
        assert outcome.tasks == () and outcome.summary.candidates == 0
        assert (outcome.summary.error or "").startswith(f"tiny@{missing[:12]}: "), outcome.summary
    assert first != missing


def test_a_renamed_folder_seed_leaves_the_folder_alone(tmp_path):
    own = (SEEDS / "tiny" / "taskmint.toml").read_bytes()
    plain = acquire_source(
        SeedSource(kind="path", location=str(SEEDS / "tiny")), cache_dir=tmp_path
    )
    renamed = acquire_source(
        SeedSource(kind="path", location=str(SEEDS / "tiny"), name="tiny-2"), cache_dir=tmp_path
    )
    assert plain.name == "tiny"
    assert renamed.name == renamed.manifest.name == "tiny-2"
    assert renamed.snapshot_id == plain.snapshot_id  # the same files: only the name differs
    assert (SEEDS / "tiny" / "taskmint.toml").read_bytes() == own
    pinned = tmp_path / "pinned.toml"
    pinned.write_bytes(own.replace(b'name = "tiny"', b'name = "pinned"'))
    source = SeedSource(kind="path", location=str(SEEDS / "tiny"), manifest=str(pinned))
    # without an override, the seed is named by the manifest it runs with
    assert source.name == "tiny" and acquire_source(source, cache_dir=tmp_path).name == "pinned"
    source = SeedSource(
        kind="path", location=str(SEEDS / "tiny"), manifest=str(pinned), name="over"
    )
    seed = acquire_source(source, cache_dir=tmp_path)
    assert seed.name == seed.manifest.name == "over"


def test_seed_names_come_from_the_source(tmp_path):
    def git(url: str) -> str:
        return SeedSource(kind="git", location=url, ref="a" * 40).name

    assert git("https://example.invalid/org/My_Lib.git") == "my-lib"
    assert git("https://example.invalid/acme/widgets/repo.git/") == "widgets"
    assert git("git@example.invalid:Team/Py.Thing.git") == "py-thing"
    assert git("file:///srv/tools/mirror") == "tools"
    assert SeedSource(kind="pypi", location="Python_Dateutil", ref="2.9").name == "python-dateutil"
    image = "registry.example.invalid:5000/team/web-app:1.2@sha256:" + "0" * 64
    assert SeedSource(kind="docker", location=image, subdir="/src").name == "web-app"
    assert SeedSource(kind="docker", location="img:1", subdir="/src").name == "img"
    # a folder: its own taskmint.toml's name, else the folder's
    shutil.copytree(SEEDS / "tiny", tmp_path / "elsewhere")
    assert SeedSource(kind="path", location=str(tmp_path / "elsewhere")).name == "tiny"
    (tmp_path / "bare").mkdir()
    assert SeedSource(kind="path", location=str(tmp_path / "bare")).name == "bare"
    renamed = SeedSource(kind="pypi", location="x", ref="1", name="Mine_2.0")
    assert (renamed.name, renamed.derived_name, renamed.renamed) == ("Mine_2.0", "x", True)
    with pytest.raises(ManifestError, match="`name` must be"):
        SeedSource(kind="pypi", location="x", ref="1", name="a b")


def test_two_seeds_of_a_manifest_never_share_a_name(tmp_path):
    shutil.copytree(SEEDS / "tiny", tmp_path / "tiny")
    seeds = tmp_path / "seeds.toml"
    git = f'[[seed]]\ngit = "file:///x/tiny.git"\ncommit = "{"a" * 40}"\n'
    seeds.write_text('[[seed]]\npath = "tiny"\n\n' + git)
    with pytest.raises(ManifestError) as err:
        load_seed_sources(seeds)
    message = str(err.value)
    assert "'tiny'" in message and "'tiny@aaaaaaaaaaaa'" in message
    assert 'set `name = "..."` on one of them' in message
    seeds.write_text('[[seed]]\npath = "tiny"\n\n' + git + 'name = "tiny-git"\n')
    assert [s.name for s in load_seed_sources(seeds)] == ["tiny", "tiny-git"]
    pypi = '[[seed]]\npypi = "Inflection"\nversion = "0.5.1"\n\n'
    seeds.write_text(pypi + pypi.replace("Inflection", "inflection").replace("0.5.1", "0.5.0"))
    with pytest.raises(
        ManifestError, match=re.escape("'Inflection==0.5.1' and 'inflection==0.5.0'")
    ):
        load_seed_sources(seeds)
    for bad in ('""', "3", '"a/b"'):
        seeds.write_text(f'[[seed]]\npath = "tiny"\nname = {bad}\n')
        with pytest.raises(ManifestError, match="`name` must be"):
            load_seed_sources(seeds)


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
    renamed = SeedSource(kind="pypi", location="tinylib", ref="1.0", name="tl")
    assert acquire_source(renamed, cache_dir=tmp_path).manifest.name == "tl"
    assert "setup.py" in seed.files and "tinylib/text.py" in seed.files

    _sdist(tmp_path / "sdists" / "evil-1.0", "evil", {"evil-1.0/../../escape.py": b"x"})
    with pytest.raises(ArchiveError, match="climbs out"):
        fetch_tree(SeedSource(kind="pypi", location="evil", ref="1.0"), cache_dir=tmp_path)
    assert not (tmp_path / "escape.py").exists()
    assert not list((tmp_path / "sources").glob("*/tree/escape.py"))


def test_a_docker_image_seed_snapshots_like_the_folder(tmp_path):
    from taskmint.sandbox.docker.client import docker_client

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


@pytest.mark.parametrize(
    ("pyproject", "version_file"),
    [
        ('[tool.setuptools_scm]\nversion_file = "tinylib/_version.py"\n', "tinylib/_version.py"),
        (
            '[tool.hatch.build.hooks.vcs]\nversion-file = "tinylib/version.py"\n',
            "tinylib/version.py",
        ),
    ],
)
def test_a_git_seed_gets_the_version_file_its_build_would_write(pyproject, version_file, tmp_path):
    """setuptools-scm and hatch-vcs write the version module at build time, from the tags; git
    does not hold it, and the package imports it (pluggy, filelock): a git seed gets it."""
    work = tmp_path / "work"
    shutil.copytree(SEEDS / "tiny", work, ignore=shutil.ignore_patterns("__pycache__"))
    (work / "pyproject.toml").write_text('[project]\nname = "tiny"\n\n' + pyproject)
    init = work / "tinylib" / "__init__.py"
    module = version_file.split("/")[1].removesuffix(".py")
    init.write_text(f"from .{module} import version as __version__\n" + init.read_text())
    _git(work, "init", "--quiet", "-b", "main")
    _git(work, "add", "-A")
    _git(work, "commit", "--quiet", "-m", "one")
    _git(work, "tag", "v1.4.0")
    tagged = _git(work, "rev-parse", "HEAD")
    _git(work, "commit", "--quiet", "--allow-empty", "-m", "two")
    after = _git(work, "rev-parse", "HEAD")
    url = f"file://{work}"
    one = fetch_tree(SeedSource(kind="git", location=url, ref=tagged), cache_dir=tmp_path / "c")
    two = fetch_tree(SeedSource(kind="git", location=url, ref=after), cache_dir=tmp_path / "c")
    assert "__version__ = version = '1.4.0'" in (one / version_file).read_text()
    assert f"'1.4.1.dev1+g{after[:7]}'" in (two / version_file).read_text()
    imported = subprocess.run(
        [
            sys.executable,
            "-I",
            "-c",
            "import sys; sys.path[:0] = ['.']; import tinylib; print(tinylib.__version__)",
        ],
        cwd=one,
        capture_output=True,
        text=True,
    )
    assert imported.stdout.strip() == "1.4.0", imported.stderr
