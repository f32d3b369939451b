"""The language profiles and their registry: lookups, detection, what each profile says, and a
third language plugged in by registering one profile (Go, on the grammar taskmint already has)."""

from __future__ import annotations

import textwrap
from pathlib import Path
from typing import Any, ClassVar

import pytest

from taskmint.acquire import acquire
from taskmint.acquire.manifest import parse_manifest
from taskmint.errors import ManifestError
from taskmint.excise import excise
from taskmint.index import index_seed
from taskmint.languages import (
    GO,
    DetectError,
    LanguageProfile,
    TreeSitterSyntax,
    UnknownLanguageError,
    adapter_for,
    detect_profile,
    find_profile,
    find_syntax,
    profile,
    profile_for_file,
    profiles,
    syntax,
    syntax_for_file,
)
from taskmint.languages import base as registry
from taskmint.records import Environment, Language, SeedManifest, Strategy
from taskmint.runners.adapters import Adapter

MANIFEST = """\
[seed]
name = "{name}"
language = "{language}"
source_paths = ["{source}"]
test_paths = ["{tests}"]

[run]
runner = "{runner}"
"""


def test_python_and_javascript_are_registered_with_their_runners():
    registered = [(p.name, p.runner) for p in profiles()]
    assert registered[:2] == [("python", "pytest"), ("javascript", "node")]
    # importing `taskmint.languages.rust` registers the Rust profile (not registered here yet)
    assert registered[2:] in ([], [("rust", "cargo")])
    assert profile("python").adapter.runner == "pytest"
    assert profile("javascript").adapter.runner == "node"
    assert find_profile("cobol") is None


def test_an_unknown_language_is_a_manifest_error_naming_the_known_ones():
    with pytest.raises(UnknownLanguageError, match=r"no language profile for 'cobol'.*javascript"):
        profile("cobol")
    with pytest.raises(ManifestError, match=r"seed.language must be one of \['javascript', "):
        parse_manifest(MANIFEST.format(name="x", language="go", source="a", tests="t", runner="go"))
    with pytest.raises(ManifestError, match=r"run\.runner for javascript must be 'node'"):
        parse_manifest(
            MANIFEST.format(name="x", language="javascript", source="a", tests="t", runner="jest")
        )


def test_files_find_their_profile_and_syntax_by_name():
    assert profile_for_file("pkg/mod.py") is profile("python")
    assert profile_for_file("lib/x.mjs") is profile("javascript")
    assert profile_for_file("src/x.ts") is None  # a grammar, no profile
    assert syntax_for_file("src/x.tsx") is syntax("typescript")
    assert syntax_for_file("src/x.d.ts") is None  # declarations: nothing to excise
    assert syntax_for_file("pkg/x_test.go") is None
    assert syntax_for_file("pkg/mod.py") is None
    assert find_syntax("python") is None
    with pytest.raises(ValueError, match="supports javascript, rust, typescript, go, not 'python'"):
        syntax("python")


def test_each_syntax_says_how_a_body_is_stubbed():
    assert {s: syntax(s).stub for s in ("javascript", "typescript", "go", "rust")} == {
        "javascript": 'throw new Error("not implemented");',
        "typescript": 'throw new Error("not implemented");',
        "go": 'panic("not implemented")',
        "rust": "todo!()",
    }
    assert syntax("go").removable_functions == ("function", "method")
    assert [s for s in ("javascript", "typescript", "go", "rust") if syntax(s).classes] == [
        "javascript",
        "typescript",
    ]


def test_the_adapters_say_what_their_runner_can_do():
    py, js = profile("python").adapter, profile("javascript").adapter
    assert (py.forks, py.compiles, py.plants_canaries, py.coverage_format) == (
        True,
        True,
        True,
        "coverage.py",
    )
    assert (js.forks, js.compiles, js.plants_canaries, js.coverage_format) == (
        False,
        False,
        False,
        "v8",
    )
    assert js.selects_whole_files and not py.selects_whole_files


def test_what_the_statements_may_say_of_python_and_javascript_code():
    py, js = profile("python"), profile("javascript")
    assert py.module_name("src/pkg/__init__.py") == "src.pkg"
    assert py.module_name("pkg/util.py") == "pkg.util"
    assert js.module_name("lib/util.js") is None
    assert py.canary_folder(("tests/test_x.py",)) == "tests"
    assert js.canary_folder(("test/",)) == "test"
    code = 'def f(x):\n    """Doc."""\n    return x + 1\n'
    assert py.interface_lines(code) == {0, 1}
    assert js.interface_lines("function f(x) {\n  return x + 1;\n}\n") is None
    assert py.outline(code) == ["def f(...):", "    return ..."]
    assert py.shape("for i in x:\n    g(i)\n") is not None
    assert js.shape("for (const i of x) g(i);") is None


