"""The test-strength gate: mutants of a task's gold code, graded with the task's graded tests.

Each mutant (`taskmint.strength.mutants`) becomes a `Candidate` over the ORIGINAL tree: its
breaking patch turns the original file into the mutant, its span is the mutated statement's
lines, and its strategy is `stub_body`, whose selection contract is exactly what a mutant
keeps (every mutated line is inside a function body; the `def` lines, decorators, signatures,
class and module bodies are untouched: see `validate.selection`). `validate_batch` grades them
all at once, one run each: forked from one collection of the original where the code swap
allows (`validate.forked`), on the tests of the coverage map that executed the mutated lines.

A mutant is killed when one of the task's graded tests (FAIL_TO_PASS and PASS_TO_PASS, hidden
ones included) does not pass on it, or when its run times out; it survives when every one of
them passes (a test that never executes the mutated lines passes by construction). A mutant
whose run could not be made (a sandbox error) is not graded. The mutation score is killed /
graded.
"""

from __future__ import annotations

import dataclasses
import math
import time
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Literal

from taskmint.config import Limits
from taskmint.errors import SandboxError
from taskmint.index.coverage import CoverageMap
from taskmint.languages import adapter_for, profile_for_file, syntax_for_file
from taskmint.patches import unified_diff
from taskmint.records import Candidate, Environment, Language, SeedApp, Verdict, stable_id
from taskmint.sandbox.base import Sandbox
from taskmint.strength.mutants import Mutant, gold_lines, mutants_of, sample_mutants
from taskmint.validate import Baseline, validate_batch
from taskmint.validate.selection import select_tests

__all__ = [
    "GENERATOR_VERSION",
    "GateItem",
    "MutantResult",
    "Strength",
    "gate_mutants",
    "grade_mutants",
    "measure_strength",
    "mutant_candidate",
    "mutant_result",
    "mutant_wall",
    "weak_reason",
]

# Part of the keys of stored gate results and minted tasks: a new value when the mutants a
# task gets change, so stored results are measured again.
GENERATOR_VERSION = "2"  # 2: no equivalent swaps of symmetric calls, no compiler-equivalent mutants
_NOT_GRADED = frozenset({"sandbox_error", "excise_failed", "internal_error", "original_failed"})
_SHOWN_SURVIVORS = 5  # surviving mutants a `weak_tests` reason names
# A mutant's run may take `_SLACK` seconds plus `_FACTOR` times what its selected tests took on
# the original (plus `_PER_FILE` per test file for a runner with a process per file), rounded up
# to a half power of two: a mutant slower than that counts as killed by a timeout.
_SLACK = 2.0
_FACTOR = 3.0
_PER_FILE = 0.5


@dataclass(frozen=True, slots=True, kw_only=True)
class GateItem:
    """A task to gate: an id (seeds the choice of mutants), its gold patch (broken ->
    original: where the gold code is) and its graded tests."""

    key: str
    gold_patch: str
    graded: tuple[str, ...]


@dataclass(frozen=True, slots=True, kw_only=True)
class MutantResult:
    """What one mutant did: `killed` (`detail`: the first graded test that did not pass, or
    `timeout`), `survived`, or `not_graded` (`detail`: why)."""

    description: str
    operator: str
    status: Literal["killed", "survived", "not_graded"]
    detail: str = ""
    wall_time: float = 0.0
    key: str = ""  # the mutant's `Mutant.key`


@dataclass(frozen=True, slots=True, kw_only=True)
class Strength:
    """The gate's measurement of one task."""

    results: tuple[MutantResult, ...] = ()
    generated: int = 0  # mutants the gold code has, before sampling
    wall_time: float = 0.0  # its mutants' runs (a shared collection is split between them)
    error: str = ""  # no mutant could be graded: why (the measurement is to be made again)
    notes: tuple[str, ...] = field(default=())

    @property
    def graded(self) -> int:
        """Mutants that were killed or survived."""
        return sum(r.status != "not_graded" for r in self.results)

    @property
    def killed(self) -> int:
        """Mutants some graded test does not pass on."""
        return sum(r.status == "killed" for r in self.results)

    @property
    def score(self) -> float | None:
        """killed / graded (None when nothing was graded)."""
        return round(self.killed / self.graded, 4) if self.graded else None

    @property
    def survivors(self) -> tuple[MutantResult, ...]:
        """The mutants every graded test passes on."""
        return tuple(r for r in self.results if r.status == "survived")


