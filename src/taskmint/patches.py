"""Patches in the form `git diff` writes: making them from file contents, reading, applying.

Diffs are made here (not by shelling out) so that every byte is accounted for: CRLF line endings
stay in the diffed lines, and a missing final newline gets git's "\\ No newline at end of file"
marker. Applying uses `git apply`, which refuses paths that leave the tree.
"""

from __future__ import annotations

import difflib
import os
import re
import shutil
import subprocess
from dataclasses import dataclass
from pathlib import Path

from taskmint.errors import PatchError

__all__ = ["FileChange", "apply_patch", "file_changes", "unified_diff"]

_NO_NL = "\\ No newline at end of file\n"


def _split(text: str) -> list[str]:
    return text.splitlines(keepends=True) if text else []


def _hunk_lines(lines: list[str], prefix: str) -> list[str]:
    out = []
    for line in lines:
        if line.endswith("\n"):
            out.append(prefix + line)
        else:
            out.append(prefix + line + "\n" + _NO_NL)
    return out


def unified_diff(path: str, old: str | None, new: str | None, *, context: int = 3) -> str:
    """A `git diff` style patch turning `old` into `new` at `path` (None: file absent)."""
    if old == new:
        return ""
    old_lines, new_lines = _split(old or ""), _split(new or "")
    header = [f"diff --git a/{path} b/{path}\n"]
    if old is None:
        header += ["new file mode 100644\n", "--- /dev/null\n", f"+++ b/{path}\n"]
    elif new is None:
        header += ["deleted file mode 100644\n", f"--- a/{path}\n", "+++ /dev/null\n"]
    else:
        header += [f"--- a/{path}\n", f"+++ b/{path}\n"]
    body: list[str] = []
    matcher = difflib.SequenceMatcher(None, old_lines, new_lines, autojunk=False)
    for group in matcher.get_grouped_opcodes(context):
        i1, i2 = group[0][1], group[-1][2]
        j1, j2 = group[0][3], group[-1][4]
        body.append(f"@@ -{_range(i1, i2)} +{_range(j1, j2)} @@\n")
        for tag, a1, a2, b1, b2 in group:
            if tag == "equal":
                body += _hunk_lines(old_lines[a1:a2], " ")
            else:
                body += _hunk_lines(old_lines[a1:a2], "-")
                body += _hunk_lines(new_lines[b1:b2], "+")
    return "".join(header + body)


def _range(start: int, stop: int) -> str:
    length = stop - start
    first = start + 1 if length else start
    return f"{first},{length}" if length != 1 else f"{first}"


@dataclass(frozen=True, slots=True, kw_only=True)
class FileChange:
    """One file's entry in a patch, as far as scope checks need it."""

    old_path: str | None
    new_path: str | None
    new_mode: str | None = None
    binary: bool = False

    @property
    def path(self) -> str:
        """The path the change lands on."""
        return self.new_path or self.old_path or ""


_DIFF_GIT = re.compile(r"^diff --git (?:\"?a/(.+?)\"?) (?:\"?b/(.+?)\"?)$")


def file_changes(patch: str) -> list[FileChange]:
    """The files a patch touches, with their modes, from its headers."""
    changes: list[FileChange] = []
    current: dict[str, object] | None = None

    def flush() -> None:
        if current is not None:
            changes.append(FileChange(**current))  # type: ignore[arg-type]

    for line in patch.splitlines():
        m = _DIFF_GIT.match(line)
        if m:
            flush()
            current = {
                "old_path": m.group(1),
                "new_path": m.group(2),
                "new_mode": None,
                "binary": False,
            }
            continue
        if current is None:
            if line.startswith("--- ") or line.startswith("+++ "):
                # a plain unified diff without git headers
                path = line[4:].split("\t")[0].strip()
                if line.startswith("+++ ") and path != "/dev/null":
                    changes.append(FileChange(old_path=None, new_path=_strip_prefix(path)))
            continue
        if line.startswith(("new file mode ", "new mode ")):
            current["new_mode"] = line.rsplit(" ", 1)[1]
        elif line.startswith("deleted file mode "):
            current["new_path"] = None
        elif line.startswith("Binary files ") or line == "GIT binary patch":
            current["binary"] = True
        elif line.startswith("rename to "):
            current["new_path"] = line[len("rename to ") :]
    flush()
    return changes


def _strip_prefix(path: str) -> str:
    return path[2:] if path.startswith(("a/", "b/")) else path


def apply_patch(workspace: Path, patch: str) -> None:
    """Apply `patch` inside `workspace` with `git apply` (no repository needed).

    Raises `PatchError` with git's message when the patch does not apply.
    """
    if not patch.strip():
        return
    git = shutil.which("git")
    if git is None:
        raise PatchError("git is needed to apply patches; install the Debian package `git`")
    workspace = Path(workspace).resolve()
    env = {
        "PATH": os.environ.get("PATH", "/usr/bin:/bin"),
        "GIT_CEILING_DIRECTORIES": str(workspace.parent),
        "HOME": str(workspace),
        "GIT_CONFIG_NOSYSTEM": "1",
        "LC_ALL": "C",
    }
    data = patch if patch.endswith("\n") else patch + "\n"
    proc = subprocess.run(
        [git, "apply", "--whitespace=nowarn", "-p1", "-"],
        input=data.encode("utf-8", "surrogateescape"),
        cwd=workspace,
        env=env,
        capture_output=True,
        timeout=120,
    )
    if proc.returncode != 0:
        raise PatchError(
            "patch does not apply: " + proc.stderr.decode("utf-8", "replace").strip()[:2000]
        )
