"""The remove-function strategy: before/after source strings, kept bytes, skips with reasons."""

from __future__ import annotations

import random
import textwrap
from pathlib import Path

import pytest

from taskmint.acquire import acquire
from taskmint.excise.context import ExciseContext, build_context
from taskmint.excise.remove_function import candidates as function_candidates
from taskmint.excise.remove_function import check_function, remove_function
from taskmint.index import index_seed
from taskmint.records import Candidate, SkippedFile

MANIFEST = """\
[seed]
name = "{name}"
language = "python"
source_paths = ["pkg"]
test_paths = ["tests"]

[run]
runner = "pytest"
pythonpath = ["."]
"""


def make_ctx(tmp_path: Path, files: dict[str, str], **kw: object) -> ExciseContext:
    """A real seed folder with `files` (dedented), acquired and indexed."""
    root = tmp_path / "seed"
    for rel, text in {"pkg/__init__.py": "", "tests/test_x.py": "", **files}.items():
        (root / rel).parent.mkdir(parents=True, exist_ok=True)
        (root / rel).write_text(textwrap.dedent(text))
    (root / "taskmint.toml").write_text(MANIFEST.format(name="unit"))
    seed = acquire(root, cache_dir=tmp_path / "cache")
    return build_context(seed, index_seed(seed), **kw)  # type: ignore[arg-type]


def reason(ctx: ExciseContext, qualname: str, file: str = "pkg/mod.py") -> str | None:
    unit = next(u for u in ctx.index.units if u.qualname == qualname and u.file == file)
    return check_function(ctx, unit)


BEFORE = '''\
"""A module."""

import math

# ---- geometry ----------------------------------------------------------


# Area of a circle: pi r squared.
def area(r):
    """Area of a circle."""
    return math.pi * r * r


def perimeter(r):
    return 2 * math.pi * r


class Shape:
    def scale(self, k):
        self.k = k
        return self
'''


def test_top_level_function_goes_with_its_own_comment_and_the_section_comment_stays():
    after = remove_function(BEFORE.encode(), "area").decode()
    assert after == (
        '"""A module."""\n\nimport math\n\n'
        "# ---- geometry ----------------------------------------------------------\n"
        "\n\ndef perimeter(r):\n    return 2 * math.pi * r\n\n\n"
        "class Shape:\n    def scale(self, k):\n        self.k = k\n        return self\n"
    )


def test_last_method_leaves_pass():
    after = remove_function(BEFORE.encode(), "Shape.scale").decode()
    assert after.endswith("class Shape:\n    pass\n")
    assert after.startswith(BEFORE[: BEFORE.index("class Shape")])


def test_property_getter_goes_with_its_setter_and_a_setter_can_go_alone():
    src = textwrap.dedent(
        """\
        class Box:
            def __init__(self):
                self._w = 0

            @property
            def width(self):
                return self._w

            @width.setter
            def width(self, value):
                self._w = value

            def area(self):
                return self._w * 2
        """
    ).encode()
    getter = remove_function(src, "Box.width").decode()
    assert "width" not in getter and "def area" in getter
    setter = remove_function(src, "Box.width#2").decode()
    assert "@property\n    def width(self):" in setter and "width.setter" not in setter
    compile(getter, "x", "exec")
    compile(setter, "x", "exec")


def test_implementation_goes_with_its_overloads():
    src = textwrap.dedent(
        """\
        from typing import overload

        @overload
        def twice(x: int) -> int: ...
        @overload
        def twice(x: str) -> str: ...
        def twice(x):
            return x * 2

        def keep():
            return 1
        """
    ).encode()
    after = remove_function(src, "twice#3").decode()
    assert after == "from typing import overload\n\ndef keep():\n    return 1\n"


