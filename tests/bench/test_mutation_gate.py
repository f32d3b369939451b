"""Benchmark: the test-strength gate on every accepted task of the seeds, against the task's
validation time, and against mutants the gate never generates.

The seeds are prepared, excised, validated and scanned for leaks by the refresh's own steps
(`prepare_seed`, `excise_seed`, `validate_candidates`, `scan_leaks`; stored results of an
earlier run of the same output root are reused), so the tasks are the ones the gate sees in a
refresh: the accepted, leak-free candidates. Then, per seed:

- the gate as the refresh runs it: every task's mutants graded together (`measure_strength`
  over all of them, 2 workers), timed; its seconds per task against the tasks' validation
  time (`Verdict.wall_time`, what a row's `validation_wall_time` holds);
- the gate alone on up to TASKMINT_BENCH_ALONE tasks (`measure_strength` over one task, as
  `mint_candidate` and a task the batch missed run it), timed;
- held-out mutants: a generator of this file only (`heldout_mutants`), with operators the
  gate does not have: arithmetic operators swapped (`+` <-> `-`, `*` -> `+`, ...), an index or
  slice bound off by one, a string constant changed, a plain assignment deleted, a returned
  value replaced by None (not at a body's start), `min` <-> `max`, `any` <-> `all`. Up to 12
  per task, graded by the same machinery with the same tests.

Printed: per seed and strategy, the mutation-score distribution and the tasks rejected at
several thresholds; the gate's cost per task against validation; how the gate's score relates
to the held-out kill rate (correlation; held-out survival among the tasks the gate passes and
among those it rejects, per threshold). Per-task figures go to <output>/strength-bench.json.

Run: `make bench`, or `.venv/bin/python -m pytest -q -s tests/bench/test_mutation_gate.py`.
Knobs: TASKMINT_BENCH_OUTPUT (the output root whose cache is reused; default output/, the
demo's), TASKMINT_BENCH_MANIFEST (default seed_apps/seeds.toml; seed_apps/pypi_seeds.toml for
real projects, which needs the package index), TASKMINT_BENCH_SEEDS (comma list of seed names
to keep), TASKMINT_BENCH_CANDIDATES (per seed; default the refresh's 36), TASKMINT_BENCH_ALONE
(tasks per seed timed alone; default 8), TASKMINT_BENCH_MUTANTS (default the config's).
"""

from __future__ import annotations

import ast
import json
import os
import re
import statistics
import time
from collections import defaultdict
from pathlib import Path
from typing import Any

from tree_sitter import Node

from taskmint.acquire.sources import load_seed_sources
from taskmint.config import PipelineConfig, StrengthConfig
from taskmint.index.treesitter_grammars import parse as ts_parse
from taskmint.pipeline.mint import scan_leaks, validate_candidates
from taskmint.pipeline.seed import excise_seed, prepare_seed
from taskmint.pipeline.steps import LocalExecutor
from taskmint.records import Candidate, Verdict
from taskmint.sandbox import open_sandbox
from taskmint.strength import (
    GateItem,
    Mutant,
    gold_lines,
    grade_mutants,
    measure_strength,
    sample_mutants,
)
from taskmint.strength.gate import gate_mutants, mutant_result

ROOT = Path(__file__).resolve().parents[2]
OUT = Path(os.environ.get("TASKMINT_BENCH_OUTPUT", ROOT / "output"))
MANIFEST = Path(os.environ.get("TASKMINT_BENCH_MANIFEST", ROOT / "seed_apps" / "seeds.toml"))
NAMES = [n for n in os.environ.get("TASKMINT_BENCH_SEEDS", "").split(",") if n]
CANDIDATES = int(
    os.environ.get("TASKMINT_BENCH_CANDIDATES", PipelineConfig().max_candidates_per_seed)
)
ALONE = int(os.environ.get("TASKMINT_BENCH_ALONE", "8"))
MUTANTS = int(os.environ.get("TASKMINT_BENCH_MUTANTS", StrengthConfig().mutants))
HELD_OUT = 12
KS = tuple(k for k in (4, 6, 8, 12) if k <= MUTANTS)  # smaller gates, from the same runs
THRESHOLDS = (0.3, 0.4, 0.5, 0.6, 0.7, 0.8)


