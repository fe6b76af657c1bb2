#!/usr/bin/env bash
# Installs what building and testing need on a fresh Debian/Ubuntu machine that
# already has Rust, Node and Python. Safe to run again.
set -euo pipefail
if ! command -v cargo-nextest >/dev/null 2>&1; then
  cargo install cargo-nextest --locked
fi
rustup component add rustfmt clippy >/dev/null 2>&1 || true
