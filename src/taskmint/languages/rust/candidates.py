"""Candidates for a Rust seed: the counterpart of `excise.treesitter_candidates`.

`rust_candidates` plans every target of each strategy of `languages.rust.excise` (see there
for what each edit is), orders them deterministically, fills each strategy's share of
`max_candidates`, a unit going to one candidate at most, and turns each plan into a
`Candidate` with both diffs, the removed lines, the spans and the static `Features`.
Strategy `feature` is planned here: a unit, what only it calls, and, when that stays in one
file, the units of other files that call it.
"""

from __future__ import annotations

import random
import re
from collections import Counter
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass

from taskmint.config import FeatureSize
from taskmint.languages.rust.crates import Crate
from taskmint.languages.rust.excise import (
    Plan,
    RustSeed,
    Target,
    apply_edits,
    count_in,
    deletable,
    excisable,
    impl_of,
    impls,
    plan_edits,
)
from taskmint.languages.rust.tree import RustSourceError, signature_text
from taskmint.patches import unified_diff
from taskmint.records import Candidate, Features, SeedApp, SkippedFile, Strategy, Unit, stable_id

__all__ = ["STRATEGIES", "STUB_SHARE", "rust_candidates"]

STRATEGIES: tuple[Strategy, ...] = (
    "stub_body",
    "remove_function",
    "remove_method",
    "remove_class",
    "feature",
)
# The share of candidates `stub_body` gets; the other strategies split the rest evenly.
STUB_SHARE = 0.6


def _span(data: bytes, start: int, end: int) -> tuple[int, int]:
    first = data.count(b"\n", 0, start) + 1
    last = data.count(b"\n", 0, max(end - 1, start)) + 1
    return first, last


def _removed_lines(breaking: str) -> str:
    return "".join(
        line[1:] + "\n"
        for line in breaking.splitlines()
        if line.startswith("-") and not line.startswith("---")
    )


@dataclass(frozen=True, slots=True)
class _Pick:
    """One target of one strategy: the unit keys it uses up, and how to plan it."""

    strategy: Strategy
    crate: str
    key: str  # "path::qualname", "path::impl X for Y"
    targets: tuple[tuple[str, str], ...]  # (file, qualname) stubbed first


def _candidate(
    rs: RustSeed,
    pick: _Pick,
    plan: Plan,
    by_key: Mapping[tuple[str, str], Unit],
    feature_size: FeatureSize | None,
) -> Candidate | str:
    seed = rs.seed
    files = tuple(sorted(plan.edits))
    breaking_parts: list[str] = []
    gold_parts: list[str] = []
    spans: list[tuple[str, int, int]] = []
    for rel in files:
        data = rs.sources[rel]
        try:
            new = apply_edits(data, plan.edits[rel])
            old_text, new_text = data.decode("utf-8"), new.decode("utf-8")
        except (LookupError, UnicodeDecodeError) as exc:
            return str(exc)
        breaking_parts.append(unified_diff(rel, old_text, new_text))
        gold_parts.append(unified_diff(rel, new_text, old_text))
        for s, e, _ in sorted(plan.edits[rel]):
            spans.append((rel, *_span(data, s, e)))
    breaking = "".join(breaking_parts)
    removed = _removed_lines(breaking)
    touched = [*plan.stubbed, *plan.deleted]
    main = pick.targets[0]
    touched.sort(key=lambda t: (t.rel, t.d.qualname) != main)  # the picked unit first
    units = [by_key.get((t.rel, t.d.qualname)) for t in touched]
    names = [f"{t.rel}::{t.d.qualname}" for t in touched]
    if pick.strategy == "remove_class":
        names = [pick.key, *names]
    first = touched[0]
    crate = rs.crates[pick.crate]
    counts = rs.counts(crate)
    if pick.strategy == "remove_class":
        signature = "\n".join(
            [
                pick.key.split("::", 1)[1],
                *("    " + signature_text(rs.sources[t.rel], t.d) for t in plan.stubbed),
            ]
        )
    else:
        signature = signature_text(rs.sources[first.rel], first.d)
    docstring = first.d.docstring
    features = Features(
        lines_removed=removed.count("\n"),
        units=len(touched),
        files=len(files),
        complexity=sum(u.complexity for u in units if u is not None) or 1,
        callers=max(counts.get(first.d.name.encode(), 1) - 1, 0),
        has_docstring=any(t.d.docstring for t in touched),
    )
    if pick.strategy == "feature":
        size = feature_size or FeatureSize()
        if not size.admits(features.lines_removed, features.units, features.files):
            return (
                f"feature of {features.lines_removed} lines, {features.units} units, "
                f"{features.files} files is outside the size bounds"
            )
    return Candidate(
        candidate_id=stable_id(seed.snapshot_id, pick.strategy, pick.key),
        snapshot_id=seed.snapshot_id,
        seed=seed.name,
        language="rust",
        strategy=pick.strategy,
        units=tuple(names),
        files=files,
        breaking_patch=breaking,
        gold_patch="".join(gold_parts),
        removed_code=removed,
        signature=signature,
        docstring=docstring,
        features=features,
        spans=tuple(spans),
    )