# -- the held-out generator --------------------------------------------------------------------

_ARITH = {
    ast.Add: ("+", "-"),
    ast.Sub: ("-", "+"),
    ast.Mult: ("*", "+"),
    ast.Div: ("/", "*"),
    ast.FloorDiv: ("//", "*"),
    ast.Mod: ("%", "//"),
}
_SWAP_CALL = {"min": "max", "max": "min", "any": "all", "all": "any"}


def _starts(data: bytes) -> list[int]:
    out = [0]
    out += [i + 1 for i, b in enumerate(data) if b == 10]
    return out


def _py_heldout(path: str, data: bytes, lines: set[int]) -> list[Mutant]:
    try:
        tree = ast.parse(data)
    except SyntaxError:
        return []
    starts = _starts(data)
    found: list[Mutant] = []

    def off(line: int, col: int) -> int:
        return starts[line - 1] + col

    def span(node: ast.AST) -> tuple[int, int]:
        return (
            off(node.lineno, node.col_offset),  # type: ignore[attr-defined]
            off(node.end_lineno, node.end_col_offset),  # type: ignore[attr-defined]
        )

    def add(s: int, e: int, rep: bytes, op: str, first: int, last: int) -> None:
        line = data.count(b"\n", 0, s) + 1
        end_line = data.count(b"\n", 0, max(s, e - 1)) + 1
        if not all(n in lines for n in range(line, end_line + 1)) or data[s:e] == rep:
            return
        found.append(
            Mutant(
                file=path,
                line=line,
                start=s,
                end=e,
                replacement=rep,
                operator=op,
                before=" ".join(data[s:e].decode("utf-8", "replace").split())[:40],
                after=" ".join(rep.decode("utf-8", "replace").split())[:40],
                first=min(first, line),
                last=max(last, end_line),
            )
        )

    def op_between(left: ast.AST, right: ast.AST, symbol: str) -> tuple[int, int] | None:
        gs, ge = span(left)[1], span(right)[0]
        gap = data[gs:ge]
        hits = [m for m in re.finditer(re.escape(symbol.encode()), gap)]
        if len(hits) != 1 or b"#" in gap:
            return None
        return gs + hits[0].start(), gs + hits[0].end()

    def visit_function(fn: ast.FunctionDef | ast.AsyncFunctionDef) -> None:
        body = fn.body
        if body and isinstance(body[0], ast.Expr) and isinstance(body[0].value, ast.Constant):
            body = body[1:]
        if not body:
            return
        whole = (body[0].lineno, fn.end_lineno or fn.lineno)
        for stmt in body:
            visit_stmt(stmt, whole, first_stmt=stmt is body[0])

    def visit_stmt(stmt: ast.stmt, whole: tuple[int, int], first_stmt: bool = False) -> None:
        if isinstance(stmt, ast.FunctionDef | ast.AsyncFunctionDef | ast.ClassDef):
            return
        s, e = span(stmt)
        if isinstance(stmt, ast.Assign):
            pad = b"\n" * (stmt.end_lineno - stmt.lineno)  # type: ignore[operator]
            add(s, e, b"pass" + pad, "h_assign", *whole)  # may change the locals: whole body
        if isinstance(stmt, ast.Return) and stmt.value is not None and not first_stmt:
            value = stmt.value
            if not (isinstance(value, ast.Constant) and value.value is None):
                vs, ve = span(value)
                add(vs, ve, b"None", "h_return", stmt.lineno, stmt.end_lineno or stmt.lineno)
        if isinstance(stmt, ast.AugAssign) and type(stmt.op) in _ARITH:
            sym, new = _ARITH[type(stmt.op)]
            at = op_between(stmt.target, stmt.value, sym + "=")
            if at:
                add(at[0], at[1], (new + "=").encode(), "h_arith", stmt.lineno, stmt.lineno)
        for child in ast.iter_child_nodes(stmt):
            if isinstance(child, ast.stmt):
                visit_stmt(child, whole)
            elif isinstance(child, ast.expr):
                visit_expr(child, stmt)
        for extra in (*getattr(stmt, "handlers", ()), *getattr(stmt, "cases", ())):
            for child in extra.body:
                visit_stmt(child, whole)

    def visit_expr(expr: ast.expr, stmt: ast.stmt) -> None:
        first, last = stmt.lineno, stmt.end_lineno or stmt.lineno
        for node in ast.walk(expr):
            if isinstance(node, ast.JoinedStr):
                return  # positions inside f-strings are not to be trusted
        for node in ast.walk(expr):
            if isinstance(node, ast.BinOp) and type(node.op) in _ARITH:
                sym, new = _ARITH[type(node.op)]
                at = op_between(node.left, node.right, sym)
                if at:
                    add(at[0], at[1], new.encode(), "h_arith", first, last)
            elif isinstance(node, ast.Subscript) and isinstance(node.ctx, ast.Load):
                sl = node.slice
                bounds = [sl.lower, sl.upper] if isinstance(sl, ast.Slice) else [sl]
                for b in bounds:
                    if isinstance(b, ast.Name | ast.UnaryOp) or (
                        isinstance(b, ast.Constant) and type(b.value) is int
                    ):
                        bs, be = span(b)
                        add(bs, be, b"(" + data[bs:be] + b") + 1", "h_index", first, last)
            elif (
                isinstance(node, ast.Constant)
                and isinstance(node.value, str)
                and not (isinstance(stmt, ast.Expr) and stmt.value is node)
            ):
                cs, ce = span(node)
                add(cs, ce, repr(node.value + "~").encode(), "h_string", first, last)
            elif (
                isinstance(node, ast.Call)
                and isinstance(node.func, ast.Name)
                and node.func.id in _SWAP_CALL
            ):
                fs, fe = span(node.func)
                add(fs, fe, _SWAP_CALL[node.func.id].encode(), "h_call", first, last)

    for node in ast.walk(tree):
        if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef):
            visit_function(node)
    out = []
    for m in found:
        try:
            compile(m.apply(data), path, "exec", dont_inherit=True)
        except (SyntaxError, ValueError):
            continue
        out.append(m)
    return out


