#!/usr/bin/env bash
# Builds the review UI (ui/ → ui/dist, served by `interlock serve --ui ui/dist`
# and loaded by the desktop app), and with `test` runs its tests.
#
#   scripts/ui.sh          npm ci in ui/ (skipped when up to date), install Debian's
#                          chromium if /usr/bin/chromium is missing, npm run build
#   scripts/ui.sh test     the above, then the unit tests (Vitest) and the browser
#                          tests (playwright-core + headless Chromium) against a real
#                          `interlock serve --ui ui/dist` with real upstream MCP servers
#
# `test` needs the interlock binary ($INTERLOCK_BIN, default
# $CARGO_TARGET_DIR/debug/interlock: build it with `source scripts/env.sh; cargo build`)
# and an OS keychain: run it as `scripts/with-keyring scripts/ui.sh test`. It runs
# scripts/peers.sh itself for the peer paths. Screenshots of every main view go to
# ui/test-results/screenshots/.
#
# Safe to run again: npm ci is skipped when a stamp (hash of package-lock.json and the
# Node version) says node_modules is current; FORCE=1 reinstalls.
set -euo pipefail

root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
ui="$root/ui"
mode="${1:-build}"

log() { printf 'ui.sh: [%s] %s\n' "$(date +%T)" "$*" >&2; }
die() { log "error: $*"; exit 1; }

case "$mode" in
  build | test) ;;
  *) die "usage: scripts/ui.sh [build|test]" ;;
esac

# scripts/with-keyring points HOME at a throwaway directory: find the build cache
# from the real home when the caller did not say where it is.
if [ -z "${CARGO_TARGET_DIR:-}" ] && [ ! -d "$HOME/.cache/interlock/target" ]; then
  real_home="$(getent passwd "$(id -u)" | cut -d: -f6 || true)"
  if [ -n "$real_home" ] && [ -d "$real_home/.cache/interlock/target" ]; then
    export CARGO_TARGET_DIR="$real_home/.cache/interlock/target"
  fi
fi
# shellcheck source=scripts/env.sh
source "$root/scripts/env.sh"

# The browser tests sign with the OS keychain (the CLI's approver key): without a
# session bus, run under scripts/with-keyring.
if [ "$mode" = test ] && [ -z "${DBUS_SESSION_BUS_ADDRESS:-}" ]; then
  log "no session bus: re-running under scripts/with-keyring"
  exec "$root/scripts/with-keyring" "$0" "$@"
fi

# --- Node -----------------------------------------------------------------------
command -v node >/dev/null 2>&1 || die "node not found (Node >= 20.19 is needed)"
command -v npm >/dev/null 2>&1 || die "npm not found"
node -e '
  const [a, b] = process.versions.node.split(".").map(Number);
  process.exit(a > 20 || (a === 20 && b >= 19) ? 0 : 1);
' || die "Node $(node -v) is too old: Vite 7 needs >= 20.19"

# --- npm ci (stamped) -----------------------------------------------------------------
stamp_file="$ui/node_modules/.interlock-ui-stamp"
stamp="$(cat "$ui/package.json" "$ui/package-lock.json" | sha256sum | cut -d' ' -f1)-$(node -v)"
if [ "${FORCE:-0}" != 1 ] && [ -f "$stamp_file" ] && [ "$(cat "$stamp_file")" = "$stamp" ]; then
  log "node_modules up to date"
else
  log "npm ci in ui/"
  (cd "$ui" && npm ci --no-audit --no-fund --loglevel=error >&2)
  printf '%s\n' "$stamp" >"$stamp_file"
fi

# --- Chromium (Debian's; playwright's own browser download is not used) -----------------
chromium="${CHROMIUM:-/usr/bin/chromium}"
if [ ! -x "$chromium" ]; then
  log "installing Debian's chromium"
  sudo=""
  if [ "$(id -u)" -ne 0 ]; then sudo="sudo"; fi
  $sudo env DEBIAN_FRONTEND=noninteractive apt-get update -qq >&2
  $sudo env DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends \
    chromium fonts-dejavu-core >&2
  [ -x "$chromium" ] || die "chromium did not install at $chromium"
