"""The runtime and environment images of the `docker` backend, built here with no registry.

Three layers, each cached by a tag and reused when present:

- the **base image** (`taskmint.sandbox.docker.base_image`): a minimal Debian root.
- the **runtime image** (`build_runtime_image`): the base plus *the host's own interpreter
  prefix*, copied to the same path (its site-packages, test suite and wheel folders such as
  `ensurepip/_bundled` left empty, as the local backend hides them), the sandbox users and
  the mount points. The host interpreter rather than Debian's `python3`: a task is validated
  under the interpreter its `env_id` names (path and exact version, e.g. 3.11.7), so grading
  it under another build (bookworm's 3.11.2) would make the outcomes of the two backends
  differ silently and the id lie. The venvs' `pyvenv.cfg` and the runner adapters also name
  that path.
- the **environment image** (`build_environment_image`): the runtime plus the seed's venv at
  `/opt/venv`, rebuilt in the image from a wheelhouse made on the host (`pip wheel` of exactly
  the distributions installed in the host venv), installed with `--no-index --no-deps` by pip
  run from its wheel (so neither pip nor setuptools is in the venv unless the host venv has
  it) in a container with no network; the seed's metadata-only stand-in (`envs.copies`) is
  copied over as it is. Tagged `taskmint-env:<env_id>` and labelled with the environment hash and
  the runtime it was built on. A JavaScript seed's environment (`kind="node"`) is the runtime
  plus the host's `node` at its own path (the path and version its `env_id` names) and a
  standard-library venv at `/opt/venv`, so every environment image has `/opt/venv/bin/python`
  (the Harbor grader's interpreter). A Rust seed's (`kind="cargo"`) is the runtime plus the
  toolchain, the vendored dependencies, the offline cargo home, the warm build and the linker
  at the paths the local sandbox mounts them (`taskmint.harbor.rust_image`, registered with
  `register_image_kind`). The docker backend itself still
  runs Python seeds only.
"""

from __future__ import annotations

import contextlib
import importlib.metadata
import json
import shutil
import subprocess
import sys
import tarfile
import tempfile
from pathlib import Path
from typing import Any, Protocol

from taskmint.envs.copies import is_placeholder, placeholders, wheel_folders
from taskmint.envs.venv import base_interpreter
from taskmint.errors import EnvironmentBuildError, SandboxUnavailableError
from taskmint.records import Environment, stable_id
from taskmint.sandbox.docker.base_image import DEFAULT_BASE_IMAGE
from taskmint.sandbox.docker.client import docker_client, image_exists, image_labels

__all__ = [
    "KEEPER_UID",
    "SANDBOX_UID",
    "build_environment_image",
    "build_runtime_image",
    "environment_image_tag",
    "venv_requirements",
]

SANDBOX_UID = 10001  # runs the untrusted command
KEEPER_UID = 10000  # the idle process of a warm container; the command cannot signal it
# Bumped whenever what goes into the runtime or environment images changes.
# 2: no wheels of the interpreter's (ensurepip's) in the runtime; venvs without pip or
#    setuptools, the seed's own distribution as its metadata alone (as the host's venvs)
_RECIPE = 2
_DIRS = ("/workspace", "/run/taskmint", "/opt")


def _interpreter() -> tuple[str, str, str]:
    """(real interpreter path, its prefix, its version) of the host interpreter."""
    exe, prefix = base_interpreter()
    return exe, prefix, ".".join(str(p) for p in sys.version_info[:3])


def _prefix_tar(prefix: str, lib: str, out: Path) -> None:
    """A tar of the interpreter prefix at its own path, with site-packages, test and every
    folder holding wheels (`ensurepip/_bundled`) emptied."""
    hidden = (f"{lib}/site-packages", f"{lib}/test", *wheel_folders(prefix))
    with tarfile.open(out, "w") as tar:

        def keep(info: tarfile.TarInfo) -> tarfile.TarInfo | None:
            name = "/" + info.name.lstrip("/")
            if any(name.startswith(h + "/") for h in hidden):
                return None
            info.uid = info.gid = 0
            info.uname = info.gname = "root"
            info.mode |= 0o444 if not info.isdir() else 0o555
            return info

        tar.add(prefix, arcname=prefix.lstrip("/"), filter=keep)


