"""The leak scan: is any distinctive line of the removed code visible from inside the sandbox?

A line is distinctive when, with surrounding whitespace removed, it is at least
`MIN_NEEDLE_CHARS` long, is not a definition header or docstring line (the statement states
those), and does not occur in any broken source file (a line that the policy's own sources
legitimately contain reveals nothing). A file leaks a candidate when it holds at
least half of the candidate's distinctive lines (two at least), or its only one if that is long:
one short line in common with unrelated code (the standard library, a dependency) is chance.

Everything a task's sandbox can see is the same for every task of a seed except the edited
source files, so one scan per seed covers all its candidates: the workspace (the snapshot
without its source files, which cannot contain a distinctive line by definition), the
environment, the interpreter, /usr, /tmp, ... are searched with `grep -F` inside the sandbox
itself.
"""

from __future__ import annotations

import shutil
from collections import defaultdict
from pathlib import Path

from taskmint.config import Limits
from taskmint.files import copy_tree
from taskmint.index.seed import source_files
from taskmint.languages import adapter_for, profile
from taskmint.patches import apply_patch
from taskmint.records import Candidate, Environment, SeedApp
from taskmint.sandbox.base import Mount, RunSpec, Sandbox
from taskmint.scratch import make_scratch

__all__ = [
    "MIN_LONE_NEEDLE_CHARS",
    "MIN_NEEDLE_CHARS",
    "RULES_VERSION",
    "distinctive_lines",
    "scan_for_leaks",
    "source_files",
]

MIN_NEEDLE_CHARS = 20
# Part of the key of a stored scan: a new value when the needles a candidate gets change.
# 2: definition headers and docstrings are no needles.
RULES_VERSION = "2"
# A lone distinctive line must be this long to count on its own: short lines such as
# "if cached is not None:" recur in unrelated code.
MIN_LONE_NEEDLE_CHARS = 40
_NEEDLE_DIR = "/opt/taskmint-needles"
_SCAN = (
    "cd / && for d in /* /.[!.]*; do "
    'case "$d" in /proc|/sys|/dev) continue;; esac; '
    '[ -e "$d" ] && [ ! -L "$d" ] && set -- "$@" "$d"; '
    "done; /usr/bin/grep -rIoHZF -f " + _NEEDLE_DIR + '/needles.txt -- "$@"; '
    # and inside archives (wheels, sdists, zips), which grep -I skips as binary
    'for py in /opt/venv/bin/python /usr/bin/python3; do [ -x "$py" ] && '
    'exec "$py" -I -B /opt/taskmint/scan_archives.py ' + _NEEDLE_DIR + '/needles.txt "$@"; '
    "done"
)


