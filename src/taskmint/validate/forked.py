"""Validating many candidates of one seed at once: broken runs forked from one collection.

`validate_batch` gives every candidate the verdict `validate_candidate` gives it, from the same
runs (the same tests, orders and random seeds), but a run is a fork of a pytest process that has
already collected, instead of a new sandbox, interpreter and collection each time
(`runners/inside/forked_runs.py`):

- Candidates whose edit stays inside function bodies that nothing ran while the seed was
  imported or its test files collected (`unforkable` says why a candidate is not one) share a
  batch per worker: one sandbox run collects the ORIGINAL tree's selected test files once, and
  each run of each candidate is a fork of it with the candidate's files written over the
  workspace and its code swapped into the live functions. Importing and collecting the broken
  tree would have run the same code, so the collection is the broken tree's.
- Every other candidate gets a batch of its own over its BROKEN tree: collected once, its runs
  forked from that (the first run's selection, or the whole suite with the tests failing on the
  original, as `validate_candidate` runs it; later runs repeat the open tests).

Either way the runs of one candidate share its tree's import and collection, which happened
once, instead of once per run: what each run repeats is everything the tests do. A candidate
the batch hands back (the swap was refused, a run changed a file of the workspace, the batch
died) is validated the ordinary way.
"""

from __future__ import annotations

import shutil
import tempfile
import time
from collections.abc import Callable, Sequence
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from pathlib import Path

from taskmint.config import Limits
from taskmint.errors import PatchError, SandboxError
from taskmint.files import copy_tree
from taskmint.index.coverage import CoverageMap
from taskmint.languages import adapter_for, profile
from taskmint.patches import apply_patch, file_changes
from taskmint.records import Candidate, Environment, RunReport, SeedApp, Verdict
from taskmint.runners.bytecode import install_bytecode
from taskmint.runners.execute import run_batch
from taskmint.runners.inside.protocol import (
    SNAPSHOT_BYTES,
    CandidateSpec,
    batch_spec,
    candidate_spec,
    run_tag,
)
from taskmint.runners.report import BatchReport
from taskmint.sandbox.base import Sandbox
from taskmint.scratch import make_scratch, scratch_dir
from taskmint.validate.baseline import Baseline, run_plan
from taskmint.validate.candidate import (
    Reruns,
    broken_run_limits,
    conclude,
    materialize,
    validate_candidate,
)
from taskmint.validate.selection import BODY_LEVEL, select_tests

__all__ = ["broken_files", "unforkable", "validate_batch"]


def unforkable(candidate: Candidate, cmap: CoverageMap, selected: tuple[str, ...] | None) -> str:
    """Why `candidate` cannot be validated by forked runs ("" when it can).

    It can when its seed's runner forks (pytest: `Adapter.forks`), its edit stays inside
    function bodies (a body-level strategy, every file it touches an existing source file of
    the language it modifies), the coverage map gives an exact selection,
    and no line it removes ran while a test file was collected or in a module- or class-scoped
    fixture (lines run while the seed was imported already make the selection None): then the
    original's imports and collection ran none of the changed code, and are the broken tree's.
    """
    language = profile(candidate.language)
    if not language.adapter.forks:
        return f"forked runs are for runners that fork, not {language.adapter.runner}"
    if candidate.strategy not in BODY_LEVEL:
        return f"{candidate.strategy} edits more than function bodies"
    if not selected:
        return "no exact selection"
    for change in file_changes(candidate.breaking_patch):
        if (
            change.old_path is None
            or change.old_path != change.new_path
            or change.binary
            or change.new_mode is not None
            or not change.old_path.endswith(language.extensions)
        ):
            return f"the patch does more than modify {language.name} files ({change.old_path})"
    for file, first, last in candidate.spans:
        ran = cmap.collect_lines.get(file, {})
        if any(line in ran for line in range(first, last + 1)):
            return f"{file}:{first}-{last} ran while test files were collected"
    return ""


def broken_files(seed: SeedApp, candidate: Candidate) -> list[tuple[str, bytes]]:
    """(path, bytes) of every file the breaking patch changes, as it leaves them."""
    paths = [c.old_path for c in file_changes(candidate.breaking_patch) if c.old_path]
    with tempfile.TemporaryDirectory(prefix="taskmint-broken-", dir=scratch_dir()) as tmp:
        for rel in paths:
            dest = Path(tmp, rel)
            dest.parent.mkdir(parents=True, exist_ok=True)
            shutil.copyfile(Path(seed.root, rel), dest)
        apply_patch(Path(tmp), candidate.breaking_patch)
        return [(rel, Path(tmp, rel).read_bytes()) for rel in paths]


