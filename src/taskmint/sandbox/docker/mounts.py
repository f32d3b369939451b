"""What a `docker` run sees of its environment: the image, bind mounts and named volumes.

The run's image comes from its mounts: the seed's venv (the mount whose source holds a
`pyvenv.cfg`) becomes the environment image built by `taskmint.sandbox.docker.images` (the
interpreter prefix and its emptied site-packages/test are already in that image); every other
read-only mount (taskmint's runner files, a leak scan's needles) is a read-only bind mount.
The environment image's venv and interpreter prefix are read through named volumes filled once
from the image (`environment_volumes`) unless the options say otherwise.
"""

from __future__ import annotations

import contextlib
import os
import threading
from pathlib import Path
from typing import Any

import docker.types

from taskmint.envs.copies import wheel_folders
from taskmint.errors import SandboxError
from taskmint.sandbox.base import Mount, RunSpec
from taskmint.sandbox.docker.client import image_exists
from taskmint.sandbox.docker.containers import ContainerKey, DockerOptions
from taskmint.sandbox.docker.images import (
    build_environment_image,
    build_runtime_image,
    environment_image_tag,
)

__all__ = ["VOLUME_LABEL", "EnvironmentMounts", "environment_volumes", "sweep_environment_volumes"]


class EnvironmentMounts:
    """The container key of each run: its image (built on first use) and mounts, cached per
    venv and image."""

    def __init__(self, client: Any, options: DockerOptions) -> None:
        self.client = client
        self.options = options
        self._lock = threading.Lock()
        self._images: dict[tuple[str, str], str] = {}
        self._volumes: dict[tuple[str, tuple[str, ...]], tuple[tuple[str, str], ...]] = {}

    def _image_for(self, venv: Mount | None) -> str:
        slot = (venv.source, venv.target) if venv else ("", "")
        with self._lock:
            cached = self._images.get(slot)
        if cached is not None:
            return cached
        base = self.options.base_image
        if venv is None:
            image = build_runtime_image(self.client, base=base)
        else:
            tag = environment_image_tag(Path(venv.source).name)
            if not self.options.build_images and image_exists(self.client, tag) is None:
                raise SandboxError(
                    f"no image {tag} for the environment at {venv.source}; build it with "
                    "`taskmint images build` or allow build_images in the docker options"
                )
            image = build_environment_image(
                Path(venv.source), self.client, base=base, target=venv.target
            )
        with self._lock:
            self._images[slot] = image
        return image

    def key(self, spec: RunSpec) -> ContainerKey:
        venvs = [m for m in spec.mounts if Path(m.source, "pyvenv.cfg").is_file()]
        if len(venvs) > 1:
            raise SandboxError("a docker run takes at most one venv mount")
        venv = venvs[0] if venvs else None
        if self.options.bind_environment:
            return ContainerKey(
                image=self._image_for(None),
                binds=tuple(
                    (os.path.realpath(m.source), m.target, m.writable) for m in spec.mounts
                ),
                memory=spec.limits.memory_bytes,
                processes=spec.limits.processes,
                tmp_bytes=spec.limits.file_bytes,
            )
        prefix = _venv_home(Path(venv.source)) if venv else None
        binds: list[tuple[str, str, bool]] = []
        targets = [venv.target] if venv else []
        for m in spec.mounts:
            if m is venv:
                continue
            if prefix is not None and _in_image(m, prefix):
                if m.target == prefix:
                    targets.append(prefix)
                continue
            binds.append((os.path.realpath(m.source), m.target, m.writable))
        limits = spec.limits
        image = self._image_for(venv)
        return ContainerKey(
            image=image,
            binds=tuple(binds),
            memory=limits.memory_bytes,
            processes=limits.processes,
            tmp_bytes=limits.file_bytes,
            volumes=self._volumes_for(image, tuple(targets)) if venv else (),
        )

    def _volumes_for(self, image: str, targets: tuple[str, ...]) -> tuple[tuple[str, str], ...]:
        """Named volumes holding the image's own files at `targets` (see `environment_volumes`),
        made once per image and machine; () to read them from the image instead."""
        if not self.options.environment_volumes or not targets:
            return ()
        slot = (image, targets)
        with self._lock:
            cached = self._volumes.get(slot)
        if cached is None:
            try:
                cached = environment_volumes(self.client.api, image, targets)
            except Exception:
                cached = ()  # the image's layers serve as before
            with self._lock:
                self._volumes[slot] = cached
        return cached


