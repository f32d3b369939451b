"""The verifier's parts on their own: hidden-test choice and cutting, the diff scan, the scope
filter's refusals, and the `[verify]` configuration."""

from __future__ import annotations

import pytest

from taskmint.config import VerifyConfig, load_config
from taskmint.errors import ManifestError
from taskmint.languages.python.hidden import choose_hidden, strip_hidden
from taskmint.patches import unified_diff
from taskmint.verify.scan import scan_patch

TESTS = """import pytest


@pytest.mark.parametrize("x", [1, 2])
def test_one(x):
    assert x


def test_two():
    assert 2


class TestThree:
    def test_a(self):
        assert 3

    def test_b(self):
        assert 4
"""
F2P = (
    "t/test_m.py::test_one[1]",
    "t/test_m.py::test_one[2]",
    "t/test_m.py::test_two",
    "t/test_m.py::TestThree::test_a",
)
P2P = ("t/test_m.py::TestThree::test_b",)


def test_hidden_choice_is_seeded_whole_functions_and_leaves_one_visible():
    kw = {"fraction": 0.3, "pass_fraction": 0.1, "source_of": lambda rel: TESTS}
    first = choose_hidden(F2P, P2P, seed="a", **kw)
    assert first == choose_hidden(F2P, P2P, seed="a", **kw)
    assert len({choose_hidden(F2P, P2P, seed=s, **kw) for s in "abcdefgh"}) > 1
    for s in "abcdefgh":
        hidden = set(choose_hidden(F2P, P2P, seed=s, **kw))
        assert ("t/test_m.py::test_one[1]" in hidden) == ("t/test_m.py::test_one[2]" in hidden)
        assert set(F2P) - hidden  # something to fix stays visible
    assert choose_hidden(F2P[:1], (), seed="a", fraction=0.9, pass_fraction=0.0) == ()


def test_cutting_hidden_functions_and_methods():
    out = strip_hidden(
        "t/test_m.py", TESTS, ("t/test_m.py::test_one[1]", "t/test_m.py::TestThree::test_a")
    )
    assert "def test_one" not in out and "parametrize" not in out
    assert "def test_a" not in out and "def test_b" in out and "def test_two" in out
    assert "\n\n\n\n" not in out
    only_method = "class TestX:\n    def test_a(self):\n        assert 1\n"
    assert strip_hidden("t.py", only_method, ("t.py::TestX::test_a",)) == (
        "class TestX:\n    pass\n"
    )


def test_a_test_file_is_parsed_once_however_many_tasks_choose_from_it(monkeypatch):
    from taskmint import pyast

    text = "".join(f"def test_{i}():\n    assert {i} == {i}\n\n\n" for i in range(400))
    ids = tuple(f"t/test_big.py::test_{i}" for i in range(400))
    parsed: list[str] = []
    real = pyast.parse

    def counting(source, *args, **kwargs):  # type: ignore[no-untyped-def]
        parsed.append(source)
        return real(source, *args, **kwargs)

    monkeypatch.setattr(pyast, "parse", counting)
    for task in range(40):
        hidden = choose_hidden(
            ids[:200],
            ids[200:],
            seed=str(task),
            fraction=0.3,
            pass_fraction=0.1,
            source_of=lambda rel: text,
        )
        assert len(hidden) == 60 + 20
    # the whole file once; then one parse per task, of the file as cut for that task
    assert parsed.count(text) == 1
    assert len(parsed) == 1 + 40


@pytest.mark.parametrize(
    ("line", "what"),
    [
        ("    def __eq__(self, other): return True", "__eq__"),
        ("    __bool__ = lambda self: True", "comparison by assignment"),
        ("import _pytest.reports", "pytest"),
        ("f = sys._getframe(1)", "frames"),
        ("os._exit(0)", "exits"),
        ("atexit.register(cb)", "exit handlers"),
        ("builtins.print = noop", "builtins"),
        ("sys.modules['json'] = fake", "sys.modules"),
        ("for o in gc.get_objects(): pass", "live object"),
    ],
)
def test_the_scan_names_each_trick(line, what):
    findings = scan_patch(unified_diff("pkg/m.py", "x = 1\n", f"x = 1\n{line}\n"))
    assert findings and any(what in f for f in findings), findings
    assert findings[0].startswith("pkg/m.py:2: ")


@pytest.mark.parametrize(
    ("line", "what"),
    [
        ('import { test } from "node:test";', "test runner"),
        ("const env = { NODE_TEST_CONTEXT: 'child-v8' };", "test runner"),
        ('import { spawnSync } from "node:child_process";', "runs processes"),
        ("Readable.prototype.push = push;", "prototypes"),
        ("R.prototype.emit = emit;", "prototypes"),
        ('new Function("t", body + "//# sourceURL=" + url);', "another file"),
        ('const s = new (require("node:inspector").Session)();', "debugger"),
        ("fs.writeSync(4, line);", "descriptors"),
        ("process.exit(0);", "exits"),
    ],
)
def test_the_scan_names_each_javascript_trick(line, what):
    findings = scan_patch(unified_diff("src/m.js", "x = 1;\n", f"x = 1;\n{line}\n"))
    assert findings and any(what in f for f in findings), findings
    assert findings[0].startswith("src/m.js:2: ")


def test_the_scan_reads_javascript_past_a_hash_and_passes_plain_javascript():
    honest = unified_diff(
        "src/m.js",
        "",
        "export class Box {\n  #items = [];\n  has(k) { return Object.prototype.hasOwnProperty"
        ".call(this.#items, k); }\n}\n",
    )
    assert scan_patch(honest) == ()
    hidden = unified_diff("src/m.js", "", "export class A { #x = 1; go() { process.exit(0); } }\n")
    assert any("exits" in f for f in scan_patch(hidden))


def test_the_scan_ignores_plain_code_and_removed_lines():
    honest = unified_diff(
        "pkg/m.py",
        "import sys\nsys.exit(1)\n",
        "def top(counts, n):\n    return sorted(counts, key=lambda w: (-counts[w], w))[:n]\n",
    )
    assert scan_patch(honest) == ()


def test_verify_config_is_validated_and_loaded(tmp_path):
    with pytest.raises(ManifestError, match="hidden_fraction"):
        VerifyConfig(hidden_fraction=1.5)
    path = tmp_path / "taskmint.toml"
    path.write_text("[verify]\nhidden_fraction = 0.5\nscan_zeroes_reward = true\n")
    config = load_config(path)
    assert config.verify == VerifyConfig(hidden_fraction=0.5, scan_zeroes_reward=True)