def _run_builder(
    client: Any,
    *,
    image: str,
    script: str,
    archives: list[tuple[str, Path]],
    repository: str,
    tag: str,
    labels: dict[str, str],
    what: str,
) -> None:
    """Run `script` as root with no network in a container from `image`, after unpacking
    `archives` into it, and commit the result as `repository:tag`."""
    container = client.api.create_container(
        image,
        command=["/bin/sh", "-ec", script],
        user="0:0",
        environment={"PATH": "/usr/local/bin:/usr/bin:/bin", "LANG": "C.UTF-8"},
        network_disabled=True,
        host_config=client.api.create_host_config(network_mode="none"),
        labels={"taskmint.builder": "1"},
    )
    cid = container["Id"]
    try:
        for path, archive in archives:
            with open(archive, "rb") as fh:
                client.api.put_archive(cid, path, fh)
        client.api.start(cid)
        status = client.api.wait(cid, timeout=1800)
        logs = client.api.logs(cid).decode("utf-8", "replace")
        if status.get("StatusCode") != 0:
            raise EnvironmentBuildError(
                f"building {what} failed (exit {status.get('StatusCode')}).\n{logs[-3000:]}"
            )
        client.api.commit(
            cid,
            repository=repository,
            tag=tag,
            conf={
                "Labels": labels,
                "Env": ["PATH=/usr/local/bin:/usr/bin:/bin", "LANG=C.UTF-8"],
                "User": f"{SANDBOX_UID}:{SANDBOX_UID}",
                "WorkingDir": "/workspace",
                "Cmd": ["/bin/sh"],
            },
        )
    finally:
        with contextlib.suppress(Exception):
            client.api.remove_container(cid, force=True)


def build_runtime_image(
    client: Any | None = None, *, base: str = DEFAULT_BASE_IMAGE, force: bool = False
) -> str:
    """Build (or reuse) the base plus the host interpreter, users and mount points.

    Tagged `taskmint-runtime:<hash of the base image id, interpreter and recipe>`. Fails, with
    the missing library named, if the interpreter cannot import its own extension modules
    in the image.
    """
    client = client or docker_client()
    info = image_exists(client, base)
    if info is None:
        raise SandboxUnavailableError(
            f"the base image {base} is not loaded; build it with `taskmint images build` "
            "(or scripts/build-base-image.sh), or `docker load` it"
        )
    exe, prefix, version = _interpreter()
    tag = stable_id(_RECIPE, info["Id"], exe, prefix, version, SANDBOX_UID, KEEPER_UID)
    ref = f"taskmint-runtime:{tag}"
    if not force and image_exists(client, ref) is not None:
        return ref
    lib = f"{prefix}/lib/python{sys.version_info[0]}.{sys.version_info[1]}"
    parents = [str(p) for p in reversed(Path(prefix).parents) if str(p) != "/"]
    script = "\n".join(
        [
            f"echo 'keeper:x:{KEEPER_UID}:{KEEPER_UID}::/nonexistent:/usr/sbin/nologin' "
            ">> /etc/passwd",
            f"echo 'sandbox:x:{SANDBOX_UID}:{SANDBOX_UID}::/tmp:/usr/sbin/nologin' >> /etc/passwd",
            f"echo 'keeper:x:{KEEPER_UID}:' >> /etc/group",
            f"echo 'sandbox:x:{SANDBOX_UID}:' >> /etc/group",
            f"mkdir -p {' '.join(_DIRS)} {lib}/site-packages {lib}/test "
            + " ".join(wheel_folders(prefix)),
            # ancestors such as /root are 0700 in Debian: the sandbox user must traverse them
            *(f"chmod 0755 {p}" for p in parents),
            "chmod 0755 /workspace /run/taskmint",
            # the interpreter must load every extension module a test may need
            f"{exe} -I -c 'import ssl, sqlite3, ctypes, lzma, bz2, zlib, decimal, uuid, "
            "hashlib, json, readline, curses, ensurepip, venv'",
        ]
    )
    work = Path(tempfile.mkdtemp(prefix="taskmint-runtime-"))
    try:
        archive = work / "prefix.tar"
        _prefix_tar(prefix, lib, archive)
        _run_builder(
            client,
            image=base,
            script=script,
            archives=[("/", archive)],
            repository="taskmint-runtime",
            tag=tag,
            labels={
                "taskmint.kind": "runtime",
                "taskmint.base": base,
                "taskmint.base_id": info["Id"],
                "taskmint.interpreter": exe,
                "taskmint.interpreter_prefix": prefix,
                "taskmint.python_version": version,
            },
            what=f"the runtime image on {base}",
        )
    finally:
        shutil.rmtree(work, ignore_errors=True)
    return ref


# --- environment image -----------------------------------------------------------------------


def _site_packages(venv: Path) -> Path:
    found = sorted(venv.glob("lib/python*/site-packages"))
    if not found:
        raise EnvironmentBuildError(f"{venv} is not a venv (no lib/python*/site-packages)")
    return found[0]