def _closure(
    rs: RustSeed, crate: Crate, roots: Sequence[Target], pool: Sequence[Target]
) -> list[Target]:
    """`roots` and, transitively, every unit of `pool` whose name occurs only inside the
    bodies of the units already taken (and its own definition): what only they call."""
    counts = rs.counts(crate)
    taken = list(roots)
    inside: Counter[bytes] = Counter()
    bodies: dict[str, list[tuple[int, int]]] = {}

    def add(t: Target) -> None:
        body = t.d.body
        assert body is not None
        bodies.setdefault(t.rel, []).append((body.start_byte, body.end_byte))

    for root in roots:
        add(root)
    changed = True
    while changed:
        changed = False
        inside = Counter()
        for rel, ranges in bodies.items():
            inside += count_in(rs.sources[rel], ranges)
        have = {(t.rel, t.d.qualname) for t in taken}
        for t in pool:
            if (t.rel, t.d.qualname) in have:
                continue
            holder = impl_of(t.d)
            if holder is not None and holder.child_by_field_name("trait") is not None:
                continue  # called through the trait, not by name
            name = t.d.name.encode()
            if inside[name] == 0:
                continue
            own = count_in(rs.sources[t.rel], [(t.d.node.start_byte, t.d.node.end_byte)])
            if counts[name] - inside[name] - own[name] > 0:
                continue
            if any(
                s <= t.d.node.start_byte and t.d.node.end_byte <= e
                for s, e in bodies.get(t.rel, [])
            ):
                continue
            taken.append(t)
            add(t)
            changed = True
    return taken


def _body_ranges(t: Target) -> tuple[int, int]:
    body = t.d.body
    assert body is not None
    return body.start_byte, body.end_byte


def _only_callers(
    rs: RustSeed, crate: Crate, target: Target, pool: Sequence[Target], limit: int = 2
) -> list[Target]:
    """The units whose bodies hold every use of private `target` (at most `limit` of them,
    none of them inside it), or [] when it is not private or is named anywhere else."""
    data = rs.sources[target.rel]
    if not deletable(data, target.d):
        return []
    name = target.d.name.encode()
    counts = rs.counts(crate)
    own = count_in(data, [(target.d.node.start_byte, target.d.node.end_byte)])[name]
    callers: list[Target] = []
    found = 0
    for t in pool:
        if t.rel == target.rel and t.d.qualname == target.d.qualname:
            continue
        n = rs.body_counts(t.rel, t.d)[name]
        if n:
            inner = t.rel == target.rel and (
                t.d.node.start_byte >= target.d.node.start_byte
                and t.d.node.end_byte <= target.d.node.end_byte
            )
            outer = t.rel == target.rel and (
                t.d.node.start_byte <= target.d.node.start_byte
                and target.d.node.end_byte <= t.d.node.end_byte
            )
            if inner or outer:
                return []  # nested functions: the plain form handles them
            callers.append(t)
            found += n
    if not callers or len(callers) > limit or found + own != counts[name]:
        return []
    return callers


# A name this frequent in the crate is too common to tell who calls what.
_SPECIFIC = 6


