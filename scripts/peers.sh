#!/usr/bin/env bash
# Installs the third-party MCP peers that the integration tests drive (see
# tests/peers/README.md): the npm packages pinned by tests/peers/package-lock.json
# (`npm ci`), a Python venv with tests/peers/requirements.txt (the mcp 1.x client)
# and one with tests/peers/requirements-py2.txt (the mcp 2.x server).
#
# Safe to run again: each half is skipped when a stamp (hash of its lockfile, the
# runtime's version and this script) says it is already installed. FORCE=1 reinstalls.
#
# Environment:
#   INTERLOCK_PEERS_VENV  where the venv goes (default $HOME/.cache/interlock/peers-venv)
#   INTERLOCK_PEERS_VENV_PY2  where the venv with the mcp 2.x server goes
#                         (default $HOME/.cache/interlock/peers-venv-py2)
#   INTERLOCK_PEERS_VENV_TIME  where the venv with mcp-server-time goes
#                         (default $HOME/.cache/interlock/peers-venv-time)
#   PYTHON                the python3 to build the venv from (default: python3 on PATH)
#
# Progress goes to stderr; stdout is only KEY=VALUE lines (shell-quoted) naming what was
# set up, so `eval "$(scripts/peers.sh)"` works.
set -euo pipefail

root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
peers="$root/tests/peers"
venv="${INTERLOCK_PEERS_VENV:-$HOME/.cache/interlock/peers-venv}"
venv_py2="${INTERLOCK_PEERS_VENV_PY2:-$HOME/.cache/interlock/peers-venv-py2}"
venv_time="${INTERLOCK_PEERS_VENV_TIME:-$HOME/.cache/interlock/peers-venv-time}"
python="${PYTHON:-python3}"
force="${FORCE:-0}"

log() { printf 'peers.sh: %s\n' "$*" >&2; }
die() { log "error: $*"; exit 1; }
hash_of() { cat "$@" | sha256sum | cut -d' ' -f1; }

# One install at a time (tests may call this concurrently).
mkdir -p "$(dirname "$venv")"
lock="$(dirname "$venv")/.peers.lock"
if command -v flock >/dev/null 2>&1; then
  exec 9>"$lock"
  flock 9
fi

# --- npm half -------------------------------------------------------------------
command -v node >/dev/null 2>&1 || die "node not found (Node >= 20.18.1 is needed)"
command -v npm >/dev/null 2>&1 || die "npm not found"
node_version="$(node -v)"
node -e '
  const [a, b, c] = process.versions.node.split(".").map(Number);
  process.exit(a > 20 || (a === 20 && (b > 18 || (b === 18 && c >= 1))) ? 0 : 1);
' || die "Node $node_version is too old: the peers need >= 20.18.1"

npm_stamp_file="$peers/node_modules/.interlock-peers-stamp"
npm_stamp="$(hash_of "$peers/package.json" "$peers/package-lock.json" "${BASH_SOURCE[0]}")-$node_version"
if [ "$force" != 1 ] && [ -f "$npm_stamp_file" ] && [ "$(cat "$npm_stamp_file")" = "$npm_stamp" ]; then
  log "npm peers up to date"
else
  log "npm ci in tests/peers"
  # (An EBADENGINE warning for content-type@3 under @octokit is harmless on Node 20:
  # only the conformance package's tier-check command uses it.)
  (cd "$peers" && npm ci --no-audit --no-fund --loglevel=error >&2)
  printf '%s\n' "$npm_stamp" >"$npm_stamp_file"
fi

# --- Python half ----------------------------------------------------------------
py_version="$("$python" -c 'import sys; print("%d.%d.%d" % sys.version_info[:3])' 2>/dev/null)" ||
  die "$python not found (Python >= 3.10 is needed)"
"$python" -c 'import sys; sys.exit(0 if sys.version_info >= (3, 10) else 1)' ||
  die "Python $py_version is too old: mcp needs >= 3.10"

