#!/usr/bin/env bash
# Sets up IBM ContextForge (PyPI `mcp-contextforge-gateway`, pinned below) as a peer
# gateway in front of one MCP upstream, for benches/gateway_proxy.rs (docs/BENCHMARKS.md).
#
#   scripts/peer-contextforge.sh UPSTREAM_URL        # e.g. http://127.0.0.1:3001/mcp
#   scripts/peer-contextforge.sh --install           # only build the venv
#
# What it does, so that nobody has to remember it:
#   1. a venv of its own from pyenv's Python 3.12 (ContextForge needs >= 3.12; the
#      machine's default python is 3.11), with the pinned release from PyPI; skipped
#      when a stamp (the package pin and the python's version) says it is current;
#   2. a fresh state dir: secrets from ContextForge's own `init_secrets`, a SQLite
#      database, its log;
#   3. starts `mcpgateway` in the background with one worker and the configuration
#      below (environment only: it runs in the state dir, which has no `.env`), and
#      waits for /health;
#   4. registers UPSTREAM_URL as a Streamable HTTP gateway named `everything`, waits
#      until its tools are listed, and creates a virtual server with all of them.
#
# The configuration is the fair, offline one (see the "peers" notes in
# docs/BENCHMARKS.md): no UI, admin API, plugins, observability, catalog, chat or SSO;
# auth on; memory cache; **rate limiting off** (by default it allows 100 tool calls a
# minute, then locks the client out); **stateful sessions** (one upstream session per
# agent session; the default opens a new upstream session per call); SSRF guard
# allowing loopback (the upstream is on 127.0.0.1).
#
# stdout is only KEY=VALUE lines (shell-quoted), so `eval "$(scripts/peer-contextforge.sh URL)"`
# works; progress and errors go to stderr, and it exits non-zero on any failure
# (no Python 3.12, no network for PyPI, the gateway not starting, …):
#   CONTEXTFORGE_URL    agent-facing Streamable HTTP endpoint (/servers/<id>/mcp)
#   CONTEXTFORGE_TOKEN  bearer token for it
#   CONTEXTFORGE_TOOL_PREFIX  what it prepends to the upstream's tool names
#   CONTEXTFORGE_PID    the mcpgateway process (stop it with `kill -TERM`)
#   CONTEXTFORGE_DIR    its state dir (database, secrets, log)
#   CONTEXTFORGE_VERSION
#
# Environment:
#   INTERLOCK_CONTEXTFORGE_VENV  the venv (default ~/.cache/interlock/contextforge-venv, ~ being
#                                the account's home even when HOME points elsewhere)
#   INTERLOCK_CONTEXTFORGE_DIR   the state dir (default: a new mktemp dir; emptied if given)
#   CONTEXTFORGE_PORT            listen port on 127.0.0.1 (default: a free one)
#   PYTHON312                    the Python to build the venv from (default: the newest 3.12
#                                in ${PYENV_ROOT:-~/.pyenv}/versions, else python3.12 on PATH)
#   FORCE=1                      rebuild the venv
set -euo pipefail

version="1.1.0"
package="mcp-contextforge-gateway==$version"
# The account's home from the user database, not $HOME: the bench runs under
# scripts/with-keyring, which points HOME at a throwaway dir, and a venv there would
# be rebuilt from PyPI on every run.
home="$(getent passwd "$(id -u)" | cut -d: -f6)"
home="${home:-$HOME}"
venv="${INTERLOCK_CONTEXTFORGE_VENV:-$home/.cache/interlock/contextforge-venv}"
force="${FORCE:-0}"

log() { printf 'peer-contextforge.sh: %s\n' "$*" >&2; }
die() {
  log "error: $*"
  exit 1
}

upstream=""
install_only=0
case "${1:-}" in
  --install) install_only=1 ;;
  http://* | https://*) upstream="$1" ;;
  *) die "usage: $0 UPSTREAM_URL | --install" ;;
esac

