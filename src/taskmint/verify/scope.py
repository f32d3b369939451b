"""Which parts of a policy's diff the verifier applies: the task's allowed paths, nothing else.

A `git diff` is cut into per-file sections; a section is kept only if every path it names lies
in the task's source paths and outside its test paths (and the test code the language keeps among
the sources: `LanguageProfile.test_code_files`), and it neither configures the test run, the
build or the interpreter (`PROTECTED_NAMES`, and the language's own `protected_names`: Rust's
Cargo.toml, build.rs, .cargo/config.toml...), nor adds a binary, a symlink or a submodule,
nor changes a mode, deletes or renames a file. Everything dropped is reported with its reason
(`Reward.rejected_paths`).
"""

from __future__ import annotations

import re
from collections.abc import Collection
from dataclasses import dataclass
from pathlib import PurePosixPath

from taskmint.languages import find_profile
from taskmint.records import Task
from taskmint.runners.protect import PROTECTED_NAMES

__all__ = [
    "PROTECTED_NAMES",
    "PROTECTED_SUFFIXES",
    "filter_patch",
    "language_protected_names",
    "patch_paths",
    "refusal",
]

PROTECTED_SUFFIXES = frozenset({".pth", ".pyc", ".pyo", ".so", ".pyd", ".whl", ".egg", ".cfg"})
_PROTECTED_DIRS = frozenset({".git", ".github", ".circleci", "__pycache__", ".pytest_cache"})
_SECTION = re.compile(r"^diff --git ", re.MULTILINE)
_HEADER = re.compile(r'^diff --git "?a/(.+?)"? "?b/(.+?)"?$')


def language_protected_names(language: str) -> frozenset[str]:
    """The runner-neutral protected names and those of the language's profile."""
    found = find_profile(language)
    return PROTECTED_NAMES | (found.protected_names if found is not None else frozenset())


def refusal(path: str, task: Task, test_code: Collection[str] = ()) -> str | None:
    """None if the policy may change `path`, else why not (`test_code`: files among the
    sources that are test code, `LanguageProfile.test_code_files`)."""
    p = PurePosixPath(path)
    if not path or p.is_absolute() or ".." in p.parts or "\\" in path or "\0" in path:
        return "path leaves the workspace"
    if p.name in language_protected_names(task.language) or p.suffix in PROTECTED_SUFFIXES:
        return "test, build, CI or interpreter configuration"
    # a distribution's metadata on the import path would be found by importlib.metadata
    # (entry points: pytest plugins) as if it were installed
    if set(p.parts) & _PROTECTED_DIRS or any(
        part.endswith((".egg-info", ".dist-info")) for part in p.parts
    ):
        return "test, build, CI or interpreter configuration"
    for t in task.test_paths:
        if path == t or path.startswith(t.rstrip("/") + "/"):
            return "test files are restored from the task"
    found = find_profile(task.language)
    for hidden in task.hidden_tests:
        if path == (found.test_file(hidden) if found else hidden.split("::", 1)[0]):
            return "test files are restored from the task"
    if path in test_code:
        return "test files are restored from the task"
    if not any(path == s or path.startswith(s.rstrip("/") + "/") for s in task.source_paths):
        return "outside the task's source paths"
    return None


@dataclass(frozen=True, slots=True)
class _Section:
    text: str
    paths: tuple[str, ...]
    problems: tuple[str, ...]


def _read_section(text: str) -> _Section:
    lines = text.splitlines()
    paths: list[str] = []
    problems: list[str] = []
    m = _HEADER.match(lines[0]) if lines else None
    if m is None:
        return _Section(text, (), ("unparseable patch section (expected `diff --git` headers)",))
    paths += [m.group(1), m.group(2)]
    where = m.group(2)
    for line in lines[1:]:
        if line.startswith("@@"):
            break
        if line.startswith(("old mode ", "new mode ")):
            problems.append(f"{where}: mode change refused")
        elif line.startswith("new file mode "):
            if line.rsplit(" ", 1)[1] != "100644":
                problems.append(f"{where}: new file mode {line.rsplit(' ', 1)[1]} refused")
        elif line.startswith("deleted file mode "):
            problems.append(f"{where}: deleting files is refused")
        elif line.startswith(("rename from ", "rename to ", "copy from ", "copy to ")):
            problems.append(f"{where}: renames and copies are refused")
        elif line.startswith("Binary files ") or line == "GIT binary patch":
            problems.append(f"{where}: binary change refused")
        elif line.startswith("index ") and line.rstrip().endswith((" 120000", " 160000")):
            problems.append(f"{where}: symlinks and submodules are refused")
    if any(b"\0" in line.encode("utf-8", "surrogateescape") for line in lines):
        problems.append(f"{where}: binary content refused")
    return _Section(text, tuple(dict.fromkeys(paths)), tuple(problems))


def patch_paths(patch: str) -> tuple[str, ...]:
    """Every path a patch's `diff --git` headers name (old and new), in order."""
    out: list[str] = []
    for line in patch.splitlines():
        m = _HEADER.match(line)
        if m is not None:
            out += [m.group(1), m.group(2)]
    return tuple(dict.fromkeys(out))


def filter_patch(
    patch: str, task: Task, test_code: Collection[str] = ()
) -> tuple[str, tuple[str, ...]]:
    """The part of `patch` the task allows, and what was dropped (one "path: reason" each);
    `test_code`: files among the sources that are test code (`refusal`)."""
    starts = [m.start() for m in _SECTION.finditer(patch)]
    if not starts:
        sections = [patch] if patch.strip() else []
    else:
        if patch[: starts[0]].strip():
            starts.insert(0, 0)
        sections = [patch[a:b] for a, b in zip(starts, [*starts[1:], len(patch)], strict=True)]
    kept: list[str] = []
    rejected: list[str] = []
    for text in sections:
        section = _read_section(text)
        reasons = list(section.problems)
        for path in section.paths:
            why = refusal(path, task, test_code)
            if why:
                reasons.append(f"{path}: {why}")
        if reasons:
            rejected.extend(dict.fromkeys(reasons))
        else:
            kept.append(text)
    return "".join(kept), tuple(rejected)
