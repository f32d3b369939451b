"""Exact selection for removed definitions, on a seed built to show every way a removal can be
observed: by name, through a registry filled by a decorator, an operator (dunder), a stdlib base
class calling a method back, and a dynamic `getattr(self, name)` look-up; and names that look
alike but cannot reach the removed definition (a method named like a function or a field)."""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

from taskmint.acquire import acquire
from taskmint.excise import excise
from taskmint.index import index_seed
from taskmint.index.coverage import coverage_map
from taskmint.languages import build_environment
from taskmint.patches import unified_diff
from taskmint.records import Candidate, SeedApp
from taskmint.validate import run_baseline, validate_candidate
from taskmint.validate.removal import select_for_removal
from taskmint.validate.selection import select_tests
from tests.conftest import LIMITS, SEEDS, assert_selection_exact

FILE = "shapes/geometry.py"
BOXES = "shapes/boxes.py"


@pytest.fixture(scope="module")
def removals(cache_dir, sandbox):  # type: ignore[no-untyped-def]
    seed = acquire(SEEDS / "removals", cache_dir=cache_dir)
    env = build_environment(seed.manifest, cache_dir=cache_dir)
    baseline = run_baseline(seed, env, sandbox, runs=3, limits=LIMITS)
    cmap = coverage_map(seed, env, sandbox, limits=LIMITS, cache_dir=cache_dir)
    assert cmap is not None
    return seed, env, baseline, cmap


def removal(
    seed: SeedApp, *qualnames: str, strategy: str = "remove_function", file: str = FILE
) -> Candidate:
    """A candidate that deletes the definitions `qualnames` of `file`."""
    text = (Path(seed.root) / file).read_text()
    lines = text.splitlines(keepends=True)
    tree = ast.parse(text)
    drop: set[int] = set()
    for qualname in qualnames:
        body: list[ast.stmt] = tree.body
        node: ast.stmt | None = None
        for part in qualname.split("."):
            node = next(n for n in body if getattr(n, "name", None) == part)
            body = getattr(node, "body", [])
        assert node is not None and node.end_lineno is not None
        first = min([node.lineno, *(d.lineno for d in getattr(node, "decorator_list", []))])
        drop.update(range(first, node.end_lineno + 1))
    new = "".join(line for i, line in enumerate(lines, 1) if i not in drop)
    return Candidate(
        candidate_id="-".join(qualnames),
        snapshot_id=seed.snapshot_id,
        seed=seed.name,
        language="python",
        strategy=strategy,
        units=tuple(f"{file}::{q}" for q in qualnames),
        files=(file,),
        breaking_patch=unified_diff(file, text, new),
        gold_patch=unified_diff(file, new, text),
        removed_code="".join(line for i, line in enumerate(lines, 1) if i in drop),
    )


def _files(tests: tuple[str, ...] | None) -> set[str] | None:
    return None if tests is None else {t.split("::")[0] for t in tests}


@pytest.mark.parametrize(
    "qualnames",
    [
        ("triangle_area",),  # a decorator registers it at import
        ("Rect.__eq__",),  # operators look dunders up implicitly
        ("ShapeEncoder.default",),  # json's encoder calls it back by a name it does not spell
        (BOXES, "Size.double"),  # total_ordering reads the class's methods at import
        (BOXES, "Label.__str__"),  # a dataclass adds the dunders its class lacks
    ],
)
def test_implicit_look_ups_run_the_full_suite(removals, qualnames):
    seed, _, baseline, cmap = removals
    file, names = (qualnames[0], qualnames[1:]) if qualnames[0] == BOXES else (FILE, qualnames)
    cand = removal(seed, *names, file=file)
    assert select_tests(cand, cmap, baseline.stable_passed, seed) is None


