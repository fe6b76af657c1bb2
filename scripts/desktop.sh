#!/usr/bin/env bash
# Usage: scripts/desktop.sh [packages|build|test|memory|run] [ARGS...]
#
#   packages  installs only the Debian packages the app compiles against (what
#          scripts/test needs before its one `--workspace` build, which includes the app).
#   build  installs what the desktop app needs (Debian packages for Tauri/WebKitGTK,
#          only those missing), builds the review UI (scripts/ui.sh, when present)
#          and the app (src-tauri/, a member of the main workspace).
#   test   build, then the end-to-end test (tests/desktop/e2e.py) under Xvfb, in a
#          private D-Bus session with an unlocked gnome-keyring (scripts/with-keyring),
#          driving the app with tauri-driver + WebKitWebDriver. Installs tauri-driver
#          (cargo install) and a Python venv with jeepney (tests/desktop/requirements.txt)
#          when missing. The app's lints and unit tests are the workspace's (scripts/test's
#          one linted `--workspace` build and its `cargo nextest run --workspace`).
#   memory build, then measure where the app's memory goes — in the tray, with the
#          window open on 100 held items, after closing it — per process and
#          mapping (tests/desktop/memory.py, same private session as test).
#   run    build, then start the app (default). ARGS go to the app (`--hidden`
#          starts it in the tray only). Needs a desktop session (DISPLAY or
#          WAYLAND_DISPLAY) with a Secret Service keychain.
#
# The app builds into the workspace's $CARGO_TARGET_DIR (issue 45 item 7: one build
# of the crates it shares with the CLI). With INTERLOCK_DESKTOP_BIN and INTERLOCK_BIN
# set to built binaries (scripts/test passes the ones its one workspace build made),
# `test` and `memory` use those and build nothing. CARGO_BUILD_JOBS is honoured.
set -euo pipefail
cd "$(dirname "$0")/.."
root="$(pwd)"
source scripts/env.sh

cmd="${1:-run}"
[ "$#" -gt 0 ] && shift

app="${INTERLOCK_DESKTOP_BIN:-$CARGO_TARGET_DIR/debug/interlock-desktop}"
cli="${INTERLOCK_BIN:-$CARGO_TARGET_DIR/debug/interlock}"
venv="${INTERLOCK_DESKTOP_VENV:-$HOME/.cache/interlock/desktop-venv}"

log() { printf 'desktop.sh: %s\n' "$*" >&2; }

apt_install() {
  local missing=()
  for p in "$@"; do
    dpkg-query -W -f='${Status}\n' "$p" 2>/dev/null | grep -q '^install ok installed$' ||
      missing+=("$p")
  done
  [ "${#missing[@]}" -eq 0 ] && return 0
  log "apt-get install ${missing[*]}"
  local sudo=""
  if [ "$(id -u)" -ne 0 ]; then sudo="sudo"; fi
  $sudo env DEBIAN_FRONTEND=noninteractive apt-get update -qq
  $sudo env DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends \
    "${missing[@]}" >/dev/null
}

# What Tauri 2 builds against on Linux (WebKitGTK 4.1, GTK 3, the tray's
# appindicator), and the keychain's Secret Service.
build_packages=(libwebkit2gtk-4.1-dev libgtk-3-dev libayatana-appindicator3-dev librsvg2-dev
  libsoup-3.0-dev libjavascriptcoregtk-4.1-dev libxdo-dev libssl-dev pkg-config build-essential
  dbus gnome-keyring bubblewrap socat)
# The end-to-end test: a virtual display, WebKit's WebDriver, a private session bus
# and keyring (scripts/with-keyring), and Python's venv for jeepney.
test_packages=(xvfb xauth webkit2gtk-driver dbus dbus-x11 gnome-keyring libsecret-tools python3-venv)

