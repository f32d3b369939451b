"""Write the level-2 section of docs/examples.md: whole features (strategy `feature`) described
by their behaviour, one per seed, with their sizes and the leak check's verdict.

Usage: .venv/bin/python scripts/make_feature_examples.py [--seeds a,b,...] [--output DIR]
       [--doc docs/examples.md]

Seeds are names from seed_apps/seeds.toml (bundled) or seed_apps/real_seeds.toml (PyPI
projects nobody here wrote; needs the package index). Each goes through the pipeline's own
steps (prepare, excise with strategy `feature`, validate, leak scan, describe at statement
level 2, the reference solvers and the test-strength gate); the largest task of each seed is
shown. The section between the markers below is replaced; the rest of the file is kept.
"""

from __future__ import annotations

import argparse
from pathlib import Path

from taskmint.acquire.sources import load_seed_sources
from taskmint.config import load_config
from taskmint.describe import find_leaks
from taskmint.describe.leak import LeakChecker
from taskmint.pipeline.refresh import mint_batch
from taskmint.pipeline.seed import excise_seed, prepare_seed
from taskmint.pipeline.steps import LocalExecutor
from taskmint.records import Task

ROOT = Path(__file__).resolve().parents[1]
BEGIN = "<!-- level-2 examples: scripts/make_feature_examples.py -->"
END = "<!-- end of level-2 examples -->"


def _manifest(names: list[str], out: Path) -> Path:
    bundled = {s.name: s for s in load_seed_sources(ROOT / "seed_apps" / "seeds.toml")}
    real = {s.name: s for s in load_seed_sources(ROOT / "seed_apps" / "real_seeds.toml")}
    entries = []
    for name in names:
        if name in bundled:
            entries.append(f'[[seed]]\npath = "{ROOT / "seed_apps" / name}"\n')
        else:
            entries.append(f'[[seed]]\npypi = "{name}"\nversion = "{real[name].ref}"\n')
    path = out / "examples-seeds.toml"
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text("\n".join(entries), encoding="utf-8")
    return path


def _example(i: int, task: Task) -> str:
    f = task.features
    assert f is not None
    leaks = find_leaks(
        task.removed_code,
        task.problem_statement,
        task.hints,
        extra=(("spec", task.statement_spec), ("issue", task.statement_issue)),
    )
    protected = len(LeakChecker(task.removed_code).protected)
    verdict = (
        f"clean: none of the {protected} protected lines of the removed code is in the "
        "statements or hints"
        if not leaks
        else f"{len(leaks)} leak(s): " + "; ".join(leak.describe() for leak in leaks[:3])
    )
    score = "not measured" if task.mutation_score is None else f"{task.mutation_score:.2f}"
    quoted = "\n".join(f"> {line}" if line else ">" for line in task.problem_statement.split("\n"))
    return (
        f"### L{i}. {task.seed} / feature / `{task.instance_id}`\n\n"
        f"- removed: {f.lines_removed} lines, {f.units} units, {f.files} files "
        f"({', '.join(f'`{p}`' for p in task.files)})\n"
        f"- tests: {len(task.FAIL_TO_PASS)} FAIL_TO_PASS, {len(task.PASS_TO_PASS)} PASS_TO_PASS; "
        f"mutation score {score} over {task.mutants} mutants\n"
        f"- leak check: {verdict}\n\n"
        f"{quoted}\n"
    )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--seeds", default="sheetcalc,depsolve,boltons,cleo,marshmallow")
    parser.add_argument("--output", type=Path, default=ROOT / "output" / "examples-feature")
    parser.add_argument("--doc", type=Path, default=ROOT / "docs" / "examples.md")
    args = parser.parse_args()
    names = [n for n in args.seeds.split(",") if n]
    config = load_config(
        None,
        output_root=args.output,
        seeds_manifest=_manifest(names, args.output),
        strategies=["feature"],
        statement_level=2,
        max_candidates_per_seed=8,
        workers=2,
    )
    ex = LocalExecutor()
    chosen: list[Task] = []
    for source in load_seed_sources(config.seeds_manifest):
        prepared = prepare_seed(source, config, ex)
        if prepared is None or not prepared.baseline.usable:
            print(f"{source.name}: not usable")
            continue
        excised = ex.call(excise_seed, prepared, config)
        results = mint_batch(ex, prepared, list(excised.candidates), config)
        tasks = [r.task for r in results if r.task is not None]
        print(f"{source.name}: {len(tasks)} feature tasks of {len(excised.candidates)}")
        if tasks:
            chosen.append(max(tasks, key=lambda t: t.features.lines_removed if t.features else 0))
    body = [
        BEGIN,
        "",
        "## Level-2 statements: whole features, described by their behaviour",
        "",
        "Strategy `feature` at statement level 2 (`statement_level = 2`): the statement says what "
        "the feature does, from the removed code's docstrings and the failing tests, and names "
        "only the removed public names the tests use; no signature. Generated by "
        "`scripts/make_feature_examples.py` with the real pipeline on bundled seeds and real "
        "PyPI projects; the largest feature task of each seed.",
        "",
        *[_example(i, t) for i, t in enumerate(chosen, 1)],
        END,
    ]
    doc = args.doc.read_text(encoding="utf-8")
    if BEGIN in doc:
        doc = doc[: doc.index(BEGIN)].rstrip() + "\n"
        rest = args.doc.read_text(encoding="utf-8")
        doc += rest[rest.index(END) + len(END) :] if END in rest else ""
    args.doc.write_text(doc.rstrip() + "\n\n" + "\n".join(body) + "\n", encoding="utf-8")
    print(f"wrote {len(chosen)} examples to {args.doc}")


if __name__ == "__main__":
    main()