def test_look_alike_names_do_not_widen_the_selection(removals):
    """`Box.volume` is a method: the plain name `volume` (the module's function, called in its
    body and imported by test_volume.py) and the dataclass field `volume` of `Label` (bound at
    import) cannot look it up. Only `.volume` can."""
    seed, _, baseline, cmap = removals
    dynamic = {"tests/test_ledger.py"}  # Ledger.total's getattr(self, name) may reach any name
    cand = removal(seed, "Box.volume", file=BOXES)
    picked = select_tests(cand, cmap, baseline.stable_passed, seed)
    assert _files(picked) == {"tests/test_box.py", *dynamic}
    # the module-level function is looked up by its plain name (test_volume.py, Box.volume's
    # body) and may be as an attribute of its module (test_box.py spells `.volume`)
    func = select_tests(removal(seed, "volume", file=BOXES), cmap, baseline.stable_passed, seed)
    assert _files(func) == {"tests/test_volume.py", "tests/test_box.py", *dynamic}


def test_a_constructor_is_selected_by_the_tests_that_ran_it(removals):
    """Construction calls `__init__` whenever it looks it up, so a test that never ran its body
    cannot notice its removal; `__eq__` beside an explicit `__hash__` likewise."""
    seed, _, baseline, cmap = removals
    cand = removal(seed, "Box.__init__", file=BOXES)
    picked = select_tests(cand, cmap, baseline.stable_passed, seed)
    assert _files(picked) == {"tests/test_box.py", "tests/test_ledger.py"}  # test_ledger: getattr
    # a class whose body is `pass` (run at import like its header) is selected by its uses
    error = removal(seed, "BoxError", strategy="remove_class", file=BOXES)
    picked = select_tests(error, cmap, baseline.stable_passed, seed)
    assert _files(picked) == {"tests/test_box.py", "tests/test_ledger.py"}


def test_a_name_spelled_only_by_its_tests_selects_their_files(removals):
    seed, _, baseline, cmap = removals
    picked = select_for_removal(removal(seed, "square_area"), cmap, seed, baseline.stable_passed)
    # test_areas spells it; Ledger.total runs getattr(), so test_ledger is taken too
    assert _files(picked) == {"tests/test_areas.py", "tests/test_ledger.py"}


def test_a_dynamic_look_up_is_followed(removals):
    seed, _, baseline, cmap = removals
    cand = removal(seed, "Ledger.measure_two", strategy="remove_class")
    assert _files(select_tests(cand, cmap, baseline.stable_passed, seed)) == {
        "tests/test_ledger.py"
    }


def test_selected_and_full_runs_agree(removals, sandbox):
    seed, env, baseline, cmap = removals
    cands = [
        removal(seed, "square_area"),
        removal(seed, "Ledger.measure_two", strategy="remove_class"),
        removal(seed, "Rect.perimeter"),
        removal(seed, "Rect.area", "Rect.perimeter", strategy="remove_class"),
        removal(seed, "Rect", strategy="remove_class"),
        removal(seed, "Box.volume", file=BOXES),
        removal(seed, "volume", file=BOXES),
        removal(seed, "Box.__init__", file=BOXES),
        removal(seed, "Label.shout", file=BOXES),
        removal(seed, "BoxError", strategy="remove_class", file=BOXES),
    ]
    for cand in cands:
        assert_selection_exact(cand, seed, env, baseline, sandbox, cmap, runs=2)
    # the dynamic look-up is what makes this one a task at all
    dyn = validate_candidate(
        cands[1], seed, env, baseline, sandbox, runs=2, limits=LIMITS, coverage=cmap
    )
    assert dyn.fail_to_pass == ("tests/test_ledger.py::test_ledger_total",)


def test_tiny_seed_removals_agree_with_the_full_suite(
    tiny_seed, tiny_env, tiny_baseline, sandbox, cache_dir
):
    cmap = coverage_map(tiny_seed, tiny_env, sandbox, limits=LIMITS, cache_dir=cache_dir)
    cands = excise(
        tiny_seed,
        index_seed(tiny_seed),
        max_candidates=30,
        strategies=("remove_function", "remove_class"),
    ).candidates
    assert cands
    for cand in cands:
        fast = validate_candidate(
            cand, tiny_seed, tiny_env, tiny_baseline, sandbox, runs=1, limits=LIMITS, coverage=cmap
        )
        full = validate_candidate(
            cand, tiny_seed, tiny_env, tiny_baseline, sandbox, runs=1, limits=LIMITS
        )
        assert (fast.status, fast.fail_to_pass, fast.pass_to_pass) == (
            full.status,
            full.fail_to_pass,
            full.pass_to_pass,
        ), cand.units


