"""The Rust patch scan (each rule fires on an attack and not on gold patches), and the test
code a grader restores: test items, the splice of pristine test modules, test-only files."""

from __future__ import annotations

from pathlib import Path

import pytest

from taskmint.languages.rust import testcode
from taskmint.languages.rust.scan import (
    RUST_LINE_RULES,
    owns,
    rust_path_findings,
    scan_rust_patch,
    strip_comment,
)
from taskmint.languages.rust.testcode import RestoreError, cfg_value, restore_test_modules
from taskmint.patches import unified_diff
from taskmint.verify.scan import scan_patch
from tests.languages.rust.test_excise import candidates

FIXTURES = Path(__file__).resolve().parents[2] / "fixtures" / "rust_excise"
BASE = "pub fn f() -> u8 {\n    1\n}\n"


def added(line: str, path: str = "src/lib.rs") -> tuple[str, ...]:
    return scan_patch(unified_diff(path, BASE, BASE + line + "\n"))


ATTACKS = [
    ("    std::process::exit(0);", "exits the process"),
    ("    process::abort();", "exits the process"),
    ("use std::process as p;", "exits the process"),
    ("use std::process::{exit as quit};", "exits the process"),
    ("    ($m:ident) => { std::process::$m(0) };", "exits the process"),
    ('    if std::thread::current().name() == Some("t") {}', "reads the running test's name"),
    ("    unsafe { libc::_exit(0) };", "exits the process"),
    ('extern "C" { fn kill(pid: i32, sig: i32) -> i32; }', "calls foreign functions"),
    ("    unsafe { kill(getppid(), SIGKILL) };", "kills, traces or signals processes"),
    ("    ptrace(PTRACE_TRACEME, 0);", "kills, traces or signals processes"),
    ('    unsafe { std::arch::asm!("syscall") };', "uses inline assembly or raw system calls"),
    ("#[no_mangle]", "exports symbols or runs code at start-up"),
    ('#[unsafe(export_name = "main")]', "exports symbols or runs code at start-up"),
    ('#[link_section = ".init_array"]', "exports symbols or runs code at start-up"),
    ("    std::panic::set_hook(Box::new(|_| {}));", "replaces the panic hook"),
    ('    println!("test tests::parses ... ok");', "prints test-runner result lines"),
    ('    println!("test result: ok. 3 passed; 0 failed");', "prints test-runner result lines"),
    ('    eprintln!("running {} tests", n);', "prints test-runner result lines"),
    (
        '    println!("{{ \\"type\\": \\"test\\", \\"event\\": \\"ok\\" }}");',
        "prints test-runner result lines",
    ),
    ("#![test_runner(crate::runner)]", "replaces the test harness"),
    ("#![no_main]", "replaces the test harness"),
    ("#[test]", "adds or disables tests"),
    ("#[ignore]", "adds or disables tests"),
    ('#[cfg_attr(test, should_panic(expected = ""))]', "adds or disables tests"),
    ("#[cfg(not(test))]", "changes what compiles under test"),
    ("    if cfg!(test) { return 3; }", "changes what compiles under test"),
    ("#![cfg(any())]", "disables a module with cfg"),
    ('    let s = std::fs::read_to_string("/proc/self/cmdline");', "reads /proc or descriptors"),
    ("    let out = unsafe { File::from_raw_fd(1) };", "reads /proc or descriptors"),
    ('    let p = "target/debug/deps";', "reaches into the build output"),
    ('const T: &str = include_str!("../tests/integration.rs");', "includes test files"),
    ('include!("sneaky.rs");', "includes test files"),
    ('    let d = std::fs::read("tests/data.txt");', "names test files"),
    ('const K: &str = env!("HOME");', "reads the environment at compile time"),
    (
        '    let v = std::env::var("TASKMINT_CHANNEL");',
        "reads the test harness's or grader's environment",
    ),
    (
        "    let all: Vec<_> = std::env::args().collect();",
        "reads the test harness's or grader's environment",
    ),
    (
        '    std::env::set_var("RUST_TEST_THREADS", "1");',
        "reads the test harness's or grader's environment",
    ),
    ('    Command::new("cargo").status();', "runs processes"),
    ("extern crate proc_macro;", "is a procedural macro"),
    ("macro_rules! assert_eq { ($($t:tt)*) => {}; }", "shadows a standard macro"),
]


@pytest.mark.parametrize(("line", "what"), ATTACKS)
def test_each_rust_rule_fires_on_its_attack(line, what):
    assert any(f.endswith(f": {what}") for f in added(line)), added(line)


def test_every_rule_has_an_attack():
    assert {what for what, _ in RUST_LINE_RULES} == {what for _, what in ATTACKS}


