"""Count the language branches in taskmint's sources outside the language profiles.

Usage: python scripts/language_branches.py [SRC] [--list] [--json]

SRC is the package folder (default: src/taskmint next to this script). A language branch is
code that decides by a language's name instead of asking its profile:

- `compare`: a comparison (==, !=, in, not in) of something with a string literal, or a
  tuple/list/set of them, that names a language (python, javascript, typescript, go, rust),
  a test runner or an environment kind (pytest, node, cargo);
- `extension`: a test of a file name against a source-file extension literal (`.py`, `.js`,
  `.ts`, `.go`, `.rs`, ...) with `endswith`, `removesuffix`-free comparisons of `.suffix`;
- `isinstance`: an isinstance check against a language's adapter or profile class
  (`PytestAdapter`, `NodeAdapter`, ...);
- `table`: a dict literal keyed by language or runner names (a lookup table that a new
  language has to be added to).

Files under `languages/` (the profiles) are not counted; files under an `inside/` folder (the
standard-library programs that run inside the sandbox or a Harbor container, which cannot
import the profiles) are counted apart.
"""

from __future__ import annotations

import argparse
import ast
import json
import sys
from collections import Counter
from dataclasses import dataclass
from pathlib import Path

NAMES = frozenset({"python", "javascript", "typescript", "go", "rust", "pytest", "node", "cargo"})
EXTENSIONS = frozenset(
    {
        ".py",
        ".pyi",
        ".js",
        ".mjs",
        ".cjs",
        ".jsx",
        ".ts",
        ".tsx",
        ".mts",
        ".cts",
        ".go",
        ".rs",
    }
)
ADAPTER_WORDS = ("Pytest", "Node", "Cargo", "Python", "JavaScript", "Rust", "Go")


@dataclass(frozen=True)
class Branch:
    """One language branch: where it is and what kind."""

    file: str
    line: int
    kind: str
    code: str


def _strings(node: ast.AST) -> list[str]:
    """The string literals of a literal or a tuple/list/set of literals."""
    if isinstance(node, ast.Constant) and isinstance(node.value, str):
        return [node.value]
    if isinstance(node, ast.Tuple | ast.List | ast.Set):
        out: list[str] = []
        for elt in node.elts:
            if not (isinstance(elt, ast.Constant) and isinstance(elt.value, str)):
                return []
            out.append(elt.value)
        return out
    return []


def _is_extension_test(node: ast.Call) -> bool:
    func = node.func
    if not isinstance(func, ast.Attribute) or func.attr not in ("endswith", "startswith"):
        return False
    return any(s in EXTENSIONS for arg in node.args for s in _strings(arg))


def _names_adapter(node: ast.AST) -> bool:
    names = [node] if not isinstance(node, ast.Tuple) else list(node.elts)
    for n in names:
        text = ast.unparse(n).rsplit(".", 1)[-1]
        if text.endswith(("Adapter", "Profile")) and text.startswith(ADAPTER_WORDS):
            return True
    return False


class _Finder(ast.NodeVisitor):
    def __init__(self, path: str, source: str) -> None:
        self.path = path
        self.lines = source.splitlines()
        self.found: list[Branch] = []
        self._conditions = 0

    def _add(self, node: ast.AST, kind: str) -> None:
        line = getattr(node, "lineno", 0)
        code = self.lines[line - 1].strip() if 0 < line <= len(self.lines) else ""
        self.found.append(Branch(self.path, line, kind, code))

    def visit_Compare(self, node: ast.Compare) -> None:
        sides = [node.left, *node.comparators]
        literal = [s for side in sides for s in _strings(side)]
        others = [side for side in sides if not _strings(side)]
        ops_ok = all(isinstance(op, ast.Eq | ast.NotEq | ast.In | ast.NotIn) for op in node.ops)
        if ops_ok and others and any(s in NAMES for s in literal):
            self._add(node, "compare")
        elif ops_ok and others and any(s in EXTENSIONS for s in literal):
            # `path.suffix == ".py"`
            self._add(node, "extension")
        self.generic_visit(node)

    def visit_Call(self, node: ast.Call) -> None:
        if _is_extension_test(node):
            self._add(node, "extension")
        elif (
            isinstance(node.func, ast.Name)
            and node.func.id == "isinstance"
            and len(node.args) == 2
            and _names_adapter(node.args[1])
        ):
            self._add(node, "isinstance")
        self.generic_visit(node)

    def visit_Dict(self, node: ast.Dict) -> None:
        keys = [k for k in node.keys if k is not None]
        named = [k for k in keys for s in _strings(k) if s in NAMES]
        if len(named) >= 2 and len(named) == len(keys):
            self._add(node, "table")
        self.generic_visit(node)


def find_branches(src: Path) -> list[Branch]:
    """Every language branch in the `.py` files under `src` outside `languages/`."""
    found: list[Branch] = []
    for path in sorted(src.rglob("*.py")):
        rel = path.relative_to(src).as_posix()
        if rel.startswith("languages/") or "__pycache__" in rel:
            continue
        source = path.read_text(encoding="utf-8")
        finder = _Finder(rel, source)
        finder.visit(ast.parse(source, filename=str(path)))
        found.extend(finder.found)
    return found


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    default = Path(__file__).resolve().parent.parent / "src" / "taskmint"
    parser.add_argument("src", nargs="?", type=Path, default=default)
    parser.add_argument("--list", action="store_true", help="list every branch")
    parser.add_argument("--json", action="store_true", help="print the figures as JSON")
    args = parser.parse_args(argv)
    if not args.src.is_dir():
        parser.error(f"{args.src} is not a folder (give the package folder, src/taskmint)")
    branches = find_branches(args.src)
    inside = [b for b in branches if "/inside/" in f"/{b.file}"]
    outside = [b for b in branches if b not in inside]
    figures = {
        "src": str(args.src),
        "branches": len(outside),
        "by_kind": dict(sorted(Counter(b.kind for b in outside).items())),
        "files": len({b.file for b in outside}),
        "inside": len(inside),
    }
    if args.json:
        print(json.dumps(figures, indent=1))
    else:
        print(
            f"{figures['branches']} language branches in {figures['files']} files outside "
            f"languages/ ({', '.join(f'{k} {v}' for k, v in figures['by_kind'].items()) or 'none'})"
            f"; {figures['inside']} more in the sandbox-side inside/ programs"
        )
    if args.list:
        for b in branches:
            print(f"{b.file}:{b.line}: {b.kind}: {b.code}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