def _is_copy(lines: set[str], total: int) -> bool:
    """Whether the distinctive lines found in one file show a copy of the removed code: at
    least half of them (and two), or a single long one when the code has only one."""
    if total <= 1:
        return any(len(line) >= MIN_LONE_NEEDLE_CHARS for line in lines)
    return len(lines) >= max(2, -(-total // 2))


def _normalized(text: str) -> set[str]:
    return {line.strip() for line in text.splitlines() if line.strip()}


def _interface(candidate: Candidate) -> set[str]:
    """The removed code's definition headers and docstrings, normalized: the statement states
    them, so finding them elsewhere (`async def __anext__(self):` in the standard library's
    `_collections_abc`) gives nothing away. Code that does not parse keeps every line."""
    code = candidate.removed_code
    lines = code.splitlines()
    found = profile(candidate.language).interface_lines(code) or set()
    return {lines[i].strip() for i in found if i < len(lines)}


def distinctive_lines(candidate: Candidate, legit_lines: set[str]) -> set[str]:
    """The removed lines that would give the answer away if found anywhere visible."""
    stated = _interface(candidate)
    return {
        line
        for line in _normalized(candidate.removed_code)
        if len(line) >= MIN_NEEDLE_CHARS and line not in legit_lines and line not in stated
    }


def _original_lines(seed: SeedApp) -> dict[str, set[str]]:
    """Each source file's normalized lines, read once per seed."""
    root = Path(seed.root)
    return {
        rel: _normalized((root / rel).read_text("utf-8", "replace")) for rel in source_files(seed)
    }


def _files_by_line(original: dict[str, set[str]]) -> dict[str, set[str]]:
    """Normalized line -> the source files holding it (once per seed)."""
    out: dict[str, set[str]] = defaultdict(set)
    for rel, lines in original.items():
        for line in lines:
            out[line].add(rel)
    return out


def _legit_lines(
    seed: SeedApp,
    candidate: Candidate,
    original: dict[str, set[str]],
    by_line: dict[str, set[str]],
) -> set[str]:
    """The removed lines found in some source file as the policy sees it (the candidate's
    files broken, every other file as in `original`): the only ones `distinctive_lines` needs
    to know about. Only the edited files are rebuilt; the rest is a look-up per removed line,
    whatever the size of the sources."""
    edited = set(candidate.files)
    removed = _normalized(candidate.removed_code)
    lines = {line for line in removed if by_line.get(line, set()) - edited}
    ws = make_scratch("taskmint-legit-")
    try:
        copy_tree(Path(seed.root), ws, [f for f in seed.files if f in edited])
        apply_patch(ws, candidate.breaking_patch)
        for rel in edited & set(original):
            if (ws / rel).is_file():
                lines |= removed & _normalized((ws / rel).read_text("utf-8", "replace"))
        return lines
    finally:
        shutil.rmtree(ws, ignore_errors=True)


def scan_for_leaks(
    seed: SeedApp,
    env: Environment,
    candidates: list[Candidate],
    sandbox: Sandbox,
    *,
    limits: Limits,
) -> dict[str, list[str]]:
    """Candidate id -> "path: line" hits (empty dict: nothing leaks) from one sandboxed scan."""
    needles: dict[str, set[str]] = defaultdict(set)
    owned: dict[str, int] = {}
    original = _original_lines(seed)
    by_line = _files_by_line(original)
    for cand in candidates:
        lines = distinctive_lines(cand, _legit_lines(seed, cand, original, by_line))
        owned[cand.candidate_id] = len(lines)
        for line in lines:
            needles[line].add(cand.candidate_id)
    if not needles:
        return {}
    sources = set(source_files(seed))
    work = make_scratch("taskmint-leak-")
    try:
        ws, needle_dir = work / "ws", work / "needles"
        copy_tree(Path(seed.root), ws, [f for f in seed.files if f not in sources])
        needle_dir.mkdir(mode=0o755)
        (needle_dir / "needles.txt").write_text("\n".join(sorted(needles)) + "\n", "utf-8")
        (needle_dir / "needles.txt").chmod(0o644)
        mounts = [
            *adapter_for(seed.manifest).mounts(env),
            Mount(source=str(needle_dir), target=_NEEDLE_DIR),
        ]
        result = sandbox.run(
            RunSpec(
                argv=("/bin/sh", "-c", _SCAN),
                workspace=str(ws),
                mounts=tuple(mounts),
                env=(("PATH", "/usr/bin:/bin"), ("LC_ALL", "C")),
                limits=limits,
                cwd="/",
            )
        )
    finally:
        shutil.rmtree(work, ignore_errors=True)
    found: dict[str, dict[str, set[str]]] = defaultdict(lambda: defaultdict(set))
    for row in result.output.splitlines():
        path, sep, match = row.partition("\0")  # grep -Z: a NUL ends the file name
        if path.startswith(_NEEDLE_DIR + "/"):  # the scan's own input is not in a task's view
            continue
        for cid in needles.get(match, ()) if sep else ():
            found[cid][path].add(match)
    hits: dict[str, list[str]] = defaultdict(list)
    for cid, per_file in found.items():
        total = owned[cid]
        for path, lines in sorted(per_file.items()):
            if _is_copy(lines, total):
                hits[cid].extend(f"{path}: {line}" for line in sorted(lines))
    if result.timed_out:
        for cand in candidates:
            hits[cand.candidate_id].append("the leak scan timed out; cannot prove no leak")
    return dict(hits)
