"""The grader's environment check (`taskmint/harbor/inside/environment.py`) on a folder of
this machine: every kind of change a root agent could make to a digested tree is listed, and
an untouched tree, bytecode caches aside, is not. The check in a real container, against a
real agent, is in test_attacks.py."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

from taskmint.harbor.inside import environment


def _manifest(root: Path, extra: dict[str, str]) -> dict:
    entries = {str(root): "dir", **environment.walk(str(root)), **extra}
    return {"version": 1, "trees": [str(root)], "entries": entries}


def _tree(tmp_path: Path) -> Path:
    root = tmp_path / "lib" / "python3.11"
    (root / "site-packages" / "pkg").mkdir(parents=True)
    (root / "os.py").write_text("# os\n")
    (root / "site-packages" / "pkg" / "__init__.py").write_text("X = 1\n")
    (root / "site-packages" / "setuptools.pth").write_text("import _x\n")
    (root / "site-packages" / "link.py").symlink_to("pkg/__init__.py")
    (tmp_path / "python3.11").write_text("binary\n")
    return root


def test_an_untouched_environment_passes_and_unknown_bytecode_is_removed(tmp_path):
    root = _tree(tmp_path)
    cache = root / "site-packages" / "pkg" / "__pycache__"
    cache.mkdir()
    (cache / "__init__.cpython-311.pyc").write_bytes(b"compiled")
    (cache / "__init__.cpython-311.opt-1.pyc").write_bytes(b"read only under -O")
    binary = tmp_path / "python3.11"
    manifest = _manifest(
        root, {str(binary): environment.state(str(binary)), "/etc/nowhere.preload": "absent"}
    )
    assert str(cache / "__init__.cpython-311.pyc") in manifest["entries"]
    assert not any(".opt-1." in p for p in manifest["entries"])
    assert environment.check(manifest) == []
    # a cache planted (or rewritten) by a root agent: a difference, which the grader, as root,
    # removes instead (the tests then compile from the checked source)
    (root / "__pycache__").mkdir()
    planted = root / "__pycache__" / "os.cpython-311.pyc"
    planted.write_bytes(b"planted")
    (cache / "__init__.cpython-311.pyc").write_bytes(b"rewritten")
    (cache / "__init__.cpython-311.opt-1.pyc").write_bytes(b"left alone")
    assert sorted(environment.check(manifest)) == sorted(
        [
            f"{root}/__pycache__: new",
            f"{planted}: new",
            f"{cache}/__init__.cpython-311.pyc: changed",
        ]
    )
    removed: list[str] = []
    assert environment.check(manifest, removed) == []
    assert sorted(removed) == [str(planted), f"{cache}/__init__.cpython-311.pyc"]
    assert not planted.exists() and (cache / "__init__.cpython-311.opt-1.pyc").exists()
    assert environment.check(manifest, []) == []  # a cache gone costs a compile, nothing more


def test_every_change_to_the_environment_is_listed(tmp_path):
    root = _tree(tmp_path)
    binary = tmp_path / "python3.11"
    preload = tmp_path / "ld.so.preload"
    manifest = _manifest(
        root, {str(binary): environment.state(str(binary)), str(preload): "absent"}
    )
    site = root / "site-packages"
    (site / "zz_attack.pth").write_text("import os\n")  # new
    (root / "sitecustomize.py").write_text("")  # new
    (root / "json.pyc").write_bytes(b"sourceless")  # new: a module without its source
    (root / "os.py").write_text("# os, changed\n")  # changed
    (site / "setuptools.pth").unlink()  # missing
    (site / "link.py").unlink()
    (site / "link.py").symlink_to("/tmp/elsewhere.py")  # a link pointing elsewhere
    binary.write_text("#!/bin/sh\necho 1\n")  # the interpreter replaced
    preload.write_text("/tmp/evil.so\n")  # new
    problems = environment.check(manifest)
    assert sorted(problems) == sorted(
        [
            f"{site}/zz_attack.pth: new",
            f"{root}/sitecustomize.py: new",
            f"{root}/json.pyc: new",
            f"{root}/os.py: changed",
            f"{site}/setuptools.pth: missing",
            f"{site}/link.py: now a link to /tmp/elsewhere.py",
            f"{binary}: changed",
            f"{preload}: new",
        ]
    ), problems


def test_a_tree_moved_behind_a_link_is_seen(tmp_path):
    """Replacing a folder on the way by a link to a doctored copy changes no digest under it."""
    root = _tree(tmp_path / "real")
    manifest = _manifest(root, {})
    copy = tmp_path / "copy"
    os.rename(tmp_path / "real", copy)
    (copy / "lib" / "python3.11" / "zz.pth").write_text("")
    (tmp_path / "real").symlink_to(copy)
    problems = environment.check(manifest)
    assert problems == [f"{root}: now reached through a link ({copy}/lib/python3.11)"], problems


def test_the_probe_digests_this_interpreter_and_its_tools():
    """`environment.py probe`, as the export runs it in the image, here on this machine."""
    script = environment.__file__
    proc = subprocess.run(
        [sys.executable, "-I", "-B", script, "probe", "--tool", "bash", "--tool", "sha256sum"],
        capture_output=True,
        text=True,
        check=True,
        timeout=300,
    )
    import json

    manifest = json.loads(proc.stdout)
    python = os.path.realpath(sys.executable)
    assert manifest["python"] == python and python in manifest["bootstrap"]
    assert manifest["entries"][python].startswith("sha256:")
    assert set(manifest["tools"]) == {"bash", "sha256sum"}
    libc = [p for p in manifest["bootstrap"] if "/libc.so" in p]
    assert libc, manifest["bootstrap"]  # the libraries it maps
    stdlib = os.path.dirname(os.path.realpath(os.__file__))
    assert stdlib in manifest["trees"] and f"{stdlib}/os.py" in manifest["entries"]
    assert not any(".opt-1.pyc" in p for p in manifest["entries"])
    assert "/etc/ld.so.preload" in manifest["entries"]
