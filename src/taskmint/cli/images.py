"""`taskmint images build`: the docker backend's images (the `docker` extra)."""

from __future__ import annotations

import argparse
import sys
from types import ModuleType

from taskmint.acquire.sources import acquire_source, load_seed_sources
from taskmint.cli.display import emit_json
from taskmint.config import PipelineConfig
from taskmint.errors import TaskmintError
from taskmint.languages import build_environment

try:  # the docker backend: `pip install 'taskmint[docker]'`
    from taskmint.sandbox.docker import base_image, images
except (ImportError, TaskmintError) as exc:  # pragma: no cover - without the docker extra
    _DOCKER_MISSING: Exception | None = exc
    base_image = images = None  # type: ignore[assignment]
else:
    _DOCKER_MISSING = None

__all__ = ["cmd_images"]


def _docker() -> tuple[ModuleType, ModuleType]:
    if base_image is None or images is None:
        raise TaskmintError(f"building images needs the docker backend: {_DOCKER_MISSING}")
    return base_image, images


def cmd_images(args: argparse.Namespace, config: PipelineConfig) -> int:
    base_mod, images_mod = _docker()
    from taskmint.harbor.rust_image import register

    register()  # Rust environments' images (toolchain, vendored dependencies, warm build)
    say = (lambda line: print(line, file=sys.stderr)) if args.json else print
    base = base_mod.build_base_image(tag=args.base or base_mod.DEFAULT_BASE_IMAGE, log=say)
    runtime = images_mod.build_runtime_image(base=base)
    say(f"base image: {base}")
    say(f"runtime image: {runtime}")
    built: dict[str, str] = {}
    for source in load_seed_sources(config.seeds_manifest):
        seed = acquire_source(source, cache_dir=config.cache_dir)
        # a JavaScript seed's image (node) and a Rust seed's (the toolchain, the vendored
        # dependencies, the warm build) are what their Harbor tasks start FROM; the docker
        # backend itself runs Python seeds only so far
        env = build_environment(seed, cache_dir=config.cache_dir, sandbox=config.sandbox)
        built[seed.name] = images_mod.build_environment_image(env, base=base)
        say(f"{seed.name}: {built[seed.name]}")
    if args.json:
        emit_json({"base": base, "runtime": runtime, "seeds": built})
    return 0