def validate_batch(
    candidates: Sequence[Candidate],
    seed: SeedApp,
    env: Environment,
    baseline: Baseline,
    sandbox: Sandbox,
    *,
    runs: int,
    limits: Limits,
    coverage: CoverageMap | None = None,
    workers: int = 1,
    reruns: Reruns = "open",
    within: frozenset[str] | None = None,
    on_verdict: Callable[[Candidate, Verdict], None] | None = None,
) -> list[Verdict]:
    """The verdict of each candidate (in order), on up to `workers` runs at a time: forked runs
    for the candidates `unforkable` allows, `validate_candidate` for the rest. With `within`
    (no coverage map), each runs only the stable tests among it (see `validate_candidate`).
    `on_verdict` hears each verdict as it is known (from the pool's threads)."""

    def heard(cand: Candidate, verdict: Verdict) -> Verdict:
        if on_verdict is not None:
            on_verdict(cand, verdict)
        return verdict

    def ordinary(cand: Candidate) -> Verdict:
        verdict = validate_candidate(
            cand,
            seed,
            env,
            baseline,
            sandbox,
            runs=runs,
            limits=limits,
            coverage=coverage,
            reruns=reruns,
            within=within,
        )
        return heard(cand, verdict)

    if within is not None and coverage is not None:
        raise ValueError("`within` is for a seed without a coverage map")
    verdicts: dict[str, Verdict] = {}
    forked: list[_Item] = []
    own: list[_Item] = []
    rest: list[Candidate] = []
    usable = (
        coverage is not None
        and baseline.usable
        and reruns == "open"
        and adapter_for(seed.manifest).forks
        and sandbox.supports_channel
    )
    stable = set(baseline.stable_passed)
    everything = tuple(sorted(stable.union(baseline.failing, baseline.flaky)))
    for cand in candidates:
        if not usable or coverage is None:
            rest.append(cand)
            continue
        selected = select_tests(cand, coverage, baseline.stable_passed, seed)
        if selected is not None:
            selected = tuple(t for t in selected if t in stable)
        if selected == ():
            rest.append(cand)  # nothing to run: the ordinary way says so at once
        elif selected is not None and not unforkable(cand, coverage, selected):
            forked.append(_Item(cand, selected, selected))
        elif selected is not None:
            own.append(_Item(cand, selected, selected))
        else:  # the full suite (the kept part of a cut one), and the failing tests
            request = baseline.full_request or everything
            own.append(_Item(cand, request, None))
    # Balanced batches, largest selections first; at least a few candidates per batch, since
    # each pays for one collection.
    count = max(1, min(workers, len(forked) // 4 or 1))
    batches: list[list[_Item]] = [[] for _ in range(count)]
    loads = [0] * count
    for item in sorted(forked, key=lambda x: -len(x.request)):
        i = loads.index(min(loads))
        batches[i].append(item)
        loads[i] += len(item.request) + 20

    def batch_job(batch: list[_Item], tree: str) -> dict[str, Verdict]:
        done, left = _run_batch(batch, tree, seed, env, baseline, sandbox, runs=runs, limits=limits)
        for item in batch:
            if item.cand.candidate_id in done:
                heard(item.cand, done[item.cand.candidate_id])
        for cand in left:
            done[cand.candidate_id] = ordinary(cand)
        return done

    with ThreadPoolExecutor(max(1, workers)) as pool:
        jobs = [pool.submit(batch_job, b, "") for b in batches if b]
        jobs += [pool.submit(batch_job, [item], item.cand.breaking_patch) for item in own]
        singles = [(c, pool.submit(ordinary, c)) for c in rest]
        for job in jobs:
            verdicts.update(job.result())
        for cand, fut in singles:
            verdicts[cand.candidate_id] = fut.result()
    return [verdicts[c.candidate_id] for c in candidates]


@dataclass(frozen=True, slots=True)
class _Item:
    """A candidate in a batch: the tests its first run asks for, and those that can see its
    edit (None: every stable test; see `validate_candidate`)."""

    cand: Candidate
    request: tuple[str, ...]
    observed: tuple[str, ...] | None


def _run_batch(
    batch: list[_Item],
    tree: str,
    seed: SeedApp,
    env: Environment,
    baseline: Baseline,
    sandbox: Sandbox,
    *,
    runs: int,
    limits: Limits,
) -> tuple[dict[str, Verdict], list[Candidate]]:
    """One batch run: the verdicts it gave, and the candidates it handed back.

    `tree` "": the batch collects the original tree and swaps each candidate's code in (forked
    runs). Otherwise `tree` is the one candidate's breaking patch: the batch collects the broken
    tree itself, and its runs are forks of that collection."""
    start = time.monotonic()
    specs: list[CandidateSpec] = []
    served: list[_Item] = []
    left: list[Candidate] = []
    walls = []
    failing = set(baseline.failing)
    for item in batch:
        files: list[tuple[str, bytes]] = []
        if not tree:
            try:
                files = broken_files(seed, item.cand)
            except (PatchError, OSError):
                left.append(item.cand)  # the ordinary way reports it (excise_failed)
                continue
        wall = broken_run_limits(
            baseline, limits, seed.manifest.timeout, item.observed
        ).wall_seconds
        walls.append(wall)
        specs.append(
            candidate_spec(
                files, list(item.request), sorted(failing.intersection(item.request)), wall
            )
        )
        served.append(item)
    if not served:
        return {}, left
    plans = [run_plan(i) for i in range(runs)]
    spec = batch_spec(specs, [(p.order, p.seed) for p in plans], SNAPSHOT_BYTES)
    # collecting (at most a whole run's limit) and every run of every candidate
    whole = max(10.0, 4 * baseline.max_wall_time + 5.0)
    batch_limits = limits.with_wall(whole + runs * sum(walls))
    union = tuple(sorted({t for item in served for t in item.request}))
    bytecode = Path(baseline.bytecode) if baseline.bytecode else None
    ws = make_scratch("taskmint-ws-")
    try:
        if tree:
            materialize(seed, tree, dest=ws, bytecode=bytecode)
        else:
            copy_tree(Path(seed.root), ws, seed.files)
            install_bytecode(ws, bytecode)
        report, _result = run_batch(
            sandbox,
            ws,
            seed.manifest,
            env,
            adapter=adapter_for(seed.manifest),
            limits=batch_limits,
            test_ids=union,
            batch=spec,
        )
    except (SandboxError, PatchError, OSError):
        return {}, [item.cand for item in served] + left
    finally:
        shutil.rmtree(ws, ignore_errors=True)
    elapsed = time.monotonic() - start
    out: dict[str, Verdict] = {}
    child_walls: dict[int, float] = {}
    for number, item in enumerate(served):
        tags = [run_tag(number, r) for r in range(runs) if run_tag(number, r) in report.requests]
        ends = [report.ends.get(t) for t in tags]
        if (
            number not in report.done
            or not tags
            or any(e is None or e["status"] not in ("ran", "timeout") for e in ends)
        ):
            left.append(item.cand)  # refused, crashed or never reached: the ordinary way
            continue
        child_walls[number] = sum(e["wall"] for e in ends if e is not None)
    shared = max(0.0, elapsed - sum(child_walls.values())) / max(1, len(child_walls))
    for number, item in enumerate(served):
        if number not in child_walls:
            continue
        out[item.cand.candidate_id] = _conclude_batch(
            item,
            number,
            report,
            baseline,
            limits,
            seed,
            runs,
            round(child_walls[number] + shared, 3),
        )
    return out, left


def _conclude_batch(
    item: _Item,
    number: int,
    report: BatchReport,
    baseline: Baseline,
    limits: Limits,
    seed: SeedApp,
    runs: int,
    wall: float,
) -> Verdict:
    """The verdict of the batch's candidate `number`, from its runs' reports."""

    def verdict(status: str, reason: str, **kw: object) -> Verdict:
        return Verdict(
            candidate_id=item.cand.candidate_id,
            status=status,  # type: ignore[arg-type]
            reason=reason,
            original_runs=baseline.runs,
            wall_time=wall,
            **kw,  # type: ignore[arg-type]
        )

    tags = [run_tag(number, r) for r in range(runs) if run_tag(number, r) in report.requests]
    reports: list[RunReport] = []
    seen: dict[str, list[str]] = {}
    for run, tag in enumerate(tags):
        if report.ends[tag]["status"] == "timeout":
            limit = broken_run_limits(
                baseline, limits, seed.manifest.timeout, item.observed
            ).wall_seconds
            return verdict(
                "timeout",
                f"the broken tree's tests did not finish in {limit:.0f}s",
                broken_runs=run + 1,
            )
        rep = report.reports[tag]
        reports.append(rep)
        outcomes = rep.outcome_map()
        for tid in report.requests[tag]:
            seen.setdefault(tid, []).append(outcomes.get(tid, "missing"))
    observed = set(item.observed) if item.observed is not None else set(baseline.stable_passed)
    return conclude(baseline, observed, seen, reports, verdict)