def venv_requirements(venv: Path) -> tuple[str, ...]:
    """Exact pins (`name==version`) of every distribution installed in a host venv (the
    metadata-only stand-in for the seed is no installed distribution: see `envs.copies`)."""
    pins = {
        f"{dist.metadata['Name']}=={dist.version}"
        for dist in importlib.metadata.distributions(path=[str(_site_packages(venv))])
        if not is_placeholder(dist)
    }
    return tuple(sorted(pins, key=str.lower))


def _wheelhouse(pins: tuple[str, ...], dest: Path) -> None:
    """`pip wheel` exactly `pins` (no dependency resolution: they are already a closed set)."""
    argv = [
        sys.executable,
        "-m",
        "pip",
        "wheel",
        "--quiet",
        "--no-deps",
        "--disable-pip-version-check",
        "--wheel-dir",
        str(dest),
        *pins,
    ]
    proc = subprocess.run(argv, capture_output=True, text=True, timeout=1800)
    if proc.returncode != 0:
        raise EnvironmentBuildError(
            f"could not build the wheelhouse for {list(pins)} (exit {proc.returncode}); the "
            f"host needs these wheels in its pip cache, find-links or index.\n"
            f"{proc.stderr[-2000:]}"
        )


def environment_image_tag(env_id: str) -> str:
    """The tag of a seed environment's image."""
    return f"taskmint-env:{env_id}"


def build_environment_image(
    env: Environment | Path,
    client: Any | None = None,
    *,
    base: str = DEFAULT_BASE_IMAGE,
    target: str = "/opt/venv",
    force: bool = False,
) -> str:
    """Build (or reuse) the image for a seed environment (an `Environment` or its venv folder).

    The venv is rebuilt inside the image at `target`, with the same interpreter, from wheels of
    exactly what the host venv holds, installed with `--no-index` in a container with no
    network. Reused when an image with the tag `taskmint-env:<env_id>` exists and its labels
    name the same runtime and requirements. Returns the tag.
    """
    client = client or docker_client()
    if isinstance(env, Environment) and env.kind != "venv":
        other = _OTHER_KINDS.get(env.kind)
        if other is None:
            raise EnvironmentBuildError(
                f"environment {env.env_id} is a {env.kind} environment; the docker backend "
                f"builds images for {', '.join(['venv', *_OTHER_KINDS])} environments only"
            )
        return other(env, client, base=base, target=target, force=force)
    venv = Path(env.prefix if isinstance(env, Environment) else env)
    if not (venv / "pyvenv.cfg").is_file():
        raise EnvironmentBuildError(f"{venv} is not a venv (no pyvenv.cfg)")
    env_id = env.env_id if isinstance(env, Environment) else venv.name
    runtime = build_runtime_image(client, base=base)
    pins = venv_requirements(venv)
    stand_ins = placeholders(venv)
    labels = {
        "taskmint.kind": "environment",
        "taskmint.env_id": env_id,
        "taskmint.runtime": runtime,
        "taskmint.venv": target,
        "taskmint.requirements": stable_id(pins, [p.name for p in stand_ins], _RECIPE),
    }
    ref = environment_image_tag(env_id)
    info = image_exists(client, ref)
    if not force and info is not None and image_labels(info) == {**image_labels(info), **labels}:
        return ref
    work = Path(tempfile.mkdtemp(prefix="taskmint-wheels-"))
    try:
        wheels = work / "wheels"
        wheels.mkdir()
        if pins:
            _wheelhouse(pins, wheels)
            # the installer: pip run from its wheel, never installed into the venv (as on the
            # host, where taskmint's own pip fills it)
            _wheelhouse((f"pip=={importlib.metadata.version('pip')}",), work / "installer")
        (wheels / "requirements.txt").write_text("".join(p + "\n" for p in pins))
        for info_dir in stand_ins:
            shutil.copytree(info_dir, work / "placeholders" / info_dir.name)
        archive = work / "wheels.tar"
        with tarfile.open(archive, "w") as tar:
            for name in ("wheels", "installer", "placeholders"):
                if (work / name).is_dir():
                    tar.add(work / name, arcname=f"tmp/{name}")
        _, prefix, _ = _interpreter()
        site = f"{target}/lib/python{sys.version_info[0]}.{sys.version_info[1]}/site-packages"
        script = "\n".join(
            [
                f"{prefix}/bin/python3 -m venv --without-pip {target}",
                *(
                    [
                        # a closed set of exact pins: no resolution (the seed's stand-in is
                        # no wheel to resolve against)
                        "installer=$(echo /tmp/installer/pip-*.whl)",
                        f'{target}/bin/python "$installer/pip" install --quiet --no-index '
                        "--no-deps --disable-pip-version-check --find-links /tmp/wheels "
                        "-r /tmp/wheels/requirements.txt",
                    ]
                    if pins
                    else []
                ),
                *([f"cp -R /tmp/placeholders/. {site}/"] if stand_ins else []),
                "rm -rf /tmp/wheels /tmp/installer /tmp/placeholders",
                f"chmod -R a+rX {target}",
            ]
        )
        repository, _, tag = ref.partition(":")
        _run_builder(
            client,
            image=runtime,
            script=script,
            archives=[("/", archive)],
            repository=repository,
            tag=tag,
            labels={**labels, "taskmint.pins": json.dumps(pins)},
            what=f"the image for environment {env_id}",
        )
    finally:
        shutil.rmtree(work, ignore_errors=True)
    return ref


