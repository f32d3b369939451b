"""The leak scan searches everything visible inside the sandbox for the removed code."""

from __future__ import annotations

import dataclasses
import shutil
from pathlib import Path

from taskmint.config import Limits
from taskmint.excise import excise
from taskmint.index import index_seed
from taskmint.validate.leak import scan_for_leaks

SCAN_LIMITS = Limits(wall_seconds=600)


def test_published_tasks_leak_nothing(tiny_seed, tiny_env, sandbox):
    candidates = list(excise(tiny_seed, index_seed(tiny_seed), max_candidates=20).candidates)
    assert scan_for_leaks(tiny_seed, tiny_env, candidates, sandbox, limits=SCAN_LIMITS) == {}


def test_a_copy_planted_in_the_environment_is_found(tiny_seed, tiny_env, sandbox, tmp_path):
    planted = tmp_path / "venv"
    shutil.copytree(tiny_env.prefix, planted, symlinks=True)
    site = next(planted.glob("lib/python*/site-packages"))
    shutil.copytree(Path(tiny_seed.root) / "tinylib", site / "tinylib")
    env = dataclasses.replace(tiny_env, prefix=str(planted))
    candidates = list(excise(tiny_seed, index_seed(tiny_seed), max_candidates=20).candidates)
    hits = scan_for_leaks(tiny_seed, env, candidates, sandbox, limits=SCAN_LIMITS)
    assert hits, "the planted copy was not found"
    some = next(iter(hits.values()))
    assert any("site-packages/tinylib" in h for h in some)


def test_a_copy_planted_in_the_seed_docs_is_found(tiny_seed, tiny_env, sandbox, tmp_path):
    root = tmp_path / "seed"
    shutil.copytree(tiny_seed.root, root)
    (root / "NOTES.md").write_text((Path(tiny_seed.root) / "tinylib" / "text.py").read_text())
    seed = dataclasses.replace(tiny_seed, root=str(root), files=(*tiny_seed.files, "NOTES.md"))
    candidates = [
        c
        for c in excise(
            seed, index_seed(seed), max_candidates=20, strategies=("stub_body",)
        ).candidates
        if c.files == ("tinylib/text.py",)
    ]
    hits = scan_for_leaks(seed, tiny_env, candidates, sandbox, limits=SCAN_LIMITS)
    assert set(hits) == {c.candidate_id for c in candidates}
    assert all("NOTES.md" in h for hs in hits.values() for h in hs)


def test_one_short_line_in_common_is_chance_not_a_leak(tiny_seed, tiny_env, sandbox, tmp_path):
    root = tmp_path / "seed"
    shutil.copytree(tiny_seed.root, root)
    # one line of `merge` (which has several distinctive lines), in an unrelated file
    (root / "NOTES.md").write_text("    for start, end in sorted(intervals):\n")
    seed = dataclasses.replace(tiny_seed, root=str(root), files=(*tiny_seed.files, "NOTES.md"))
    candidates = [
        c
        for c in excise(seed, index_seed(seed), max_candidates=20).candidates
        if c.units[0].endswith("::merge")
    ]
    assert candidates
    assert scan_for_leaks(seed, tiny_env, candidates, sandbox, limits=SCAN_LIMITS) == {}


def test_a_signature_and_docstring_found_elsewhere_are_not_a_leak(
    tiny_seed, tiny_env, sandbox, tmp_path
):
    # An API listing that quotes the header and docstring the statement states anyway (as the
    # standard library's `_collections_abc` holds `async def __anext__(self):`), and one line
    root = tmp_path / "seed"
    shutil.copytree(tiny_seed.root, root)
    (root / "NOTES.md").write_text(
        "    def add(self, start, end):\n"
        '        """Add the interval [start, end]."""\n'
        "        items = list(self._items)\n"
    )
    seed = dataclasses.replace(tiny_seed, root=str(root), files=(*tiny_seed.files, "NOTES.md"))
    candidates = [
        c
        for c in excise(
            seed, index_seed(seed), max_candidates=20, strategies=("remove_function",)
        ).candidates
        if c.units == ("tinylib/intervals.py::IntervalSet.add",)
    ]
    assert candidates and "def add(self, start, end):" in candidates[0].removed_code
    assert scan_for_leaks(seed, tiny_env, candidates, sandbox, limits=SCAN_LIMITS) == {}
    # two of its three body lines are a copy of the implementation
    (root / "NOTES.md").write_text(
        "        items = list(self._items)\n        items.append((start, end))\n"
    )
    hits = scan_for_leaks(seed, tiny_env, candidates, sandbox, limits=SCAN_LIMITS)
    assert set(hits) == {c.candidate_id for c in candidates}
