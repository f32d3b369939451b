"""Reading a seed's `taskmint.toml` (and writing one), and the list of seeds a refresh runs
over. The manifest's language must have a profile (`taskmint.languages`), whose runner is the
only one it accepts."""

from __future__ import annotations

import re
import tomllib
from pathlib import Path, PurePosixPath
from typing import Any

from packaging.specifiers import InvalidSpecifier, SpecifierSet
from packaging.version import InvalidVersion, Version

from taskmint.errors import ManifestError
from taskmint.languages import profile, profiles
from taskmint.records import SeedManifest

__all__ = [
    "MANIFEST_NAME",
    "load_manifest",
    "load_seed_list",
    "parse_manifest",
    "render_manifest",
]

MANIFEST_NAME = "taskmint.toml"


def load_manifest(seed_dir: Path) -> SeedManifest:
    """Read and check `<seed_dir>/taskmint.toml`."""
    path = Path(seed_dir) / MANIFEST_NAME
    try:
        text = path.read_text(encoding="utf-8")
    except FileNotFoundError:
        raise ManifestError(
            f"{path} not found: every seed needs a {MANIFEST_NAME} with [seed] and [run] tables"
        ) from None
    except (OSError, UnicodeDecodeError) as exc:
        raise ManifestError(f"cannot read {path}: {exc}") from exc
    return parse_manifest(text, where=str(path))


def parse_manifest(text: str, *, where: str = MANIFEST_NAME) -> SeedManifest:
    """Parse manifest text; errors name the file and the key to fix."""
    try:
        data = tomllib.loads(text)
    except tomllib.TOMLDecodeError as exc:
        raise ManifestError(f"{where}: not valid TOML: {exc}") from exc
    seed = _table(data, "seed", where)
    run = _table(data, "run", where)
    language = _str(seed, "language", where)
    known = sorted(p.name for p in profiles())
    if language not in known:
        raise ManifestError(f"{where}: seed.language must be one of {known}")
    expected = profile(language).runner
    runner = run.get("runner", expected)
    if runner != expected:
        raise ManifestError(f"{where}: run.runner for {language} must be {expected!r}")
    timeout = run.get("timeout", 120)
    if not isinstance(timeout, int | float) or timeout <= 0:
        raise ManifestError(f"{where}: run.timeout must be a positive number of seconds")
    test_timeout = run.get("test_timeout", 30)
    if not isinstance(test_timeout, int | float) or test_timeout < 0:
        raise ManifestError(
            f"{where}: run.test_timeout must be a number of seconds (0 for no per-test limit)"
        )
    return SeedManifest(
        name=_str(seed, "name", where),
        language=profile(language).name,
        description=str(seed.get("description", "")),
        source_paths=_paths(seed, "source_paths", where),
        test_paths=_paths(seed, "test_paths", where),
        dependencies=tuple(str(d) for d in seed.get("dependencies", [])),
        runner=runner,
        pythonpath=_paths(run, "pythonpath", where, default=["."]),
        timeout=float(timeout),
        test_timeout=float(test_timeout),
        plugins=_plugins(run, where),
        pytest=_pytest_spec(run, where),
        distribution=_distribution(seed, where),
    )


def _distribution(seed: dict[str, Any], where: str) -> str:
    """`[seed] distribution`: the seed's own distribution as "name==version" ("" for none)."""
    value = seed.get("distribution", "")
    if value == "":
        return ""
    name, sep, version = value.partition("==") if isinstance(value, str) else ("", "", "")
    try:
        Version(version)
    except InvalidVersion:
        sep = ""
    if not sep or not re.fullmatch(r"[A-Za-z0-9]([A-Za-z0-9._-]*[A-Za-z0-9])?", name.strip()):
        raise ManifestError(
            f'{where}: seed.distribution must be "name==version" (a version such as 1.2.0), '
            f"got {value!r}"
        )
    return f"{name.strip()}=={version.strip()}"


def _pytest_spec(run: dict[str, Any], where: str) -> str:
    """`[run] pytest`: a version specifier for the pytest the suite runs under ("" for
    taskmint's own)."""
    value = run.get("pytest", "")
    if not isinstance(value, str):
        raise ManifestError(f'{where}: run.pytest must be a version specifier such as "<9"')
    try:
        SpecifierSet(value)
    except InvalidSpecifier as exc:
        raise ManifestError(f"{where}: run.pytest {value!r} is not a version specifier") from exc
    return value.replace(" ", "")