def _language(path: str, seed: SeedApp) -> Language:
    """The language of a mutated file: its profile's, else its tree-sitter syntax's (a
    TypeScript file of a JavaScript seed), else the seed's."""
    found = profile_for_file(path)
    if found is not None:
        return found.name
    syntax = syntax_for_file(path)
    return syntax.name if syntax is not None else seed.manifest.language


def gate_mutants(item: GateItem, seed: SeedApp, n: int) -> list[Mutant]:
    """The (at most `n`) mutants of the item's gold code, the same for the same item."""
    found: list[Mutant] = []
    for rel, lines in sorted(gold_lines(item.gold_patch).items()):
        path = Path(seed.root, rel)
        try:
            data = path.read_bytes()
        except OSError:
            continue  # a file the gold patch deletes from the original: nothing to mutate
        found.extend(mutants_of(rel, data, lines))
    return sample_mutants(found, n, item.key)


def mutant_candidate(mutant: Mutant, seed: SeedApp) -> Candidate:
    """The mutant as a candidate over the original tree (see the module docstring)."""
    data = Path(seed.root, mutant.file).read_bytes()
    old = data.decode("utf-8", "surrogateescape")
    new = mutant.apply(data).decode("utf-8", "surrogateescape")
    unit = f"{mutant.file}::{mutant.unit or mutant.line}"
    return Candidate(
        candidate_id=stable_id("mutant", seed.snapshot_id, mutant.key),
        snapshot_id=seed.snapshot_id,
        seed=seed.name,
        language=_language(mutant.file, seed),
        strategy="stub_body",
        units=(unit,),
        files=(mutant.file,),
        breaking_patch=unified_diff(mutant.file, old, new),
        gold_patch=unified_diff(mutant.file, new, old),
        removed_code=mutant.description,
        spans=((mutant.file, mutant.first, mutant.last),),
    )


def mutant_result(mutant: Mutant, verdict: Verdict, graded: set[str]) -> MutantResult:
    """What the mutant's verdict means for a task whose graded tests are `graded`."""
    common = {
        "description": mutant.description,
        "operator": mutant.operator,
        "wall_time": verdict.wall_time,
        "key": mutant.key,
    }
    if verdict.status in _NOT_GRADED:
        reason = f"{verdict.status}: {verdict.reason}"[:300]
        return MutantResult(status="not_graded", detail=reason, **common)  # type: ignore[arg-type]
    if verdict.status == "timeout":
        return MutantResult(status="killed", detail="timeout", **common)  # type: ignore[arg-type]
    failing = [t for t in (*verdict.fail_to_pass, *verdict.dropped_tests) if t in graded]
    if failing:
        return MutantResult(status="killed", detail=failing[0], **common)  # type: ignore[arg-type]
    return MutantResult(status="survived", **common)  # type: ignore[arg-type]


def mutant_wall(
    cand: Candidate, seed: SeedApp, baseline: Baseline, coverage: CoverageMap | None
) -> float | None:
    """The longest a mutant's run may take (None: validation's own limit, for a mutant whose
    selection or its tests' durations are not known): `_SLACK` + `_FACTOR` x its selected
    tests' time on the original, rounded up to a half power of two.

    Validation's limit for a run of a selection is 4x the original suite's wall time times the
    selection's share plus 3 s, made for a removal whose breakage may hang; most mutants that
    run long hang (a dropped increment in a loop), and at validation's limit they cost more
    than all the other mutants together (the benchmark's `timeout` line). A slower mutant counts
    as killed, which can only raise a score: never a `weak_tests` rejection."""
    if coverage is None:
        return None
    selected = select_tests(cand, coverage, baseline.stable_passed, seed)
    known = dict(baseline.durations)
    if selected is None or not known or any(t not in known for t in selected):
        return None
    files = {t.split("::", 1)[0] for t in selected}
    chosen = set(selected)
    if adapter_for(seed.manifest).selects_whole_files:
        chosen = {t for t in known if t.split("::", 1)[0] in files}
        extra = _PER_FILE * len(files)
    else:
        extra = 0.0
    wall = _SLACK + extra + _FACTOR * sum(known[t] for t in chosen)
    return float(2 ** (math.ceil(2 * math.log2(wall)) / 2))