def test_always_equal_comparisons_across_lines():
    attack = "impl PartialEq for X {\n    fn eq(&self, _: &Self) -> bool {\n        true\n    }\n}"
    assert any("compares equal to anything" in f for f in added(attack))
    cmp = "fn cmp(&self, _o: &Self) -> Ordering {\n    Ordering::Equal\n}"
    assert any("compares equal to anything" in f for f in added(cmp))
    honest = "fn eq(&self, o: &Self) -> bool {\n    self.0 == o.0\n}"
    assert added(honest) == ()


@pytest.mark.parametrize(
    ("path", "text", "whats"),
    [
        ("build.rs", "fn main() {}", {"adds or edits a build script"}),
        ("crates/x/build.rs", "fn main() {}", {"adds or edits a build script"}),
        (
            "Cargo.toml",
            '[patch.upstream]\nsemver = { path = "../evil" }',
            {"edits the package manifest", "redirects dependencies"},
        ),
        (
            "Cargo.toml",
            "[lib]\nproc-macro = true",
            {"edits the package manifest", "declares a proc-macro crate"},
        ),
        (
            "Cargo.toml",
            '[[test]]\nname = "t"\nharness = false',
            {"edits the package manifest", "changes test targets"},
        ),
        (
            "Cargo.toml",
            '[profile.test]\npanic = "abort"',
            {"edits the package manifest", "changes the build profile"},
        ),
        (
            "Cargo.toml",
            'build = "gen.rs"',
            {"edits the package manifest", "declares a build script"},
        ),
        ("Cargo.lock", "# x", {"edits the lock file"}),
        (
            ".cargo/config.toml",
            '[target.x86_64-unknown-linux-gnu]\nrunner = "true"',
            {"adds or edits cargo configuration", "replaces the test runner"},
        ),
        (
            ".cargo/config",
            '[build]\nrustflags = ["--cfg", "x"]',
            {"adds or edits cargo configuration", "sets compiler flags"},
        ),
        ("rust-toolchain.toml", '[toolchain]\nchannel = "nightly"', {"changes the toolchain"}),
        (".config/nextest.toml", "[profile.default]", {"edits nextest's configuration"}),
        ("tests/integration.rs", "fn x() {}", {"edits test files"}),
    ],
)
def test_build_and_configuration_files(path, text, whats):
    findings = scan_patch(unified_diff(path, None, text + "\n"))
    assert {f.split(": ", 1)[1] for f in findings} == whats
    assert owns(path)


def test_plain_rust_passes_and_the_other_languages_rules_do_not_read_it():
    honest = (
        "use std::thread;\n"
        "/// Calls std::process::exit in the docs only.\n"
        "pub fn spawn_all(n: usize) -> Vec<thread::JoinHandle<()>> {\n"
        '    let url = "http://example.org/a"; // not a comment: a string\n'
        "    (0..n).map(|_| thread::spawn(|| {})).collect()\n"
        "}\n"
        'const V: &str = env!("CARGO_PKG_VERSION");\n'
        "#[inline]\n"
        '#[cfg(feature = "std")]\n'
        "fn sys_exit() {}\n"
    )
    assert added(honest) == ()
    assert not owns("src/main.py") and rust_path_findings("src/lib.rs") == []
    hidden = '    let url = "http://x"; std::process::exit(0); // done'
    assert any("exits the process" in f for f in added(hidden))


def test_strip_comment_reads_strings_chars_and_raw_strings():
    assert strip_comment('let a = "//"; // c') == 'let a = "//"; '
    assert strip_comment('let a = r#"x "//" y"#; // c') == 'let a = r#"x "//" y"#; '
    assert strip_comment("let c = '/'; let d = '\\''; // c") == "let c = '/'; let d = '\\''; "
    assert strip_comment("fn f<'a>(x: &'a str) // c") == "fn f<'a>(x: &'a str) "


@pytest.mark.parametrize("crate", ["shapes", "strict"])
def test_no_finding_on_the_gold_patches_of_the_fixture_crates(crate):
    found = candidates(crate)
    assert found
    for c in found:
        assert scan_patch(c.gold_patch) == (), (c.units, scan_patch(c.gold_patch))
        assert scan_rust_patch(c.breaking_patch) == ()


# --- test code in source files --------------------------------------------------------------

PRISTINE = """\
use std::fmt;

pub fn add(a: u8, b: u8) -> u8 {
    a + b
}

mod inner {
    pub fn sub(a: u8, b: u8) -> u8 {
        a - b
    }

    #[cfg(test)]
    mod tests {
        #[test]
        fn subs() {
            assert_eq!(super::sub(3, 1), 2);
        }
    }
}

#[test]
fn loose_test() {
    assert_eq!(add(1, 1), 2);
}

#[cfg(all(test, feature = "x"))]
impl Extra for u8 {}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn adds() {
        assert_eq!(add(1, 2), 3);
    }
}
"""