fi

# --- Build ------------------------------------------------------------------------------
log "npm run build"
(cd "$ui" && npm run --silent build >&2)
[ -f "$ui/dist/index.html" ] || die "the build left no ui/dist/index.html"

[ "$mode" = test ] || exit 0

# --- Tests ------------------------------------------------------------------------------
export INTERLOCK_BIN="${INTERLOCK_BIN:-$CARGO_TARGET_DIR/debug/interlock}"
[ -x "$INTERLOCK_BIN" ] || die "no interlock binary at $INTERLOCK_BIN (source scripts/env.sh; cargo build)"
eval "$("$root/scripts/peers.sh")"
export INTERLOCK_PEERS_DIR CHROMIUM="$chromium"

# The 10,000-receipt bundle the browser tests time their verifier on: written by
# the Rust tamper matrix (a few seconds; `--workspace`, so scripts/test's build serves
# it), not committed (5 MB); the committed
# fixtures are left as they are (scripts/bundle-fixtures.sh rewrites those).
if [ ! -s "$ui/test-results/large/bundle-10000.json" ]; then
  log "writing the 10,000-receipt bundle (interlock-receipts' tamper matrix)"
  large_tmp="$(mktemp -d)"
  (cd "$root" && INTERLOCK_BUNDLE_FIXTURES="$large_tmp" cargo test -q --workspace --locked --test tamper -- --test-threads=1 >/dev/null)
  mkdir -p "$ui/test-results/large"
  mv "$large_tmp/large/bundle-10000.json" "$ui/test-results/large/"
  rm -rf "$large_tmp"
fi

# With $INTERLOCK_TEST_POSTGRES (a Postgres server, as scripts/test starts one), the
# browser tests run a second time with each gateway on a fresh database there.
postgres="${INTERLOCK_TEST_POSTGRES:-}"
unset INTERLOCK_TEST_POSTGRES

cd "$ui"
log "unit tests (vitest)"
npx vitest run
rm -rf test-results/screenshots test-results/screenshots-postgres
mapfile -t files < <(ls tests/e2e/*.test.mjs | grep -v '/readme\.test\.mjs$')
if [ -n "$postgres" ]; then
  # The second pass runs beside the first (issue 45 item 7: a pass keeps the cores
  # about 65% busy; the two at once save about two minutes), with its own
  # screenshots and its output shown after the first pass's. readme.test.mjs stays
  # on SQLite: it runs the README's command as a new user, and that command's
  # database is the embedded file by design.
  log "browser tests on Postgres (each gateway on a fresh database, issue 20), in the background"
  postgres_log="$(mktemp)"
  INTERLOCK_TEST_POSTGRES="$postgres" INTERLOCK_UI_SCREENSHOTS="$ui/test-results/screenshots-postgres" \
    node --test --test-concurrency=1 --test-timeout=150000 "${files[@]}" >"$postgres_log" 2>&1 &
  postgres_pass=$!
fi
log "browser tests on SQLite (node --test, playwright-core, $("$chromium" --version 2>/dev/null | head -1))"
sqlite_status=0
node --test --test-concurrency=1 --test-timeout=150000 "${files[@]}" || sqlite_status=$?
log "screenshots in ui/test-results/screenshots/"
if [ -n "$postgres" ]; then
  postgres_status=0
  wait "$postgres_pass" || postgres_status=$?
  log "the browser tests on Postgres (screenshots in ui/test-results/screenshots-postgres/):"
  cat "$postgres_log"
  rm -f "$postgres_log"
  [ "$postgres_status" -eq 0 ] || die "the browser tests on Postgres failed"
fi
[ "$sqlite_status" -eq 0 ] || die "the browser tests on SQLite failed"
# Last and alone: it runs the README's command, whose scripts/run rebuilds ui/dist,
# which the other tests' gateways serve (beside it, a page lost a lazy-loaded
# module: 404).
log "the README's run command, as a new user (readme.test.mjs)"
node --test --test-concurrency=1 --test-timeout=150000 tests/e2e/readme.test.mjs