def test_occurrences_tell_look_ups_from_bindings(tmp_path: Path) -> None:
    from taskmint.validate.lookups import occurrences as _occurrences

    src = tmp_path / "mod.py"
    src.write_text(
        '"""A docstring naming area."""\n'  # 1
        "from pkg.shapes import area as a2\n"  # 2: an import looks `area` up in pkg.shapes
        "area = 3\n"  # 3: binds only
        "class Box:\n"  # 4
        "    area: float = 0.0\n"  # 5: a field: binds only
        "    alias = size\n"  # 6: a plain name in a class body
        "def f(area, *, size=area):\n"  # 7: the default is a look-up, the parameter is not
        "    return (obj\n"  # 8
        "            .area, getattr(obj, 'size'))\n"  # 9: attribute, string
        "match obj:\n"  # 10
        "    case Box(area=0): pass\n"  # 11: a class pattern looks the attribute up
    )
    occ = _occurrences(str(src))
    assert occ is not None
    var, attr = occ.variable, occ.attribute
    assert 1 not in var and 1 not in attr
    assert "area" in var[2]
    assert "area" not in var.get(3, set()) and "area" not in var.get(5, set())
    assert "size" in var[6]
    assert var[7] >= {"area"} and "f" not in var[7]
    # a multi-line statement counts on its first line and on the attribute's own line
    assert "area" in attr[8] and "area" in attr[9] and "size" in attr[9]
    assert "area" in attr[11]


def test_dynamic_look_ups_are_read_from_the_syntax_tree(tmp_path: Path) -> None:
    from taskmint.validate.lookups import occurrences as _occurrences

    src = tmp_path / "mod.py"
    src.write_text(
        "import inspect\n"  # 1: importing is no look-up
        "from pickle import loads as undump\n"  # 2: binds a dynamic name, looks nothing up
        "def f(x, locals=None):\n"  # 3: a parameter named locals
        "    return g(locals=[x])\n"  # 4: a keyword argument named locals
        "def h(obj):\n"  # 5
        "    return inspect.getmembers(obj)\n"  # 6: dynamic
        "def k(data):\n"  # 7
        "    return undump(data)\n"  # 8: dynamic, through the imported name
        "class C(metaclass=Meta):\n"  # 9: dynamic
        "    msg = 'use getattr'\n"  # 10: a string is no call
        "y = obj.__dict__\n"  # 11: dynamic
        "class U:\n"  # 12
        "    def __getattr__(self, name):\n"  # 13: binds the name
        "        return 1\n"  # 14
        "    __getitem__ = __getattr__\n"  # 15: an alias of the method looks nothing up
        "    def up(self, name):\n"  # 16
        "        return super().__getattr__(name)\n"  # 17: dynamic, a computed name
        "mod = __import__(name)\n"  # 18: dynamic, the builtin by its plain name
        "a = hasattr(obj, 'area') or getattr(obj, 'size', None)\n"  # 19: names spelled
        "b = getattr(obj, name)\n"  # 20: dynamic, a computed name
        "c = operator.attrgetter('box.volume', key)\n"  # 21: dynamic, one name computed
        "d = operator.methodcaller('grow', 2)\n"  # 22: the name spelled, an argument
    )
    occ = _occurrences(str(src))
    assert occ is not None
    assert sorted(occ.dynamic) == [6, 8, 9, 11, 17, 18, 20, 21]
    # a look-up by a spelled name still counts as a mention of that name (case 2)
    assert {"area", "size"} <= occ.attribute[19] and "grow" in occ.attribute[22]


def test_a_file_that_does_not_parse_falls_back_to_the_spelling(tmp_path: Path) -> None:
    from taskmint.validate.lookups import Mentions as _Mentions
    from taskmint.validate.lookups import dynamic_line as _dynamic_line

    (tmp_path / "bad.py").write_text("def broken(:\n    return area\nx = getattr(y, z)\n")
    mentions = _Mentions(tmp_path, set(), {"area": [("other.py", 1, 9)]})
    assert mentions.line("bad.py", 2) and not mentions.line("bad.py", 3)
    assert _dynamic_line(tmp_path, "bad.py", 3) and not _dynamic_line(tmp_path, "bad.py", 2)
