"""The base image of the `docker` backend: a minimal Debian root made here, with no registry.

`build_base_image` runs `debootstrap --variant=minbase` from the mirror named in this machine's
own apt sources (`debian_source`), adds the shared libraries the host interpreter links against
(`BASE_PACKAGES`) and loads the root with `docker import`. A user with a registry may name any
glibc Debian image instead (for example `python:3.11-slim`). The runtime and environment images
are built on it (`taskmint.sandbox.docker.images`).
"""

from __future__ import annotations

import re
import shutil
import subprocess
import tempfile
from pathlib import Path
from typing import Any

from taskmint.errors import EnvironmentBuildError, SandboxUnavailableError
from taskmint.sandbox.docker.client import docker_client, image_exists

__all__ = ["BASE_PACKAGES", "DEFAULT_BASE_IMAGE", "build_base_image", "debian_source"]

DEFAULT_BASE_IMAGE = "taskmint-base:bookworm"
# Beyond debootstrap's minbase: what the host interpreter's extension modules link against
# (from `ldd` over lib-dynload; Tk is left out, a test runner has no display).
BASE_PACKAGES = (
    "libssl3",
    "libffi8",
    "libsqlite3-0",
    "libbz2-1.0",
    "liblzma5",
    "zlib1g",
    "libncursesw6",
    "libreadline8",
    "libuuid1",
    "libexpat1",
    "libnsl2",
    "libtirpc3",
    "libgssapi-krb5-2",
    "libcrypt1",
)


def debian_source(apt_dir: Path = Path("/etc/apt")) -> tuple[str, str]:
    """The (mirror URL, suite) of this machine's main Debian archive, read from its apt sources.

    Reads deb822 `*.sources` files first (the stanza whose suite is not `-security` or
    `-updates`), then one-line `sources.list` entries.
    """
    stanzas: list[dict[str, str]] = []
    for path in sorted((apt_dir / "sources.list.d").glob("*.sources")):
        for block in re.split(r"\n\s*\n", path.read_text(encoding="utf-8", errors="replace")):
            fields: dict[str, str] = {}
            for line in block.splitlines():
                if line.startswith("#") or ":" not in line or line[:1].isspace():
                    continue
                key, _, value = line.partition(":")
                fields[key.strip().lower()] = value.strip()
            if fields:
                stanzas.append(fields)
    for fields in stanzas:
        if "deb" not in fields.get("types", "").split() or fields.get("enabled") == "no":
            continue
        for suite in fields.get("suites", "").split():
            if "-" not in suite and fields.get("uris"):
                return fields["uris"].split()[0], suite
    lists = [apt_dir / "sources.list", *sorted((apt_dir / "sources.list.d").glob("*.list"))]
    for path in lists:
        if not path.is_file():
            continue
        for line in path.read_text(encoding="utf-8", errors="replace").splitlines():
            parts = re.sub(r"\[[^]]*\]", "", line).split()
            if len(parts) >= 3 and parts[0] == "deb" and "-" not in parts[2]:
                return parts[1], parts[2]
    raise SandboxUnavailableError(
        f"no Debian archive found in the apt sources under {apt_dir}; pass `mirror=` and "
        "`suite=` to build_base_image, or name a base image that is already loaded"
    )


def build_base_image(
    client: Any | None = None,
    *,
    tag: str = DEFAULT_BASE_IMAGE,
    mirror: str | None = None,
    suite: str | None = None,
    packages: tuple[str, ...] = BASE_PACKAGES,
    work_dir: Path | None = None,
    force: bool = False,
    log: Any = None,
) -> str:
    """Build (or reuse) the base image `tag`: a Debian minbase root loaded with `docker import`.

    The mirror and suite default to this machine's apt sources (`debian_source`). Takes a few
    minutes and needs root (debootstrap); the result is cached by its tag, so later calls
    return at once. Returns the tag.
    """
    client = client or docker_client()
    if not force and image_exists(client, tag) is not None:
        return tag
    debootstrap = shutil.which("debootstrap")
    if debootstrap is None:
        raise SandboxUnavailableError(
            "debootstrap is needed to build the base image: apt-get install debootstrap "
            "(or name an existing base image in the sandbox configuration)"
        )
    if mirror is None or suite is None:
        found_mirror, found_suite = debian_source()
        mirror, suite = mirror or found_mirror, suite or found_suite
    say = log or (lambda msg: None)
    parent = Path(tempfile.mkdtemp(prefix="taskmint-base-", dir=work_dir))
    try:
        root = parent / "root"
        argv = [
            debootstrap,
            "--variant=minbase",
            f"--include={','.join(packages)}",
            suite,
            str(root),
            mirror,
        ]
        keyring = Path("/usr/share/keyrings/debian-archive-keyring.gpg")
        if keyring.is_file():
            argv.insert(1, f"--keyring={keyring}")
        say(f"debootstrap {suite} from {mirror}")
        proc = subprocess.run(argv, capture_output=True, text=True, timeout=3600)
        if proc.returncode != 0:
            raise EnvironmentBuildError(
                f"debootstrap failed (exit {proc.returncode}); check the mirror {mirror} is "
                f"reachable.\n{(proc.stdout + proc.stderr)[-3000:]}"
            )
        for junk in ("var/lib/apt/lists", "var/cache/apt", "var/log", "tmp"):
            for child in (root / junk).glob("*"):
                if child.is_dir() and not child.is_symlink():
                    shutil.rmtree(child)
                else:
                    child.unlink()
        archive = parent / "root.tar"
        subprocess.run(
            ["tar", "--numeric-owner", "-C", str(root), "-cf", str(archive), "."],
            check=True,
            capture_output=True,
        )
        say(f"docker import as {tag}")
        repository, _, version = tag.partition(":")
        client.api.import_image_from_file(
            str(archive),
            repository=repository,
            tag=version or "latest",
            changes=[
                "ENV PATH=/usr/local/bin:/usr/bin:/bin LANG=C.UTF-8",
                f"LABEL taskmint.kind=base taskmint.suite={suite}",
            ],
        )
    finally:
        shutil.rmtree(parent, ignore_errors=True)
    if image_exists(client, tag) is None:
        raise EnvironmentBuildError(f"docker import did not produce the image {tag}")
    return tag
