"""Template statements and hints."""

from __future__ import annotations

from taskmint.describe import describe


def test_statement_names_signature_docstring_tests_and_rules(published_tasks):
    task = next(
        t
        for t in published_tasks
        if t.units[0].endswith("::top_words") and t.strategy == "stub_body"
    )
    text = task.problem_statement
    assert "`top_words`" in text and "`tinylib/text.py`" in text
    assert "def top_words(text, n)" in text
    assert "The `n` most frequent words, ties broken alphabetically." in text
    assert "tests/test_text.py::test_top_words_breaks_ties_alphabetically" in text
    assert "Do not edit" in text
    assert len(task.hints) >= 3


def test_no_removed_line_is_in_the_statement_or_the_first_hints(published_tasks):
    for task in published_tasks:
        removed = [x.strip() for x in task.removed_code.splitlines() if len(x.strip()) > 12]
        for text in (task.problem_statement, *task.hints):
            for line in removed:
                assert line not in text, (task.instance_id, line)


def test_describe_is_deterministic(tiny_seed, published_tasks):
    from taskmint.excise import excise
    from taskmint.index import index_seed
    from taskmint.records import Verdict

    cand = excise(tiny_seed, index_seed(tiny_seed), max_candidates=1).candidates[0]
    verdict = Verdict(
        candidate_id=cand.candidate_id,
        status="accepted",
        reason="",
        fail_to_pass=("tests/a.py::t",),
    )
    assert describe(cand, verdict, ("tinylib",)) == describe(cand, verdict, ("tinylib",))


def test_each_strategy_gets_its_own_wording(published_tasks):
    openings = {
        "stub_body": "has lost its implementation",
        "remove_function": "has been removed from",
        "remove_class": "has been removed from",
        "remove_block": "one block of its body",
    }
    seen = set()
    for task in published_tasks:
        if task.strategy in openings:
            assert openings[task.strategy] in task.problem_statement, task.instance_id
            seen.add(task.strategy)
    assert {"stub_body", "remove_function", "remove_block"} <= seen
