#!/usr/bin/env bash
# Installs what building and testing need on a fresh Debian/Ubuntu machine that
# already has Rust, Node and Python. Safe to run again.
set -euo pipefail
if ! command -v cargo-nextest >/dev/null 2>&1; then
  cargo install cargo-nextest --locked
fi
rustup component add rustfmt clippy >/dev/null 2>&1 || true
# Installs the Debian packages named that are not installed yet (one apt-get for all).
# (dpkg-query, not `dpkg -s`: a removed package whose config files remain is "known".)
ensure_packages() {
  if [ "$(dpkg-query -W -f='${Status}\n' "$@" 2>/dev/null |
    grep -c '^install ok installed$')" -ne "$#" ]; then
    local sudo=""
    if [ "$(id -u)" -ne 0 ]; then sudo="sudo"; fi
    $sudo env DEBIAN_FRONTEND=noninteractive apt-get update -qq
    $sudo env DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends \
      "$@" >/dev/null
  fi
}
# A headless OS keychain for the keychain tests (scripts/with-keyring): a D-Bus session
# bus, gnome-keyring's Secret Service, and secret-tool to poke it by hand. And the
# OpenSSL CLI, which the receipts tests use to check a DSSE signature independently.
# Alert sinks' real receivers (issue 21): Prometheus scraping /metrics, rsyslog
# receiving RFC 5424 over TLS (its GnuTLS and OpenSSL network stream drivers).
# Postgres (issue 20): the test suites run again on a throwaway cluster
# (scripts/pg-cluster); psql for the tests that act on the database as an operator.
# libfaketime (issue 44): the fault campaign steps the wall clock of `interlock serve`.
keyring_pkgs=(dbus dbus-x11 gnome-keyring libsecret-tools openssl
  prometheus rsyslog rsyslog-gnutls rsyslog-openssl postgresql postgresql-client faketime)
ensure_packages "${keyring_pkgs[@]}"
# mold, a faster linker (scripts/env.sh uses it when present): issue 45.
build_pkgs=(mold)
ensure_packages "${build_pkgs[@]}"
# Every stdio MCP server the gateway starts runs in a bubblewrap sandbox (issue 38;
# util-linux's prlimit, essential on Debian, sets its limits; socat relays a server
# whose profile lists destinations to the gateway's egress proxy): the product needs
# them too, so `scripts/run` installs them through here.
sandbox_pkgs=(bubblewrap util-linux socat)
ensure_packages "${sandbox_pkgs[@]}"
# The container image test (scripts/container-test, deploy/): rootful podman with
# runc (crun refuses hybrid cgroups), netavark's iptables, slirp4netns (the container
# reaches an MCP server on the host's loopback), debootstrap for a base image that
# is not pulled from a registry, binutils' objcopy, curl.
container_pkgs=(podman runc netavark aardvark-dns iptables slirp4netns debootstrap binutils curl)
ensure_packages "${container_pkgs[@]}"
