"""The `LanguageProfile` interface and the registry of profiles.

A profile is everything about one language that the stages ask for: which trees are its seeds
and the manifest detected for one, the environment its tests run in, the test runner's adapter
(command, structured report, test ids), how its code is read and edited (`engine`, and for
tree-sitter languages the `TreeSitterSyntax` that holds the grammar, the unit kinds, the stub
statement and the mutation operators' node kinds), which excision strategies apply, what the
leak check treats as interface and what the statements may say of its code, and the runner
part of an exported Harbor task. Stages never name a language: they look its profile up by
name (`profile`), by seed (`profile_for_seed`) or by file (`profile_for_file`) and ask it.

`languages/__init__.py` registers the profiles; a new language is one more module there.
"""

from __future__ import annotations

import abc
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any, ClassVar

from taskmint.config import FeatureSize, SandboxConfig
from taskmint.errors import ManifestError
from taskmint.languages.mutation import Mutant
from taskmint.languages.treesitter import TreeSitterSyntax
from taskmint.records import (
    Candidate,
    Environment,
    Language,
    SeedApp,
    SeedManifest,
    SkippedFile,
    Strategy,
    Unit,
)
from taskmint.runners.adapters import Adapter

__all__ = [
    "DetectError",
    "LanguageProfile",
    "Shape",
    "UnknownLanguageError",
    "adapter_for",
    "build_environment",
    "detect_profile",
    "environment_id",
    "find_profile",
    "find_syntax",
    "profile",
    "profile_for_file",
    "profile_for_seed",
    "profiles",
    "register",
    "register_syntax",
    "syntax",
    "syntax_for_file",
    "syntaxes",
]


class UnknownLanguageError(ManifestError):
    """A language no profile is registered for."""


class DetectError(ManifestError):
    """The layout of a project could not be worked out; write its taskmint.toml by hand."""


@dataclass(frozen=True, slots=True, kw_only=True)
class Shape:
    """A coarse reading of removed code: counts and names, never whole lines (what the hints
    say of it; `describe.facts`)."""

    loops: int = 0
    branches: int = 0
    handlers: int = 0  # except / catch clauses
    returns: bool = False
    yields: bool = False
    raises: tuple[str, ...] = ()  # exception classes raised
    calls: tuple[str, ...] = ()  # names called (functions and methods), first-seen order
    names: tuple[str, ...] = ()  # other identifiers used, sorted
    recursion: bool = False
    comprehensions: int = 0