def _feature(rs: RustSeed, crate: Crate, root: Target, pool: Sequence[Target]) -> list[Target]:
    """`root`, what only it calls (transitively), and, when that stays in one file, at most
    two units of other files that call one of them: by a name specific enough (at most
    `_SPECIFIC` occurrences in the crate) or by its path (`Version::parse`, `Self::` does not
    count), with what only they call."""
    taken = _closure(rs, crate, [root], pool)
    if len({t.rel for t in taken}) >= 2:
        return taken
    counts = rs.counts(crate)
    names = {t.d.name.encode() for t in taken if counts[t.d.name.encode()] <= _SPECIFIC}
    paths = [
        re.compile(
            rb"\b" + re.escape(t.d.qualname.split("#")[0].replace(".", "::").encode()) + rb"\b"
        )
        for t in taken
        if "." in t.d.qualname
    ]
    have = {(t.rel, t.d.qualname) for t in taken}
    callers: list[Target] = []
    for t in pool:
        if t.rel == root.rel or (t.rel, t.d.qualname) in have:
            continue
        start, end = _body_ranges(t)
        body = rs.body_counts(t.rel, t.d)
        text = rs.sources[t.rel][start:end]
        if any(body[n] for n in names) or any(p.search(text) for p in paths):
            callers.append(t)
        if len(callers) == 2:
            break
    if not callers:
        return taken
    return _closure(rs, crate, [root, *callers], pool)


def _quotas(n: int, strategies: Sequence[Strategy]) -> dict[Strategy, int]:
    quotas: dict[Strategy, int] = dict.fromkeys(strategies, 0)
    others = [s for s in strategies if s != "stub_body"]
    rest = n
    if "stub_body" in strategies:
        quotas["stub_body"] = n if not others else round(n * STUB_SHARE)
        rest = n - quotas["stub_body"]
    for i, name in enumerate(others):
        quotas[name] = rest // len(others) + (1 if i < rest % len(others) else 0)
    return quotas