def _plugins(run: dict[str, Any], where: str) -> tuple[tuple[str, str], ...]:
    """`[run.plugins]`: entry-point name -> module of the seed's own pytest plugins."""
    table = run.get("plugins", {})
    if not isinstance(table, dict):
        raise ManifestError(f"{where}: [run.plugins] must map plugin names to module names")
    out = []
    for name, module in sorted(table.items()):
        if not isinstance(module, str) or not all(
            part.isidentifier() for part in module.split(".")
        ):
            raise ManifestError(
                f"{where}: [run.plugins] {name!r} must name a module (dotted identifiers)"
            )
        out.append((str(name), module))
    return tuple(out)


def load_seed_list(path: Path) -> list[Path]:
    """Read a seeds manifest (`[[seed]] path = "..."`), paths relative to the manifest's folder."""
    path = Path(path)
    try:
        data = tomllib.loads(path.read_text(encoding="utf-8"))
    except FileNotFoundError:
        raise ManifestError(f"seeds manifest {path} not found") from None
    except (OSError, tomllib.TOMLDecodeError) as exc:
        raise ManifestError(f"cannot read seeds manifest {path}: {exc}") from exc
    entries = data.get("seed")
    if not isinstance(entries, list) or not entries:
        raise ManifestError(f"{path}: expected one or more [[seed]] tables with a `path` key")
    out = []
    for entry in entries:
        if not isinstance(entry, dict) or not isinstance(entry.get("path"), str):
            raise ManifestError(f"{path}: every [[seed]] needs a string `path`")
        out.append((path.parent / entry["path"]).resolve())
    return out


def _table(data: dict[str, Any], key: str, where: str) -> dict[str, Any]:
    value = data.get(key)
    if not isinstance(value, dict):
        raise ManifestError(f"{where}: missing [{key}] table")
    return value


def _str(table: dict[str, Any], key: str, where: str) -> str:
    value = table.get(key)
    if not isinstance(value, str) or not value:
        raise ManifestError(f"{where}: `{key}` must be a non-empty string")
    return value


def _paths(
    table: dict[str, Any], key: str, where: str, default: list[str] | None = None
) -> tuple[str, ...]:
    value = table.get(key, default)
    if not isinstance(value, list) or not value or not all(isinstance(v, str) for v in value):
        raise ManifestError(f"{where}: `{key}` must be a non-empty list of relative paths")
    for v in value:
        p = PurePosixPath(v)
        if p.is_absolute() or ".." in p.parts:
            raise ManifestError(f"{where}: `{key}` entry {v!r} must stay inside the seed folder")
    return tuple(str(PurePosixPath(v)) for v in value)


def _toml_str(value: str) -> str:
    return '"' + value.replace("\\", "\\\\").replace('"', '\\"').replace("\n", " ") + '"'


def _toml_list(values: tuple[str, ...]) -> str:
    return "[" + ", ".join(_toml_str(v) for v in values) + "]"


def render_manifest(manifest: SeedManifest, *, origin: str = "") -> str:
    """The manifest as `taskmint.toml` text (what `parse_manifest` reads back)."""
    head = "# Detected by taskmint"
    head += f" from {origin}" if origin else ""
    head += "; edit and pin it with the seed's `manifest` key.\n"
    return (
        head
        + "[seed]\n"
        + f"name = {_toml_str(manifest.name)}\n"
        + f"language = {_toml_str(manifest.language)}\n"
        + f"description = {_toml_str(manifest.description)}\n"
        + f"source_paths = {_toml_list(manifest.source_paths)}\n"
        + f"test_paths = {_toml_list(manifest.test_paths)}\n"
        + f"dependencies = {_toml_list(manifest.dependencies)}\n"
        + (f"distribution = {_toml_str(manifest.distribution)}\n" if manifest.distribution else "")
        + "\n[run]\n"
        + f"runner = {_toml_str(manifest.runner)}\n"
        + f"pythonpath = {_toml_list(manifest.pythonpath)}\n"
        + f"timeout = {int(manifest.timeout)}\n"
        + f"test_timeout = {manifest.test_timeout:g}\n"
        + (f"pytest = {_toml_str(manifest.pytest)}\n" if manifest.pytest else "")
        + "".join(
            ("\n[run.plugins]\n" if i == 0 else "") + f"{_toml_str(name)} = {_toml_str(module)}\n"
            for i, (name, module) in enumerate(manifest.plugins)
        )
    )
