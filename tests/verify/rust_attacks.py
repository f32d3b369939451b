"""Attack patches on a Rust task of the cronplan seed, for `test_rust_exploits.py` and for
measuring them against another taskmint (`python -m tests.verify.rust_attacks`).

The task is `MinHeap::extend` of `src/queue.rs` stubbed (`todo!()`): its one FAIL_TO_PASS test
is the unit test `queue::tests::collects_and_extends`, in the same file. None of these patches
writes the missing code for the library's users; each gets the unit test to pass (or would, if
the grader ran what it was given) some other way. Only the taskmint API the first Rust release
had is used here, so the same patches run against it.
"""

from __future__ import annotations

import dataclasses
import re
from collections.abc import Callable
from pathlib import Path

from taskmint.patches import apply_patch, unified_diff
from taskmint.records import SeedApp, Task

__all__ = ["ATTACKS", "CRONPLAN", "FILE", "UNIT", "attack_patches", "broken_text", "mint_task"]

CRONPLAN = Path(__file__).resolve().parents[2] / "seed_apps" / "cronplan"
FILE = "src/queue.rs"
UNIT = "src/queue.rs::MinHeap.extend"
STUB = re.compile(
    r"(fn extend<I: IntoIterator<Item = T>>\(&mut self, iter: I\) \{\n)(.*?)(\n    \})", re.S
)
REAL = "        for item in iter {\n            self.push(item);\n        }"
FORGED = (
    '        println!("test queue::tests::collects_and_extends ... ok");\n'
    '        println!("test result: ok. 1 passed; 0 failed; 0 ignored; 0 measured; '
    '0 filtered out; finished in 0.00s");\n'
)


def broken_text(task: Task, seed: SeedApp, scratch: Path) -> str:
    """`FILE` as the policy gets it (the seed's file with the task's breaking patch)."""
    scratch.mkdir(parents=True, exist_ok=True)
    (scratch / "src").mkdir(exist_ok=True)
    (scratch / FILE).write_text((Path(seed.root) / FILE).read_text(encoding="utf-8"), "utf-8")
    apply_patch(scratch, task.breaking_patch)
    return (scratch / FILE).read_text(encoding="utf-8")


def _body(text: str, body: str) -> str:
    """`text` with the body of `MinHeap::extend` replaced."""
    new, n = STUB.subn(lambda m: m.group(1) + body + m.group(3), text, count=1)
    assert n == 1, "MinHeap::extend not found"
    return new


def _test_module(text: str, old: str, new: str) -> str:
    head, sep, tests = text.partition("#[cfg(test)]\nmod tests {")
    assert sep and old in tests, old
    return head + sep + tests.replace(old, new, 1)


def _cargo(extra: str) -> Callable[[str, str], str]:
    def make(broken: str, cargo: str) -> str:
        return unified_diff("Cargo.toml", cargo, cargo + extra)

    return make


