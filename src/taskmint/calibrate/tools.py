"""The tools a model uses during a calibration attempt, over its copy of the policy view.

The model gets the same view a policy being trained gets (`taskmint.verify.policy_view`: the
broken tree, no history, no answer) and these tools: list, read and search files, edit a file by
search-and-replace, apply a unified diff, run the visible tests in the sandbox, and submit.
Every call returns text for the model; a bad call (unknown tool, arguments that are not JSON,
a path that leaves the workspace, an edit that does not match) returns an error message and the
attempt goes on. `workspace_diff` turns the edited workspace into the patch that `verify` grades.
"""

from __future__ import annotations

import json
import re
import shutil
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path, PurePosixPath
from typing import Any

from taskmint.config import Limits
from taskmint.errors import PatchError, SandboxError
from taskmint.languages import adapter_for
from taskmint.patches import apply_patch, unified_diff
from taskmint.records import Environment, RunReport, SeedManifest
from taskmint.runners import run_tests
from taskmint.sandbox.base import Sandbox
from taskmint.scratch import make_scratch

__all__ = [
    "TOOL_SPECS",
    "SandboxTests",
    "ToolOutcome",
    "Toolbox",
    "format_report",
    "workspace_diff",
]

_IGNORED_DIRS = frozenset({"__pycache__", ".pytest_cache", ".git", "node_modules"})
_MAX_LIST = 400
_MAX_MATCHES = 200


def _fn(name: str, description: str, properties: dict[str, Any], required: list[str]) -> dict:
    return {
        "type": "function",
        "function": {
            "name": name,
            "description": description,
            "parameters": {
                "type": "object",
                "properties": properties,
                "required": required,
                "additionalProperties": False,
            },
        },
    }


_PATH = {"type": "string", "description": "a path relative to the repository root"}

TOOL_SPECS: tuple[dict[str, Any], ...] = (
    _fn(
        "list_files",
        "List the files under a folder of the repository (recursively).",
        {"path": {**_PATH, "description": "a folder relative to the root (default '.')"}},
        [],
    ),
    _fn(
        "read_file",
        "Read a file, with line numbers. Optionally only lines start_line..end_line.",
        {
            "path": _PATH,
            "start_line": {"type": "integer", "minimum": 1},
            "end_line": {"type": "integer", "minimum": 1},
        },
        ["path"],
    ),
    _fn(
        "search",
        "Search the repository's files for a string (or a Python regular expression when "
        "regex is true); returns path:line: text for each matching line.",
        {
            "pattern": {"type": "string"},
            "path": {**_PATH, "description": "a folder or file to search (default '.')"},
            "regex": {"type": "boolean"},
        },
        ["pattern"],
    ),
    _fn(
        "edit_file",
        "Replace the exact text old_text with new_text in a file. old_text must occur exactly "
        "once (include surrounding lines to make it unique). With old_text empty and a path "
        "that does not exist, creates the file with new_text.",
        {"path": _PATH, "old_text": {"type": "string"}, "new_text": {"type": "string"}},
        ["path", "old_text", "new_text"],
    ),
    _fn(
        "apply_patch",
        "Apply a unified diff (as `git diff` writes it, paths a/... b/... relative to the root).",
        {"patch": {"type": "string"}},
        ["patch"],
    ),
    _fn(
        "run_tests",
        "Run the project's visible tests in a sandbox and report the outcomes. Optionally only "
        "some tests: test ids (path::name) or test files.",
        {"tests": {"type": "array", "items": {"type": "string"}}},
        [],
    ),
    _fn(
        "submit",
        "Submit the current state of the repository as your solution and end the attempt.",
        {},
        [],
    ),
)


@dataclass(frozen=True, slots=True, kw_only=True)
class ToolOutcome:
    """What one tool call returned to the model."""

    content: str
    error: bool = False
    submitted: bool = False


def format_report(report: RunReport, *, limit: int = 6000) -> str:
    """A test run as the model sees it: counts, then each test that did not pass."""
    counts: dict[str, int] = {}
    for r in report.results:
        counts[r.outcome] = counts.get(r.outcome, 0) + 1
    head = ", ".join(f"{n} {k}" for k, n in sorted(counts.items())) or "no tests ran"
    lines = [head + (" (timed out)" if report.timed_out else "")]
    for err in report.collection_errors:
        lines.append(f"COLLECTION ERROR {err}")
    for r in report.results:
        if r.outcome != "passed":
            msg = (r.message or "").strip()
            lines.append(f"{r.outcome.upper()} {r.test_id}" + (f"\n{msg[:800]}" if msg else ""))
    if not report.complete and report.output_tail:
        lines.append("output tail:\n" + report.output_tail[-1500:])
    text = "\n".join(lines)
    return text if len(text) <= limit else text[:limit] + "\n[... truncated]"