class LanguageProfile(abc.ABC):
    """Everything the stages need to know about one language (see the module docstring).

    Class attributes say what the language is; methods with a default are the ones a language
    may leave to the stages' generic readings (a line-by-line outline, the heuristic interface
    lines of the leak check, no test docstrings).
    """

    name: ClassVar[Language]
    # the test runner a seed's manifest names (`[run] runner`); the only one accepted
    runner: ClassVar[str]
    # the language's source files, by suffix
    extensions: ClassVar[tuple[str, ...]]
    # how the stages read and edit its code: "libcst" (Python's own syntax trees: the libcst
    # indexer and strategies, `ast` for mutants and statements) or "tree-sitter" (`syntax`)
    engine: ClassVar[str]
    # whether the profile makes its own candidates and mutants (`candidates`, `mutants`: Rust's,
    # which keep the tree compiling) rather than its engine's generic strategies and operators
    own_edits: ClassVar[bool] = False
    syntax: ClassVar[TreeSitterSyntax | None] = None
    # the excision strategies that apply, in the order a mixed batch tries them
    strategies: ClassVar[tuple[Strategy, ...]]
    # whether a signature shown in a statement is preceded by its decorators (`@d`)
    shows_decorators: ClassVar[bool] = False
    # whether a line `name(...) {` heads a method (a JavaScript class body), for what describe
    # reads of the code line by line (where the missing names are used)
    brace_methods: ClassVar[bool] = False
    # what the statements call the unit `remove_class` removes, and what a method belongs to
    class_noun: ClassVar[str] = "class"
    owner_noun: ClassVar[str] = "class"
    # whether `taskmint export harbor` can export its tasks (`harbor_runner`)
    harbor: ClassVar[bool] = False
    # files (by name, anywhere in the tree) that configure the language's build or test run,
    # besides the runner-neutral `runners.protect.PROTECTED_NAMES`: no patch may change them,
    # the verifier restores them and keeps them read-only
    protected_names: ClassVar[frozenset[str]] = frozenset()
    # what the static scan's findings (`verify.scan`, "path:line: what") name that costs the
    # reward whatever `VerifyConfig.scan_zeroes_reward` says: forgeries the runner cannot tell
    # from a real result (Rust: a printed libtest result line and an exit), unless the line is
    # one of the original file's (the gold code brings back the seed's own lines)
    fatal_findings: ClassVar[frozenset[str]] = frozenset()

    def __repr__(self) -> str:
        return f"<{type(self).__name__} {self.name!r}>"

    # -- seeds ------------------------------------------------------------------------------

    def detects(self, root: Path) -> bool:
        """Whether the tree at `root` (which has no taskmint.toml) looks like a seed of this
        language, whose manifest `detect_manifest` can work out."""
        return False

    def detect_manifest(self, root: Path, *, name: str, description: str = "") -> SeedManifest:
        """The manifest of the tree at `root`, worked out without running any of its code."""
        raise DetectError(
            f"{name}: {self.name} seeds are not detected; write a taskmint.toml with [seed] "
            "and [run] tables by hand"
        )

    def complete_checkout(self, root: Path, describe: str) -> tuple[str, ...]:
        """Write what the project's build would generate from its git history and a checkout
        of a commit lacks (`describe`: `git describe --tags --long` of the commit); the paths
        written, relative to `root`. Called for every git seed, whatever its language."""
        return ()

    def prepare_tree(self, tree: Path, cache_dir: Path, *, label: str) -> None:
        """Make a fetched tree of this language ready to snapshot, in place, while the
        network is still allowed (acquisition is the only step that has it): Rust's locks and
        vendors the dependencies so the environment build and every run are offline. Called
        by acquisition for every fetched tree of the language (git, sdist, image, a folder
        with a pinned manifest), before its manifest is detected; `label` names the source
        in refusals. Raises `ManifestError` (a refusal saying what to do). By default: nothing
        to do."""
        return None

    def fallback_manifest(
        self, manifest: SeedManifest, problems: Sequence[str]
    ) -> SeedManifest | None:
        """Another manifest to run the suite under when the original runs broke on the test
        tool itself (`problems`: the baseline's reason, collection and plugin errors and
        exclusions), or None."""
        return None

    @abc.abstractmethod
    def test_command(self, manifest: SeedManifest) -> str:
        """The command a person would type to run the seed's tests."""

    # -- environment ------------------------------------------------------------------------

    @abc.abstractmethod
    def environment_id(self, manifest: SeedManifest) -> str:
        """The cache key of the seed's environment (the same inputs, the same id)."""

    @abc.abstractmethod
    def build_environment(self, manifest: SeedManifest, *, cache_dir: Path) -> Environment:
        """Build (or reuse) the environment the seed's tests run in."""

    def seed_environment(
        self, seed: SeedApp, *, cache_dir: Path, sandbox: SandboxConfig | None = None
    ) -> Environment:
        """Build (or reuse) the environment of a seed's snapshot. By default its manifest's
        (`build_environment`); a language whose environment holds a build of the snapshot
        itself (Rust's warm target folder) builds it here, in a sandbox of `sandbox`."""
        return self.build_environment(seed.manifest, cache_dir=cache_dir)

    def seed_environment_id(self, seed: SeedApp) -> str:
        """The id `seed_environment` gives the seed (by default its manifest's)."""
        return self.environment_id(seed.manifest)

    # -- runner -----------------------------------------------------------------------------

    @property
    @abc.abstractmethod
    def adapter(self) -> Adapter:
        """The test runner's adapter: its command in the sandbox and its report reader."""

    # -- code (`own_edits`) -------------------------------------------------------------------

    def candidates(
        self,
        seed: SeedApp,
        units: Sequence[Unit],
        *,
        max_candidates: int,
        random_seed: int,
        min_body_lines: int,
        strategies: Sequence[Strategy],
        feature_size: FeatureSize | None,
    ) -> tuple[list[Candidate], list[SkippedFile]]:
        """The candidates of a seed whose profile makes its own (`own_edits`), and what was
        left out and why."""
        raise NotImplementedError(f"{self.name} makes no candidates of its own")

    def mutants(self, path: str, data: bytes, lines: set[int]) -> list[Mutant]:
        """The mutants of file `path` (`data`) inside `lines` of a profile with `own_edits`."""
        raise NotImplementedError(f"{self.name} makes no mutants of its own")

    # -- what statements say ----------------------------------------------------------------

    def module_name(self, file: str) -> str | None:
        """The name code imports `file` by (Python's dotted module), None when the language
        names no modules apart from files."""
        return None

    def canary_folder(self, test_paths: Sequence[str]) -> str:
        """The folder a test file planted next to the seed's tests goes in."""
        first = test_paths[0] if test_paths else "tests"
        return first.rstrip("/")

    def interface_lines(self, code: str) -> set[int] | None:
        """0-based lines of removed `code` that are its interface (docstrings, definition
        headers), which the leak check lets a statement repeat; None: the check's
        line-by-line reading decides."""
        return None

    def outline(self, code: str) -> list[str] | None:
        """The structure of `code` read from its syntax tree (the last hint), None: the
        line-by-line outline."""
        return None

    def shape(self, code: str) -> Shape | None:
        """Loops, branches, raises, calls and names of `code` read from its syntax tree,
        None: read line by line."""
        return None

    def test_docs(self, root: Path, tests: Sequence[str]) -> tuple[tuple[str, str], ...]:
        """(test id, the first line of its docstring) of the tests among `tests` that have
        one, in `tests`' order (files under `root`)."""
        return ()

    def class_docstring(self, root: Path, file: str, qualname: str) -> str | None:
        """The docstring of the top-level class `qualname` of `file` under `root`."""
        return None

    # -- hidden tests ------------------------------------------------------------------------

    def hidden_tests(
        self,
        fail_to_pass: tuple[str, ...],
        pass_to_pass: tuple[str, ...],
        *,
        seed: str,
        fraction: float,
        pass_fraction: float,
        source_of: Callable[[str], str | None] | None = None,
    ) -> tuple[str, ...]:
        """The expected tests to hide from the policy (the same for the same inputs; `seed`
        names the task), whose code `strip_hidden` can cut out of the policy's test files;
        `source_of` reads a test file. None hidden by default."""
        return ()

    def strip_hidden(self, path: str, text: str, hidden: tuple[str, ...]) -> str:
        """Test file `path` (`text`) without the hidden tests among `hidden`."""
        return text

    def test_file(self, test_id: str) -> str | None:
        """The file (relative to the seed) that holds test `test_id`'s code, what
        `strip_hidden` cuts a hidden test out of; by default the id's part before `::`
        (pytest's and node's ids start with their file)."""
        return test_id.split("::", 1)[0]

    # -- verify -----------------------------------------------------------------------------

    def test_code_files(self, root: Path, files: Sequence[str]) -> tuple[str, ...]:
        """The files among `files` (relative to `root`, the pristine seed) outside the test
        paths that are test code all the same (Rust: the files only test builds compile), which
        the verifier treats like the tests: dropped from a patch, restored, read-only. None by
        default."""
        return ()

    def restore_test_code(self, pristine_root: Path, ws: Path, files: Sequence[str]) -> str | None:
        """Put back the pristine test code that lives inside source files (Rust's
        `#[cfg(test)]` modules and `#[test]` functions) into the workspace files among `files`
        (relative paths: the files the task's breaking patch and the policy's patch changed or
        added), before the run. None when done, else why the patch is rewarded 0 (its test code
        cannot be restored, or it changes what the tests compile). Nothing by default: the
        language keeps its tests in test files."""
        return None

    # -- Harbor -----------------------------------------------------------------------------

    def harbor_runner(
        self, manifest: SeedManifest, *, env_id: str, expected: Sequence[str]
    ) -> dict[str, Any]:
        """The runner's part of an exported task's `task.json` (the grader's command for the
        expected tests), over the common part the exporter writes."""
        raise NotImplementedError(f"{self.name} tasks cannot be exported to Harbor yet")

    def test_code_regions(self, path: str, data: bytes) -> list[tuple[int, int]]:
        """The 1-based, inclusive line ranges of test code inside source file `path` (`data`):
        what an exported task's grader, which cannot parse the file to put the original back,
        refuses to see changed (Rust's `#[cfg(test)]` items and doctests). None by default."""
        return []

    def harbor_tools(self, spec: dict[str, Any]) -> tuple[str, ...]:
        """Programs besides the grader's interpreter that the environment digests cover."""
        return ()