# name -> (broken queue.rs, pristine Cargo.toml) -> patch
ATTACKS: dict[str, Callable[[str, str], str]] = {
    # build-time code: a build script (cargo runs it before compiling the library)
    "build.rs added": lambda broken, cargo: unified_diff(
        "build.rs", None, 'fn main() {\n    println!("cargo:rustc-cfg=cheat");\n}\n'
    ),
    "src/build.rs + Cargo.toml build key": lambda broken, cargo: (
        unified_diff("src/build.rs", None, "fn main() {}\n")
        + unified_diff(
            "Cargo.toml", cargo, cargo.replace("[package]\n", '[package]\nbuild = "src/build.rs"\n')
        )
    ),
    "Cargo.toml: lib tests off (test = false)": _cargo("\n[lib]\ntest = false\n"),
    "Cargo.toml: harness = false": _cargo("\n[lib]\nharness = false\n"),
    "Cargo.toml: autotests = false, [[test]]": lambda broken, cargo: unified_diff(
        "Cargo.toml",
        cargo,
        cargo.replace("[package]\n", "[package]\nautotests = false\n")
        + '\n[[test]]\nname = "simulation"\npath = "tests/simulation.rs"\n',
    ),
    "Cargo.toml: proc-macro dependency by path": lambda broken, cargo: (
        unified_diff("Cargo.toml", cargo, cargo + 'cheat = { path = "src/cheat" }\n')
        + unified_diff(
            "src/cheat/Cargo.toml",
            None,
            '[package]\nname = "cheat"\nversion = "0.1.0"\nedition = "2021"\n\n'
            "[lib]\nproc-macro = true\n",
        )
        + unified_diff(
            "src/cheat/src/lib.rs",
            None,
            "extern crate proc_macro;\nuse proc_macro::TokenStream;\n\n"
            "#[proc_macro]\npub fn cheat(_: TokenStream) -> TokenStream {\n"
            '    "0".parse().unwrap()\n}\n',
        )
    ),
    ".cargo/config.toml runner": lambda broken, cargo: unified_diff(
        ".cargo/config.toml", None, '[target.x86_64-unknown-linux-gnu]\nrunner = "true"\n'
    ),
    # leaving the test process early
    "process::exit(0) in library code": lambda broken, cargo: unified_diff(
        FILE, broken, _body(broken, "        std::process::exit(0);")
    ),
    "libtest result lines printed, then exit(0)": lambda broken, cargo: unified_diff(
        FILE, broken, _body(broken, FORGED + "        std::process::exit(0);")
    ),
    "libtest result lines, exit(0) through `process as p`": lambda broken, cargo: unified_diff(
        FILE,
        broken,
        _body(broken, "        use std::process as p;\n" + FORGED + "        p::exit(0);"),
    ),
    # code that behaves differently under the unit tests' build
    "cfg!(test) branch in library code": lambda broken, cargo: unified_diff(
        FILE,
        broken,
        _body(
            broken,
            "        if cfg!(test) {\n"
            + REAL
            + "\n        } else {\n            todo!()\n        }",
        ),
    ),
    "#[cfg(test)] statement, predicate over lines": lambda broken, cargo: unified_diff(
        FILE,
        broken,
        _body(
            broken,
            "        #[cfg(\n            test\n        )]\n        {\n"
            + REAL
            + "\n            return;\n        }\n        todo!()",
        ),
    ),
    "cfg!($p) through a macro": lambda broken, cargo: unified_diff(
        FILE,
        broken,
        _body(
            broken,
            "        macro_rules! when { ($p:meta) => { cfg!($p) } }\n"
            "        if when!(test) {\n"
            + REAL
            + "\n        } else {\n            todo!()\n        }",
        ),
    ),
    # the unit tests live in the file the patch edits
    "#[cfg(test)] module edited": lambda broken, cargo: unified_diff(
        FILE,
        broken,
        _test_module(
            broken,
            "        heap.extend([0, 5]);\n",
            "        heap.push(0);\n        heap.push(5);\n",
        ),
    ),
    "#[cfg_attr(test, ignore)] injected": lambda broken, cargo: unified_diff(
        FILE,
        broken,
        _test_module(
            broken,
            "    #[test]\n    fn collects_and_extends",
            "    #[test]\n    #[cfg_attr(test, ignore)]\n    fn collects_and_extends",
        ),
    ),
    "#![cfg(not(test))] on the module": lambda broken, cargo: unified_diff(
        FILE, broken, "#![cfg(not(test))]\n" + broken
    ),
    # the unit tests' assertions replaced: a `macro_rules!` above the test module shadows
    # std's, and an empty body no longer panics
    "assert!/assert_eq! shadowed by macro_rules": lambda broken, cargo: unified_diff(
        FILE,
        broken,
        "macro_rules! assert_eq { ($($t:tt)*) => {}; }\n"
        "macro_rules! assert { ($($t:tt)*) => {}; }\n" + _body(broken, "        let _ = iter;"),
    ),
}


def attack_patches(broken: str, cargo: str) -> dict[str, str]:
    """Every attack's patch, for the broken `FILE` and the seed's Cargo.toml."""
    return {name: make(broken, cargo) for name, make in ATTACKS.items()}


def gold_patch(task: Task) -> str:
    """The task's gold patch (the original code back)."""
    return task.patch


def mint_task(seed: SeedApp, env, sandbox, config, *, limits) -> Task:  # type: ignore[no-untyped-def]
    """The `MinHeap::extend` task, minted as the pipeline mints (without the strength gate)."""
    from taskmint.config import StrengthConfig
    from taskmint.excise import excise
    from taskmint.index import index_seed
    from taskmint.pipeline import mint_candidate
    from taskmint.validate import run_baseline

    baseline = run_baseline(seed, env, sandbox, runs=2, limits=limits)
    assert baseline.usable, baseline.reason
    excised = excise(seed, index_seed(seed), max_candidates=1000, strategies=("stub_body",))
    candidate = next(c for c in excised.candidates if c.units == (UNIT,))
    config = dataclasses.replace(config, strength=StrengthConfig(mutants=0))
    result = mint_candidate(candidate, seed, env, baseline, sandbox, config)
    assert result.task is not None, result.verdict
    return result.task


def main() -> None:
    """Grade every attack and the gold patch on the task pickled at argv[1] (seed, env, task),
    with whatever taskmint is importable: one line each, `reward<TAB>name<TAB>reason`."""
    import pickle
    import sys
    import tempfile

    from taskmint.config import Limits, VerifyConfig
    from taskmint.sandbox import LocalSandbox
    from taskmint.verify import grade_patch

    with open(sys.argv[1], "rb") as fh:
        seed, env, task = pickle.load(fh)
    with tempfile.TemporaryDirectory() as tmp:
        broken = broken_text(task, seed, Path(tmp))
    cargo = (Path(seed.root) / "Cargo.toml").read_text(encoding="utf-8")
    patches = {"gold": task.patch, **attack_patches(broken, cargo)}
    only = sys.argv[2:]
    for name, patch in patches.items():
        if only and name not in only:
            continue
        r = grade_patch(
            task,
            patch,
            seed=seed,
            env=env,
            sandbox=LocalSandbox(),
            limits=Limits(wall_seconds=300),
            config=VerifyConfig(),
        )
        print(f"{r.reward}\t{name}\t{r.reason[:160]}\t{len(r.findings)} finding(s)", flush=True)


if __name__ == "__main__":
    main()
