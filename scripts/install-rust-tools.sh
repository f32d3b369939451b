#!/usr/bin/env bash
# The Rust tools taskmint's cargo runner needs: a stable toolchain (cargo, rustc, rustdoc; from
# Debian's packages when there is none) and cargo-nextest (installed as a crate when missing).
set -euo pipefail
export PATH="$HOME/.cargo/bin:$PATH"
if ! command -v cargo >/dev/null 2>&1; then
  echo "installing Debian's Rust toolchain (cargo, rustc)"
  SUDO=; [ "$(id -u)" -eq 0 ] || SUDO=sudo
  export DEBIAN_FRONTEND=noninteractive
  $SUDO apt-get update -q
  $SUDO apt-get install -y -q --no-install-recommends cargo rustc gcc libc6-dev
fi
if ! command -v cargo-nextest >/dev/null 2>&1; then
  echo "installing cargo-nextest (a crate; a few minutes)"
  cargo install --locked cargo-nextest
fi