_REGISTRY: dict[str, LanguageProfile] = {}
_SYNTAXES: dict[str, TreeSitterSyntax] = {}


def register(language: LanguageProfile) -> LanguageProfile:
    """Add a profile to the registry (by its `name`), and its syntax; returns it."""
    if language.name in _REGISTRY and _REGISTRY[language.name] is not language:
        raise ValueError(f"a profile for {language.name!r} is registered already")
    _REGISTRY[language.name] = language
    if language.syntax is not None:
        register_syntax(language.syntax)
    return language


def register_syntax(syntax: TreeSitterSyntax) -> TreeSitterSyntax:
    """Add a tree-sitter syntax (of a profile, or of a language with none yet); returns it."""
    if syntax.name in _SYNTAXES and _SYNTAXES[syntax.name] is not syntax:
        raise ValueError(f"a syntax for {syntax.name!r} is registered already")
    _SYNTAXES[syntax.name] = syntax
    return syntax


def syntaxes() -> tuple[TreeSitterSyntax, ...]:
    """Every registered tree-sitter syntax, in registration order."""
    return tuple(_SYNTAXES.values())


def syntax(name: str) -> TreeSitterSyntax:
    """The tree-sitter syntax of language `name`; `ValueError` naming the known ones if none."""
    found = _SYNTAXES.get(name)
    if found is None:
        raise ValueError(f"tree-sitter indexing supports {', '.join(_SYNTAXES)}, not {name!r}")
    return found


