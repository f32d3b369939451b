"""The leak check, on before/after strings, on planted leaks, and through the pipeline."""

from __future__ import annotations

import dataclasses

import pytest

from taskmint.describe import (
    Facts,
    LeakChecker,
    describe,
    describe_facts,
    find_leaks,
    outline,
)
from taskmint.describe.facts import UnitFacts, shape_of
from taskmint.excise import excise
from taskmint.index import index_seed
from taskmint.pipeline import mint_candidate
from taskmint.records import Verdict

REMOVED = '''\
    def area(self, scale=1):
        """Area of the box, times `scale`.

        >>> Box(2, 3).area()
        6
        """
        if scale <= 0:
            raise ValueError("scale must be positive")
        width = self.right - self.left
        return width * (self.top - self.bottom) * scale
'''


def test_a_removed_line_is_caught_whatever_its_whitespace_and_markup():
    checker = LeakChecker(REMOVED)
    assert checker.check("Compute it as `width=self.right-self.left` first.", where="hint 2")
    spread = "Start with\n\n    width = self.right\n        - self.left\n\nand go on."
    assert checker.check(spread, where="statement")
    (leak,) = checker.check("`return width*(self.top-self.bottom)*scale`", where="hint 3")
    assert leak.kind == "line" and "return width" in leak.describe()


def test_documentation_and_definition_heads_are_the_interface_not_a_leak():
    checker = LeakChecker(REMOVED)
    text = (
        "```python\ndef area(self, scale=1)\n```\n\nArea of the box, times `scale`.\n\n"
        ">>> Box(2, 3).area()\n6\n"
    )
    assert checker.check(text, where="statement") == []


def test_short_lines_may_appear_in_prose_but_not_as_a_whole_line():
    checker = LeakChecker("    total = 0\n    return total\n")
    assert checker.check("It starts from total = 0 and adds up.", where="hint 2") == []
    (leak,) = checker.check("```\ntotal = 0\n...\n```", where="hint 4")
    assert leak.kind == "complete"
    # a bare keyword line is structure, not a leak
    assert (
        LeakChecker("    try:\n        x.go()\n    finally:\n        pass\n").check(
            "try:\n    ...\nfinally:\n    ...", where="hint 4"
        )
        == []
    )


def test_a_line_that_is_one_name_is_not_a_complete_line_of_the_code():
    # aiofiles' removed `_open` passes `file,` on a line of its own; so does its signature
    removed = (
        "def _open(\n    file,\n    mode='r',\n):\n"
        "    return _make(\n        file,\n        mode,\n    )\n"
    )
    checker = LeakChecker(removed)
    assert checker.check("```python\ndef _open(\n    file,\n    mode='r',\n)\n```", where="s") == []
    assert checker.check("```\nreturn _make(\n```", where="hint 4")  # still a complete line


def test_javascript_docs_and_method_heads_are_not_protected_but_bodies_are():
    removed = (
        "  /**\n   * Render one node with the rule for its type.\n   */\n"
        "  renderNode(node, tight) {\n"
        "    const method = BUILTIN_RULES[node.type];\n"
        "    return method.call(this, node, tight);\n  }\n"
    )
    checker = LeakChecker(removed, language="javascript")
    ok = "renderNode(node, tight)\n\nRender one node with the rule for its type."
    assert checker.check(ok, where="statement") == []
    assert checker.check("use `const method = BUILTIN_RULES[node.type]`", where="hint 2")


def test_the_outline_keeps_structure_and_drops_every_complete_line():
    for language, code in (
        ("python", REMOVED),
        ("javascript", "  let out = '';\n  for (const x of xs) {\n    out += f(x);\n  }\n"),
        ("python", "    elif kind == 'b':\n        return decode(raw)\n"),  # does not parse
    ):
        text = outline(code, language)
        assert text.strip(), code
        assert LeakChecker(code, language=language).check(text, where="outline") == [], text


def test_a_planted_leaking_statement_on_a_published_task_is_caught(published_tasks):
    task = published_tasks[0]
    assert find_leaks(task.removed_code, task.problem_statement, task.hints) == []
    line = max(
        (x.strip() for x in task.removed_code.splitlines() if not x.strip().startswith("#")),
        key=len,
    )
    planted = task.problem_statement + f"\n\nHint: the original did `{line}`.\n"
    leaks = find_leaks(task.removed_code, planted, task.hints)
    assert [leak.where for leak in leaks] == ["statement"], leaks
    leaks = find_leaks(task.removed_code, task.problem_statement, (*task.hints[:-1], line))
    assert leaks and leaks[0].where == f"hint {len(task.hints)}"


@pytest.fixture(scope="module")
def tiny_candidates(tiny_seed):
    return excise(tiny_seed, index_seed(tiny_seed), max_candidates=60).candidates


def _verdict(cand, **kw) -> Verdict:
    return Verdict(
        candidate_id=cand.candidate_id,
        status="accepted",
        reason="",
        fail_to_pass=("tests/test_text.py::test_top_words_breaks_ties_alphabetically",),
        **kw,
    )


def test_a_failure_message_that_quotes_the_removed_code_is_regenerated_without_it(
    tiny_seed, tiny_candidates
):
    cand = next(c for c in tiny_candidates if c.strategy == "stub_body")
    protected = next(iter(LeakChecker(cand.removed_code).protected.values()))
    verdict = _verdict(cand, failure_messages=(("tests/x.py::t", f"AssertionError: {protected}"),))
    full = describe(cand, _verdict(cand), ("tinylib",), seed=tiny_seed)
    assert full.ok and full.detail == 2
    regenerated = describe(cand, verdict, ("tinylib",), seed=tiny_seed)
    assert regenerated.ok and regenerated.detail == 1, regenerated.reason
    assert protected not in regenerated.statement
    assert len(regenerated.hints) >= 3


