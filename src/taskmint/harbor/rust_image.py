"""The environment image of a Rust seed (`Environment.kind == "cargo"`), for its Harbor tasks.

`build_cargo_image(env, client, base=...)` builds, FROM the runtime image (the base plus the
host interpreter), with no network and no registry, an image that holds what the local
sandbox mounts for a Rust run (`languages.rust.adapter.CargoAdapter.mounts`), at the same
paths, so the warm build made in the sandbox is fresh in the image:

- `/opt/rust/toolchain`: the host toolchain's folder (`rustc --print sysroot`) without its
  documentation and without the tools a test run does not use (clippy, rustfmt, the
  debuggers' wrappers); `bin/cargo` and `bin/rustdoc` are the execute-only copies (mode 0111,
  the environment's `tools/`), `/opt/rust/bin/cargo-nextest` too: the kernel makes them
  non-dumpable, as in the sandbox;
- `/opt/rust/cargo-home` (the offline `config.toml`: the vendored folder replaces the
  registry, the network is off) and `/opt/rust/vendor` (the vendored dependencies);
- `/opt/rust/warm/<secret>/target`: the warm build; `warm/` is root's and mode 0711, so an
  agent's or a test's uid can pass through it but not list it;
- the linker: the host's C compiler (`cc`, at its real path, the one the environment names)
  with binutils and the C library's development files: the files of the host's Debian
  packages that `cc` needs (its package, `libc6-dev`, and their dependencies), less those the
  image has already (`dpkg -L`, copied as the host has them);
- `/opt/venv`: a standard-library venv of the host interpreter (the grader's interpreter,
  which also runs the cargo harness, as for a node seed);
- `/opt/rust/harbor/input.json` (0644): the cargo harness's input that the environment fixes
  (cargo, nextest, the tools' environment, the target folder, the original's test ids, the
  test targets that never build), as `CargoAdapter.harness_input` gives it; and
  `/opt/rust/harbor/warm.json` (0600, root's): the warm target's path, which only the grader
  (root) reads and hands the harness on its channel.

The build is checked in the image: rustc compiles and links a program with the linker, and
cargo, rustdoc and cargo-nextest print their versions. Tagged `taskmint-env:<env_id>`.
"""

from __future__ import annotations

import io
import json
import os
import shutil
import subprocess
import tarfile
import tempfile
from collections.abc import Iterable
from pathlib import Path
from typing import Any

from taskmint.errors import EnvironmentBuildError
from taskmint.languages.rust.harbor import HARBOR_INPUT, HARBOR_WARM
from taskmint.records import Environment, stable_id

__all__ = ["HARBOR_INPUT", "HARBOR_WARM", "build_cargo_image", "linker_packages"]

RUST_ROOT = "/opt/rust"
# Bumped whenever what goes into a Rust environment image changes.
_RECIPE = 1
# what a test run does not need from the toolchain folder (share/doc alone is 800 MB)
_SKIP_TOOLCHAIN = ("share/doc", "share/zsh", "share/man", "etc/bash_completion.d")
_TOOLCHAIN_BINS = ("cargo", "rustc", "rustdoc")
_LINKER_ROOTS = ("libc6-dev",)  # the C runtime's start files and libc.so: not a gcc dependency


def _owned(info: tarfile.TarInfo) -> tarfile.TarInfo:
    info.uid = info.gid = 0
    info.uname = info.gname = "root"
    return info


def _dpkg(*args: str) -> str:
    try:
        proc = subprocess.run(
            ["dpkg-query", *args], capture_output=True, text=True, timeout=120, check=False
        )
    except (OSError, subprocess.SubprocessError) as exc:
        raise EnvironmentBuildError(f"dpkg-query could not run ({exc})") from exc
    return proc.stdout if proc.returncode == 0 else ""


def _package_of(path: str) -> str:
    try:
        proc = subprocess.run(
            ["dpkg-query", "-S", path], capture_output=True, text=True, timeout=60, check=False
        )
    except (OSError, subprocess.SubprocessError) as exc:
        raise EnvironmentBuildError(f"dpkg-query could not run ({exc})") from exc
    if proc.returncode != 0 or ":" not in proc.stdout:
        raise EnvironmentBuildError(
            f"the linker {path} belongs to no Debian package on this machine: a Rust image "
            "copies the linker's packages from the host (a Debian host, gcc from apt)"
        )
    return proc.stdout.split(":", 1)[0].strip()


def linker_packages(linker: str, present: Iterable[str]) -> list[str]:
    """The host's installed packages the linker needs (its own, `libc6-dev` and their
    dependencies, Depends and Pre-Depends, the first installed of each alternative), less
    `present` (the image's)."""
    rows = _dpkg("-W", "-f", "${Package}\t${db:Status-Abbrev}\t${Pre-Depends}, ${Depends}\n")
    installed: dict[str, list[list[str]]] = {}
    for row in rows.splitlines():
        name, status, deps = [*row.split("\t"), "", ""][:3]
        if not status.startswith("ii"):
            continue
        groups = []
        for group in deps.split(","):
            alternatives = [a.strip().split(" ", 1)[0].split(":", 1)[0] for a in group.split("|")]
            if any(alternatives):
                groups.append([a for a in alternatives if a])
        installed[name] = groups
    have = set(present)
    todo = [_package_of(linker), *_LINKER_ROOTS]
    seen: set[str] = set()
    while todo:
        package = todo.pop()
        if package in seen or package not in installed:
            continue
        seen.add(package)
        for options in installed[package]:
            chosen = next((n for n in options if n in installed), None)
            if chosen is not None:
                todo.append(chosen)
    return sorted(seen - have)


