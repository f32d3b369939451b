"""Making and applying `git diff` style patches, byte for byte."""

from __future__ import annotations

import pytest

from taskmint.errors import PatchError
from taskmint.patches import apply_patch, file_changes, unified_diff

CASES = {
    "plain": ("a\nb\nc\n", "a\nB\nc\n"),
    "crlf": ("a\r\nb\r\nc\r\n", "a\r\nX\r\nc\r\n"),
    "no final newline": ("a\nb\nc", "a\nb\nd"),
    "adds final newline": ("a\nb", "a\nb\n"),
    "mixed endings": ("a\r\nb\nc\r\n", "a\r\nb2\nc\r\n"),
    "bom": ("\ufeffx = 1\ny = 2\n", "\ufeffx = 1\ny = 3\n"),
}


@pytest.mark.parametrize("name", sorted(CASES))
def test_round_trip(tmp_path, name):
    old, new = CASES[name]
    (tmp_path / "f.py").write_bytes(old.encode())
    patch = unified_diff("f.py", old, new)
    apply_patch(tmp_path, patch)
    assert (tmp_path / "f.py").read_bytes() == new.encode()
    apply_patch(tmp_path, unified_diff("f.py", new, old))
    assert (tmp_path / "f.py").read_bytes() == old.encode()


def test_new_and_deleted_files(tmp_path):
    (tmp_path / "gone.py").write_text("bye\n")
    patch = unified_diff("pkg/new.py", None, "hello\n") + unified_diff("gone.py", "bye\n", None)
    apply_patch(tmp_path, patch)
    assert (tmp_path / "pkg" / "new.py").read_text() == "hello\n"
    assert not (tmp_path / "gone.py").exists()
    changes = file_changes(patch)
    assert [(c.old_path, c.new_path) for c in changes] == [
        ("pkg/new.py", "pkg/new.py"),
        ("gone.py", None),
    ]


def test_a_patch_that_does_not_apply_says_why(tmp_path):
    (tmp_path / "f.py").write_text("something else\n")
    with pytest.raises(PatchError, match="does not apply"):
        apply_patch(tmp_path, unified_diff("f.py", "a\nb\n", "a\nc\n"))


def test_a_patch_cannot_escape_the_tree(tmp_path):
    ws = tmp_path / "ws"
    ws.mkdir()
    evil = "--- a/../outside.txt\n+++ b/../outside.txt\n@@ -0,0 +1 @@\n+owned\n"
    with pytest.raises(PatchError):
        apply_patch(ws, evil)
    assert not (tmp_path / "outside.txt").exists()
