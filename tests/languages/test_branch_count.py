"""`scripts/language_branches.py`: what it counts as a branch on a language's name, and the
count outside the profiles staying where the profiles left it."""

from __future__ import annotations

import importlib.util
import sys
import textwrap
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
_spec = importlib.util.spec_from_file_location(
    "language_branches", ROOT / "scripts" / "language_branches.py"
)
assert _spec is not None and _spec.loader is not None
branches = importlib.util.module_from_spec(_spec)
sys.modules[_spec.name] = branches  # dataclasses look their module up while defining
_spec.loader.exec_module(branches)

# The libcst engine's own modules, which only Python seeds reach (the profile's engine routes
# them): their `.py` checks are the engine reading its own files.
ENGINE_ONLY = {"excise/context.py", "index/python.py", "validate/removal.py"}


def test_each_kind_of_branch_is_found_and_the_profiles_are_left_out(tmp_path):
    (tmp_path / "languages").mkdir()
    (tmp_path / "stage").mkdir()
    (tmp_path / "stage" / "inside").mkdir()
    (tmp_path / "languages" / "python.py").write_text('if language == "python":\n    pass\n')
    (tmp_path / "stage" / "mod.py").write_text(
        textwrap.dedent(
            """\
            RUNNERS = {"python": "pytest", "javascript": "node"}
            if manifest.language == "javascript":
                pass
            x = a if runner in ("pytest", "cargo") else b
            if path.endswith(".py"):
                pass
            if isinstance(adapter, PytestAdapter):
                pass
            if kind == "venv" or name != "pythonic":
                pass
            """
        )
    )
    (tmp_path / "stage" / "inside" / "grade.py").write_text('if spec["runner"] == "node": pass\n')
    found = branches.find_branches(tmp_path)
    assert sorted((b.file, b.line, b.kind) for b in found) == [
        ("stage/inside/grade.py", 1, "compare"),
        ("stage/mod.py", 1, "table"),
        ("stage/mod.py", 2, "compare"),
        ("stage/mod.py", 4, "compare"),
        ("stage/mod.py", 5, "extension"),
        ("stage/mod.py", 7, "isinstance"),
    ]


def test_no_stage_names_a_language():
    found = branches.find_branches(ROOT / "src" / "taskmint")
    named = [
        f"{b.file}:{b.line}: {b.code}"
        for b in found
        if "/inside/" not in f"/{b.file}" and b.file not in ENGINE_ONLY
    ]
    assert named == [], "ask the language's profile (taskmint.languages) instead:\n" + "\n".join(
        named
    )