VOLUME_LABEL = "taskmint.env_volume"  # the id of the image the volume's files come from
# Every file below a target with its type, mode, owner, size and link target: a volume holds
# the image's files exactly when the two listings agree.
_LISTING = (
    'for t in "$@"; do cd "$t" && find . -printf "%y %m %U %G %s %p %l\\n"; done | LC_ALL=C sort'
)


def environment_volumes(
    api: Any, image: str, targets: tuple[str, ...]
) -> tuple[tuple[str, str], ...]:
    """Named volumes with `image`'s files at `targets`: the daemon fills an empty volume from
    the image the first time a container mounts it; a listing of the files through the
    volumes must then equal the listing from the image itself, and only then is the marker
    volume made that says the set is complete (so an interrupted fill is made again)."""
    image_id = str(api.inspect_image(image)["Id"]).split(":")[-1][:16]
    names = [(f"taskmint-env-{image_id}-{i}", t) for i, t in enumerate(targets)]
    marker = f"taskmint-env-{image_id}-complete-{len(targets)}"
    found = api.volumes(filters={"label": f"{VOLUME_LABEL}={image_id}"}).get("Volumes") or []
    have = {v["Name"] for v in found}
    if marker in have and all(n in have for n, _ in names):
        return tuple(names)
    sweep_environment_volumes(api)  # a new set is being made: the stale ones of old images go
    for name, _ in names:
        if name in have:
            api.remove_volume(name, force=True)
        api.create_volume(name, labels={VOLUME_LABEL: image_id})

    def listing(mounts: list[Any]) -> bytes:
        cid = api.create_container(
            image,
            command=["/bin/sh", "-c", _LISTING, "list", *targets],
            user="0:0",
            network_disabled=True,
            labels={"taskmint.builder": "1"},
            host_config=api.create_host_config(network_mode="none", mounts=mounts),
        )["Id"]
        try:
            api.start(cid)
            if api.wait(cid, timeout=600).get("StatusCode") != 0:
                raise SandboxError(f"listing the environment of {image} failed")
            return bytes(api.logs(cid, stdout=True, stderr=False))
        finally:
            with contextlib.suppress(Exception):
                api.remove_container(cid, force=True)

    filled = listing([docker.types.Mount(t, n, type="volume") for n, t in names])
    if not filled or filled != listing([]):
        raise SandboxError(f"the volumes of {image} do not hold the image's files")
    api.create_volume(marker, labels={VOLUME_LABEL: image_id})
    return tuple(names)


def sweep_environment_volumes(api: Any) -> list[str]:
    """Remove the environment volumes (`environment_volumes`) of images that no longer exist
    (an environment image rebuilt or deleted leaves its volumes behind). A volume still mounted
    by a container stays (the daemon refuses), as do volumes of images that exist. Returns the
    names removed."""
    found = api.volumes(filters={"label": VOLUME_LABEL}).get("Volumes") or []
    if not found:
        return []
    images = {str(i.get("Id", "")).split(":")[-1][:16] for i in api.images(all=True, quiet=False)}
    removed = []
    for volume in found:
        owner = (volume.get("Labels") or {}).get(VOLUME_LABEL, "")
        if owner in images:
            continue
        try:
            api.remove_volume(volume["Name"])
        except Exception:  # in use, or gone already: left to a later sweep
            continue
        removed.append(str(volume["Name"]))
    return removed


def _venv_home(venv: Path) -> str | None:
    for line in (venv / "pyvenv.cfg").read_text(encoding="utf-8").splitlines():
        key, _, value = line.partition("=")
        if key.strip() == "home":
            return os.path.dirname(os.path.realpath(value.strip()))
    return None


def _in_image(mount: Mount, prefix: str) -> bool:
    """Whether the environment image already provides `mount`: the interpreter prefix itself,
    or the emptied site-packages/test folders and wheel folders under it."""
    if mount.writable:
        return False
    if os.path.realpath(mount.source) == prefix and mount.target == prefix:
        return True
    lib = Path(prefix, "lib")
    target = Path(mount.target)
    hidden = (
        target.parent.parent == lib and target.name in ("site-packages", "test")
    ) or mount.target in wheel_folders(prefix)
    return hidden and os.path.isdir(mount.source) and not os.listdir(mount.source)