def test_a_docstring_with_a_removed_line_falls_back_to_the_least_detail():
    removed = "    result = compute(a, b) + offset\n    return result\n"
    facts = Facts(
        strategy="stub_body",
        language="python",
        units=(
            UnitFacts(
                file="pkg/m.py",
                qualname="f",
                kind="function",
                signature="def f(a, b)",
                docstring="Like this:\n\n    result = compute(a, b) + offset",
            ),
        ),
        source_paths=("pkg",),
        fail_to_pass=("tests/test_m.py::test_f",),
        shape=shape_of(removed, "python"),
        removed_lines=2,
    )
    d = describe_facts(facts, removed)
    assert d.ok and d.detail == 0
    assert "compute(a, b)" not in d.statement


def test_a_leak_no_detail_level_can_avoid_rejects_with_a_reason():
    removed = "    value = lookup(key, table)\n"
    facts = Facts(
        strategy="remove_function",
        language="python",
        units=(
            UnitFacts(file="pkg/m.py", qualname="f", kind="function", signature=removed.strip()),
        ),
        source_paths=("pkg",),
        fail_to_pass=("tests/test_m.py::test_f",),
    )
    d = describe_facts(facts, removed)
    assert not d.ok and d.statement == "" and d.hints == ()
    assert "value = lookup(key, table)" in d.reason and "statement" in d.reason


def test_mint_candidate_rejects_a_task_whose_description_leaks(
    tiny_seed, tiny_env, tiny_baseline, sandbox, pipeline_config, tiny_candidates
):
    cand = next(c for c in tiny_candidates if c.strategy == "stub_body")
    # A removed line that every statement must contain: no detail level can leave it out.
    planted = dataclasses.replace(
        cand,
        removed_code=cand.removed_code
        + "    Do not edit, add or delete tests or test configuration\n",
    )
    result = mint_candidate(planted, tiny_seed, tiny_env, tiny_baseline, sandbox, pipeline_config)
    assert result.task is None
    assert result.verdict.status == "leaky_description"
    assert "Do not edit" in result.verdict.reason


def test_a_signature_over_several_lines_is_interface_even_when_the_code_does_not_parse():
    # strategy `feature`: a stubbed body (indented) next to a whole function does not parse
    code = (
        "        total = 0\n"
        "        return total\n"
        "def scan(self, start: bytes,\n"
        "         limit: Optional[int] = None,\n"
        "         reverse: bool = False):\n"
        "    found = compute_everything(start, limit)\n"
        "    return found\n"
    )
    checker = LeakChecker(code)
    signature = (
        "def scan(self, start: bytes,\n    limit: Optional[int] = None,\n"
        "    reverse: bool = False):"
    )
    assert checker.check(signature, where="statement") == []
    body = checker.check("found = compute_everything(start, limit)", where="statement")
    assert [leak.kind for leak in body] == ["line"]


def test_a_body_line_its_own_signature_holds_is_not_protected():
    # boltons' urlutils.unquote and aiofiles' NamedTemporaryFile beside _temporary_file: the
    # statement shows the signatures, which hold these lines' tokens
    code = (
        "def unquote(string, encoding='utf-8', errors='replace'):\n"
        "    if encoding is None:\n"
        "        encoding = 'utf-8'\n"
        "    bits = _ASCII_RE.split(string)\n"
        "def _temporary_file(\n"
        "    named=True,\n"
        "    mode='w+b',\n"
        "):\n"
        "    return opener(\n"
        "        named=True,\n"
        "        mode=mode,\n"
        "    )\n"
    )
    checker = LeakChecker(code)
    # a keyword argument of a call spread over lines, as a helper's signature the statement
    # shows may hold it (aiofiles' NamedTemporaryFile calls _temporary_file(named=True, ...))
    call = LeakChecker("    return opener(\n        named=True,\n        mode=mode,\n    )\n")
    assert call.check("async def _temporary_file(\n    named=True,\n", where="statement") == []
    statement = (
        "def unquote(string, encoding='utf-8', errors='replace')\n"
        "def _temporary_file(\n    named=True,\n    mode='w+b',\n)"
    )
    assert checker.check(statement, where="statement") == []
    # the body's own lines stay protected
    leaked = checker.check("bits = _ASCII_RE.split(string)", where="statement")
    assert [leak.line for leak in leaked] == ["bits = _ASCII_RE.split(string)"]


def test_a_line_that_only_opens_a_call_is_not_protected_but_its_arguments_are():
    code = (
        "def check(report, meta):\n"
        "    report.problems.append(\n"
        '        f"{meta.label}: sequence {meta.max_seq} beyond the manifest"\n'
        "    )\n"
    )
    checker = LeakChecker(code)
    assert checker.check("report.problems.append(...) ...", where="hint 4") == []
    spread = LeakChecker("    run(\n        self._io.input,\n        self._io.output,\n    )\n")
    assert spread.check("run(self._io.input, self._io.output)", where="hint 4") == []
    leaked = checker.check(
        'f"{meta.label}: sequence {meta.max_seq} beyond the manifest"', where="s"
    )
    assert [leak.kind for leak in leaked] == ["line"]
