"""Tree-sitter byte-range edits: before/after sources, byte preservation, gold patches, and a
real-sandbox check that stubs of the JavaScript seed break its tests."""

from __future__ import annotations

import collections
from pathlib import Path

import pytest

from taskmint.acquire import acquire
from taskmint.excise.treesitter_candidates import js_candidates, treesitter_candidates
from taskmint.excise.treesitter_edits import remove_class, remove_function, remove_method, stub_body
from taskmint.index.treesitter import index_files
from taskmint.index.treesitter_defs import definitions
from taskmint.languages import build_environment
from taskmint.patches import apply_patch, unified_diff
from taskmint.validate import run_baseline, validate_candidate
from tests.conftest import LIMITS

SEED = Path(__file__).resolve().parents[2] / "seed_apps" / "mdrender"


def _check(edit, language, before: str, qualname: str, after: str) -> None:
    assert edit(language, before.encode(), qualname).decode() == after


# --- JavaScript -------------------------------------------------------------------------------

JS = """\
import { x } from "./x.js";

/**
 * Adds.
 */
export function add(a, b) {
  const s = a + b;
  return s;
}

function helper(n) {
  return n;
}

/** A box. */
export class Box {
  /** Make it. */
  constructor(v) {
    this.v = v;
  }

  get value() {
    return this.v;
  }
}

export const twice = (x) => x * 2;
"""


def test_js_stub_body():
    _check(
        stub_body,
        "javascript",
        JS,
        "add",
        JS.replace(
            "{\n  const s = a + b;\n  return s;\n}",
            '{\n  throw new Error("not implemented");\n}',
        ),
    )
    _check(
        stub_body,
        "javascript",
        JS,
        "Box.value",
        JS.replace("{\n    return this.v;\n  }", '{\n    throw new Error("not implemented");\n  }'),
    )
    _check(
        stub_body,
        "javascript",
        JS,
        "twice",
        JS.replace("(x) => x * 2;", '(x) => {\n  throw new Error("not implemented");\n};'),
    )


def test_js_stub_keeps_the_bodys_indentation_style():
    before = "class A {\n\tm() {\n\t\treturn 1;\n\t}\n}\nfunction f() {\n    return 2;\n}\n"
    after = stub_body("javascript", before.encode(), "A.m").decode()
    assert after == 'class A {\n\tm() {\n\t\tthrow new Error("not implemented");\n\t}\n}\n' + (
        "function f() {\n    return 2;\n}\n"
    )
    after = stub_body("javascript", before.encode(), "f").decode()
    assert after.endswith('function f() {\n    throw new Error("not implemented");\n}\n')


def test_js_remove_function_takes_export_doc_and_one_blank_line():
    _check(
        remove_function,
        "javascript",
        JS,
        "add",
        JS.replace(
            "/**\n * Adds.\n */\nexport function add(a, b) {\n"
            "  const s = a + b;\n  return s;\n}\n\n",
            "",
        ),
    )
    _check(
        remove_function,
        "javascript",
        JS,
        "helper",
        JS.replace("function helper(n) {\n  return n;\n}\n\n", ""),
    )
    # the last definition has no blank line after it: the one before it goes
    _check(
        remove_function,
        "javascript",
        JS,
        "twice",
        JS.replace("}\n\nexport const twice = (x) => x * 2;\n", "}\n"),
    )


def test_js_remove_method_and_class():
    _check(
        remove_method,
        "javascript",
        JS,
        "Box.constructor",
        JS.replace("  /** Make it. */\n  constructor(v) {\n    this.v = v;\n  }\n\n", ""),
    )
    _check(
        remove_method,
        "javascript",
        JS,
        "Box.value",
        JS.replace("  }\n\n  get value() {\n    return this.v;\n  }\n", "  }\n"),
    )
    start = JS.index("/** A box. */")
    end = JS.index("export const twice")
    _check(remove_class, "javascript", JS, "Box", JS[:start] + JS[end:])


def test_unknown_names_raise_lookup_error():
    data = JS.encode()
    for edit, name in [
        (stub_body, "nope"),
        (remove_function, "Box.value"),  # a method, not a function
        (remove_method, "add"),
        (remove_class, "add"),
        (stub_body, "Box"),  # a class has no body to stub
    ]:
        with pytest.raises(LookupError):
            edit("javascript", data, name)
    with pytest.raises(LookupError, match="no class"):
        remove_class("go", b"package p\n\ntype T struct{}\n", "T")


def test_a_name_declared_with_others_is_not_removed_alone():
    src = b"const a = () => {\n  return 1;\n}, b = 2;\n"
    with pytest.raises(LookupError, match="together with other names"):
        remove_function("javascript", src, "a")
    assert b"throw" in stub_body("javascript", src, "a")


# --- TypeScript, Go, Rust ------------------------------------------------------------------------

TS = """\
export class Shape {
  area(): number {
    return 0;
  }

  /**
   * Scales it.
   */
  @logged
  scale(k: number): this {
    return this;
  }
}

export function make(): Shape {
  return new Shape();
}
"""