@dataclass(frozen=True, slots=True, kw_only=True)
class SandboxTests:
    """Runs the visible tests over a copy of the workspace in the sandbox.

    `visible` are the test ids run by default (the ones the task grades that the model can see).
    """

    manifest: SeedManifest
    env: Environment
    sandbox: Sandbox
    limits: Limits
    visible: tuple[str, ...]

    def __call__(self, workspace: Path, selection: tuple[str, ...] | None) -> str:
        """Run the selected tests (all visible ones by default); the outcome as text."""
        ids = self.visible
        if selection:
            chosen: list[str] = []
            for item in selection:
                if "::" in item:
                    chosen.append(item)
                else:
                    prefix = item.rstrip("/")
                    chosen += [t for t in self.visible if t.split("::", 1)[0].startswith(prefix)]
            if not chosen:
                return (
                    "error: no visible test matches "
                    f"{list(selection)}; give test ids (path::name) or test files"
                )
            ids = tuple(dict.fromkeys(chosen))
        copy = make_scratch("taskmint-agent-run-")
        try:
            shutil.copytree(workspace, copy / "ws", symlinks=True)
            report = run_tests(
                self.sandbox,
                copy / "ws",
                self.manifest,
                self.env,
                adapter=adapter_for(self.manifest),
                limits=self.limits,
                test_ids=ids,
            )
        except SandboxError as exc:
            return f"error: the tests could not be run: {exc}"
        finally:
            shutil.rmtree(copy, ignore_errors=True)
        return format_report(report)


TestRunner = Callable[[Path, tuple[str, ...] | None], str]


class Toolbox:
    """The tools over one workspace folder; `call` never raises for anything the model sends."""

    def __init__(self, root: Path, *, tests: TestRunner, max_output: int = 12_000) -> None:
        self.root = Path(root).resolve()
        self._tests = tests
        self._max_output = max_output
        self._handlers: dict[str, Callable[[dict[str, Any]], ToolOutcome]] = {
            "list_files": self._list_files,
            "read_file": self._read_file,
            "search": self._search,
            "edit_file": self._edit_file,
            "apply_patch": self._apply_patch,
            "run_tests": self._run_tests,
            "submit": lambda args: ToolOutcome(content="submitted", submitted=True),
        }

    @property
    def specs(self) -> list[dict[str, Any]]:
        """The tools' JSON schemas, in the chat-completions `tools` form."""
        return [dict(spec) for spec in TOOL_SPECS]

    def call(self, name: str, arguments: str | None) -> ToolOutcome:
        """Run tool `name` with its JSON `arguments`; errors come back as messages."""
        handler = self._handlers.get(name)
        if handler is None:
            return _error(f"unknown tool {name!r}; the tools are {sorted(self._handlers)}")
        try:
            args = json.loads(arguments) if arguments and arguments.strip() else {}
        except json.JSONDecodeError as exc:
            return _error(f"the arguments of {name} are not valid JSON ({exc}); send an object")
        if not isinstance(args, dict):
            return _error(f"the arguments of {name} must be a JSON object, got {type(args)}")
        spec = next(
            s["function"]["parameters"] for s in TOOL_SPECS if s["function"]["name"] == name
        )
        problem = _check_args(args, spec)
        if problem:
            return _error(f"{name}: {problem}")
        try:
            out = handler(args)
        except (OSError, ValueError, UnicodeError, re.error) as exc:
            return _error(f"{name} failed: {exc}")
        if len(out.content) > self._max_output:
            cut = out.content[: self._max_output]
            out = ToolOutcome(
                content=cut + "\n[... output truncated; ask for less]",
                error=out.error,
                submitted=out.submitted,
            )
        return out

    # -- paths -----------------------------------------------------------------------------

    def _path(self, rel: str, *, must_exist: bool = True) -> Path:
        p = PurePosixPath(rel or ".")
        if p.is_absolute() or ".." in p.parts:
            raise ValueError(f"{rel!r} leaves the repository; use a path relative to the root")
        full = self.root / p
        # no symlink on the way may lead out of the workspace
        if not full.resolve().is_relative_to(self.root):
            raise ValueError(f"{rel!r} leaves the repository")
        if must_exist and not full.exists():
            raise ValueError(f"{rel!r} does not exist; list_files shows what does")
        return full

    def _files(self, base: Path) -> list[Path]:
        if base.is_file():
            return [base]
        out = []
        for p in sorted(base.rglob("*")):
            rel = p.relative_to(self.root)
            if any(part in _IGNORED_DIRS for part in rel.parts) or p.is_symlink():
                continue
            if p.is_file():
                out.append(p)
        return out

    def _rel(self, p: Path) -> str:
        return p.relative_to(self.root).as_posix()

    # -- tools -----------------------------------------------------------------------------

    def _list_files(self, args: dict[str, Any]) -> ToolOutcome:
        base = self._path(args.get("path", "."))
        files = [self._rel(p) for p in self._files(base)]
        more = len(files) - _MAX_LIST
        text = "\n".join(files[:_MAX_LIST]) + (f"\n[... {more} more]" if more > 0 else "")
        return ToolOutcome(content=text or "(no files)")

    def _read_file(self, args: dict[str, Any]) -> ToolOutcome:
        path = self._path(args["path"])
        if not path.is_file():
            return _error(f"{args['path']!r} is not a file")
        lines = path.read_text(encoding="utf-8", errors="replace").splitlines()
        start = max(1, int(args.get("start_line", 1)))
        end = min(len(lines), int(args.get("end_line", len(lines))))
        if start > max(end, 1) and lines:
            return _error(f"start_line {start} is past the end ({len(lines)} lines)")
        body = "\n".join(f"{i:5d}  {lines[i - 1]}" for i in range(start, end + 1))
        return ToolOutcome(content=body or "(empty file)")

    def _search(self, args: dict[str, Any]) -> ToolOutcome:
        pattern = args["pattern"]
        if not pattern:
            return _error("pattern is empty")
        regex = re.compile(pattern if args.get("regex") else re.escape(pattern))
        hits = []
        for p in self._files(self._path(args.get("path", "."))):
            try:
                text = p.read_text(encoding="utf-8")
            except (UnicodeDecodeError, OSError):
                continue
            for n, line in enumerate(text.splitlines(), 1):
                if regex.search(line):
                    hits.append(f"{self._rel(p)}:{n}: {line.strip()[:200]}")
        more = len(hits) - _MAX_MATCHES
        text = "\n".join(hits[:_MAX_MATCHES]) + (f"\n[... {more} more]" if more > 0 else "")
        return ToolOutcome(content=text or "no matches")

    def _edit_file(self, args: dict[str, Any]) -> ToolOutcome:
        path = self._path(args["path"], must_exist=False)
        old, new = args["old_text"], args["new_text"]
        if not path.exists():
            if old:
                return _error(f"{args['path']!r} does not exist (to create it, send old_text '')")
            path.parent.mkdir(parents=True, exist_ok=True)
            path.write_text(new, encoding="utf-8")
            return ToolOutcome(content=f"created {args['path']}")
        if not path.is_file():
            return _error(f"{args['path']!r} is not a file")
        text = path.read_text(encoding="utf-8", errors="surrogateescape")
        if not old:
            return _error("old_text is empty; give the exact text to replace")
        count = text.count(old)
        if count != 1:
            why = "does not occur" if count == 0 else f"occurs {count} times"
            return _error(
                f"old_text {why} in {args['path']}; copy it exactly (read_file shows the file) "
                "and include enough lines to make it unique"
            )
        path.write_text(text.replace(old, new, 1), encoding="utf-8", errors="surrogateescape")
        return ToolOutcome(content=f"edited {args['path']}")

    def _apply_patch(self, args: dict[str, Any]) -> ToolOutcome:
        try:
            apply_patch(self.root, args["patch"])
        except PatchError as exc:
            return _error(str(exc))
        return ToolOutcome(content="patch applied")

    def _run_tests(self, args: dict[str, Any]) -> ToolOutcome:
        selection = tuple(args["tests"]) if args.get("tests") else None
        text = self._tests(self.root, selection)
        return ToolOutcome(content=text, error=text.startswith("error:"))


