"""The remove-class strategy: whole classes, most of their methods, and skips with reasons."""

from __future__ import annotations

import random
import textwrap

import pytest

from taskmint.excise.remove_class import candidates, check_class, remove_class
from taskmint.records import Candidate
from tests.excise.test_remove_function import make_ctx

BEFORE = '''\
import json


class Point:
    """A point."""

    ORIGIN = (0, 0)

    def __init__(self, x, y):
        self.x, self.y = x, y

    def __repr__(self):
        return f"Point({self.x}, {self.y})"

    def norm(self):
        return (self.x**2 + self.y**2) ** 0.5

    @property
    def pair(self):
        return (self.x, self.y)

    def to_json(self):
        return json.dumps(self.pair)


class Bare:
    def one(self):
        return 1

    def two(self):
        return 2


def helper():
    return Point(0, 0)
'''


def test_whole_class_goes():
    after = remove_class(BEFORE.encode(), "Point").decode()
    assert after == BEFORE[: BEFORE.index("class Point")] + BEFORE[BEFORE.index("class Bare") :]


def test_methods_mode_keeps_init_dunders_attributes_and_docstring():
    after = remove_class(BEFORE.encode(), "Point", mode="methods").decode()
    assert after == BEFORE.replace(
        BEFORE[BEFORE.index("\n\n    def norm") : BEFORE.index("\n\n\nclass Bare")], ""
    )
    assert '"""A point."""' in after and "ORIGIN" in after and "def __repr__" in after


def test_methods_mode_leaves_pass_in_an_emptied_class():
    after = remove_class(BEFORE.encode(), "Bare", mode="methods").decode()
    assert "class Bare:\n    pass\n\n\ndef helper():" in after


def test_methods_used_by_the_class_body_are_kept():
    src = textwrap.dedent(
        """\
        class C:
            def a(self):
                return 1

            def b(self):
                return 2

            def c(self):
                return 3

            alias = c
        """
    ).encode()
    after = remove_class(src, "C", mode="methods").decode()
    assert "def c" in after and "def a" not in after and "def b" not in after


def test_unknown_class_raises_lookup_error():
    with pytest.raises(LookupError):
        remove_class(BEFORE.encode(), "Circle")


@pytest.mark.parametrize("newline,final", [(b"\n", True), (b"\r\n", True), (b"\n", False)])
def test_bytes_outside_the_edit_are_kept(newline, final):
    src = (
        b"\xef\xbb\xbfA = 1\n\n\nclass Gone:\n    x = 1\n\n\ndef keep():\n    return 'caf\xc3\xa9'"
    )
    src = src.replace(b"\n", newline) + (newline if final else b"")
    out = remove_class(src, "Gone")
    want = b"\xef\xbb\xbfA = 1\n\n\ndef keep():\n    return 'caf\xc3\xa9'"
    assert out == want.replace(b"\n", newline) + (newline if final else b"")


def test_skips_say_why(tmp_path):
    ctx = make_ctx(
        tmp_path,
        {
            "pkg/mod.py": """\
                REGISTRY = {}

                def register(cls):
                    REGISTRY[cls.__name__] = cls
                    return cls

                class Base:
                    def a(self):
                        return 1

                    def b(self):
                        return 2

                class Child(Base):
                    def c(self):
                        return 3

                @register
                class Plugin:
                    def a(self):
                        return 1

                    def b(self):
                        return 2

                class Used:
                    def a(self):
                        return 1

                DEFAULT = Used()

                class Exported:
                    def a(self):
                        return 1

                    def b(self):
                        return 2

                class Free:
                    def __init__(self):
                        self.n = 0

                    def a(self):
                        return 1

                    def b(self):
                        return 2
                """,
            "tests/test_x.py": "from pkg.mod import Exported\n",
        },
    )

    def why(qual: str, mode: str = "whole") -> str | None:
        return check_class(ctx, "pkg/mod.py", qual, mode)

    assert why("Base") == "a base class of Child in the same module"
    assert "@register" in why("Plugin")
    assert "used at import time, in module level" in why("Used")
    assert "imported by name in tests/test_x.py" in why("Exported")
    assert why("Free") is None
    # methods mode works for classes that must stay
    assert why("Base", "methods") is None
    assert why("Exported", "methods") is None
    assert "only 1 non-dunder method" in why("Child", "methods")
    out = [c for c in candidates(ctx, rng=random.Random(0)) if isinstance(c, Candidate)]
    free = next(c for c in out if c.units == ("pkg/mod.py::Free",))
    assert free.features is not None and free.features.whole_class is True
    assert free.spans == (("pkg/mod.py", 39, 47),)
    methods = next(c for c in out if c.units == ("pkg/mod.py::Free.a", "pkg/mod.py::Free.b"))
    assert "__init__" not in methods.removed_code
    assert methods.spans == (("pkg/mod.py", 43, 44), ("pkg/mod.py", 46, 47))
