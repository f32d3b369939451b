"""The stub-body strategy: before/after source strings, and byte-exact round trips."""

from __future__ import annotations

from pathlib import Path

import pytest

from taskmint.excise import excise, stub_body
from taskmint.index import index_seed
from taskmint.patches import apply_patch, unified_diff

BEFORE = '''\
class Account:
    """A bank account."""

    def deposit(self, amount):
        """Add `amount`; it must be positive."""
        # validate first
        if amount <= 0:
            raise ValueError("amount must be positive")
        self.balance += amount
        # trailing comment inside the body

    def owner(self): return self._owner


def total(accounts):
    return sum(a.balance for a in accounts)
'''

AFTER_DEPOSIT = '''\
class Account:
    """A bank account."""

    def deposit(self, amount):
        """Add `amount`; it must be positive."""
        raise NotImplementedError

    def owner(self): return self._owner


def total(accounts):
    return sum(a.balance for a in accounts)
'''


def test_method_body_is_stubbed_and_docstring_kept():
    assert stub_body(BEFORE.encode(), "Account.deposit").decode() == AFTER_DEPOSIT


def test_one_line_body():
    out = stub_body(BEFORE.encode(), "Account.owner").decode()
    assert "    def owner(self): raise NotImplementedError\n" in out
    assert out.replace("raise NotImplementedError", "return self._owner") == BEFORE


def test_function_without_docstring():
    out = stub_body(BEFORE.encode(), "total").decode()
    assert out.endswith("def total(accounts):\n    raise NotImplementedError\n")


def test_nth_definition_with_the_same_name():
    src = b"def f():\n    return 1\n\n\ndef f():\n    return 2\n"
    assert (
        stub_body(src, "f#2")
        == b"def f():\n    return 1\n\n\ndef f():\n    raise NotImplementedError\n"
    )


def test_unknown_function_raises_lookup_error():
    with pytest.raises(LookupError):
        stub_body(BEFORE.encode(), "Account.withdraw")


@pytest.mark.parametrize(
    "prefix,newline,final",
    [
        (b"", b"\n", True),
        (b"", b"\r\n", True),
        (b"\xef\xbb\xbf", b"\n", True),
        (b"# -*- coding: latin-1 -*-\n", b"\n", True),
        (b"", b"\n", False),
    ],
)
def test_bytes_outside_the_body_are_kept(tmp_path, prefix, newline, final):
    body = b"def keep():\n    return 'caf\xe9'\n\ndef cut(x):\n    y = x + 1\n    return y"
    if not prefix.startswith(b"# -*-"):
        body = body.replace(b"\xe9", "\u00e9".encode())
    src = prefix + body.replace(b"\n", newline) + (newline if final else b"")
    out = stub_body(src, "cut")
    head = src[: src.index(b"    y = x")]
    assert out.startswith(head)
    assert out[len(head) :].startswith(b"    raise NotImplementedError")
    assert out.endswith(newline if final else b"NotImplementedError")


def test_gold_patch_restores_every_unit_of_the_tiny_seed(tiny_seed, tmp_path):
    index = index_seed(tiny_seed)
    result = excise(
        tiny_seed, index, max_candidates=100, min_body_lines=1, strategies=("stub_body",)
    )
    assert len(result.candidates) >= 8
    for cand in result.candidates:
        ws = tmp_path / cand.candidate_id
        for rel in cand.files:
            (ws / rel).parent.mkdir(parents=True, exist_ok=True)
            (ws / rel).write_bytes((Path(tiny_seed.root) / rel).read_bytes())
        apply_patch(ws, cand.breaking_patch)
        assert b"raise NotImplementedError" in (ws / cand.files[0]).read_bytes()
        apply_patch(ws, cand.gold_patch)
        for rel in cand.files:
            assert (ws / rel).read_bytes() == (Path(tiny_seed.root) / rel).read_bytes()


def test_candidates_are_deterministic_and_bounded(tiny_seed):
    index = index_seed(tiny_seed)
    a = excise(tiny_seed, index, max_candidates=3, random_seed=7)
    b = excise(tiny_seed, index, max_candidates=3, random_seed=7)
    assert [c.candidate_id for c in a.candidates] == [c.candidate_id for c in b.candidates]
    assert len(a.candidates) == 3
    assert any(
        "body has 2 line(s)" in s.reason
        for s in excise(
            tiny_seed, index, max_candidates=99, min_body_lines=3, strategies=("stub_body",)
        ).skipped
    )


def test_diff_of_an_edit_is_minimal():
    after = stub_body(BEFORE.encode(), "total").decode()
    diff = unified_diff("a.py", BEFORE, after)
    removed = [x for x in diff.splitlines() if x.startswith("-") and not x.startswith("---")]
    assert removed == ["-    return sum(a.balance for a in accounts)"]
