#!/usr/bin/env bash
# Install the Debian packages taskmint's sandbox needs, if any is missing. With --tests, also
# those the test suite alone needs: chromium (a real headless browser opens the dataset
# report, tests/browser.py).
set -euo pipefail
missing=()
if [ "${1:-}" = "--tests" ]; then
  command -v chromium >/dev/null 2>&1 || missing+=(chromium)
fi
command -v bwrap >/dev/null 2>&1 || missing+=(bubblewrap)
[ -x /usr/bin/setpriv ] && [ -x /usr/bin/prlimit ] || missing+=(util-linux)
command -v git >/dev/null 2>&1 || missing+=(git)
command -v node >/dev/null 2>&1 || missing+=(nodejs)
[ -x /usr/bin/grep ] || missing+=(grep)
command -v debootstrap >/dev/null 2>&1 || missing+=(debootstrap)
if [ ${#missing[@]} -eq 0 ]; then
  exit 0
fi
echo "installing Debian packages: ${missing[*]}"
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
