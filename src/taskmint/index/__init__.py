"""Stage 3, `index`: a `SeedApp` -> a `CodeIndex` of its functions and methods.

Python is read with libcst (exact positions, docstrings, round-trippable trees). Files that
cannot be used (syntax errors, generated code, binaries, invalid encodings, pathological
nesting) are listed in `CodeIndex.skipped` with a reason; they never stop the index.
"""

from taskmint.index.python import index_python_source, index_seed, read_source

__all__ = ["index_python_source", "index_seed", "read_source"]
