"""The environment of a Rust seed: the toolchain, an offline cargo home, the vendored
dependencies, and a warm target folder.

`build_environment(seed, ...)` makes, under `cache/rust/`:

- `tools/<toolchain>/`: execute-only copies of cargo, rustdoc and cargo-nextest (see
  `toolchain`), once per toolchain;
- `vendor/<lock digest>/`: the seed's dependencies, dev-dependencies included, as
  `cargo vendor` writes them (done at acquisition, `acquire.vendor`, and here when missing);
  keyed by the Cargo.lock, so seeds with the same lock share it;
- `envs/<env_id>/`: `cargo-home/config.toml` (the vendored folder replaces the registry, the
  network is off: every build is `--frozen`), and `warm/<secret>/target`, the original's build
  made once in the sandbox by a full run of its suite. The run's test ids are kept
  (`tests.json`): what a tree that does not build fails.

A candidate's run copies the warm target folder into its workspace (inside the sandbox, from a
folder only the harness can name: `warm/` is root-owned and unlistable, its one entry has a
random name given on the report channel) and cargo recompiles only what the change touches.
The fingerprints of the seed's own packages are deleted from the warm copy, so cargo always
rebuilds them (rustc's incremental cache makes that cheap): a workspace's files carry a fixed
old timestamp, and cargo's freshness check, which compares timestamps, would otherwise take a
changed file for an unchanged one. Dependencies are fingerprinted by version, not by time.

The environment is per seed snapshot (its warm build is the snapshot's), so unlike a Python
venv its id holds the snapshot id; `environment_id(seed)`.
"""

from __future__ import annotations

import dataclasses
import fcntl
import hashlib
import json
import os
import re
import secrets
import shutil
import subprocess
from pathlib import Path

from taskmint.config import Limits
from taskmint.errors import EnvironmentBuildError, SandboxError
from taskmint.files import copy_tree
from taskmint.languages.rust.adapter import (
    BROKEN_FILE,
    LAYOUT_FILE,
    TESTS_FILE,
    WARM_FILE,
    CargoAdapter,
    run_harness,
)
from taskmint.languages.rust.toolchain import VENDOR, Toolchain, find_toolchain, tool_copies
from taskmint.records import Environment, SeedApp, stable_id
from taskmint.sandbox.base import Sandbox
from taskmint.scratch import make_scratch, make_staging

__all__ = [
    "BUILD_FILE",
    "build_environment",
    "environment_id",
    "lock_digest",
    "phases",
    "vendor_dependencies",
    "vendored_packages",
]

# Bumped whenever the way an environment is built changes, so cached ones are rebuilt.
_RECIPE = 1
_FINGERPRINT = re.compile(r"^(?P<name>.+)-[0-9a-f]{16}$")
BUILD_FILE = "build.json"  # what the warm build cost: wall time, the harness's phases


def phases(output: str) -> dict[str, float]:
    """The harness's seconds per phase (copy, metadata, build, list, tests, doctests, clean),
    from the last `taskmint-phases` line of a run's output; {} when there is none."""
    for line in reversed(output.splitlines()):
        if line.startswith("taskmint-phases "):
            try:
                data = json.loads(line.split(" ", 1)[1])
            except ValueError:
                return {}
            return {str(k): float(v) for k, v in data.items()} if isinstance(data, dict) else {}
    return {}


def lock_digest(root: Path) -> str:
    """The digest of a tree's Cargo.lock (what its vendored folder is keyed by)."""
    lock = Path(root) / "Cargo.lock"
    try:
        return hashlib.sha256(lock.read_bytes()).hexdigest()[:24]
    except OSError as exc:
        raise EnvironmentBuildError(
            f"{root} has no Cargo.lock ({exc}): acquire Rust seeds through "
            "taskmint.languages.rust (acquire_crate, acquire_git, acquire_folder), which "
            "resolve the dependencies and write one"
        ) from exc


def _cargo(argv: list[str], toolchain: Toolchain, *, cwd: Path, what: str, hint: str) -> str:
    try:
        proc = subprocess.run(
            argv,
            cwd=cwd,
            env=toolchain.host_env(),
            capture_output=True,
            text=True,
            timeout=1800,
        )
    except (OSError, subprocess.SubprocessError) as exc:
        raise EnvironmentBuildError(f"could not {what}: {exc}") from exc
    if proc.returncode != 0:
        raise EnvironmentBuildError(
            f"could not {what} (exit {proc.returncode}); {hint}\n{proc.stderr.strip()[-2000:]}"
        )
    return proc.stdout


