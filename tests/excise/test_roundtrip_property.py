"""Every strategy's patches round-trip on the bundled Python seeds, byte for byte.

Hypothesis picks units of sheetcalc, depsolve, kvstore and minisql and a strategy; the breaking
patch then the gold patch, applied with `git apply` in a temporary folder, must give back the
original files. A deterministic loop also covers 100% of the units for `stub_body` and
`remove_function`, applying the patches at string level (no git, no sandbox) and checking that
every edited file still compiles.
"""

from __future__ import annotations

import tempfile
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from taskmint.acquire import acquire
from taskmint.excise.candidate import check_valid
from taskmint.excise.context import ExciseContext, build_context
from taskmint.excise.feature_cluster import stub_units
from taskmint.excise.remove_block import block_removed_from, blocks_of
from taskmint.excise.remove_class import MODES, class_removed_from
from taskmint.excise.remove_function import removed_from
from taskmint.excise.stub_body import stub_body
from taskmint.index import index_seed
from taskmint.patches import apply_patch, unified_diff
from taskmint.records import Unit

SEEDS = Path(__file__).resolve().parents[2] / "seed_apps"
PYTHON_SEEDS = ("sheetcalc", "depsolve", "kvstore", "minisql")


@pytest.fixture(scope="module")
def contexts(tmp_path_factory: pytest.TempPathFactory) -> dict[str, ExciseContext]:
    cache = tmp_path_factory.mktemp("roundtrip-cache")
    out = {}
    for name in PYTHON_SEEDS:
        seed = acquire(SEEDS / name, cache_dir=cache)
        out[name] = build_context(seed, index_seed(seed))
    return out


def _edit(ctx: ExciseContext, strategy: str, unit: Unit, pick: int) -> dict[str, bytes] | None:
    """The new contents for `strategy` applied around `unit`; None when it does not apply."""
    src = ctx.sources[unit.file]
    try:
        if strategy == "stub_body":
            return {unit.file: stub_body(src, unit.qualname)}
        if strategy == "remove_function":
            return {unit.file: removed_from(ctx.located(unit.file), unit.qualname)}
        if strategy == "remove_block":
            blocks = blocks_of(src, unit.qualname)
            if not blocks:
                return None
            name = blocks[pick % len(blocks)].name
            return {unit.file: block_removed_from(ctx.located(unit.file), unit.qualname, name)}
        if strategy == "remove_class":
            cls = unit.qualname.split(".")[0]
            mode = MODES[pick % 2]
            return {unit.file: class_removed_from(ctx.located(unit.file), cls, mode=mode)}
    except LookupError:
        return None  # not a statement of a module/class body, a function, no method...
    raise AssertionError(strategy)


def _roundtrip_git(ctx: ExciseContext, edits: dict[str, bytes]) -> None:
    breaking = "".join(
        unified_diff(f, ctx.sources[f].decode(), edits[f].decode()) for f in sorted(edits)
    )
    gold = "".join(
        unified_diff(f, edits[f].decode(), ctx.sources[f].decode()) for f in sorted(edits)
    )
    with tempfile.TemporaryDirectory() as tmp:
        ws = Path(tmp)
        for rel in edits:
            (ws / rel).parent.mkdir(parents=True, exist_ok=True)
            (ws / rel).write_bytes(ctx.sources[rel])
        apply_patch(ws, breaking)
        for rel, new in edits.items():
            assert (ws / rel).read_bytes() == new
        apply_patch(ws, gold)
        for rel in edits:
            assert (ws / rel).read_bytes() == ctx.sources[rel]


@settings(
    max_examples=40,
    deadline=None,
    derandomize=True,
    suppress_health_check=[HealthCheck.too_slow],
)
@given(data=st.data())
def test_breaking_then_gold_patch_restores_the_original(contexts, data):
    name = data.draw(st.sampled_from(PYTHON_SEEDS))
    ctx = contexts[name]
    strategy = data.draw(
        st.sampled_from(("stub_body", "remove_function", "remove_block", "remove_class"))
    )
    units = [u for u in ctx.index.units if strategy != "remove_class" or u.kind == "method"]
    unit = data.draw(st.sampled_from(units))
    edits = _edit(ctx, strategy, unit, data.draw(st.integers(0, 50)))
    if edits is None:
        return
    assert check_valid(edits[unit.file]) is None
    _roundtrip_git(ctx, edits)


@settings(max_examples=10, deadline=None, derandomize=True)
@given(data=st.data())
def test_cluster_patches_over_several_files_restore_the_original(contexts, data):
    ctx = contexts[data.draw(st.sampled_from(PYTHON_SEEDS))]
    units = data.draw(
        st.lists(st.sampled_from(ctx.index.units), min_size=2, max_size=8, unique_by=_key)
    )
    outer = [
        u
        for u in units
        if not any(
            o is not u and o.file == u.file and o.start_line < u.start_line <= o.end_line
            for o in units
        )
    ]
    edits = stub_units(ctx.sources, outer)
    _roundtrip_git(ctx, edits)


def _key(unit: Unit) -> str:
    return f"{unit.file}::{unit.qualname}"


def apply_text(text: str, patch: str) -> str:
    """Apply a one-file patch made by `unified_diff` to `text`, checking every context line."""
    lines = text.splitlines(keepends=True)
    rows = patch.split("\n")[:-1] if patch.endswith("\n") else patch.split("\n")
    out: list[str] = []
    pos = 0
    i = 0
    while i < len(rows) and not rows[i].startswith("@@"):
        i += 1
    while i < len(rows):
        header = rows[i]
        old_start = int(header.split()[1][1:].split(",")[0])
        old_len = int(header.split()[1].split(",")[1]) if "," in header.split()[1] else 1
        start = old_start - 1 if old_len else old_start
        out += lines[pos:start]
        pos = start
        i += 1
        while i < len(rows) and not rows[i].startswith("@@"):
            row = rows[i]
            no_newline = i + 1 < len(rows) and rows[i + 1].startswith("\\ No newline")
            content = row[1:] + ("" if no_newline else "\n")
            if row[0] in " -":
                assert lines[pos] == content, (pos, lines[pos], content)
                pos += 1
            if row[0] in " +":
                out.append(content)
            i += 2 if no_newline else 1
    out += lines[pos:]
    return "".join(out)


@pytest.mark.parametrize("strategy", ["stub_body", "remove_function"])
def test_every_unit_round_trips_at_string_level(contexts, strategy):
    done = skipped = 0
    for ctx in contexts.values():
        for unit in ctx.index.units:
            edits = _edit(ctx, strategy, unit, 0)
            if edits is None:
                skipped += 1
                continue
            old, new = ctx.sources[unit.file].decode(), edits[unit.file].decode()
            assert check_valid(edits[unit.file]) is None, unit
            breaking = unified_diff(unit.file, old, new)
            assert apply_text(old, breaking) == new
            assert apply_text(new, unified_diff(unit.file, new, old)) == old
            done += 1
    total = sum(len(c.index.units) for c in contexts.values())
    assert done + skipped == total
    if strategy == "stub_body":
        assert skipped == 0
    else:  # only nested and conditional definitions cannot be removed on their own
        assert done >= 0.9 * total, (done, total)
