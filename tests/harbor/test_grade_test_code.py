"""The Harbor grader refuses a change to the test code inside a source file (Rust's unit tests
and doctests), which it cannot parse to put back: the regions come from the profile at export
(`LanguageProfile.test_code_regions`), the check is the grader's own (`grade.test_code_change`,
standard library only). An edit of the code around them is the agent's."""

from __future__ import annotations

from pathlib import Path

from taskmint.harbor.inside import grade
from taskmint.languages import profile

QUEUE = Path(__file__).resolve().parents[2] / "seed_apps" / "cronplan" / "src" / "queue.rs"


def _regions(text: str) -> list[list[int]]:
    found = profile("rust").test_code_regions("src/queue.rs", text.encode())
    return [list(r) for r in found]


def test_the_regions_cover_the_unit_tests_and_the_doctests():
    text = QUEUE.read_text()
    regions = _regions(text)
    lines = text.splitlines()
    module = next(i for i, line in enumerate(lines, 1) if line.startswith("mod tests"))
    assert any(first <= module <= last for first, last in regions)
    # a doc comment with a code block is a doctest
    graph = (QUEUE.parent / "graph.rs").read_text()
    fence = next(i for i, line in enumerate(graph.splitlines(), 1) if "```" in line)
    found = profile("rust").test_code_regions("src/graph.rs", graph.encode())
    assert any(first <= fence <= last for first, last in found)
    # python and javascript have none
    assert profile("python").test_code_regions("a.py", b"def test_x():\n    pass\n") == []


def test_code_edits_pass_and_test_edits_are_refused():
    text = QUEUE.read_text()
    regions = _regions(text)
    lines = text.splitlines(keepends=True)
    first_test = min(first for first, _ in regions)
    code_line = next(
        i for i, line in enumerate(lines) if line.strip().startswith("let") and i < first_test - 5
    )
    # the agent's code (outside the tests) is its own
    edited = lines.copy()
    edited[code_line] = edited[code_line].rstrip("\n") + " // changed\n"
    assert grade.test_code_change(text, "".join(edited), regions) is None
    # a line of a test changed, a test deleted, a line added inside the test module
    module = next(i for i, line in enumerate(lines) if line.startswith("mod tests"))
    assert_line = next(i for i in range(module, len(lines)) if "assert" in lines[i])
    weakened = lines.copy()
    weakened[assert_line] = "        // nothing checked\n"
    assert "changes the test code" in grade.test_code_change(text, "".join(weakened), regions)
    added = lines.copy()
    added.insert(assert_line, "        return;\n")
    assert "inside the test code" in grade.test_code_change(text, "".join(added), regions)
    # anywhere in the file: lines that switch tests off or shadow the assertions
    for line in (
        "#[cfg_attr(test, ignore)]\n",
        "macro_rules! assert_eq { ($($t:tt)*) => {}; }\n",
        "    if cfg!(test) { return; }\n",
        "#![cfg(not(test))]\n",
    ):
        sneaky = [line, *lines]
        assert grade.test_code_change(text, "".join(sneaky), regions), line
