"""The tree-sitter indexer: units of JavaScript, TypeScript, Go and Rust files, and bad files."""

from __future__ import annotations

from pathlib import Path

import pytest

from taskmint.index.python import SourceSkipped
from taskmint.index.treesitter import index_files, index_source

SEED = Path(__file__).resolve().parents[2] / "seed_apps" / "mdrender"

JS = b"""\
/**
 * Adds two numbers.
 * @param {number} a
 */
export function add(a, b) {
  // a comment line does not count
  const s = a + b;

  return s;
}

export class Box {
  /** Make a box. */
  constructor(v) {
    this.v = v;
  }

  get value() {
    return this.v;
  }

  set value(v) {
    this.v = v;
  }

  static #check(x) {
    return x > 0 ? x : -x;
  }

  async load(url) {
    for (const part of url) {
      if (part && !this.v || part === "x") {
        try {
          await fetch(part);
        } catch (e) {
          this.v = e;
        }
      }
    }
  }
}

const helpers = { method() { return 1; } };

export const twice = (x) => x * 2;

let outer = function () {
  function inner(n) {
    while (n) n--;
    return n;
  }
  return inner(3);
};

export default function () {
  return 42;
}
"""


def _by_name(units):
    return {u.qualname: u for u in units}


def test_javascript_units_and_their_fields():
    units = index_source("javascript", "src/m.js", JS, snapshot_id="snap")
    by = _by_name(units)
    assert [u.qualname for u in units] == [
        "add",
        "Box.constructor",
        "Box.value",
        "Box.value#2",
        "Box.#check",
        "Box.load",
        "twice",
        "outer",
        "outer.inner",
        "default",
    ]
    add = by["add"]
    assert (add.kind, add.start_line, add.end_line, add.body_start_line) == ("function", 5, 10, 7)
    assert add.signature == "export function add(a, b)"
    assert add.docstring == "Adds two numbers.\n@param {number} a"
    assert add.body_lines == 2 and add.complexity == 1 and add.language == "javascript"
    assert by["Box.constructor"].kind == "method"
    assert by["Box.constructor"].docstring == "Make a box."
    assert by["Box.value"].signature == "get value()"
    assert by["Box.#check"].complexity == 2  # the ternary
    load = by["Box.load"]
    # for, if, &&, ||, catch
    assert load.complexity == 6 and load.is_async and load.signature == "async load(url)"
    assert by["twice"].signature == "export const twice = (x) =>"
    assert by["twice"].body_lines == 1 and by["twice"].body_start_line == by["twice"].start_line
    # the nested function's loop is its own, not its parent's
    assert by["outer"].complexity == 1 and by["outer.inner"].complexity == 2
    assert by["default"].signature == "export default function ()"
    assert "helpers.method" not in by  # object-literal methods are not units
    assert len({u.unit_id for u in units}) == len(units)


TS = b"""\
export abstract class Shape<T> {
  abstract area(): number;
  /**
   * Scales it.
   */
  @logged
  @traced("scale")
  scale(k: number): this {
    return this;
  }
}

namespace Geo {
  export function dist(a: number, b: number): number {
    return Math.abs(a - b);
  }
}

function over(a: string): void;
function over(a: any) {
  console.log(a);
}
"""


def test_typescript_units():
    by = _by_name(index_source("typescript", "a.ts", TS))
    assert sorted(by) == ["Geo.dist", "Shape.scale", "over"]
    scale = by["Shape.scale"]
    assert scale.start_line == 6 and scale.body_start_line == 9
    assert scale.decorators == ("logged", 'traced("scale")')
    assert scale.docstring == "Scales it." and scale.signature == "scale(k: number): this"
    assert by["over"].start_line == 20  # the implementation, not the overload signature


def test_tsx_files_use_the_tsx_grammar():
    src = b"export function App(p: {n: number}) {\n  return <div>{p.n}</div>;\n}\n"
    assert [u.qualname for u in index_source("typescript", "App.tsx", src)] == ["App"]
    with pytest.raises(SourceSkipped):
        index_source("typescript", "App.ts", src)


GO = b"""\
package stack

// Stack is a stack.
type Stack[T any] struct{ items []T }

// Push adds v.
// It never fails.
func (s *Stack[T]) Push(v T) {
\ts.items = append(s.items, v)
}

// Unrelated comment.

func Sum(xs []int) (total int) {
\tfor _, x := range xs {
\t\tif x > 0 && x < 100 {
\t\t\ttotal += x
\t\t}
\t}
\tswitch total {
\tcase 1:
\t\treturn 1
\tdefault:
\t}
\treturn total
}

func (Stack[T]) Len() int { return 0 }
"""


def test_go_units():
    by = _by_name(index_source("go", "stack.go", GO))
    assert sorted(by) == ["Stack.Len", "Stack.Push", "Sum"]
    push = by["Stack.Push"]
    assert push.kind == "method" and push.docstring == "Push adds v.\nIt never fails."
    assert push.signature == "func (s *Stack[T]) Push(v T)"
    assert (push.start_line, push.end_line, push.body_start_line) == (8, 10, 9)
    total = by["Sum"]
    assert total.docstring is None  # separated by a blank line
    assert total.complexity == 5  # for, if, &&, one case
    assert total.body_lines == 11 and total.kind == "function"
    assert by["Stack.Len"].body_lines == 1


