"""The `index` verb: a seed snapshot -> its `CodeIndex`, whatever its language."""

from __future__ import annotations

from pathlib import Path

from taskmint.index.python import index_python_files
from taskmint.index.treesitter import index_files
from taskmint.index.treesitter_grammars import LANGUAGES
from taskmint.records import CodeIndex, SeedApp

__all__ = ["index_seed", "source_files"]


def source_files(seed: SeedApp) -> list[str]:
    """The snapshot's files under the manifest's source paths (tests are never units)."""
    prefixes = tuple(p.rstrip("/") for p in seed.manifest.source_paths)
    tests = tuple(p.rstrip("/") for p in seed.manifest.test_paths)

    def under(f: str, roots: tuple[str, ...]) -> bool:
        return any(f == p or f.startswith(p + "/") for p in roots)

    # tests may live inside the package (`pkg/tests`): they are never units either
    return [f for f in seed.files if under(f, prefixes) and not under(f, tests)]


def index_seed(seed: SeedApp) -> CodeIndex:
    """Every function and method under the seed's source paths: libcst for Python,
    tree-sitter for the other languages. Unusable files are listed with a reason."""
    files = source_files(seed)
    language = seed.manifest.language
    if language == "python":
        units, skipped = index_python_files(Path(seed.root), files, snapshot_id=seed.snapshot_id)
    elif language in LANGUAGES:
        units, skipped = index_files(language, seed.root, files, snapshot_id=seed.snapshot_id)
    else:  # pragma: no cover - the manifest parser admits only known languages
        units, skipped = [], []
    return CodeIndex(snapshot_id=seed.snapshot_id, units=tuple(units), skipped=tuple(skipped))
