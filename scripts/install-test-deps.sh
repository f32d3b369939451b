#!/usr/bin/env bash
# Install the Debian packages the test suite needs beyond the sandbox's, if any is missing:
# chromium (a real headless browser opens the dataset report, tests/browser.py).
set -euo pipefail
missing=()
command -v chromium >/dev/null 2>&1 || missing+=(chromium)
if [ ${#missing[@]} -eq 0 ]; then
  exit 0
fi
echo "installing Debian packages for the tests: ${missing[*]}"
if [ "$(id -u)" -ne 0 ]; then
  SUDO=sudo
  command -v sudo >/dev/null 2>&1 || {
    echo "error: need root (or sudo) to install: ${missing[*]}" >&2
    exit 1
  }
else
  SUDO=
fi
export DEBIAN_FRONTEND=noninteractive
$SUDO apt-get update -q
$SUDO apt-get install -y -q --no-install-recommends "${missing[@]}"
