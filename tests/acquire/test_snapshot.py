"""Acquiring seeds into content-addressed snapshots."""

from __future__ import annotations

import os
import shutil
from pathlib import Path

import pytest

from taskmint.acquire import acquire, load_manifest, load_seed_list
from taskmint.acquire.manifest import parse_manifest
from taskmint.errors import ManifestError
from tests.conftest import SEEDS


def _copy(tmp_path: Path) -> Path:
    dst = tmp_path / "seed"
    shutil.copytree(SEEDS / "tiny", dst)
    return dst


def test_same_tree_same_id_and_artefacts_ignored(tmp_path):
    seed_dir = _copy(tmp_path)
    a = acquire(seed_dir, cache_dir=tmp_path / "c")
    (seed_dir / "tinylib" / "__pycache__").mkdir()
    (seed_dir / "tinylib" / "__pycache__" / "text.cpython-311.pyc").write_bytes(b"junk")
    (seed_dir / ".git").mkdir()
    (seed_dir / ".pytest_cache").mkdir()
    os.symlink("/etc/passwd", seed_dir / "tinylib" / "link.py")
    os.mkfifo(seed_dir / "pipe.py")
    b = acquire(seed_dir, cache_dir=tmp_path / "c")
    assert a.snapshot_id == b.snapshot_id
    assert not any("pycache" in f or f.endswith(("link.py", "pipe.py")) for f in b.files)
    assert Path(b.root).is_dir() and b.root != str(seed_dir)


def test_a_change_changes_the_id(tmp_path):
    seed_dir = _copy(tmp_path)
    a = acquire(seed_dir, cache_dir=tmp_path / "c")
    (seed_dir / "tinylib" / "text.py").write_text("# changed\n")
    b = acquire(seed_dir, cache_dir=tmp_path / "c")
    assert a.snapshot_id != b.snapshot_id
    assert (Path(a.root) / "tinylib" / "text.py").read_text() != "# changed\n"


def test_manifest_errors_say_what_to_fix(tmp_path):
    with pytest.raises(ManifestError, match=r"taskmint\.toml not found"):
        load_manifest(tmp_path)
    with pytest.raises(ManifestError, match="missing \\[run\\]"):
        parse_manifest('[seed]\nname="x"\nlanguage="python"\nsource_paths=["a"]\ntest_paths=["t"]')
    with pytest.raises(ManifestError, match="stay inside"):
        parse_manifest(
            '[seed]\nname="x"\nlanguage="python"\nsource_paths=["../a"]\ntest_paths=["t"]\n[run]\n'
        )
    with pytest.raises(ManifestError, match="language"):
        parse_manifest('[seed]\nname="x"\nlanguage="cobol"\n[run]\n')


def test_seed_list(tmp_path):
    assert [p.name for p in load_seed_list(SEEDS / "seeds.toml")] == ["tiny"]
    (tmp_path / "s.toml").write_text("nothing = 1\n")
    with pytest.raises(ManifestError, match="\\[\\[seed\\]\\]"):
        load_seed_list(tmp_path / "s.toml")
