#!/usr/bin/env bash
# Build the docker sandbox's base image (a debootstrap Debian root, loaded with `docker import`)
# unless an image with that tag is already loaded. The mirror and suite come from this
# machine's apt sources at run time. Usage: scripts/build-base-image.sh [TAG]
set -euo pipefail
cd "$(dirname "$0")/.."
TAG="${1:-taskmint-base:bookworm}"
if docker image inspect "$TAG" >/dev/null 2>&1; then
    echo "base image $TAG is present; nothing to do"
    exit 0
fi
exec .venv/bin/python -c '
import sys
from taskmint.sandbox.docker.base_image import build_base_image
from taskmint.sandbox.docker.images import build_runtime_image
tag = build_base_image(tag=sys.argv[1], log=print)
print("built", tag, "and", build_runtime_image(base=tag))
' "$TAG"