# --- Python 3.12 ------------------------------------------------------------------
find_python312() {
  if [ -n "${PYTHON312:-}" ]; then
    printf '%s\n' "$PYTHON312"
    return
  fi
  local root="${PYENV_ROOT:-$home/.pyenv}" candidate
  # The newest installed 3.12.x.
  for candidate in $(ls -d "$root"/versions/3.12.* 2>/dev/null | sort -V -r); do
    if [ -x "$candidate/bin/python" ]; then
      printf '%s\n' "$candidate/bin/python"
      return
    fi
  done
  command -v python3.12 2>/dev/null || true
}
python="$(find_python312)"
[ -n "$python" ] || die "no Python 3.12 found (pyenv install 3.12, or set PYTHON312): ContextForge $version needs >= 3.12"
py_version="$("$python" -c 'import sys; print("%d.%d.%d" % sys.version_info[:3])')" ||
  die "$python does not run"
"$python" -c 'import sys; sys.exit(0 if sys.version_info[:2] == (3, 12) else 1)' ||
  die "$python is Python $py_version, not 3.12"

# --- venv -------------------------------------------------------------------------
mkdir -p "$(dirname "$venv")"
exec 9>"$(dirname "$venv")/.contextforge.lock"
if command -v flock >/dev/null 2>&1; then flock 9; fi
stamp_file="$venv/.interlock-stamp"
stamp="$package-python-$py_version"
if [ "$force" != 1 ] && [ -x "$venv/bin/mcpgateway" ] && [ -f "$stamp_file" ] &&
  [ "$(cat "$stamp_file")" = "$stamp" ]; then
  log "venv up to date ($venv)"
else
  log "creating venv $venv (python $py_version)"
  rm -rf "$venv"
  "$python" -m venv "$venv" >&2
  log "pip install $package (from PyPI; this takes a few minutes)"
  "$venv/bin/python" -m pip install --disable-pip-version-check --no-input -q "$package" >&2 ||
    die "pip install $package failed (no network to PyPI?)"
  "$venv/bin/python" -c 'import mcpgateway' || die "the venv cannot import mcpgateway"
  printf '%s\n' "$stamp" >"$stamp_file"
fi
exec 9>&-
if [ "$install_only" = 1 ]; then
  exit 0
fi
vpy="$venv/bin/python"

# --- state dir and secrets ----------------------------------------------------------
if [ -n "${INTERLOCK_CONTEXTFORGE_DIR:-}" ]; then
  dir="$INTERLOCK_CONTEXTFORGE_DIR"
  rm -rf "$dir"
  mkdir -p "$dir"
else
  dir="$(mktemp -d "${TMPDIR:-/tmp}/interlock-contextforge-XXXXXX")"
fi
dir="$(cd "$dir" && pwd)"
cd "$dir"
"$vpy" -m mcpgateway.scripts.init_secrets --output "$dir/secrets.env" --force >/dev/null ||
  die "init_secrets failed"
set -a
# shellcheck disable=SC1091
. "$dir/secrets.env"
set +a
# The admin the token is issued to (init_secrets sets its password, not its address).
export PLATFORM_ADMIN_EMAIL="${PLATFORM_ADMIN_EMAIL:-admin@example.com}"
: "${JWT_SECRET_KEY:?secrets.env sets no JWT_SECRET_KEY}"

port="${CONTEXTFORGE_PORT:-$("$vpy" -c 'import socket; s = socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])')}"
base="http://127.0.0.1:$port"

export DATABASE_URL="sqlite:///$dir/mcp.db"
export CACHE_TYPE=memory
export AUTH_REQUIRED=true
export MCP_CLIENT_AUTH_ENABLED=true
export MCPGATEWAY_UI_ENABLED=false
export MCPGATEWAY_ADMIN_API_ENABLED=false
export PLUGINS_ENABLED=false
export OBSERVABILITY_ENABLED=false
export OTEL_ENABLE_OBSERVABILITY=false
export MCPGATEWAY_CATALOG_ENABLED=false
export LLMCHAT_ENABLED=false
export SSO_ENABLED=false
export LOG_LEVEL=ERROR
export LOG_REQUESTS=false
export SSRF_ALLOW_LOCALHOST=true
export RATE_LIMITING_ENABLED=false
export USE_STATEFUL_SESSIONS=true