def test_trees_are_detected_by_the_profile_that_recognizes_them(tmp_path):
    py = tmp_path / "py"
    (py / "pkg").mkdir(parents=True)
    (py / "pkg" / "__init__.py").write_text("")
    (py / "pyproject.toml").write_text('[project]\nname = "pkg"\n')
    assert detect_profile(py) is profile("python")
    js = tmp_path / "js"
    js.mkdir()
    (js / "package.json").write_text("{}")
    (js / "index.js").write_text("module.exports = 1;\n")
    with pytest.raises(DetectError, match="no language recognizes this tree"):
        detect_profile(js, name="js")
    with pytest.raises(DetectError, match="javascript seeds are not detected"):
        profile("javascript").detect_manifest(js, name="js")


# -- a third language, registered ----------------------------------------------------------


class _GoAdapter(Adapter):
    """Go's runner is not built here: the profile below only reads and edits code."""

    runner = "go"

    def command(self, *args: Any, **kwargs: Any) -> Any:
        raise NotImplementedError

    def parse(self, *args: Any, **kwargs: Any) -> Any:
        raise NotImplementedError

    def channel_command(self, *args: Any, **kwargs: Any) -> Any:
        raise NotImplementedError


class _GoProfile(LanguageProfile):
    name: ClassVar[Language] = "go"
    runner: ClassVar[str] = "go"
    extensions: ClassVar[tuple[str, ...]] = (".go",)
    engine: ClassVar[str] = "tree-sitter"
    syntax: ClassVar[TreeSitterSyntax | None] = GO
    strategies: ClassVar[tuple[Strategy, ...]] = ("stub_body", "remove_function")

    @property
    def adapter(self) -> Adapter:
        return _GoAdapter()

    def test_command(self, manifest: SeedManifest) -> str:
        return "go test ./..."

    def environment_id(self, manifest: SeedManifest) -> str:
        return "go-test"

    def build_environment(self, manifest: SeedManifest, *, cache_dir: Path) -> Environment:
        raise NotImplementedError


@pytest.fixture
def go_registered(monkeypatch):
    monkeypatch.setitem(registry._REGISTRY, "go", _GoProfile())


def test_a_registered_profile_is_all_a_new_language_needs_to_be_indexed_and_excised(
    go_registered, tmp_path
):
    folder = tmp_path / "gostack"
    (folder / "stack").mkdir(parents=True)
    (folder / "taskmint.toml").write_text(
        MANIFEST.format(
            name="gostack",
            language="go",
            source="stack",
            tests="stack/stack_test.go",
            runner="go",
        )
    )
    (folder / "stack" / "stack.go").write_text(
        textwrap.dedent(
            """\
            package stack

            // Stack holds ints.
            type Stack struct{ items []int }

            // Push adds v on top.
            func (s *Stack) Push(v int) {
            \ts.items = append(s.items, v)
            \tif len(s.items) > 100 {
            \t\tpanic("full")
            \t}
            }

            // Sum adds every item.
            func Sum(s *Stack) int {
            \ttotal := 0
            \tfor _, v := range s.items {
            \t\ttotal += v
            \t}
            \treturn total
            }
            """
        )
    )
    (folder / "stack" / "stack_test.go").write_text("package stack\n")
    seed = acquire(folder, cache_dir=tmp_path / "cache")
    assert seed.manifest.language == "go" and adapter_for(seed.manifest).runner == "go"
    index = index_seed(seed)
    assert sorted(u.qualname for u in index.units) == ["Stack.Push", "Sum"]
    found = excise(seed, index, max_candidates=10)
    by_strategy = {(c.strategy, c.units[0]) for c in found.candidates}
    assert ("stub_body", "stack/stack.go::Sum") in by_strategy
    stub = next(c for c in found.candidates if c.strategy == "stub_body")
    assert '+\tpanic("not implemented")' in stub.breaking_patch
    # remove_class and remove_method are not among the profile's strategies
    assert {c.strategy for c in found.candidates} <= {"stub_body", "remove_function"}