def test_unknown_function_raises_lookup_error():
    with pytest.raises(LookupError):
        remove_function(BEFORE.encode(), "circumference")


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
def test_bytes_outside_the_edit_are_kept(prefix, newline, final):
    text = "def keep():\n    return 'caf\u00e9'\n\n\ndef cut(x):\n    y = x + 1\n    return y"
    enc = "latin-1" if prefix.startswith(b"# -*-") else "utf-8"
    tail = b"\n\n\ndef last():\n    return 0"
    src = prefix + (text.encode(enc) + tail).replace(b"\n", newline) + (newline if final else b"")
    out = remove_function(src, "cut")
    expected = (
        prefix
        + (
            "def keep():\n    return 'caf\u00e9'\n".encode(enc) + b"\n\ndef last():\n    return 0"
        ).replace(b"\n", newline)
        + (newline if final else b"")
    )
    assert out == expected


def test_skips_say_why(tmp_path):
    ctx = make_ctx(
        tmp_path,
        {
            "pkg/mod.py": """\
                from functools import singledispatch
                from typing import TYPE_CHECKING

                __all__ = ["exported"]

                def exported(x):
                    y = x
                    return y

                def registered(x):
                    y = x
                    return y

                TABLE = {"r": registered}

                def route(f):
                    return f

                @route
                def handler(x):
                    y = x
                    return y

                @singledispatch
                def show(x):
                    y = str(x)
                    return y

                @show.register
                def _(x: int):
                    y = f"int {x}"
                    return y

                if TYPE_CHECKING:
                    def typing_only(x):
                        y = x
                        return y

                def outer():
                    def inner():
                        a = 1
                        return a
                    return inner

                def imported_by_tests(x):
                    y = x
                    return y

                def free(x):
                    y = x + 1
                    return registered(y)

                class Meta(type):
                    def __new__(mcs, name, bases, ns):
                        cls = super().__new__(mcs, name, bases, ns)
                        return cls

                class Plugin:
                    def __init_subclass__(cls):
                        cls.seen = True
                        super().__init_subclass__()

                    def run(self):
                        x = 1
                        return x

                    def again(self):
                        x = 2
                        return x

                    rerun = again
                """,
            "tests/test_x.py": "from pkg.mod import imported_by_tests\n",
        },
    )
    assert "__all__" in reason(ctx, "exported")
    assert "used at import time, in module level" in reason(ctx, "registered")
    assert "@route" in reason(ctx, "handler")
    assert "used at import time, in a decorator" in reason(ctx, "show")
    assert reason(ctx, "_") is None  # a singledispatch registration: that type's behaviour
    assert "TYPE_CHECKING" in reason(ctx, "typing_only")
    assert "nested function" in reason(ctx, "outer.inner")
    assert "imported by name in tests/test_x.py" in reason(ctx, "imported_by_tests")
    assert reason(ctx, "free") is None
    assert "metaclass" in reason(ctx, "Meta.__new__")
    assert "at import" in reason(ctx, "Plugin.__init_subclass__")
    assert reason(ctx, "Plugin.run") is None
    assert "used in the body of class Plugin" in reason(ctx, "Plugin.again")
    out = list(function_candidates(ctx, rng=random.Random(0)))
    made = {c.units[0] for c in out if isinstance(c, Candidate)}
    assert made == {
        "pkg/mod.py::_",
        "pkg/mod.py::free",
        "pkg/mod.py::Plugin.run",
        "pkg/mod.py::outer",
    }
    assert all(s.reason for s in out if isinstance(s, SkippedFile))


def test_candidate_records_spans_features_and_diffs(tmp_path):
    ctx = make_ctx(tmp_path, {"pkg/mod.py": BEFORE}, min_body_lines=1)
    out = [c for c in function_candidates(ctx, rng=random.Random(1)) if isinstance(c, Candidate)]
    area = next(c for c in out if c.units == ("pkg/mod.py::area",))
    assert area.spans == (("pkg/mod.py", 9, 11),)
    assert area.strategy == "remove_function"
    feats = area.features
    assert feats is not None
    assert feats.units == 1 and feats.files == 1 and feats.has_docstring
    assert feats.lines_removed == 6  # the comment, the def (3 lines), two blank lines
    assert feats.whole_class is None and feats.scope_change is None
    assert "-def area(r):" in area.breaking_patch and "+def area(r):" in area.gold_patch
    again = [c for c in function_candidates(ctx, rng=random.Random(1)) if isinstance(c, Candidate)]
    assert [c.candidate_id for c in again] == [c.candidate_id for c in out]