token="$("$vpy" -m mcpgateway.utils.create_jwt_token --username "$PLATFORM_ADMIN_EMAIL" \
  --exp 10080 --secret "$JWT_SECRET_KEY" 2>/dev/null | tail -n 1)"
[ -n "$token" ] || die "create_jwt_token printed no token"

# --- start ----------------------------------------------------------------------------
log "starting mcpgateway $version on $base (state in $dir)"
nohup "$venv/bin/mcpgateway" --host 127.0.0.1 --port "$port" --workers 1 \
  --no-access-log --log-level warning >"$dir/mcpgateway.log" 2>&1 </dev/null &
pid=$!
printf '%s\n' "$pid" >"$dir/pid"
# Until the last line is printed, any exit (a failed step under `set -e`, `die`) stops
# the gateway again: a failed setup leaves nothing running.
ready=0
on_exit() {
  if [ "$ready" != 1 ]; then
    kill -TERM "$pid" 2>/dev/null || true
    log "setup failed; mcpgateway stopped. Its log ($dir/mcpgateway.log), last lines:"
    tail -n 5 "$dir/mcpgateway.log" | cut -c1-400 >&2 || true
  fi
}
trap on_exit EXIT

api() { # METHOD PATH [JSON]: the admin REST API, with the token; prints the body
  local method="$1" path="$2" body
  shift 2
  if ! body="$(curl -sS --fail-with-body -X "$method" -H "Authorization: Bearer $token" \
    -H 'Content-Type: application/json' --max-time 30 "$base$path" "$@")"; then
    log "$method $path failed: $body"
    return 1
  fi
  printf '%s\n' "$body"
}

for _ in $(seq 1 300); do
  if curl -fsS --max-time 2 "$base/health" >/dev/null 2>&1; then break; fi
  kill -0 "$pid" 2>/dev/null || die "mcpgateway exited while starting"
  sleep 0.2
done
curl -fsS --max-time 2 "$base/health" >/dev/null ||
  die "mcpgateway did not answer /health within 60 s"

# --- register the upstream and a virtual server -----------------------------------------
log "registering $upstream"
api POST /gateways --data "$(UPSTREAM="$upstream" "$vpy" -c 'import json, os; print(json.dumps({"name": "everything", "url": os.environ["UPSTREAM"], "transport": "STREAMABLEHTTP", "visibility": "public"}))')" >"$dir/gateway.json"
slug="$("$vpy" -c 'import json, sys; g = json.load(open(sys.argv[1])); print(g.get("slug") or g["name"])' "$dir/gateway.json")"

tool_ids=""
for _ in $(seq 1 150); do
  api GET "/tools" >"$dir/tools.json" 2>/dev/null || true
  tool_ids="$(SLUG="$slug" "$vpy" -c '
import json, os, sys
try:
    tools = json.load(open(sys.argv[1]))
except Exception:
    sys.exit(0)
if isinstance(tools, dict):
    tools = tools.get("items") or tools.get("tools") or []
ids = [t["id"] for t in tools if (t.get("gatewaySlug") or t.get("gateway_slug")) == os.environ["SLUG"]]
print(json.dumps(ids) if ids else "")
' "$dir/tools.json")"
  if [ -n "$tool_ids" ]; then break; fi
  sleep 0.2
done
[ -n "$tool_ids" ] || die "the upstream's tools never showed in GET /tools (see $dir/tools.json)"
api POST /servers --data "{\"server\": {\"name\": \"bench\", \"associated_tools\": $tool_ids, \"visibility\": \"public\"}}" >"$dir/server.json"
server_id="$("$vpy" -c 'import json, sys; print(json.load(open(sys.argv[1]))["id"])' "$dir/server.json")"

out() { printf '%s=%q\n' "$1" "$2"; }
out CONTEXTFORGE_URL "$base/servers/$server_id/mcp"
out CONTEXTFORGE_TOKEN "$token"
out CONTEXTFORGE_TOOL_PREFIX "$slug-"
out CONTEXTFORGE_PID "$pid"
out CONTEXTFORGE_DIR "$dir"
out CONTEXTFORGE_VERSION "$version"
ready=1
