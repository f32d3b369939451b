"""Languages as profiles: everything that differs between languages, one profile each.

A `LanguageProfile` (`languages.base`) holds a language's seed detection, environment, test
runner adapter, code engine and tree-sitter syntax, excision strategies, what describe and the
leak check read from its code, and the runner part of a Harbor task. The stages look the
profile up and ask it (`profile`, `profile_for_seed`, `profile_for_file`, `detect_profile`,
`adapter_for`, `build_environment`); none of them names a language.

Registered here: Python (`languages.python`), JavaScript (`languages.javascript`) and Rust
(`languages.rust`), and the tree-sitter syntaxes of the languages with no profile yet
(`languages.grammars`: TypeScript, Go). A new language is a module (or package) with a
profile, registered below; see docs/languages.md.

This package sits below the stages that ask it (acquire, index, excise, validate, strength,
verify, describe, harbor, pipeline) and above what its profiles wrap (runners, sandbox, envs).
"""

from taskmint.languages.base import (
    DetectError,
    LanguageProfile,
    Shape,
    UnknownLanguageError,
    adapter_for,
    build_environment,
    detect_profile,
    environment_id,
    find_profile,
    find_syntax,
    profile,
    profile_for_file,
    profile_for_seed,
    profiles,
    register,
    register_syntax,
    syntax,
    syntax_for_file,
    syntaxes,
)
from taskmint.languages.grammars import GO, RUST, TYPESCRIPT
from taskmint.languages.javascript import JavaScriptProfile
from taskmint.languages.python import PythonProfile
from taskmint.languages.rust import RustProfile
from taskmint.languages.treesitter import Grammar, MutationSyntax, TreeSitterSyntax

__all__ = [
    "GO",
    "RUST",
    "TYPESCRIPT",
    "DetectError",
    "Grammar",
    "LanguageProfile",
    "MutationSyntax",
    "Shape",
    "TreeSitterSyntax",
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

register(PythonProfile())
register(JavaScriptProfile())
register(RustProfile())
for _syntax in (TYPESCRIPT, GO):
    register_syntax(_syntax)