def grade_mutants(
    mutants: Sequence[Mutant],
    seed: SeedApp,
    env: Environment,
    baseline: Baseline,
    sandbox: Sandbox,
    *,
    limits: Limits,
    coverage: CoverageMap | None,
    workers: int = 1,
    graded: Mapping[str, frozenset[str]] | None = None,
) -> dict[str, Verdict]:
    """Mutant key -> its verdict from one run of `validate_batch` (mutants with the same key
    are graded once). Without a coverage map, `graded` (mutant key -> the graded tests of the
    tasks it is a mutant of) bounds what each mutant's run runs: nothing else decides whether
    it is killed, and a compiled language then builds only the test targets holding them."""
    unique: dict[str, Mutant] = {}
    for m in mutants:
        unique.setdefault(m.key, m)
    # One batch per run limit (`mutant_wall`): the limit is the seed's manifest timeout, which
    # validation's own limit never exceeds; and per bound on the tests, when there is one.
    tiers: dict[tuple[float, frozenset[str] | None], list[tuple[str, Candidate]]] = {}
    for key, m in unique.items():
        cand = mutant_candidate(m, seed)
        wall = mutant_wall(cand, seed, baseline, coverage)
        cap = seed.manifest.timeout if wall is None else min(wall, seed.manifest.timeout)
        within = graded.get(key) if graded is not None and coverage is None else None
        tiers.setdefault((cap, within), []).append((key, cand))
    out: dict[str, Verdict] = {}
    for (cap, within), pairs in sorted(
        tiers.items(), key=lambda kv: (kv[0][0], sorted(kv[0][1] or ()))
    ):
        capped = dataclasses.replace(seed, manifest=dataclasses.replace(seed.manifest, timeout=cap))
        verdicts = validate_batch(
            [c for _, c in pairs],
            capped,
            env,
            baseline,
            sandbox,
            runs=1,
            limits=limits,
            coverage=coverage,
            workers=workers,
            within=within,
        )
        out.update((key, v) for (key, _), v in zip(pairs, verdicts, strict=True))
    return out


def measure_strength(
    items: Sequence[GateItem],
    seed: SeedApp,
    env: Environment,
    baseline: Baseline,
    sandbox: Sandbox,
    *,
    mutants: int,
    limits: Limits,
    coverage: CoverageMap | None,
    workers: int = 1,
) -> dict[str, Strength]:
    """Item key -> its `Strength`: every item's mutants graded together (one `validate_batch`,
    so a seed's tasks share collections, and a mutant two tasks share is run once).

    Raises `SandboxError` when no mutant of any item could be graded for a sandbox failure."""
    start = time.monotonic()
    chosen: dict[str, list[Mutant]] = {}
    generated: dict[str, int] = {}
    for item in items:
        every = gate_mutants(item, seed, 1 << 30)
        generated[item.key] = len(every)
        chosen[item.key] = sample_mutants(every, mutants, item.key)
    bounds: dict[str, frozenset[str]] = {}
    for item in items:
        for m in chosen[item.key]:
            bounds[m.key] = bounds.get(m.key, frozenset()) | frozenset(item.graded)
    verdicts = grade_mutants(
        [m for ms in chosen.values() for m in ms],
        seed,
        env,
        baseline,
        sandbox,
        limits=limits,
        coverage=coverage,
        workers=workers,
        graded=bounds,
    )
    if verdicts and all(v.status == "sandbox_error" for v in verdicts.values()):
        first = next(iter(verdicts.values()))
        raise SandboxError(f"test-strength gate: no mutant could be run: {first.reason}")
    out: dict[str, Strength] = {}
    for item in items:
        graded = set(item.graded)
        results = tuple(mutant_result(m, verdicts[m.key], graded) for m in chosen[item.key])
        error = ""
        if results and all(r.status == "not_graded" for r in results):
            error = f"no mutant could be graded: {results[0].detail}"
        out[item.key] = Strength(
            results=results,
            generated=generated[item.key],
            wall_time=round(sum(r.wall_time for r in results), 3),
            error=error,
        )
    if len(items) == 1:  # the whole measurement's time, collection and setup included
        only = items[0].key
        out[only] = _with_wall(out[only], round(time.monotonic() - start, 3))
    return out


def _with_wall(strength: Strength, wall: float) -> Strength:
    return Strength(
        results=strength.results,
        generated=strength.generated,
        wall_time=wall,
        error=strength.error,
        notes=strength.notes,
    )


def weak_reason(strength: Strength, threshold: float) -> str:
    """The `weak_tests` reason: the score against the threshold, and the surviving mutants (a
    few of them, with their count)."""
    survivors = strength.survivors
    shown = "; ".join(r.description for r in survivors[:_SHOWN_SURVIVORS])
    more = len(survivors) - _SHOWN_SURVIVORS
    tail = f"; and {more} more" if more > 0 else ""
    return (
        f"mutation score {strength.score:.2f} is under {threshold:.2f}: {len(survivors)} of "
        f"{strength.graded} mutants of the gold code pass every graded test: {shown}{tail}"
    )
