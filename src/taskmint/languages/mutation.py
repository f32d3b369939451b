"""What every mutant generator shares: the `Mutant` record and how one is made at a node.

`strength.mutants` (Python's `ast`, tree-sitter languages) and a profile's own generator
(`languages.rust.mutants`) make the same records; they live here, below both.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

from tree_sitter import Node

__all__ = ["Mutant", "Mutants", "end_row", "row", "shown", "statement_of"]

SHOWN = 40  # characters of code a description quotes


@dataclass(frozen=True, slots=True, kw_only=True)
class Mutant:
    """One mutant: `replacement` over bytes [start, end) of `file` in the original tree.

    `first`..`last` are the original lines whose execution can reveal it (the tests that ran
    none of them cannot see it: test selection takes them as the edit's span); `line` is where
    it is, for people."""

    file: str
    line: int
    start: int
    end: int
    replacement: bytes
    operator: str
    before: str
    after: str
    first: int
    last: int
    unit: str = ""  # the enclosing function's qualified name

    @property
    def description(self) -> str:
        """`path:line `before` -> `after``, or where a `return` was put."""
        if self.operator == "early_return":
            where = f" of {self.unit}" if self.unit else ""
            return f"{self.file}:{self.line} `{self.after}` at the start{where}"
        return f"{self.file}:{self.line} `{self.before}` -> `{self.after}`"

    @property
    def key(self) -> str:
        """What identifies the mutant in its file."""
        return f"{self.file}:{self.start}:{self.end}:{self.replacement!r}"

    def apply(self, data: bytes) -> bytes:
        """The mutated file, from the original's bytes."""
        return data[: self.start] + self.replacement + data[self.end :]


def shown(text: str | bytes) -> str:
    """Code as a description quotes it: on one line, at most `SHOWN` characters."""
    if isinstance(text, bytes):
        text = text.decode("utf-8", "replace")
    one = " ".join(text.split())
    return one if len(one) <= SHOWN else one[: SHOWN - 3] + "..."


def row(node: Node) -> int:
    """The 1-based line `node` starts on."""
    return int(node.start_point.row) + 1


def end_row(node: Node) -> int:
    """The 1-based line `node` ends on."""
    return int(node.end_point.row) + 1


def statement_of(node: Node, blocks: frozenset[str]) -> Node:
    """The statement `node` is part of (itself for a statement): the ancestor whose parent is
    one of the node kinds `blocks`."""
    cur = node
    while cur.parent is not None and cur.parent.type not in blocks:
        cur = cur.parent
    return cur


class Mutants:
    """The mutants a generator finds in one file (`add`), in `found`: only those whose bytes
    are all on `lines`. `blocks` are the node kinds whose children are statements."""

    def __init__(self, path: str, data: bytes, lines: set[int], blocks: frozenset[str]) -> None:
        self.path, self.data, self.lines, self.blocks = path, data, lines, blocks
        self.found: list[Mutant] = []

    def add(
        self,
        start: int,
        end: int,
        replacement: bytes,
        operator: str,
        at: Node,
        unit: str = "",
        *,
        first: int | None = None,
        last: int | None = None,
    ) -> None:
        """The mutant putting `replacement` over bytes [start, end) (made at node `at`), unless
        those bytes are not all on the lines or already read so. Its lines run from `first`
        (by default, the start of `at`'s statement) to `last` (by default, the edit's last
        line)."""
        data = self.data
        line = data.count(b"\n", 0, start) + 1
        end_line = data.count(b"\n", 0, max(start, end - 1)) + 1 if end > start else line
        if not all(n in self.lines for n in range(line, end_line + 1)):
            return
        before = data[start:end]
        if before == replacement:
            return
        stmt = statement_of(at, self.blocks)
        self.found.append(
            Mutant(
                file=self.path,
                line=line,
                start=start,
                end=end,
                replacement=replacement,
                operator=operator,
                before=shown(before),
                after=shown(replacement),
                first=first if first is not None else min(row(stmt), line),
                last=last if last is not None else max(end_line, line),
                unit=unit,
            )
        )

    def parsing(
        self,
        parse: Callable[[bytes], object],
        errors: type[Exception] | tuple[type[Exception], ...],
    ) -> list[Mutant]:
        """`found` in byte order (then operator and replacement), the first of each key, and
        only those whose mutated file `parse` reads without raising one of `errors`."""
        out: list[Mutant] = []
        seen: set[str] = set()
        for m in sorted(self.found, key=lambda m: (m.start, m.end, m.operator, m.replacement)):
            if m.key in seen:
                continue
            seen.add(m.key)
            try:
                parse(m.apply(self.data))
            except errors:
                continue
            out.append(m)
        return out
