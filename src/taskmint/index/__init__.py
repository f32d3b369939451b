"""Stage 3, `index`: a `SeedApp` -> a `CodeIndex` of its functions and methods.

Python is read with libcst (exact positions, docstrings, round-trippable trees); JavaScript,
TypeScript, Go and Rust with tree-sitter (one grammar package per language). Files that
cannot be used (syntax errors, generated code, binaries, invalid encodings, pathological
nesting) are listed in `CodeIndex.skipped` with a reason; they never stop the index.
"""

from taskmint.index.python import index_python_source, read_source
from taskmint.index.seed import index_seed, source_files
from taskmint.index.treesitter import index_files, index_source

__all__ = [
    "index_files",
    "index_python_source",
    "index_seed",
    "index_source",
    "read_source",
    "source_files",
]
