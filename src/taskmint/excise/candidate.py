"""Assembling a `Candidate` from an edit, and checking that the edited file still compiles.

`make_candidate` turns new file contents into a `Candidate` with both diffs, the removed code,
the spans and the static difficulty `Features`, so every Python strategy records the same
features the same way (see `excise.knobs` for what each one means).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from types import CodeType

from taskmint.excise.context import ExciseContext
from taskmint.patches import unified_diff
from taskmint.records import Candidate, Features, Strategy, stable_id

__all__ = ["check_valid", "compile_edit", "make_candidate", "removed_lines"]


def removed_lines(breaking_patch: str) -> str:
    """The lines a patch removes, each ending in a newline (for leak checks)."""
    return "".join(
        line[1:] + "\n"
        for line in breaking_patch.splitlines()
        if line.startswith("-") and not line.startswith("---")
    )


def make_candidate(
    ctx: ExciseContext,
    *,
    strategy: Strategy,
    target: str,
    units: Sequence[str],
    edits: Mapping[str, bytes],
    spans: Sequence[tuple[str, int, int]],
    complexity: int,
    callers: int,
    has_docstring: bool,
    signature: str = "",
    docstring: str | None = None,
    whole_class: bool | None = None,
    scope_change: bool | None = None,
) -> Candidate:
    """A `Candidate` from new file contents (`edits`: path -> new bytes).

    `target` distinguishes edits of the same units (a block's line, a class's mode) in the id.
    `whole_class` and `scope_change` are the features only `remove_class` and `remove_block`
    measure. Raises `UnicodeDecodeError` for a file that is not UTF-8 (the diffs are text).
    """
    files = tuple(sorted(edits))
    breaking_parts, gold_parts = [], []
    for rel in files:
        old, new = ctx.sources[rel].decode("utf-8"), edits[rel].decode("utf-8")
        breaking_parts.append(unified_diff(rel, old, new))
        gold_parts.append(unified_diff(rel, new, old))
    breaking = "".join(breaking_parts)
    removed = removed_lines(breaking)
    features = Features(
        lines_removed=removed.count("\n"),
        units=len(units),
        files=len(files),
        complexity=complexity,
        callers=callers,
        has_docstring=has_docstring,
        whole_class=whole_class,
        scope_change=scope_change,
    )
    seed = ctx.seed
    return Candidate(
        candidate_id=stable_id(seed.snapshot_id, strategy, target, *sorted(units)),
        snapshot_id=seed.snapshot_id,
        seed=seed.name,
        language=seed.manifest.language,
        strategy=strategy,
        units=tuple(units),
        files=files,
        breaking_patch=breaking,
        gold_patch="".join(gold_parts),
        removed_code=removed,
        signature=signature,
        docstring=docstring,
        features=features,
        spans=tuple(spans),
    )


def check_valid(new: bytes) -> str | None:
    """None if `new` compiles (CPython re-parses it), else why not."""
    code = compile_edit(new)
    return code if isinstance(code, str) else None


def compile_edit(new: bytes) -> CodeType | str:
    """`new` compiled (its code object), or why it does not compile."""
    try:
        return compile(new, "<excised>", "exec", dont_inherit=True)
    except (SyntaxError, ValueError) as exc:
        return f"the edited file does not compile: {exc}"