_JS_FUNCS = {
    "function_declaration",
    "method_definition",
    "function_expression",
    "function",
    "arrow_function",
    "generator_function_declaration",
    "generator_function",
}
_JS_ARITH = {"+": "-", "-": "+", "*": "+", "/": "*", "%": "*"}


def _js_heldout(path: str, data: bytes, lines: set[int]) -> list[Mutant]:
    try:
        tree, _ = ts_parse("javascript", data, path)
    except Exception:
        return []
    found: list[Mutant] = []

    def stmt_of(node: Node) -> Node:
        cur = node
        while cur.parent is not None and cur.parent.type not in ("statement_block", "program"):
            cur = cur.parent
        return cur

    def add(s: int, e: int, rep: bytes, op: str, at: Node, whole: bool = False) -> None:
        line = data.count(b"\n", 0, s) + 1
        end_line = data.count(b"\n", 0, max(s, e - 1)) + 1
        if not all(n in lines for n in range(line, end_line + 1)) or data[s:e] == rep:
            return
        st = stmt_of(at)
        found.append(
            Mutant(
                file=path,
                line=line,
                start=s,
                end=e,
                replacement=rep,
                operator=op,
                before=" ".join(data[s:e].decode("utf-8", "replace").split())[:40],
                after=" ".join(rep.decode("utf-8", "replace").split())[:40],
                first=min(int(st.start_point.row) + 1, line),
                last=max(int(st.end_point.row) + 1, end_line),
            )
        )

    def visit(node: Node, in_body: bool) -> None:
        if node.type in _JS_FUNCS:
            body = node.child_by_field_name("body")
            first = None
            if body is not None and body.type == "statement_block":
                named = [c for c in body.named_children if c.type != "comment"]
                first = named[0].id if named else None
            for child in node.children:
                visit_in(child, in_body or (body is not None and child.id == body.id), first)
            return
        visit_in(node, in_body, None)

    def visit_in(node: Node, in_body: bool, first_id: int | None) -> None:
        if node.type in _JS_FUNCS:
            visit(node, in_body)
            return
        if in_body:
            mutate(node, first_id)
        for child in node.children:
            visit_in(child, in_body, first_id)

    def mutate(node: Node, first_id: int | None) -> None:
        kind = node.type
        if kind == "binary_expression":
            op = node.child_by_field_name("operator")
            if op is not None:
                text = data[op.start_byte : op.end_byte].decode()
                if text in _JS_ARITH:
                    add(op.start_byte, op.end_byte, _JS_ARITH[text].encode(), "h_arith", node)
        elif kind == "string":
            text = data[node.start_byte : node.end_byte]
            add(node.start_byte, node.end_byte, text[:-1] + b"~" + text[-1:], "h_string", node)
        elif kind == "subscript_expression":
            idx = node.child_by_field_name("index")
            if idx is not None and idx.type in ("identifier", "number"):
                t = data[idx.start_byte : idx.end_byte]
                add(idx.start_byte, idx.end_byte, b"(" + t + b") + 1", "h_index", node)
        elif kind == "expression_statement":
            expr = node.named_children[0] if node.named_children else None
            if expr is not None and expr.type == "assignment_expression":
                add(node.start_byte, node.end_byte, b";", "h_assign", node)
        elif kind == "return_statement" and node.id != first_id:
            arg = [c for c in node.named_children if c.type != "comment"]
            if arg and arg[0].type not in ("undefined", "null"):
                add(arg[0].start_byte, arg[0].end_byte, b"undefined", "h_return", node)
        elif kind == "call_expression":
            fn = node.child_by_field_name("function")
            if fn is not None and data[fn.start_byte : fn.end_byte] in (b"Math.min", b"Math.max"):
                new = (
                    b"Math.max" if data[fn.start_byte : fn.end_byte] == b"Math.min" else b"Math.min"
                )
                add(fn.start_byte, fn.end_byte, new, "h_call", node)

    visit(tree.root_node, False)
    out = []
    for m in found:
        try:
            ts_parse("javascript", m.apply(data), path)
        except Exception:
            continue
        out.append(m)
    return out