def find_syntax(name: str) -> TreeSitterSyntax | None:
    """The tree-sitter syntax of language `name`, None when it has none (Python)."""
    return _SYNTAXES.get(name)


def syntax_for_file(path: str) -> TreeSitterSyntax | None:
    """The tree-sitter syntax `path` is a source file of (by its name), or None: none, or a
    file with no implementation to excise (a TypeScript declaration file, a Go test)."""
    return next((s for s in _SYNTAXES.values() if s.owns(path)), None)


def profiles() -> tuple[LanguageProfile, ...]:
    """Every registered profile, in registration order."""
    return tuple(_REGISTRY.values())


def profile(name: str) -> LanguageProfile:
    """The profile of language `name`; `UnknownLanguageError` naming the known ones if none."""
    found = _REGISTRY.get(name)
    if found is None:
        raise UnknownLanguageError(
            f"no language profile for {name!r}; taskmint knows {', '.join(sorted(_REGISTRY))}"
        )
    return found


def find_profile(name: str) -> LanguageProfile | None:
    """The profile of language `name`, None when there is none."""
    return _REGISTRY.get(name)


def profile_for_seed(seed: SeedApp | SeedManifest) -> LanguageProfile:
    """The profile of a seed (or of its manifest), by the manifest's language."""
    manifest = seed.manifest if isinstance(seed, SeedApp) else seed
    return profile(manifest.language)


def adapter_for(manifest: SeedManifest) -> Adapter:
    """The adapter of a seed's test runner (its profile's)."""
    return profile(manifest.language).adapter


def build_environment(
    target: SeedApp | SeedManifest, *, cache_dir: Path, sandbox: SandboxConfig | None = None
) -> Environment:
    """The `envs` verb: build (or reuse) the environment of a seed (`SeedApp`: its snapshot,
    which some languages build in a sandbox of `sandbox`, by default the local one), or of a
    manifest alone, as its language's profile builds it."""
    if isinstance(target, SeedApp):
        return profile(target.manifest.language).seed_environment(
            target, cache_dir=Path(cache_dir), sandbox=sandbox
        )
    return profile(target.language).build_environment(target, cache_dir=Path(cache_dir))


def environment_id(target: SeedApp | SeedManifest) -> str:
    """The id of the environment `build_environment` gives the seed or manifest."""
    if isinstance(target, SeedApp):
        return profile(target.manifest.language).seed_environment_id(target)
    return profile(target.language).environment_id(target)


def profile_for_file(path: str) -> LanguageProfile | None:
    """The profile whose source files `path` is one of, by its suffix, or None."""
    return next((p for p in _REGISTRY.values() if path.endswith(p.extensions)), None)


def detect_profile(root: Path, *, name: str = "") -> LanguageProfile:
    """The profile of the first language that recognizes the tree at `root` as its seed."""
    for candidate in _REGISTRY.values():
        if candidate.detects(root):
            return candidate
    raise DetectError(
        f"{name or root}: no language recognizes this tree ({', '.join(_REGISTRY)} are "
        "known); write a taskmint.toml with [seed] and [run] tables by hand"
    )
