"""Which tests can change outcome under a candidate's edit, per strategy.

Selection must be exact: a test left out is recorded as PASS_TO_PASS without being run, so it
must be impossible for the edit to change its outcome. Where that cannot be shown, the answer
is None and the full suite runs.
"""

from __future__ import annotations

from collections.abc import Callable

from taskmint.index.coverage import CoverageMap
from taskmint.languages import profile_for_seed
from taskmint.records import Candidate, SeedApp
from taskmint.validate.loaded import select_by_loaded
from taskmint.validate.removal import REMOVAL, select_for_removal

__all__ = ["BODY_LEVEL", "select_tests"]

# a profile's `engine` -> the exact selection for an edit that removes definitions, read from
# the seed's sources (an engine without one runs the full suite for such edits)
_REMOVALS: dict[
    str,
    Callable[[Candidate, CoverageMap, SeedApp, tuple[str, ...] | None], tuple[str, ...] | None],
] = {"libcst": select_for_removal}

# Strategies whose edits stay inside function bodies: the definitions, names and imports are
# untouched. Removing a definition (remove_function, remove_class) changes imports, attribute
# look-ups, hasattr and dir(): `validate.removal` selects for those.
BODY_LEVEL = frozenset({"stub_body", "remove_block", "feature_cluster"})


def select_tests(
    candidate: Candidate,
    cmap: CoverageMap | None,
    universe: tuple[str, ...] | None = None,
    seed: SeedApp | None = None,
) -> tuple[str, ...] | None:
    """The tests to run on the broken tree, or None for the full suite.

    `universe` is every test id that may be chosen (the seed's stable tests): a body that ran
    while a test file was being collected puts all of that file's tests at risk.

    `stub_body`: only the body's statements change; the `def` line, decorators, signature and
    docstring are untouched, so the function still exists, imports and binds the same way. The
    body's statements run only when the function is called, and a call executes the body's
    first statement, so a test whose run phase never executed a line of the body on the
    original cannot observe its removal. A function-scoped fixture belongs to its one test. A
    body that ran while a test file was collected (parametrize arguments, module-level calls
    in the test file) or in a module- or class-scoped fixture can break any test of that file:
    all of them run. A body that ran while the seed's own modules were imported, in a session
    fixture or in a teardown (which may leave state behind for later tests) could affect any
    test: full suite.

    `remove_block`: the spans are the removed lines; reaching an if/elif arm runs its test
    line, a taken else or handler runs its first statement, a loop runs its header, so a test
    that ran none of them cannot see the removal (a removal that changes which names are local
    to the function widens the span to the whole body). `feature_cluster`: several stubbed
    bodies, the union of their tests.

    Code that a test runs in another process (a CLI test running the seed in a subprocess)
    is in the coverage map only when that process measured itself: a Python child started with
    `subprocess` runs `subcov/sitecustomize.py`, which records its lines in the context of the
    test phase that started it, and it counts as measured only if it and everything it started
    in turn left a record (`taskmint_pytest_report.record_spawns`). Every test that started a
    process that was not measured (`CoverageMap.spawned`: a shell, a program that is not
    Python, a child that exited without reporting, fork, exec) is in every selection, and such
    a process started outside any one test means the full suite.

    `remove_function`, `remove_class` (given the seed, whose sources it reads): see
    `taskmint.validate.removal`, which reads Python's syntax trees (the libcst engine's
    seeds); for another engine's, the full suite.

    A runner with a process per test file (node), for an edit that is not body-level (a
    removed function, method or class, given the seed): the test files whose process loaded a
    changed file; see `taskmint.validate.loaded`.
    """
    if cmap is None:
        return None
    spawned = cmap.always_run(universe)
    if spawned is None:
        return None
    picked: set[str] = set(spawned)
    body_level = candidate.strategy in BODY_LEVEL and bool(candidate.spans)
    if seed is not None and cmap.process_per_file and not body_level:
        loaded = select_by_loaded(candidate, cmap, seed, universe)
        return None if loaded is None else tuple(sorted(picked.union(loaded)))
    if seed is not None and candidate.strategy in REMOVAL:
        select = _REMOVALS.get(profile_for_seed(seed).engine)
        removal = None if select is None else select(candidate, cmap, seed, universe)
        return None if removal is None else tuple(sorted(picked.union(removal)))
    if not body_level:
        return None
    for file, first, last in candidate.spans:
        tests = cmap.tests_touching(file, first, last, universe)
        if tests is None:
            return None
        picked.update(tests)
    return tuple(sorted(picked))