RS = b"""\
use std::fmt;

pub struct Stack<T> {
    items: Vec<T>,
}

impl<T> Stack<T> {
    /// Pushes `v`.
    ///
    /// Never fails.
    #[inline]
    pub fn push(&mut self, v: T) {
        self.items.push(v);
    }
}

impl<T: fmt::Debug> fmt::Display for Stack<T> {
    fn fmt(&self, f: &mut fmt::Formatter) -> fmt::Result {
        match self.items.len() {
            0 => write!(f, "empty"),
            _ => write!(f, "{:?}", self.items),
        }
    }
}

impl<T> fmt::Debug for Stack<T> {
    fn fmt(&self, f: &mut fmt::Formatter) -> fmt::Result {
        Ok(())
    }
}

pub trait Named {
    fn name(&self) -> String;
    fn greet(&self) -> String {
        format!("hi {}", self.name())
    }
}

pub fn top(xs: &[i32]) -> i32 {
    if xs.is_empty() || xs[0] < 0 {
        return 0;
    }
    xs[0]
}

#[cfg(test)]
mod tests {
    #[test]
    fn helper() {
        assert_eq!(1, 1);
    }
}
"""


def test_rust_units():
    units = index_source("rust", "lib.rs", RS)
    assert [u.qualname for u in units] == [
        "Stack.push",
        "Stack.fmt",
        "Stack.fmt#2",
        "Named.greet",
        "top",
        "tests.helper",
    ]
    by = _by_name(units)
    push = by["Stack.push"]
    assert push.kind == "method" and push.decorators == ("#[inline]",)
    assert push.docstring == "Pushes `v`.\n\nNever fails."
    assert push.start_line == 11 and push.signature == "pub fn push(&mut self, v: T)"
    assert by["Stack.fmt"].complexity == 3  # two match arms
    assert by["top"].complexity == 3 and by["top"].kind == "function"
    assert by["top"].body_lines == 4
    assert by["tests.helper"].decorators == ("#[test]",)


@pytest.mark.parametrize(
    ("language", "path", "source"),
    [
        ("javascript", "deep.js", b"const x = " + b"[" * 10_000 + b"]" * 10_000 + b";\n"),
        ("typescript", "deep.ts", b"const x = " + b"(" * 10_000 + b"1" + b")" * 10_000 + b";\n"),
        ("go", "deep.go", b"package p\nvar x = " + b"(" * 10_000 + b"1" + b")" * 10_000 + b"\n"),
        ("rust", "deep.rs", b"fn f() {" + b"{" * 10_000 + b"}" * 10_000 + b"}\n"),
    ],
)
def test_deep_nesting_does_not_crash(language, path, source):
    try:
        units = index_source(language, path, source)
    except SourceSkipped as exc:  # refusing with a reason is fine too; crashing is not
        assert str(exc)
    else:
        assert len(units) <= 1


def test_ten_thousand_nested_functions_are_skipped_with_a_reason():
    source = b"function f() {\n" * 10_000 + b"}\n" * 10_000
    with pytest.raises(SourceSkipped, match="too deeply nested"):
        index_source("javascript", "nest.js", source)


def test_bad_files_are_skipped_with_reasons(tmp_path):
    files = {
        "ok.js": b"export function f(a) {\n  return a;\n}\n",
        "broken.js": b"function f( {\n  return 1;\n}\n",
        "minified.js": b"function f(){" + b"a();" * 600 + b"}\n",
        "huge.js": b"// x\n" * 250_000,
        "binary.js": b"function f() {}\n\0\0",
        "generated.js": b"// Code generated by protoc. DO NOT EDIT.\nfunction f() {}\n",
        "latin1.js": b"// caf\xe9\nfunction f() {}\n",
        "notes.txt": b"not code",
        "types.d.ts": b"export declare function f(): void;\n",
    }
    for name, data in files.items():
        (tmp_path / name).write_bytes(data)
    units, skipped = index_files("javascript", tmp_path, sorted(files), snapshot_id="s")
    assert [u.qualname for u in units] == ["f"] and units[0].file == "ok.js"
    reasons = {s.path: s.reason for s in skipped}
    assert sorted(reasons) == [
        "binary.js",
        "broken.js",
        "generated.js",
        "huge.js",
        "latin1.js",
        "minified.js",
    ]
    assert reasons["broken.js"].startswith("does not parse: syntax error at line 1")
    assert "over 2000 characters" in reasons["minified.js"]
    assert "too large" in reasons["huge.js"]
    assert "NUL" in reasons["binary.js"]
    assert "generated" in reasons["generated.js"]
    assert "UTF-8" in reasons["latin1.js"]


def test_go_test_files_are_not_indexed(tmp_path):
    (tmp_path / "a.go").write_bytes(b"package a\n\nfunc A() int {\n\treturn 1\n}\n")
    (tmp_path / "a_test.go").write_bytes(b"package a\n\nfunc TestA() {\n\tA()\n}\n")
    units, skipped = index_files("go", tmp_path, ["a.go", "a_test.go"])
    assert [u.qualname for u in units] == ["A"] and skipped == []


def test_every_mdrender_source_file_indexes():
    files = sorted(str(p.relative_to(SEED)) for p in (SEED / "src").rglob("*.js"))
    units, skipped = index_files("javascript", SEED, files, snapshot_id="mdrender")
    assert skipped == []
    assert {u.file for u in units} == set(files)
    by = {(u.file, u.qualname): u for u in units}
    slug = by[("src/slugger.js", "Slugger.slug")]
    assert slug.kind == "method" and slug.signature == "slug(text)"
    assert slug.docstring is not None and slug.docstring.startswith("Unique slug for `text`.")
    assert by[("src/options.js", "isBoolean")].signature == "const isBoolean = (v) =>"
    assert len(units) > 100
