"""Stage 3, `index`: a `SeedApp` -> a `CodeIndex` of its functions and methods.

Each language's profile names the engine that reads its code: libcst for Python (exact
positions, docstrings, round-trippable trees), tree-sitter for JavaScript (and the files of
TypeScript, Go and Rust), with the grammar and unit kinds of the language's syntax. Files that
cannot be used (syntax errors, generated code, binaries, invalid encodings, pathological
nesting) are listed in `CodeIndex.skipped` with a reason; they never stop the index.
"""

from taskmint.index.python import index_python_source, read_source
from taskmint.index.seed import index_seed, source_files, units_of_file
from taskmint.index.treesitter import index_files, index_source

__all__ = [
    "index_files",
    "index_python_source",
    "index_seed",
    "index_source",
    "read_source",
    "source_files",
    "units_of_file",
]