def _error(message: str) -> ToolOutcome:
    return ToolOutcome(content=f"error: {message}", error=True)


_JSON_TYPES: dict[str, tuple[type, ...]] = {
    "string": (str,),
    "integer": (int,),
    "boolean": (bool,),
    "array": (list,),
}


def _check_args(args: dict[str, Any], schema: dict[str, Any]) -> str | None:
    props: dict[str, Any] = schema["properties"]
    missing = [k for k in schema["required"] if k not in args]
    if missing:
        return f"missing argument(s) {missing}"
    unknown = sorted(set(args) - set(props))
    if unknown:
        return f"unknown argument(s) {unknown}; expected {sorted(props)}"
    for key, value in args.items():
        want = props[key]["type"]
        ok = isinstance(value, _JSON_TYPES[want])
        if want == "integer" and isinstance(value, bool):
            ok = False
        if want == "array" and ok:
            ok = all(isinstance(v, str) for v in value)
        if not ok:
            return f"argument {key!r} must be a {want}, got {json.dumps(value)[:60]}"
    return None


def _tree(root: Path) -> dict[str, bytes]:
    out = {}
    for p in root.rglob("*"):
        rel = p.relative_to(root)
        if any(part in _IGNORED_DIRS for part in rel.parts) or p.suffix in (".pyc", ".pyo"):
            continue
        if p.is_file() and not p.is_symlink():
            out[rel.as_posix()] = p.read_bytes()
    return out


def workspace_diff(original: Path, workspace: Path) -> str:
    """The patch (one `git diff` section per changed file) from `original` to `workspace`."""
    before, after = _tree(Path(original)), _tree(Path(workspace))
    parts = []
    for path in sorted(set(before) | set(after)):
        old, new = before.get(path), after.get(path)
        if old == new:
            continue
        parts.append(
            unified_diff(
                path,
                None if old is None else old.decode("utf-8", "surrogateescape"),
                None if new is None else new.decode("utf-8", "surrogateescape"),
            )
        )
    return "".join(parts)