def rust_candidates(
    seed: SeedApp,
    units: Iterable[Unit],
    *,
    max_candidates: int,
    random_seed: int = 0,
    min_body_lines: int = 2,
    strategies: Sequence[Strategy] = STRATEGIES,
    feature_size: FeatureSize | None = None,
) -> tuple[list[Candidate], list[SkippedFile]]:
    """Candidates for a Rust seed, plus the targets left out and why.

    The counterpart of `excise.treesitter_candidates.treesitter_candidates`: about 60%
    `stub_body`, the rest split evenly between the other `strategies`; a strategy that runs
    out of targets leaves its share to the others. The strategies choose in reverse order
    (`feature` first, `stub_body` last), so the scarce targets are not used up by stubs.
    Targets are sorted by candidate id and shuffled with
    `random.Random(f"{random_seed}:{snapshot_id}")`; a unit is used by one candidate at most.
    `feature_size` bounds `feature` (default `FeatureSize()`). Never raises for a bad target.
    """
    for s in strategies:
        if s not in STRATEGIES:
            raise ValueError(f"unknown Rust strategy {s!r}; choose from {', '.join(STRATEGIES)}")
    rs = RustSeed.of(seed)
    kept, skipped = excisable(rs, units)
    skipped = [*rs.skipped, *skipped]
    by_key = {(u.file, u.qualname): u for u in kept}
    big = [u for u in kept if u.body_lines >= min_body_lines]
    plans: dict[Strategy, list[_Pick]] = {s: [] for s in strategies}

    def crate_key(rel: str) -> str | None:
        c = rs.crate(rel)
        return None if c is None else c.root

    for u in big:
        home = crate_key(u.file)
        if home is None:
            continue
        one = ((u.file, u.qualname),)
        key = f"{u.file}::{u.qualname}"
        if "stub_body" in plans:
            plans["stub_body"].append(_Pick("stub_body", home, key, one))
        if u.kind == "function" and "remove_function" in plans:
            plans["remove_function"].append(_Pick("remove_function", home, key, one))
        if u.kind == "method" and "remove_method" in plans:
            plans["remove_method"].append(_Pick("remove_method", home, key, one))
        if "feature" in plans:
            plans["feature"].append(_Pick("feature", home, key, one))
    if "remove_class" in plans:
        for rel in sorted({u.file for u in kept}):
            home = crate_key(rel)
            try:
                defs = rs.defs(rel)
            except RustSourceError:
                continue
            for block in impls(rs.sources[rel], defs):
                members = tuple(
                    (rel, d.qualname) for d in block.methods if (rel, d.qualname) in by_key
                )
                lines = sum(by_key[m].body_lines for m in members)
                if home is not None and len(members) >= 2 and lines >= min_body_lines:
                    plans["remove_class"].append(
                        _Pick("remove_class", home, f"{rel}::{block.name}", members)
                    )
    rng = random.Random(f"{random_seed}:{seed.snapshot_id}")
    for s in strategies:
        ids = {p.key: stable_id(seed.snapshot_id, s, p.key) for p in plans[s]}
        plans[s].sort(key=lambda p: ids[p.key])
        rng.shuffle(plans[s])
    quotas = _quotas(max_candidates, strategies)
    cursor = dict.fromkeys(strategies, 0)
    used: set[tuple[str, str]] = set()
    picked: dict[Strategy, list[Candidate]] = {s: [] for s in strategies}
    pool_cache: dict[str, list[Target]] = {}

    def pool(home: str) -> list[Target]:
        if home not in pool_cache:
            out: list[Target] = []
            for u in kept:
                if crate_key(u.file) != home:
                    continue
                d = next((x for x in rs.defs(u.file) if x.qualname == u.qualname), None)
                if d is not None:
                    out.append(Target(u.file, d))
            pool_cache[home] = out
        return pool_cache[home]

    def make(pick: _Pick) -> Candidate | str:
        crate = rs.crates[pick.crate]
        try:
            targets = [
                Target(rel, next(d for d in rs.defs(rel) if d.qualname == q))
                for rel, q in pick.targets
            ]
        except (StopIteration, RustSourceError) as exc:
            return f"cannot locate: {exc}"
        drop_docs = pick.strategy != "stub_body"
        if pick.strategy == "feature":
            targets = _feature(rs, crate, targets[0], pool(pick.crate))
            if len({t.rel for t in targets}) < 2:
                return "what only it calls, and what calls it, lies in one file"
        elif pick.strategy in ("remove_function", "remove_method"):
            callers = _only_callers(rs, crate, targets[0], pool(pick.crate))
            if callers:  # a private function goes whole; its callers' bodies are stubbed
                plan = plan_edits(rs, crate, callers, drop_docs=False, helpers=True)
                main = (targets[0].rel, targets[0].d.qualname)
                if isinstance(plan, Plan) and main in {(t.rel, t.d.qualname) for t in plan.deleted}:
                    return _finish(pick, plan)
        plan = plan_edits(
            rs,
            crate,
            targets,
            drop_docs=drop_docs,
            helpers=pick.strategy != "stub_body",
        )
        if isinstance(plan, str):
            return plan
        if pick.strategy in ("remove_function", "remove_method"):
            only_stub = not plan.deleted and all(len(v) == 1 for v in plan.edits.values())
            if only_stub:
                return "no doc comment or helper to remove beyond stub_body"
        return _finish(pick, plan)

    def _finish(pick: _Pick, plan: Plan) -> Candidate | str:
        touched = {(t.rel, t.d.qualname) for t in (*plan.stubbed, *plan.deleted)}
        if touched & used:
            return "a unit another candidate already uses"
        return _candidate(rs, pick, plan, by_key, feature_size)

    def fill(strategy: Strategy, limit: int) -> None:
        chosen = plans[strategy]
        while len(picked[strategy]) < limit and cursor[strategy] < len(chosen):
            pick = chosen[cursor[strategy]]
            cursor[strategy] += 1
            if any(t in used for t in pick.targets):
                continue
            made = make(pick)
            if isinstance(made, str):
                skipped.append(SkippedFile(path=pick.key, reason=f"{strategy}: {made}"))
                continue
            picked[strategy].append(made)
            used.update(tuple(u.split("::", 1)) for u in made.units if "::" in u)  # type: ignore[misc]

    # the strategies with the fewest targets first: `stub_body` can use any unit left
    for s in reversed(strategies):
        fill(s, quotas[s])
    for s in strategies:
        missing = max_candidates - sum(len(v) for v in picked.values())
        if missing <= 0:
            break
        fill(s, len(picked[s]) + missing)
    return [c for s in strategies for c in picked[s]], skipped