def heldout_mutants(item: GateItem, root: Path, n: int) -> list[Mutant]:
    """Up to `n` held-out mutants of the item's gold code (see the module docstring)."""
    found: list[Mutant] = []
    for rel, lines in sorted(gold_lines(item.gold_patch).items()):
        try:
            data = (root / rel).read_bytes()
        except OSError:
            continue
        if rel.endswith(".py"):
            found += _py_heldout(rel, data, lines)
        elif rel.endswith((".js", ".mjs", ".cjs")):
            found += _js_heldout(rel, data, lines)
    unique = {m.key: m for m in found}
    return sample_mutants(list(unique.values()), n, "held-out|" + item.key)


# -- the measurement ---------------------------------------------------------------------------


def _tasks(config: PipelineConfig) -> list[tuple[Any, list[tuple[Candidate, Verdict]]]]:
    """(prepared seed, its accepted leak-free candidates with their verdicts) per seed."""
    out = []
    with LocalExecutor(2) as ex:
        for source in load_seed_sources(config.seeds_manifest):
            if NAMES and source.name not in NAMES and Path(source.location).name not in NAMES:
                continue
            prepared = prepare_seed(source, config, ex)
            if prepared is None or not prepared.baseline.usable:
                print(f"{source.label}: not usable")
                continue
            cands = list(ex.call(excise_seed, prepared, config).candidates)
            verdicts = validate_candidates(cands, prepared, config)
            accepted = [c for c in cands if verdicts[c.candidate_id].accepted]
            leaks = scan_leaks(accepted, prepared, config)
            kept = [(c, verdicts[c.candidate_id]) for c in accepted if c.candidate_id not in leaks]
            out.append((prepared, kept))
    return out