def test_test_items_are_the_outermost_test_only_items():
    items = testcode.test_items(PRISTINE.encode())
    assert [i.key for i in items] == [
        "mod inner::mod tests",
        "fn loose_test",
        "impl Extra for u8",
        "mod tests",
    ]
    for item in items:
        text = PRISTINE.encode()[item.start : item.end].decode()
        assert text.startswith("#[") and text.endswith("}")


def test_cfg_values():
    assert cfg_value("test", test=False) is False
    assert cfg_value('all(test, feature = "x")', test=False) is False
    assert cfg_value("any(test, unix)", test=False) is None
    assert cfg_value("not(test)", test=True) is False
    assert cfg_value("all(not(test), any())", test=False) is False
    assert cfg_value("broken(", test=False) is None


def test_restore_puts_back_edited_disabled_and_deleted_tests_and_keeps_the_fix():
    fixed = PRISTINE.replace("    a + b\n", "    a.wrapping_add(b)\n")
    attacked = (
        fixed.replace("assert_eq!(add(1, 2), 3);", "assert!(true);")  # edited
        .replace('#[cfg(all(test, feature = "x"))]\nimpl Extra for u8 {}\n', "")  # deleted
        .replace("    #[cfg(test)]\n    mod tests {", "    #[cfg(any())]\n    mod tests {")
        .replace("#[test]\nfn loose_test()", "#[test]\n#[ignore]\nfn loose_test()")
        + "\n#[cfg(test)]\nfn planted() {}\n"
    )
    restored = restore_test_modules(PRISTINE, attacked)
    assert "a.wrapping_add(b)" in restored  # the policy's source edit stays
    assert "assert!(true)" not in restored and "assert_eq!(add(1, 2), 3);" in restored
    assert "#[cfg(any())]" not in restored and "#[ignore]" not in restored
    assert "impl Extra for u8 {}" in restored and "planted" not in restored
    assert testcode.test_items(restored.encode()) and [
        i.key for i in testcode.test_items(restored.encode())
    ] == [i.key for i in testcode.test_items(PRISTINE.encode())]
    # nothing to do on an untouched file, and pristine test code is byte-identical
    assert restore_test_modules(PRISTINE, PRISTINE) == PRISTINE
    for item in testcode.test_items(PRISTINE.encode()):
        assert PRISTINE.encode()[item.start : item.end] in restored.encode()


def test_restore_refuses_what_it_cannot_read():
    with pytest.raises(RestoreError, match="patched file"):
        restore_test_modules(PRISTINE, PRISTINE + "fn broken( {\n")
    with pytest.raises(RestoreError, match="test-only"):
        restore_test_modules(PRISTINE, "#![cfg(test)]\n" + PRISTINE)
    whole = "#![cfg(test)]\nfn t() {}\n"
    assert restore_test_modules(whole, "fn t() { changed() }\n") == whole


def test_test_module_files_follow_cfg_test_mod_declarations():
    root = FIXTURES / "shapes"
    sources = {str(p.relative_to(root)): p.read_bytes() for p in root.rglob("*.rs")}
    assert testcode.test_module_files(sources) == {"src/text/tests.rs"}
    more = {
        "src/lib.rs": (
            b'#[cfg(test)]\nmod tests;\n#[cfg(test)]\n#[path = "checks/all.rs"]\nmod all;\nmod a;\n'
        ),
        "src/tests/mod.rs": b"mod more;\n",
        "src/tests/more.rs": b"",
        "src/checks/all.rs": b"",
        "src/a.rs": b"#[cfg(test)]\nmod t;\n",
        "src/a/t.rs": b"",
        "src/b.rs": b"#![cfg(test)]\n",
        "src/c.rs": b"fn c() {}\n",
    }
    assert testcode.test_module_files(more) == {
        "src/tests/mod.rs",
        "src/tests/more.rs",
        "src/checks/all.rs",
        "src/a/t.rs",
        "src/b.rs",
    }


def test_test_code_edits_name_the_test_items_a_patch_touches():
    sources = {"src/lib.rs": PRISTINE.encode(), "src/t.rs": b"", "src/main.rs": b"mod t;\n"}
    edit_test = unified_diff(
        "src/lib.rs", PRISTINE, PRISTINE.replace("assert_eq!(add(1, 2), 3);", "assert!(true);")
    )
    assert testcode.test_code_edits(edit_test, sources) == (
        "src/lib.rs:35: edits test code (mod tests)",
    )
    edit_source = unified_diff(
        "src/lib.rs", PRISTINE, PRISTINE.replace("    a + b\n", "    b + a\n")
    )
    assert testcode.test_code_edits(edit_source, sources) == ()
    sources["src/main.rs"] = b"#[cfg(test)]\nmod t;\n"
    assert testcode.test_code_edits(unified_diff("src/t.rs", "", "x\n"), sources) == (
        "src/t.rs:0: edits a test-only module file",
    )
