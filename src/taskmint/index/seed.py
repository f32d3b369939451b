"""The `index` verb: a seed snapshot -> its `CodeIndex`, whatever its language."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

from taskmint.index.python import index_python_files, index_python_source
from taskmint.index.treesitter import index_files, index_source
from taskmint.languages import profile, profile_for_seed
from taskmint.records import CodeIndex, Language, SeedApp, SkippedFile, Unit

__all__ = ["index_seed", "source_files", "units_of_file"]


def source_files(seed: SeedApp) -> list[str]:
    """The snapshot's files under the manifest's source paths (tests are never units)."""
    prefixes = tuple(p.rstrip("/") for p in seed.manifest.source_paths)
    tests = tuple(p.rstrip("/") for p in seed.manifest.test_paths)

    def under(f: str, roots: tuple[str, ...]) -> bool:
        return any(f == p or f.startswith(p + "/") for p in roots)

    # tests may live inside the package (`pkg/tests`): they are never units either
    return [f for f in seed.files if under(f, prefixes) and not under(f, tests)]


def _libcst(seed: SeedApp, files: list[str]) -> tuple[list[Unit], list[SkippedFile]]:
    return index_python_files(Path(seed.root), files, snapshot_id=seed.snapshot_id)


def _tree_sitter(seed: SeedApp, files: list[str]) -> tuple[list[Unit], list[SkippedFile]]:
    return index_files(seed.manifest.language, seed.root, files, snapshot_id=seed.snapshot_id)


# a profile's `engine` -> the indexer that reads its code
_INDEXERS: dict[str, Callable[[SeedApp, list[str]], tuple[list[Unit], list[SkippedFile]]]] = {
    "libcst": _libcst,
    "tree-sitter": _tree_sitter,
}


def index_seed(seed: SeedApp) -> CodeIndex:
    """Every function and method under the seed's source paths, read by the engine of the
    seed's language (its profile's `engine`: libcst, or tree-sitter with the language's
    syntax). Unusable files are listed with a reason."""
    files = source_files(seed)
    units, skipped = _INDEXERS[profile_for_seed(seed).engine](seed, files)
    return CodeIndex(snapshot_id=seed.snapshot_id, units=tuple(units), skipped=tuple(skipped))


def _libcst_file(language: Language, path: str, data: bytes, snapshot_id: str) -> list[Unit]:
    return index_python_source(path, data, snapshot_id=snapshot_id)


def _tree_sitter_file(language: Language, path: str, data: bytes, snapshot_id: str) -> list[Unit]:
    return index_source(language, path, data, snapshot_id=snapshot_id)


_FILE_INDEXERS: dict[str, Callable[[Language, str, bytes, str], list[Unit]]] = {
    "libcst": _libcst_file,
    "tree-sitter": _tree_sitter_file,
}


def units_of_file(
    language: Language, path: str, data: bytes, *, snapshot_id: str = ""
) -> list[Unit]:
    """The units of one file of `language` (its profile's engine reads it), as `index_seed`
    finds them. Raises `SourceSkipped` for a file that cannot be used."""
    return _FILE_INDEXERS[profile(language).engine](language, path, data, snapshot_id)