def _dist(values: list[float]) -> str:
    if not values:
        return "-"
    q = statistics.quantiles(values, n=4, method="inclusive") if len(values) > 1 else values * 3
    return (
        f"min {min(values):.2f} p25 {q[0]:.2f} median {q[1]:.2f} p75 {q[2]:.2f} "
        f"mean {statistics.fmean(values):.2f}"
    )


def _ranks(values: list[float]) -> list[float]:
    order = sorted(range(len(values)), key=lambda i: values[i])
    ranks = [0.0] * len(values)
    i = 0
    while i < len(order):
        j = i
        while j + 1 < len(order) and values[order[j + 1]] == values[order[i]]:
            j += 1
        for k in range(i, j + 1):
            ranks[order[k]] = (i + j) / 2
        i = j + 1
    return ranks


def _pearson(x: list[float], y: list[float]) -> float:
    if len(x) < 3 or statistics.pstdev(x) == 0 or statistics.pstdev(y) == 0:
        return float("nan")
    return statistics.correlation(x, y)


def test_mutation_gate_strength_cost_and_held_out() -> None:
    config = PipelineConfig(
        output_root=OUT,
        seeds_manifest=MANIFEST,
        max_candidates_per_seed=CANDIDATES,
        workers=2,
    )
    started = time.monotonic()
    seeds = _tasks(config)
    print(
        f"\nprepared, validated and scanned {len(seeds)} seeds in "
        f"{time.monotonic() - started:.0f} s"
    )
    rows: list[dict[str, Any]] = []
    cost_lines = []
    for prepared, kept in seeds:
        seed = prepared.seed
        if not kept:
            continue
        limits = config.sandbox.limits.with_wall(seed.manifest.timeout)
        items = {
            c.candidate_id: GateItem(
                key=c.candidate_id,
                gold_patch=c.gold_patch,
                graded=(*v.fail_to_pass, *v.pass_to_pass),
            )
            for c, v in kept
        }
        with open_sandbox(config.sandbox) as box:
            t0 = time.monotonic()
            strengths = measure_strength(
                list(items.values()),
                seed,
                prepared.env,
                prepared.baseline,
                box,
                mutants=MUTANTS,
                limits=limits,
                coverage=prepared.coverage,
                workers=2,
            )
            batched = time.monotonic() - t0
            alone: list[float] = []
            for c, _ in kept[:ALONE]:
                t1 = time.monotonic()
                measure_strength(
                    [items[c.candidate_id]],
                    seed,
                    prepared.env,
                    prepared.baseline,
                    box,
                    mutants=MUTANTS,
                    limits=limits,
                    coverage=prepared.coverage,
                    workers=1,
                )
                alone.append(time.monotonic() - t1)
            held: dict[str, list[Mutant]] = {
                cid: heldout_mutants(item, Path(seed.root), HELD_OUT) for cid, item in items.items()
            }
            t2 = time.monotonic()
            held_verdicts = grade_mutants(
                [m for ms in held.values() for m in ms],
                seed,
                prepared.env,
                prepared.baseline,
                box,
                limits=limits,
                coverage=prepared.coverage,
                workers=2,
            )
            held_time = time.monotonic() - t2
        validation = [v.wall_time for _, v in kept]
        n_mutants = sum(len(s.results) for s in strengths.values())
        cost_lines.append(
            f"| {seed.name} | {len(kept)} | {n_mutants} | {batched:.1f} | "
            f"{batched / len(kept):.2f} | {statistics.median(alone) if alone else 0:.2f} | "
            f"{statistics.median(validation):.2f} | {statistics.fmean(validation):.2f} | "
            f"{batched / max(sum(validation), 1e-9):.2f} | {held_time:.1f} |"
        )
        for c, verdict in kept:
            s = strengths[c.candidate_id]
            graded = set(items[c.candidate_id].graded)
            h = [mutant_result(m, held_verdicts[m.key], graded) for m in held[c.candidate_id]]
            h_graded = [r for r in h if r.status != "not_graded"]
            by_key = {r.key: r for r in s.results}
            every = gate_mutants(items[c.candidate_id], seed, 1 << 30)
            smaller: dict[int, Any] = {}
            for k in KS:  # the first k picks of the 12: what a gate of k mutants grades
                picked = [by_key[m.key] for m in sample_mutants(every, k, c.candidate_id)]
                done = [r for r in picked if r.status != "not_graded"]
                killed = sum(r.status == "killed" for r in done)
                smaller[k] = [
                    round(killed / len(done), 4) if done else None,
                    round(sum(r.wall_time for r in picked), 3),
                ]
            rows.append(
                {
                    "seed": seed.name,
                    "strategy": c.strategy,
                    "candidate": c.candidate_id,
                    "score": s.score,
                    "mutants": s.graded,
                    "killed": s.killed,
                    "generated": s.generated,
                    "not_graded": len(s.results) - s.graded,
                    "timeouts": sum(r.detail == "timeout" for r in s.results),
                    "timeout_s": round(
                        sum(r.wall_time for r in s.results if r.detail == "timeout"), 2
                    ),
                    "mutant_s": round(sum(r.wall_time for r in s.results), 3),
                    "survivors": [r.description for r in s.survivors],
                    "gate_operators": {
                        op: [
                            sum(r.status == "killed" for r in s.results if r.operator == op),
                            sum(r.status != "not_graded" for r in s.results if r.operator == op),
                        ]
                        for op in sorted({r.operator for r in s.results})
                    },
                    "validation_s": verdict.wall_time,
                    "held_graded": len(h_graded),
                    "held_killed": sum(r.status == "killed" for r in h_graded),
                    "held_survivors": [r.description for r in h_graded if r.status == "survived"],
                    "held_operators": sorted({r.operator for r in h_graded}),
                    "by_k": smaller,
                }
            )
    OUT.mkdir(parents=True, exist_ok=True)
    (OUT / "strength-bench.json").write_text(json.dumps(rows, indent=1), encoding="utf-8")

    print("\n## Mutation score per seed and strategy (gate mutants: up to", MUTANTS, "per task)\n")
    head = " | ".join(f"< {t:.1f}" for t in THRESHOLDS)
    print(f"| seed | strategy | tasks | no mutant | score distribution | rejected at {head} |")
    print("|---|---|---:|---:|---|" + "---:|" * len(THRESHOLDS))
    groups: dict[tuple[str, str], list[dict[str, Any]]] = defaultdict(list)
    for r in rows:
        groups[(r["seed"], r["strategy"])].append(r)
        groups[(r["seed"], "(all)")].append(r)
        groups[("(all)", r["strategy"])].append(r)
        groups[("(all)", "(all)")].append(r)
    for (seed_name, strategy), rs in sorted(groups.items()):
        scores = [r["score"] for r in rs if r["score"] is not None]
        rejected = " | ".join(str(sum(s < t for s in scores)) for t in THRESHOLDS)
        print(
            f"| {seed_name} | {strategy} | {len(rs)} | {len(rs) - len(scores)} | "
            f"{_dist(scores)} | {rejected} |"
        )

    per_op: dict[str, list[int]] = defaultdict(lambda: [0, 0])
    for r in rows:
        for op, (k, g) in r["gate_operators"].items():
            per_op[op][0] += k
            per_op[op][1] += g
    print("\n## Gate operators: killed / graded\n")
    for op, (k, g) in sorted(per_op.items()):
        print(f"- {op}: {k}/{g} ({k / g if g else 0:.2f})")

    print("\n## Cost\n")
    hung = sum(r["timeouts"] for r in rows)
    print(
        f"mutants killed by a timeout: {hung}, their runs {sum(r['timeout_s'] for r in rows):.0f}"
        f" s of {sum(r['mutant_s'] for r in rows):.0f} s of mutant runs\n"
    )
    print(
        "| seed | tasks | mutants | gate batched s | s per task | alone s per task (median) | "
        "validation s per task (median) | (mean) | gate / validation | held-out s |"
    )
    print("|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|")
    for line in cost_lines:
        print(line)

    print("\n## Held-out mutants (operators the gate does not have)\n")
    both = [r for r in rows if r["score"] is not None and r["held_graded"]]
    gate = [r["score"] for r in both]
    held_rate = [r["held_killed"] / r["held_graded"] for r in both]
    print(
        f"tasks with both: {len(both)}; held-out mutants graded: "
        f"{sum(r['held_graded'] for r in both)}, killed "
        f"{sum(r['held_killed'] for r in both)}; held-out kill rate {_dist(held_rate)}"
    )
    print(
        f"correlation of the gate's score with the held-out kill rate: Pearson "
        f"{_pearson(gate, held_rate):.2f}, Spearman {_pearson(_ranks(gate), _ranks(held_rate)):.2f}"
    )
    print(
        "\n| threshold | passed | held-out survival (passed) | rejected | "
        "held-out survival (rejected) |"
    )
    print("|---:|---:|---:|---:|---:|")
    for t in THRESHOLDS:
        ok = [r for r in both if r["score"] >= t]
        bad = [r for r in both if r["score"] < t]

        def survival(rs: list[dict[str, Any]]) -> str:
            g = sum(r["held_graded"] for r in rs)
            k = sum(r["held_killed"] for r in rs)
            return f"{(g - k) / g:.3f} ({g - k}/{g})" if g else "-"

        print(f"| {t:.1f} | {len(ok)} | {survival(ok)} | {len(bad)} | {survival(bad)} |")
    bins = ((0.0, 0.5), (0.5, 0.7), (0.7, 0.9), (0.9, 1.01))
    print("\n| gate score | tasks | held-out kill rate (mean) |")
    print("|---|---:|---:|")
    for lo, hi in bins:
        rs = [h for g, h in zip(gate, held_rate, strict=True) if lo <= g < hi]
        mean = f"{statistics.fmean(rs):.3f}" if rs else "-"
        print(f"| [{lo:.1f}, {min(hi, 1.0):.1f}{']' if hi > 1 else ')'} | {len(rs)} | {mean} |")
    held_ops: dict[str, int] = defaultdict(int)
    for r in rows:
        for op in r["held_operators"]:
            held_ops[op] += 1
    print("\nheld-out operators (tasks having one):", dict(sorted(held_ops.items())))
    print("\n## Smaller gates (the first k of each task's mutants, from the same runs)\n")
    print(
        f"| mutants | rejected at 0.5 | at 0.6 | at 0.7 | same verdict as {MUTANTS} at 0.5 | "
        "held-out survival passed / rejected at 0.5 | Spearman with held-out | mutant run s |"
    )
    print("|---:|---:|---:|---:|---:|---|---:|---:|")
    for k in KS:
        pairs = [(r["by_k"][k][0], r) for r in rows if r["by_k"][k][0] is not None]
        ref = {id(r): r["score"] for r in rows}
        same = sum((sc >= 0.5) == (ref[id(r)] >= 0.5) for sc, r in pairs)
        rej = [sum(sc < t for sc, _ in pairs) for t in (0.5, 0.6, 0.7)]

        def surv(rs: list[dict[str, Any]]) -> str:
            g = sum(r["held_graded"] for r in rs)
            kk = sum(r["held_killed"] for r in rs)
            return f"{(g - kk) / g:.3f}" if g else "-"

        ok = [r for sc, r in pairs if sc >= 0.5 and r["held_graded"]]
        bad = [r for sc, r in pairs if sc < 0.5 and r["held_graded"]]
        hb = [(sc, r["held_killed"] / r["held_graded"]) for sc, r in pairs if r["held_graded"]]
        rho = _pearson(_ranks([a for a, _ in hb]), _ranks([b for _, b in hb]))
        secs = sum(r["by_k"][k][1] for r in rows)
        print(
            f"| {k} | {rej[0]} | {rej[1]} | {rej[2]} | {same}/{len(pairs)} | "
            f"{surv(ok)} / {surv(bad)} | {rho:.2f} | {secs:.0f} |"
        )
    print(f"\ntotal bench wall {time.monotonic() - started:.0f} s")
    assert rows, "no task to measure"
    assert all(r["score"] is None or 0.0 <= r["score"] <= 1.0 for r in rows)
