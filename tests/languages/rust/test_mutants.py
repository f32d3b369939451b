"""Rust mutants: each operator on a snippet, what is never mutated, the sampling shared with
the other languages, and with real cargo that the fixture crate's mutants compile."""

from __future__ import annotations

import dataclasses
import shutil
import subprocess
from pathlib import Path

import pytest

from taskmint.languages.rust.mutants import RUST_OPERATORS, rust_mutants
from taskmint.languages.rust.tree import parse
from taskmint.strength.mutants import Mutant, sample_mutants

FIXTURES = Path(__file__).resolve().parents[2] / "fixtures" / "rust_excise"
CARGO = shutil.which("cargo") or (
    str(Path.home() / ".cargo/bin/cargo") if (Path.home() / ".cargo/bin/cargo").exists() else None
)

SRC = b"""\
fn f(xs: &[u8], n: usize, s: String) -> Option<u8> {
    let mut total = 0u8;
    let arr = [0u8; 4];
    if xs.len() < n && !xs.is_empty() {
        total += 1;
        log(xs, 255);
    } else {
        other();
    }
    let m = match n { 1 => 2, _ => 3 };
    let z = s + "x";
    let w = n + 1;
    let q = n / 1;
    let sh = 1u32 << 3;
    vec![7; 4];
    if n == 0 { panic!("no"); }
    let p = pair.0 + arr[3];
    let v = if n > 2 { 1 } else { 2 };
    Some(total)
}

fn unit(flag: bool) {
    if flag {
        go();
    }
}

fn text() -> fmt::Result {
    write!(f, "x")?;
    Ok(())
}

#[cfg(test)]
mod tests {
    fn g() -> bool {
        1 < 2
    }
}

const fn h() -> u8 {
    1 + 2
}
"""
ALL = set(range(1, 200))


def found(src: bytes = SRC, lines: set[int] = ALL) -> set[tuple[str, int, str, str]]:
    return {(m.operator, m.line, m.before, m.after) for m in rust_mutants("src/a.rs", src, lines)}


def test_each_operator_keeps_the_types():
    got = found()
    expected = {
        ("compare", 4, "<", ">="),
        ("boolean", 4, "&&", "||"),
        ("boolean", 4, "!xs.is_empty()", "xs.is_empty()"),
        ("branch", 4, "xs.len() < n && !xs.is_empty()", "!(xs.len() < n && !xs.is_empty())"),
        ("branch", 7, "{ other(); }", "{}"),
        ("arithmetic", 5, "+=", "-="),
        ("drop", 5, "total += 1;", "{}"),
        ("drop", 6, "log(xs, 255);", "{}"),
        ("constant", 6, "255", "254"),  # 256 would overflow a u8
        ("constant", 2, "0u8", "1u8"),
        ("arithmetic", 12, "+", "-"),
        ("constant", 13, "1", "2"),  # never a division by zero
        ("constant", 14, "1u32", "0u32"),
        ("early_return", 2, "", "if true { return None; }"),
        ("early_return", 23, "", "if true { return; }"),
        ("branch", 23, "flag", "!flag"),
        ("early_return", 29, "", "if true { return Ok(()); }"),
        ("drop", 29, 'write!(f, "x")?;', "{}"),
    }
    assert expected <= got, expected - got
    befores = {(line, before) for _, line, before, _ in got}
    assert (11, "+") not in befores  # a String plus a &str: no `-` for strings
    assert (3, "4") not in befores  # an array length
    assert (14, "3") not in befores  # a shift amount
    assert (17, "3") not in befores and (17, "0") not in befores  # an index, a tuple field
    assert not any(line == 10 and before == "1" for line, before in befores)  # a pattern
    assert (15, "7") not in befores  # a macro's tokens
    assert not any(op == "drop" and line == 16 for op, line, _, _ in got)  # panic! diverges
    assert not any(op == "branch" and line == 18 and after == "{}" for op, line, _, after in got)
    assert not any(line >= 34 for _, line, _, _ in got), "test code and const fn stay"
    assert {op for op, *_ in got} == set(RUST_OPERATORS)


def test_only_the_lines_given_and_every_mutant_parses():
    only = found(lines={5})
    assert only and all(line == 5 for _, line, _, _ in only)
    for m in rust_mutants("src/a.rs", SRC, ALL):
        parse(m.apply(SRC))
        assert m.first <= m.line <= m.last or m.operator == "early_return"
    assert rust_mutants("src/a.rs", b"fn broken( {", ALL) == []


def test_sampling_spreads_over_operators_and_is_seeded():
    mutants = [Mutant(**dataclasses.asdict(m)) for m in rust_mutants("src/a.rs", SRC, ALL)]
    picked = sample_mutants(mutants, 7, "task-1")
    assert len({m.operator for m in picked}) == 7
    assert [m.key for m in picked] == [m.key for m in sample_mutants(mutants, 7, "task-1")]
    assert all(isinstance(m, Mutant) for m in picked)
    ours = rust_mutants("src/a.rs", SRC, ALL)
    assert [m.description for m in mutants] == [m.description for m in ours]
    assert [m.key for m in mutants] == [m.key for m in ours]


@pytest.mark.slow
def test_every_mutant_of_the_fixture_crate_compiles(tmp_path):
    work = tmp_path / "shapes"
    shutil.copytree(FIXTURES / "shapes", work)
    assert CARGO is not None
    env = {
        "PATH": f"{Path(CARGO).parent}:/usr/bin:/bin",
        "HOME": str(Path.home()),
        "CARGO_TARGET_DIR": str(tmp_path / "target"),
    }

    def check() -> subprocess.CompletedProcess[str]:
        return subprocess.run(
            [CARGO, "check", "--tests", "--offline", "--quiet"],
            cwd=work,
            env=env,
            capture_output=True,
            text=True,
            timeout=600,
        )

    assert check().returncode == 0
    failed = []
    count = 0
    for rel in ("src/lib.rs", "src/area.rs", "src/text/mod.rs", "src/text/words.rs"):
        data = (work / rel).read_bytes()
        for m in rust_mutants(rel, data, ALL):
            count += 1
            (work / rel).write_bytes(m.apply(data))
            proc = check()
            if proc.returncode != 0:
                failed.append(f"{m.description}: {proc.stderr[-400:]}")
        (work / rel).write_bytes(data)
    assert count >= 20
    assert not failed, failed


def test_an_else_that_initializes_a_variable_is_not_emptied():
    src = (
        b"fn g(c: bool) -> u8 {\n    let v;\n    if c {\n        v = 1;\n    } else {\n"
        b"        v = 2;\n    }\n    let w = 0;\n    if c {\n        log();\n    } else {\n"
        b"        w.log();\n    }\n    v\n}\n"
    )
    emptied = [
        m for m in rust_mutants("src/g.rs", src, ALL) if m.after == "{}" and m.operator == "branch"
    ]
    assert [m.line for m in emptied] == [11]