def _node_version(node: str) -> str:
    try:
        proc = subprocess.run([node, "--version"], capture_output=True, text=True, timeout=60)
    except (OSError, subprocess.SubprocessError) as exc:
        raise EnvironmentBuildError(f"{node} does not run on this machine ({exc})") from exc
    if proc.returncode != 0 or not proc.stdout.strip():
        raise EnvironmentBuildError(f"{node} --version failed: {proc.stderr[-500:]}")
    return proc.stdout.strip()


def _build_node_image(env: Environment, client: Any, *, base: str, target: str, force: bool) -> str:
    """The image of a node environment: the runtime, the host's `node` binary copied to its own
    path (`env.interpreter`, a real path; also on PATH as /usr/local/bin/node when its folder is
    not), and a standard-library venv at `target` for the Harbor grader. Checked in the image:
    `node --version` must print the host's version (a node that needs shared libraries the base
    image lacks fails here, with the loader's message)."""
    node = env.interpreter
    if not node.startswith("/") or not Path(node).is_file():
        raise EnvironmentBuildError(
            f"environment {env.env_id}: node {node!r} is not a file on this machine"
        )
    version = _node_version(node)
    runtime = build_runtime_image(client, base=base)
    labels = {
        "taskmint.kind": "environment",
        "taskmint.env_id": env.env_id,
        "taskmint.runtime": runtime,
        "taskmint.venv": target,
        "taskmint.node": node,
        "taskmint.node_version": version,
        "taskmint.requirements": stable_id("node", node, version, _RECIPE),
    }
    ref = environment_image_tag(env.env_id)
    info = image_exists(client, ref)
    if not force and info is not None and image_labels(info) == {**image_labels(info), **labels}:
        return ref
    _, prefix, _ = _interpreter()
    on_path = str(Path(node).parent) in ("/usr/local/bin", "/usr/bin", "/bin")
    script = "\n".join(
        [
            f"{prefix}/bin/python3 -m venv --without-pip {target}",
            f"chmod -R a+rX {target}",
            *([] if on_path else [f"ln -sf {node} /usr/local/bin/node"]),
            f'test "$({node} --version)" = {version}',
        ]
    )
    work = Path(tempfile.mkdtemp(prefix="taskmint-node-"))
    try:
        archive = work / "node.tar"
        with tarfile.open(archive, "w") as tar:

            def owned(info: tarfile.TarInfo) -> tarfile.TarInfo:
                info.uid = info.gid = 0
                info.uname = info.gname = "root"
                info.mode = 0o755
                return info

            tar.add(node, arcname=node.lstrip("/"), filter=owned)
        repository, _, tag = ref.partition(":")
        _run_builder(
            client,
            image=runtime,
            script=script,
            archives=[("/", archive)],
            repository=repository,
            tag=tag,
            labels=labels,
            what=f"the image for node environment {env.env_id}",
        )
    finally:
        shutil.rmtree(work, ignore_errors=True)
    return ref


class _ImageBuilder(Protocol):
    def __call__(
        self, env: Environment, client: Any, *, base: str, target: str, force: bool
    ) -> str: ...


# environment kinds other than a venv (`Environment.kind`, as a language's profile builds
# them) -> how their image is built
# (Rust's, "cargo", is registered by `taskmint.harbor.rust_image`, which sits above the
# languages it reads: `register_image_kind`)
_OTHER_KINDS: dict[str, _ImageBuilder] = {"node": _build_node_image}


def register_image_kind(kind: str, builder: _ImageBuilder) -> None:
    """Say how the image of an environment of `kind` is built (a layer above this one that
    knows the environment's layout registers its builder)."""
    _OTHER_KINDS[kind] = builder