def _package_files(packages: list[str]) -> list[str]:
    """Every file and link the host's packages installed, at its real folder (merged /usr:
    `/lib/x86_64-linux-gnu/...` is `/usr/lib/...`)."""
    out: set[str] = set()
    for package in packages:
        for line in _dpkg("-L", package).splitlines():
            path = line.strip()
            if not path.startswith("/") or path.startswith("/usr/share/doc"):
                continue
            if os.path.islink(path) or os.path.isfile(path):
                out.add(
                    os.path.join(os.path.realpath(os.path.dirname(path)), os.path.basename(path))
                )
    return sorted(out)


def _image_packages(client: Any, image: str) -> list[str]:
    out = client.containers.run(
        image,
        ["dpkg-query", "-W", "-f", "${Package}\n"],
        user="0:0",
        network_disabled=True,
        network_mode="none",
        remove=True,
        labels={"taskmint.builder": "1"},
    )
    return out.decode("utf-8", "replace").split()


def _add_dirs(tar: tarfile.TarFile, path: str, done: set[str]) -> None:
    """The folders on the way to `path` (real folders of the host, 0755, root's)."""
    parts = path.strip("/").split("/")[:-1]
    for i in range(1, len(parts) + 1):
        d = "/".join(parts[:i])
        if d in done:
            continue
        done.add(d)
        info = tarfile.TarInfo(d)
        info.type, info.mode = tarfile.DIRTYPE, 0o755
        tar.addfile(_owned(info))


def _add_tree(
    tar: tarfile.TarFile, src: Path, arc: str, *, skip: tuple[str, ...] = (), mode: int = 0
) -> None:
    """`src` at `arc`, root's, readable by all (`mode` added), `skip` (relative) left out."""

    def keep(info: tarfile.TarInfo) -> tarfile.TarInfo | None:
        rel = info.name[len(arc) :].lstrip("/")
        if any(rel == s or rel.startswith(s + "/") for s in skip):
            return None
        info = _owned(info)
        if info.isdir():
            info.mode = 0o755 | mode
        elif info.isfile():
            info.mode = (0o755 if info.mode & 0o111 else 0o644) | mode
        return info

    tar.add(str(src), arcname=arc, filter=keep)


def _add_bytes(tar: tarfile.TarFile, arc: str, data: bytes, mode: int) -> None:
    info = tarfile.TarInfo(arc)
    info.size, info.mode = len(data), mode
    tar.addfile(_owned(info), io.BytesIO(data))


def _harbor_input(env: Environment) -> tuple[dict[str, Any], str | None]:
    """The cargo harness's input the environment fixes (`CargoAdapter.harness_input`'s: the
    tools, their environment, the target folder, the original's ids, the targets never
    built), and the warm target's path."""
    from taskmint.languages.rust.adapter import TARGET_DIR, EnvLayout, tool_env
    from taskmint.languages.rust.toolchain import NEXTEST, TOOLCHAIN

    layout = EnvLayout(env.prefix)
    fixed = {
        "cargo": f"{TOOLCHAIN}/bin/cargo",
        "nextest": NEXTEST,
        "env": tool_env(layout),
        "target_dir": TARGET_DIR,
        "expected": layout.known_tests(),
        "skip": layout.broken_targets(),
    }
    return fixed, layout.warm_path()