def test_typescript_edits():
    _check(
        stub_body,
        "typescript",
        TS,
        "make",
        TS.replace("{\n  return new Shape();\n}", '{\n  throw new Error("not implemented");\n}'),
    )
    _check(
        remove_method,
        "typescript",
        TS,
        "Shape.scale",
        TS.replace(
            "  }\n\n  /**\n   * Scales it.\n   */\n  @logged\n  scale(k: number): this {\n"
            "    return this;\n  }\n",
            "  }\n",
        ),
    )
    _check(remove_class, "typescript", TS, "Shape", TS[TS.index("export function make") :])
    _check(
        remove_function,
        "typescript",
        TS,
        "make",
        TS[: TS.index("\nexport function make")],
    )


GO = """\
package stack

// Push adds v.
// It never fails.
func (s *Stack) Push(v int) {
\ts.items = append(s.items, v)
}

func Len(s *Stack) int {
\treturn len(s.items)
}
"""


def test_go_edits():
    _check(
        stub_body,
        "go",
        GO,
        "Stack.Push",
        GO.replace("\ts.items = append(s.items, v)\n", '\tpanic("not implemented")\n'),
    )
    _check(
        remove_method,
        "go",
        GO,
        "Stack.Push",
        GO.replace(
            "// Push adds v.\n// It never fails.\nfunc (s *Stack) Push(v int) {\n"
            "\ts.items = append(s.items, v)\n}\n\n",
            "",
        ),
    )
    _check(remove_function, "go", GO, "Len", GO[: GO.index("\nfunc Len")])


RS = """\
impl Stack {
    /// Pushes `v`.
    #[inline]
    pub fn push(&mut self, v: i32) {
        self.items.push(v);
    }

    pub fn len(&self) -> usize { self.items.len() }
}

/// The top.
pub fn top(xs: &[i32]) -> i32 {
    xs[0]
}
"""


def test_rust_edits():
    _check(
        stub_body,
        "rust",
        RS,
        "Stack.push",
        RS.replace("        self.items.push(v);\n", "        todo!()\n"),
    )
    _check(
        stub_body,
        "rust",
        RS,
        "Stack.len",
        RS.replace("{ self.items.len() }", "{\n        todo!()\n    }"),
    )
    _check(
        remove_method,
        "rust",
        RS,
        "Stack.push",
        RS.replace(
            "    /// Pushes `v`.\n    #[inline]\n    pub fn push(&mut self, v: i32) {\n"
            "        self.items.push(v);\n    }\n\n",
            "",
        ),
    )
    _check(remove_function, "rust", RS, "top", RS[: RS.index("\n/// The top.")])


# --- bytes outside the edit survive ---------------------------------------------------------------

_BYTES_CASES = [
    ("javascript", JS, "add", "helper", "Box.value", "Box"),
    ("typescript", TS, "make", "make", "Shape.scale", "Shape"),
    ("go", GO, "Stack.Push", "Len", "Stack.Push", None),
    ("rust", RS, "Stack.push", "top", "Stack.push", None),
]


def _variants(text: str) -> dict[str, bytes]:
    crlf = text.replace("\n", "\r\n")
    return {
        "bom+crlf": b"\xef\xbb\xbf" + crlf.encode(),
        "crlf, no final newline": crlf.rstrip("\r\n").encode(),
        "no final newline": text.rstrip("\n").encode(),
        "non-ascii": text.replace("\n", " // café ✓\n", 1).encode(),
    }


@pytest.mark.parametrize(("language", "text", "stub", "func", "method", "cls"), _BYTES_CASES)
def test_encodings_line_endings_and_final_newline_are_preserved(
    language, text, stub, func, method, cls
):
    for variant, data in _variants(text).items():
        crlf = b"\r\n" in data
        edits = [(stub_body, stub), (remove_function, func), (remove_method, method)]
        if cls:
            edits.append((remove_class, cls))
        for edit, name in edits:
            out = edit(language, data, name)
            assert out != data, (variant, edit.__name__)
            assert out.startswith(b"\xef\xbb\xbf") == data.startswith(b"\xef\xbb\xbf")
            assert out.endswith(b"\n") == data.endswith(b"\n"), (variant, edit.__name__, name)
            if crlf:  # every line break is still CRLF, the inserted ones too
                assert out.count(b"\n") == out.count(b"\r\n"), (variant, edit.__name__)
            # the edit is one contiguous span: all other bytes are the original's
            head = 0
            while head < min(len(out), len(data)) and out[head] == data[head]:
                head += 1
            tail = 0
            while tail < min(len(out), len(data)) - head and out[-1 - tail] == data[-1 - tail]:
                tail += 1
            changed = data[head : len(data) - tail]
            assert changed.strip(), (variant, edit.__name__)
            # and the edited file still parses
            definitions(language, out)


# --- the seed: every unit, every strategy, restored byte for byte -------------------------------


def _mdrender_units():
    files = sorted(str(p.relative_to(SEED)) for p in (SEED / "src").rglob("*.js"))
    units, skipped = index_files("javascript", SEED, files)
    assert not skipped
    return units