def vendor_dependencies(root: Path, cache_dir: Path, toolchain: Toolchain | None = None) -> Path:
    """The vendored dependencies of the tree at `root` (which has a Cargo.lock): made once
    per lock with `cargo vendor --locked` (needs the Rust crate registry), dev-dependencies
    and every platform's dependencies included."""
    toolchain = toolchain or find_toolchain()
    digest = lock_digest(root)
    base = Path(cache_dir) / "rust" / "vendor"
    final = base / digest
    if (final / ".taskmint-ready").exists():
        return final
    base.mkdir(parents=True, exist_ok=True)
    with open(base / f"{digest}.lock", "w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        if (final / ".taskmint-ready").exists():
            return final
        staging = make_staging(f".{digest}.", base)
        try:
            tree = staging / "tree"
            shutil.copytree(root, tree, ignore=shutil.ignore_patterns("target", ".git"))
            out = staging / "vendor"
            _cargo(
                [toolchain.cargo, "vendor", "--locked", "--versioned-dirs", str(out)],
                toolchain,
                cwd=tree,
                what="vendor the seed's dependencies",
                hint="a dependency could not be resolved or downloaded from the Rust crate "
                "registry: check the network and the versions Cargo.lock pins",
            )
            out.mkdir(exist_ok=True)  # a crate without dependencies vendors nothing
            _make_readable(out)
            (out / ".taskmint-ready").write_text("ok\n")
            shutil.rmtree(final, ignore_errors=True)
            os.rename(out, final)
        finally:
            shutil.rmtree(staging, ignore_errors=True)
    return final


def _make_readable(root: Path) -> None:
    """Root-owned (where this process may), folders 0755, files 0644 (0755 if executable):
    readable by the sandbox's uid, writable by none."""
    chown = os.geteuid() == 0
    for dirpath, _, filenames in os.walk(root):
        if chown:
            os.lchown(dirpath, 0, 0)
        os.chmod(dirpath, 0o755)
        for name in filenames:
            path = os.path.join(dirpath, name)
            if chown:
                os.lchown(path, 0, 0)
            if not os.path.islink(path):
                mode = os.stat(path).st_mode
                os.chmod(path, 0o755 if mode & 0o100 else 0o644)


def vendored_packages(vendor: Path) -> tuple[str, ...]:
    """`name version` of every vendored package."""
    out = []
    for manifest in sorted(Path(vendor).glob("*/Cargo.toml")):
        name = version = ""
        for line in manifest.read_text(encoding="utf-8", errors="replace").splitlines():
            m = re.match(r'^(name|version)\s*=\s*"([^"]+)"', line)
            if m and m.group(1) == "name" and not name:
                name = m.group(2)
            elif m and m.group(1) == "version" and not version:
                version = m.group(2)
            if name and version:
                break
        if name:
            out.append(f"{name} {version}".strip())
    return tuple(out)


def _own_packages(root: Path, toolchain: Toolchain) -> list[str]:
    """The names of the seed's own packages (its workspace members)."""
    text = _cargo(
        [toolchain.cargo, "metadata", "--no-deps", "--format-version", "1", "--offline"],
        toolchain,
        cwd=root,
        what="read the seed's Cargo.toml",
        hint="is Cargo.toml valid?",
    )
    data = json.loads(text)
    members = set(data.get("workspace_members") or [])
    return sorted(str(p["name"]) for p in data.get("packages") or [] if p.get("id") in members)


def environment_id(seed: SeedApp, toolchain: Toolchain | None = None) -> str:
    """The cache key of a Rust seed's environment: the snapshot (its warm build), its lock,
    and the toolchain."""
    toolchain = toolchain or find_toolchain()
    return "rust-" + stable_id(
        _RECIPE, seed.snapshot_id, lock_digest(Path(seed.root)), toolchain.fingerprint
    )


def build_environment(
    seed: SeedApp,
    *,
    cache_dir: Path,
    sandbox: Sandbox,
    limits: Limits | None = None,
) -> Environment:
    """The `envs` verb for a Rust seed (see the module docstring); reused when built.

    Refuses, with `EnvironmentBuildError`, a seed that does not build, one without tests, a
    dependency tree that holds a copy of the seed, and a machine without the toolchain."""
    toolchain = find_toolchain()
    root = Path(seed.root)
    env_id = environment_id(seed, toolchain)
    base = Path(cache_dir) / "rust" / "envs"
    base.mkdir(parents=True, exist_ok=True)
    final = base / env_id
    vendor = vendor_dependencies(root, cache_dir, toolchain)
    packages = vendored_packages(vendor)
    record = Environment(
        env_id=env_id,
        kind="cargo",
        prefix=str(final),
        interpreter=toolchain.cargo,
        interpreter_prefix=toolchain.sysroot,
        python_version="",
        dependencies=packages,
    )
    if (final / "READY").exists():
        return record
    with open(base / f"{env_id}.lock", "w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        if (final / "READY").exists():
            return record
        own = _own_packages(root, toolchain)
        copies = sorted(p for p in packages if p.split(" ")[0] in own)
        if copies:
            raise EnvironmentBuildError(
                f"the dependencies of {seed.name} hold a copy of the seed itself "
                f"({', '.join(copies)}): a policy could read the answer there; pin versions "
                "whose dependency tree does not include the seed"
            )
        tools = tool_copies(cache_dir, toolchain)
        staging = make_staging(f".{env_id}.", base)
        try:
            os.chmod(staging, 0o755)
            _write_layout(staging, toolchain, tools, vendor)
            env = dataclasses.replace(record, prefix=str(staging))
            _warm(seed, env, staging, own, sandbox, limits or Limits())
            shutil.rmtree(final, ignore_errors=True)
            os.rename(staging, final)
            (final / "READY").write_text("ok\n")
        finally:
            shutil.rmtree(staging, ignore_errors=True)
    return record


def _write_layout(folder: Path, toolchain: Toolchain, tools: Path, vendor: Path) -> None:
    home = folder / "cargo-home"
    home.mkdir(mode=0o755)
    (home / "config.toml").write_text(
        "# taskmint: every build of this seed is offline, from its vendored dependencies\n"
        "[source.crates-io]\n"
        'replace-with = "taskmint-vendored"\n\n'
        "[source.taskmint-vendored]\n"
        f'directory = "{VENDOR}"\n\n'
        "[net]\noffline = true\n\n"
        '[term]\ncolor = "never"\nprogress.when = "never"\n',
        encoding="utf-8",
    )
    os.chmod(home / "config.toml", 0o644)
    layout = {
        "toolchain": toolchain.sysroot,
        "tools": str(tools),
        "vendor": str(vendor),
        "linker": toolchain.linker,
        "linker_dirs": list(toolchain.linker_dirs),
        "host": toolchain.host,
    }
    (folder / LAYOUT_FILE).write_text(json.dumps(layout, indent=1), encoding="utf-8")


def _warm(
    seed: SeedApp,
    env: Environment,
    folder: Path,
    own: list[str],
    sandbox: Sandbox,
    limits: Limits,
) -> None:
    """Build and run the original's whole suite once in the sandbox, keeping its target
    folder; refuse a seed that does not build or has no tests."""
    ws = make_scratch("taskmint-rust-warm-")
    try:
        os.chmod(ws, 0o755)
        copy_tree(Path(seed.root), ws, seed.files)
        adapter = CargoAdapter(keep_target=True, warm=False)
        wall = max(limits.wall_seconds, seed.manifest.timeout + 60)
        try:
            result, report = run_harness(
                sandbox, ws, seed.manifest, env, limits=limits.with_wall(wall), adapter=adapter
            )
        except SandboxError as exc:
            raise EnvironmentBuildError(f"the warm build of {seed.name} failed: {exc}") from exc
        errors = [e for e in report.collection_errors if " did not build: " in e]
        if result.timed_out or not report.complete:
            raise EnvironmentBuildError(
                f"the warm build of {seed.name} did not finish ({wall:.0f} s): "
                f"{report.collection_errors[:1] or result.output[-800:]}; raise run.timeout "
                "in its taskmint.toml"
            )
        if not any(r.outcome == "passed" for r in report.results):
            if errors:
                raise EnvironmentBuildError(
                    f"{seed.name} does not build, so it cannot be a seed: {errors[0][:1500]}"
                )
            raise EnvironmentBuildError(
                f"{seed.name} has no passing test (no #[test] function, integration test or "
                "doctest passed): only crates that ship working tests can be seeds"
            )
        target = ws / "target"
        if not target.is_dir():
            raise EnvironmentBuildError(f"the warm build of {seed.name} left no target folder")
        _forget_own(target, own)
        warm = folder / "warm"
        warm.mkdir()
        name = secrets.token_hex(16)
        (warm / name).mkdir()
        shutil.move(str(target), str(warm / name / "target"))
        _make_readable(warm / name)
        os.chmod(warm, 0o711)  # the uid may pass through, not list it
        (folder / WARM_FILE).write_text(json.dumps({"name": name}), encoding="utf-8")
        os.chmod(folder / WARM_FILE, 0o600)
        ids = sorted(r.test_id for r in report.results)
        (folder / TESTS_FILE).write_text(json.dumps(ids, indent=0), encoding="utf-8")
        # test targets of the original that do not build (a dev-dependency left out of a
        # published package): never built again, their tests are not part of the suite
        broken = sorted({e.split(" did not build: ", 1)[0] for e in errors})
        (folder / BROKEN_FILE).write_text(json.dumps(broken), encoding="utf-8")
        figures = {"wall_time": round(result.wall_time, 3), "phases": phases(result.output)}
        (folder / BUILD_FILE).write_text(json.dumps(figures), encoding="utf-8")
    finally:
        shutil.rmtree(ws, ignore_errors=True)


def _forget_own(target: Path, own: list[str]) -> None:
    """Delete the fingerprints of the seed's own packages (so cargo always rebuilds them)."""
    names = set(own)
    for fingerprints in target.glob("*/.fingerprint"):
        for entry in fingerprints.iterdir():
            m = _FINGERPRINT.match(entry.name)
            if m and m.group("name") in names:
                shutil.rmtree(entry, ignore_errors=True)