def build_cargo_image(
    env: Environment,
    client: Any,
    *,
    base: str,
    target: str = "/opt/venv",
    force: bool = False,
    runtime: str,
    interpreter_prefix: str,
) -> str:
    """Build (or reuse) the image of a Rust environment on `runtime` (see the module
    docstring); its tag."""
    from taskmint.languages.rust.adapter import EnvLayout
    from taskmint.languages.rust.toolchain import CARGO_HOME, NEXTEST, TOOLCHAIN, VENDOR, WARM
    from taskmint.sandbox.docker.client import image_exists, image_labels
    from taskmint.sandbox.docker.images import _run_builder, environment_image_tag

    prefix = Path(env.prefix)
    if not (prefix / "READY").is_file():
        raise EnvironmentBuildError(
            f"environment {env.env_id} is not built ({prefix}): build it with "
            "taskmint.languages.rust.build_environment first"
        )
    layout = EnvLayout(env.prefix)
    fixed, warm = _harbor_input(env)
    if warm is None or not warm.startswith(WARM + "/"):
        raise EnvironmentBuildError(f"environment {env.env_id} has no warm build")
    secret = warm[len(WARM) + 1 :].split("/", 1)[0]
    packages = linker_packages(layout.linker, _image_packages(client, runtime))
    labels = {
        "taskmint.kind": "environment",
        "taskmint.env_id": env.env_id,
        "taskmint.runtime": runtime,
        "taskmint.venv": target,
        "taskmint.linker": layout.linker,
        "taskmint.requirements": stable_id("cargo", env.env_id, packages, _RECIPE),
    }
    ref = environment_image_tag(env.env_id)
    info = image_exists(client, ref)
    if not force and info is not None and image_labels(info) == {**image_labels(info), **labels}:
        return ref
    tools = Path(layout.tools)
    linker = layout.linker
    script = "\n".join(
        [
            f"{interpreter_prefix}/bin/python3 -m venv --without-pip {target}",
            f"chmod -R a+rX {target}",
            f"chmod 0711 {WARM}",
            f"chmod 0600 {HARBOR_WARM}",
            # the toolchain links with the linker the environment names
            "printf 'fn main() { println!(\"linked\"); }\\n' > /tmp/taskmint-link.rs",
            f"{TOOLCHAIN}/bin/rustc -C linker={linker} -o /tmp/taskmint-link /tmp/taskmint-link.rs",
            'test "$(/tmp/taskmint-link)" = linked',
            "rm -f /tmp/taskmint-link /tmp/taskmint-link.rs",
            f"{TOOLCHAIN}/bin/cargo --version",
            f"{TOOLCHAIN}/bin/rustdoc --version",
            f"{NEXTEST} --version",
        ]
    )
    work = Path(tempfile.mkdtemp(prefix="taskmint-rust-image-"))
    try:
        archive = work / "rust.tar"
        with tarfile.open(archive, "w") as tar:
            done: set[str] = set()
            for path in _package_files(packages):
                _add_dirs(tar, path, done)
                tar.add(path, arcname=path.lstrip("/"), recursive=False, filter=_owned)
            root = RUST_ROOT.lstrip("/")
            for d in (root, f"{root}/bin", f"{root}/harbor"):
                _add_dirs(tar, f"/{d}/x", done)
            sysroot = Path(layout.toolchain)
            skip = (*_SKIP_TOOLCHAIN, "bin")
            _add_tree(tar, sysroot, TOOLCHAIN.lstrip("/"), skip=skip)
            _add_dirs(tar, f"{TOOLCHAIN}/bin/x", done)
            for name in _TOOLCHAIN_BINS:  # cargo and rustdoc: the execute-only copies
                src = tools / name if (tools / name).exists() else sysroot / "bin" / name
                member = tar.gettarinfo(str(src), arcname=f"{TOOLCHAIN.lstrip('/')}/bin/{name}")
                member.mode = 0o111 if src.parent == tools else 0o755
                with open(src, "rb") as fh:
                    tar.addfile(_owned(member), fh)
            member = tar.gettarinfo(str(tools / "cargo-nextest"), arcname=NEXTEST.lstrip("/"))
            member.mode = 0o111
            with open(tools / "cargo-nextest", "rb") as fh:
                tar.addfile(_owned(member), fh)
            _add_tree(tar, prefix / "cargo-home", CARGO_HOME.lstrip("/"))
            _add_tree(tar, Path(layout.vendor), VENDOR.lstrip("/"), skip=(".taskmint-ready",))
            _add_dirs(tar, f"{WARM}/{secret}/x", done)
            _add_tree(
                tar, prefix / "warm" / secret / "target", f"{WARM.lstrip('/')}/{secret}/target"
            )
            _add_bytes(tar, HARBOR_INPUT.lstrip("/"), json.dumps(fixed, indent=1).encode(), 0o644)
            _add_bytes(tar, HARBOR_WARM.lstrip("/"), json.dumps({"warm": warm}).encode(), 0o600)
        repository, _, tag = ref.partition(":")
        _run_builder(
            client,
            image=runtime,
            script=script,
            archives=[("/", archive)],
            repository=repository,
            tag=tag,
            labels={**labels, "taskmint.linker_packages": json.dumps(packages)},
            what=f"the image for Rust environment {env.env_id}",
        )
    finally:
        shutil.rmtree(work, ignore_errors=True)
    return ref


def _build_cargo_image(
    env: Environment, client: Any, *, base: str, target: str, force: bool
) -> str:
    """The image of a Rust environment: the runtime, the toolchain, the vendored dependencies,
    the offline cargo home, the warm build, the linker, and a standard-library venv at
    `target` for the Harbor grader."""
    from taskmint.sandbox.docker.images import _interpreter, build_runtime_image

    _, prefix, _ = _interpreter()
    return build_cargo_image(
        env,
        client,
        base=base,
        target=target,
        force=force,
        runtime=build_runtime_image(client, base=base),
        interpreter_prefix=prefix,
    )


def register() -> None:
    """Make `build_environment_image` build Rust ("cargo") environments' images."""
    from taskmint.sandbox.docker.images import register_image_kind

    register_image_kind("cargo", _build_cargo_image)
