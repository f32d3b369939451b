"""The remove-block strategy: each kind of block, before/after, and skips with reasons."""

from __future__ import annotations

import random
import textwrap

import pytest

from taskmint.excise.remove_block import blocks_of, candidates, remove_block
from taskmint.records import Candidate, SkippedFile
from tests.excise.test_remove_function import make_ctx


def _src(text: str) -> bytes:
    return textwrap.dedent(text).encode()


CHAIN = _src(
    """\
    def sign(x):
        # classify
        if x < 0:
            return -1
        elif x == 0:
            return 0
        else:
            return 1
    """
)


@pytest.mark.parametrize(
    "block,after",
    [
        (
            "if@3",
            "def sign(x):\n    # classify\n    if x == 0:\n        return 0\n"
            "    else:\n        return 1\n",
        ),
        (
            "elif@5",
            "def sign(x):\n    # classify\n    if x < 0:\n        return -1\n"
            "    else:\n        return 1\n",
        ),
        (
            "else@7",
            "def sign(x):\n    # classify\n    if x < 0:\n        return -1\n"
            "    elif x == 0:\n        return 0\n",
        ),
    ],
)
def test_arms_of_an_if_chain(block, after):
    assert remove_block(CHAIN, "sign", block).decode() == after


def test_first_arm_with_only_else_unwraps_the_else_body():
    src = _src(
        """\
        def f(x):
            if x is None:
                return 0
            else:
                y = x * 2
                return y
        """
    )
    assert remove_block(src, "f", "if@2") == b"def f(x):\n    y = x * 2\n    return y\n"


def test_lone_if_and_loops_go_entirely_and_empty_bodies_get_pass():
    src = _src(
        """\
        def f(items):
            total = 0
            for item in items:
                total += item
            while total > 10:
                total -= 10
            if total:
                total += 1
            return total

        def g(n):
            while n:
                n -= 1
        """
    )
    assert [b.name for b in blocks_of(src, "f")] == ["for@3", "while@5", "if@7"]
    out = remove_block(src, "f", "for@3").decode()
    assert "for item" not in out and "total += item" not in out and "while total" in out
    out = remove_block(src, "f", "if@7").decode()
    assert "if total" not in out and out.count("total += 1") == 0
    assert remove_block(src, "g", "while@12").decode().endswith("def g(n):\n    pass\n")


def test_except_handlers():
    src = _src(
        """\
        def f(d, k):
            try:
                v = d[k]
            except KeyError:
                v = None
            except TypeError:
                raise ValueError(k)
            return v

        def g(d, k):
            try:
                v = d[k]
            except KeyError:
                return None
            else:
                v += 1
            return v

        def h(d, k):
            try:
                v = d[k]
            except KeyError:
                v = 0
            else:
                v += 1
            finally:
                d.clear()
            return v
        """
    )
    out = remove_block(src, "f", "except@4").decode()
    assert out.startswith(
        "def f(d, k):\n    try:\n        v = d[k]\n"
        "    except TypeError:\n        raise ValueError(k)\n"
    )
    # a lone handler without finally: the try unwraps, its else body follows
    out = remove_block(src, "g", "except@13").decode()
    assert "def g(d, k):\n    v = d[k]\n    v += 1\n    return v\n" in out
    # a lone handler with finally: try/finally stays, the else body joins the try body
    out = remove_block(src, "h", "except@22").decode()
    assert "    try:\n        v = d[k]\n        v += 1\n    finally:\n        d.clear()\n" in out
    compile(out, "x", "exec")


def test_unknown_block_raises_lookup_error():
    with pytest.raises(LookupError):
        remove_block(CHAIN, "sign", "while@3")
    with pytest.raises(LookupError):
        remove_block(CHAIN, "nope", "if@3")


@pytest.mark.parametrize(
    "prefix,newline,final",
    [
        (b"", b"\r\n", True),
        (b"\xef\xbb\xbf", b"\n", True),
        (b"# -*- coding: latin-1 -*-\n", b"\n", True),
        (b"", b"\n", False),
    ],
)
def test_bytes_outside_the_edit_are_kept(prefix, newline, final):
    enc = "latin-1" if prefix.startswith(b"#") else "utf-8"
    body = "def f(x):\n    s = 'caf\u00e9'\n    if x:\n        s += '!'\n    return s"
    src = prefix + body.encode(enc).replace(b"\n", newline) + (newline if final else b"")
    out = remove_block(src, "f", f"if@{3 + (1 if prefix.startswith(b'#') else 0)}")
    want = "def f(x):\n    s = 'caf\u00e9'\n    return s".encode(enc).replace(b"\n", newline)
    assert out == prefix + want + (newline if final else b"")


def test_candidates_skip_traps_and_record_spans(tmp_path):
    ctx = make_ctx(
        tmp_path,
        {
            "pkg/mod.py": """\
                def gen(xs):
                    for x in xs:
                        yield x

                def check(x):
                    if x is None:
                        pass
                    if x < 0:
                        raise ValueError(x)
                    return x

                def scoped(x):
                    if x:
                        y = 1
                    else:
                        y = 2
                    return y

                def local_binding(x):
                    if x:
                        z = 1
                    return x
                """,
        },
    )
    out = list(candidates(ctx, rng=random.Random(0), per_unit=5))
    skipped = {s.path: s.reason for s in out if isinstance(s, SkippedFile)}
    assert skipped["pkg/mod.py::gen@for@2"] == "removes the last yield of a generator"
    assert skipped["pkg/mod.py::check@if@6"] == "the block's body is only pass/..."
    made = {(c.units[0], c.candidate_id): c for c in out if isinstance(c, Candidate)}
    by_block = {c.removed_code.splitlines()[0].strip(): c for c in made.values()}
    guard = by_block["if x < 0:"]
    assert guard.spans == (("pkg/mod.py", 8, 9),)
    assert guard.features is not None
    assert guard.features.scope_change is False
    assert guard.features.complexity == 2
    # `z` is bound only in the removed block: the function's locals change, widen the span
    binding = by_block["if x:"] if "z = 1" in by_block["if x:"].removed_code else None
    assert binding is not None
    assert binding.spans == (("pkg/mod.py", 20, 22),)
    assert binding.features is not None and binding.features.scope_change is True