build() {
  apt_install "${build_packages[@]}"
  if [ -x scripts/ui.sh ]; then
    log "building the review UI (scripts/ui.sh)"
    scripts/ui.sh build >&2
  elif [ ! -f ui/dist/index.html ]; then
    log "warning: no scripts/ui.sh and no ui/dist: the window will say the UI is not built"
  fi
  if [ -n "${INTERLOCK_DESKTOP_BIN:-}" ] && [ -n "${INTERLOCK_BIN:-}" ]; then
    log "using the app and the CLI given: $app, $cli"
    [ -x "$app" ] && [ -x "$cli" ] || { log "error: not built: $app or $cli"; exit 1; }
    return 0
  fi
  log "building the app and the CLI (→ $CARGO_TARGET_DIR/debug)"
  cargo build --locked -p interlock-desktop -p interlock --bins \
    ${CARGO_BUILD_JOBS:+-j "$CARGO_BUILD_JOBS"}
}

venv() {
  local stamp_file="$venv/.interlock-desktop-stamp"
  local stamp
  stamp="$(cat tests/desktop/requirements.txt "$0" | sha256sum | cut -d' ' -f1)"
  if [ -x "$venv/bin/python" ] && [ -f "$stamp_file" ] && [ "$(cat "$stamp_file")" = "$stamp" ]; then
    return 0
  fi
  log "creating $venv"
  rm -rf "$venv"
  python3 -m venv "$venv" >&2 || { rm -rf "$venv"; /usr/bin/python3 -m venv "$venv" >&2; }
  "$venv/bin/python" -m pip install --disable-pip-version-check --no-input -q \
    -r tests/desktop/requirements.txt >&2
  printf '%s\n' "$stamp" >"$stamp_file"
}

test_() {
  build
  apt_install "${test_packages[@]}"
  if ! command -v tauri-driver >/dev/null 2>&1 && [ ! -x "$HOME/.cargo/bin/tauri-driver" ]; then
    # A debug build (issue 45): it relays WebDriver requests, nothing hot.
    log "cargo install tauri-driver --debug"
    # Not linted: scripts/test's Clippy driver is for this workspace's own crates.
    env -u RUSTC_WORKSPACE_WRAPPER -u CLIPPY_ARGS CARGO_PROFILE_DEV_DEBUG=0 \
      cargo install tauri-driver --locked --debug >&2
  fi
  local driver
  driver="$(command -v tauri-driver || echo "$HOME/.cargo/bin/tauri-driver")"
  venv
  # The upstream MCP server the test puts behind the gateway (tests/peers).
  set -a
  eval "$(scripts/peers.sh)"
  set +a
  log "end-to-end test under Xvfb"
  # Absolute paths: scripts/with-keyring moves HOME into a throwaway directory.
  INTERLOCK_DESKTOP_BIN="$app" \
    INTERLOCK_BIN="$cli" \
    TAURI_DRIVER="$driver" \
    xvfb-run -a -s "-screen 0 1440x900x24" \
    scripts/with-keyring "$venv/bin/python" tests/desktop/e2e.py "$@"
}

memory() {
  build
  apt_install "${test_packages[@]}"
  venv
  INTERLOCK_DESKTOP_BIN="$app" \
    INTERLOCK_BIN="$cli" \
    xvfb-run -a -s "-screen 0 1440x900x24" \
    scripts/with-keyring "$venv/bin/python" tests/desktop/memory.py
}

run() {
  build
  if [ -z "${DISPLAY:-}" ] && [ -z "${WAYLAND_DISPLAY:-}" ]; then
    log "no desktop session (DISPLAY / WAYLAND_DISPLAY); \`interlock serve --ui ui/dist\` is the headless way"
    exit 2
  fi
  exec "$app" "$@"
}

case "$cmd" in
  packages) apt_install "${build_packages[@]}" ;;
  build) build ;;
  test) test_ "$@" ;;
  memory) memory ;;
  run) run "$@" ;;
  *)
    echo "usage: scripts/desktop.sh [packages|build|test|memory|run] [ARGS...]" >&2
    exit 2
    ;;
esac