def _seed_units(seed):
    """The units under the seed's source paths, as `index_seed` would pick them."""
    prefixes = tuple(p.rstrip("/") + "/" for p in seed.manifest.source_paths)
    files = [f for f in seed.files if f.startswith(prefixes)]
    units, skipped = index_files("javascript", seed.root, files, snapshot_id=seed.snapshot_id)
    assert not skipped and units
    return units


def test_gold_patch_restores_every_mdrender_unit(tmp_path):
    units = _mdrender_units()
    jobs: list[tuple[str, str, object]] = []
    for u in units:
        jobs.append((u.file, u.qualname, stub_body))
        jobs.append((u.file, u.qualname, remove_method if u.kind == "method" else remove_function))
    files = sorted({u.file for u in units})
    for rel in files:
        data = (SEED / rel).read_bytes()
        for d in definitions("javascript", data):
            if d.kind == "class":
                jobs.append((rel, d.qualname, remove_class))
    counts: collections.Counter[str] = collections.Counter()
    for rel, qual, edit in jobs:
        original = (SEED / rel).read_bytes()
        broken = edit("javascript", original, qual)  # type: ignore[operator]
        definitions("javascript", broken)  # the broken file still parses
        gold = unified_diff(rel, broken.decode(), original.decode())
        ws = tmp_path / "ws"
        (ws / rel).parent.mkdir(parents=True, exist_ok=True)
        (ws / rel).write_bytes(broken)
        apply_patch(ws, gold)
        assert (ws / rel).read_bytes() == original, (rel, qual, edit)
        counts[edit.__name__] += 1  # type: ignore[attr-defined]
    assert counts["stub_body"] == len(units) > 100
    assert counts["remove_class"] >= 8 and counts["remove_method"] >= 30


def test_candidates_are_deterministic_and_mixed(cache_dir):
    seed = acquire(SEED, cache_dir=cache_dir)
    units = _seed_units(seed)
    first = js_candidates(seed, units, max_candidates=20, random_seed=7)
    again = js_candidates(seed, units, max_candidates=20, random_seed=7)
    other = js_candidates(seed, units, max_candidates=20, random_seed=8)
    assert first == again and [c.candidate_id for c in first] != [c.candidate_id for c in other]
    strategies = collections.Counter(c.strategy for c in first)
    assert strategies == {
        "stub_body": 12,
        "remove_function": 3,
        "remove_method": 3,
        "remove_class": 2,
    }
    assert len({c.candidate_id for c in first}) == 20
    assert len({c.units[0] for c in first}) == 20  # one strategy per unit
    for c in first:
        assert c.language == "javascript" and c.files == (c.units[0].split("::")[0],)
        assert c.breaking_patch and c.gold_patch and c.removed_code.strip()
        # the six features every strategy measures; the Python-only ones stay unmeasured
        assert c.features is not None and c.features.files == 1 and c.features.units >= 1
        assert (c.features.whole_class, c.features.scope_change) == (None, None)
        assert [name for name, _ in c.features.as_pairs()] == [
            "lines_removed",
            "units",
            "files",
            "complexity",
            "callers",
            "has_docstring",
        ]
        (file, first_line, last_line) = c.spans[0]
        original = (Path(seed.root) / file).read_text().splitlines()
        assert 1 <= first_line <= last_line <= len(original)
        if c.strategy != "stub_body":  # the span is exactly the removed original code
            removed = "\n".join(original[first_line - 1 : last_line]).strip()
            assert removed == c.removed_code.strip()
    cls = next(c for c in first if c.strategy == "remove_class")
    header, *methods = cls.signature.split("\n")
    assert header.startswith(("class ", "export class ")) and methods
    assert len(cls.units) == 1 + len(methods)
    # a bigger budget than there are targets: every strategy gives what it has, nothing twice
    everything, skipped = treesitter_candidates(seed, units, max_candidates=1000, random_seed=0)
    assert len({c.candidate_id for c in everything}) == len(everything) > 100
    assert all("declared together" in s.reason for s in skipped)


@pytest.mark.slow
def test_stubbed_mdrender_units_break_its_tests_in_the_sandbox(cache_dir, sandbox):
    seed = acquire(SEED, cache_dir=cache_dir)
    env = build_environment(seed.manifest, cache_dir=cache_dir)
    baseline = run_baseline(seed, env, sandbox, runs=1, limits=LIMITS)
    assert baseline.usable, baseline.reason
    units = _seed_units(seed)
    stubs = [c for c in js_candidates(seed, units, max_candidates=8, random_seed=0)][:4]
    assert {c.strategy for c in stubs} == {"stub_body"}
    verdicts = [
        validate_candidate(c, seed, env, baseline, sandbox, runs=1, limits=LIMITS) for c in stubs
    ]
    accepted = [v for v in verdicts if v.status == "accepted"]
    assert len(accepted) >= 2, [(v.status, v.reason) for v in verdicts]
    assert all(v.fail_to_pass for v in accepted)
    assert all(v.status in ("accepted", "no_failing_tests") for v in verdicts), verdicts