# python_venv VENV REQUIREMENTS IMPORT_CHECK: builds VENV from REQUIREMENTS unless its
# stamp says it is current, then checks that IMPORT_CHECK (Python code) runs in it.
python_venv() {
  local venv="$1" requirements="$2" check="$3"
  local venv_python="$venv/bin/python"
  local py_stamp_file="$venv/.interlock-peers-stamp"
  local py_stamp
  py_stamp="$(hash_of "$requirements" "${BASH_SOURCE[0]}")-$py_version"
  if [ "$force" != 1 ] && [ -x "$venv_python" ] && [ -f "$py_stamp_file" ] &&
    [ "$(cat "$py_stamp_file")" = "$py_stamp" ]; then
    log "python peers up to date ($venv)"
    return
  fi
  log "creating venv $venv (python $py_version)"
  rm -rf "$venv"
  if ! "$python" -m venv "$venv" >&2; then
    # Debian's own python3 ships venv separately; a pyenv python has it built in.
    log "python -m venv failed; installing Debian's python3-venv"
    rm -rf "$venv"
    sudo=""
    if [ "$(id -u)" -ne 0 ]; then sudo="sudo"; fi
    $sudo env DEBIAN_FRONTEND=noninteractive apt-get update -qq >&2
    $sudo env DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends \
      python3-venv >&2
    "$python" -m venv "$venv" >&2 || {
      rm -rf "$venv"
      /usr/bin/python3 -m venv "$venv" >&2
      py_version="$(/usr/bin/python3 -c 'import sys; print("%d.%d.%d" % sys.version_info[:3])')"
      py_stamp="$(hash_of "$requirements" "${BASH_SOURCE[0]}")-$py_version"
    }
  fi
  log "pip install -r ${requirements#"$root"/}"
  "$venv_python" -m pip install --disable-pip-version-check --no-input -q \
    -r "$requirements" >&2
  "$venv_python" -c "$check" || die "the venv $venv cannot import mcp"
  printf '%s\n' "$py_stamp" >"$py_stamp_file"
}

# The 1.x client (2025-11-25 sessions) and the 2.x server (both protocol eras) are
# the same distribution, `mcp`: one venv each.
python_venv "$venv" "$peers/requirements.txt" 'import mcp.client.streamable_http, mcp.client.session, openai, anthropic'
python_venv "$venv_py2" "$peers/requirements-py2.txt" 'import mcp.server.mcpserver, mcp.server.runner'
# mcp-server-time pins mcp 2.x too, beside its own time-zone packages.
python_venv "$venv_time" "$peers/requirements-time.txt" 'import mcp_server_time'
venv_python="$venv/bin/python"

# --- What was set up --------------------------------------------------------------
nm="$peers/node_modules"
out() { printf '%s=%q\n' "$1" "$2"; }
out INTERLOCK_PEERS_DIR "$peers"
out INTERLOCK_PEERS_NODE "$(command -v node)"
out INTERLOCK_PEERS_NODE_MODULES "$nm"
out INTERLOCK_PEERS_VENV "$venv"
out INTERLOCK_PEERS_PYTHON "$venv_python"
out INTERLOCK_PEERS_CLIENT_PY "$peers/client.py"
out INTERLOCK_PEERS_PY2_PYTHON "$venv_py2/bin/python"
out INTERLOCK_PEERS_PY2_SERVER "$peers/py2-server.py"
out INTERLOCK_PEERS_PY2_CLIENT "$peers/py2-client.py"
out INTERLOCK_PEERS_TIME_SERVER "$venv_time/bin/mcp-server-time"
out INTERLOCK_PEERS_CLIENT_MJS "$peers/client.mjs"
out INTERLOCK_PEERS_CONFORMANCE_SH "$peers/conformance.sh"
out INTERLOCK_PEERS_CONFORMANCE_SERVER "$peers/conformance-server.mjs"
out INTERLOCK_PEERS_SERVER_EVERYTHING "$nm/@modelcontextprotocol/server-everything/dist/index.js"
out INTERLOCK_PEERS_SERVER_FILESYSTEM "$nm/@modelcontextprotocol/server-filesystem/dist/index.js"
# Earlier releases of the same two servers: a pull request that upgrades them (issue 22).
out INTERLOCK_PEERS_SERVER_EVERYTHING_PREV "$nm/server-everything-2026.1.14/dist/index.js"
out INTERLOCK_PEERS_SERVER_FILESYSTEM_PREV "$nm/server-filesystem-2026.1.14/dist/index.js"
