#!/bin/bash
# The image's entrypoint, run by tini as the gateway's user: `interlock ARGS…`
# (default `serve --config /etc/interlock/gateway.toml`) with the OS keychain the
# gateway signs with.
#
# The gateway keeps its log-signing key (and any approver key made with `interlock
# keys init`) in a Secret Service; crates/interlock-keychain refuses stores that keep
# keys only in memory. So, as scripts/with-keyring does in its kept mode:
#   1. a private D-Bus session bus at $DBUS_SESSION_BUS_ADDRESS (a fixed path, so
#      `podman exec … interlock keys …` reaches the same keychain), with no service
#      activation (a dead keyring daemon must be an error, not a locked new one);
#   2. gnome-keyring-daemon serving the Secret Service, its keyrings in
#      $INTERLOCK_KEYRING_DIR (in the /data volume: back it up with the database),
#      unlocked, on first start created, with the password from
#      $INTERLOCK_KEYRING_PASSWORD_FILE (default /run/secrets/interlock_keyring_password)
#      or $INTERLOCK_KEYRING_PASSWORD; there is no default password;
#   3. `exec interlock ARGS…`, so the gateway is tini's child and gets the SIGTERM of
#      `podman stop`, signing its last checkpoint while the keyring is still up.
#
# With `serve`, a database URL in $INTERLOCK_DATABASE_URL_FILE (default
# /run/secrets/interlock_database_url), if that file exists, becomes
# the database of every `interlock` command (they read $INTERLOCK_DATABASE_URL_FILE
# themselves, so the password is in no process's arguments or environment); here it
# is only checked to be readable before anything starts. Without it the gateway uses
# the SQLite file in /data.
set -euo pipefail

die() {
  echo "interlock entrypoint: $*" >&2
  exit 2
}

if [ "$(id -u)" = 0 ]; then
  die "refusing to run as root: the image runs as uid 10001 (the owner of /data); drop --user/user: 0"
fi
[ -w "$INTERLOCK_DATA_DIR" ] ||
  die "$INTERLOCK_DATA_DIR is not writable by uid $(id -u): the volume must belong to $(id -u):$(id -g)"

# Reads a secret file whole (trailing newlines dropped), with a clear error if it is
# there but cannot be read (file secrets keep the host's owner and mode).
read_secret() {
  local file="$1"
  [ -r "$file" ] ||
    die "cannot read $file ($(stat -c 'owner %u, mode %a' "$file" 2>/dev/null || echo missing)): make it readable by uid $(id -u)"
  local value
  value="$(<"$file")"
  [ -n "$value" ] || die "$file is empty"
  printf '%s' "$value"
}

password_file="${INTERLOCK_KEYRING_PASSWORD_FILE:-/run/secrets/interlock_keyring_password}"
if [ -e "$password_file" ]; then
  password="$(read_secret "$password_file")"
elif [ -n "${INTERLOCK_KEYRING_PASSWORD:-}" ]; then
  password="$INTERLOCK_KEYRING_PASSWORD"
else
  die "no keyring password: mount it at $password_file (a compose secret) or set INTERLOCK_KEYRING_PASSWORD"
fi
# Every input is read before anything starts.
if [ "${1:-}" = interlock ]; then
  shift
fi
if [ "${1:-}" = serve ]; then
  url_file="${INTERLOCK_DATABASE_URL_FILE:-/run/secrets/interlock_database_url}"
  if [ -e "$url_file" ]; then
    # An assignment of its own, so an unreadable file stops the start here (set -e);
    # inside `set -- …` its failure would be lost and `--database ''` passed on.
    url="$(read_secret "$url_file")"
    unset url
  fi
fi
# Nothing the gateway starts needs them (stdio upstreams get a cleared environment
# anyway).
unset INTERLOCK_KEYRING_PASSWORD INTERLOCK_KEYRING_PASSWORD_FILE INTERLOCK_DATABASE_URL_FILE

mkdir -p "$INTERLOCK_KEYRING_DIR"
chmod 0700 "$INTERLOCK_KEYRING_DIR"
# The runtime directory (bus socket, keyring control socket) is in /tmp, the one
# place a read-only container still writes (a tmpfs): ours alone, or no start.
mkdir -m 0700 "$XDG_RUNTIME_DIR" 2>/dev/null || true
[ "$(stat -c '%u %a' "$XDG_RUNTIME_DIR" 2>/dev/null)" = "$(id -u) 700" ] ||
  die "$XDG_RUNTIME_DIR must be a directory of uid $(id -u) with mode 700"
bus_path="${DBUS_SESSION_BUS_ADDRESS#unix:path=}"
[ "$bus_path" != "$DBUS_SESSION_BUS_ADDRESS" ] ||
  die "DBUS_SESSION_BUS_ADDRESS must be unix:path=…, not $DBUS_SESSION_BUS_ADDRESS"
# A socket left by the previous run of this container (`podman restart`).
rm -f "$bus_path"
dbus-daemon --config-file=/usr/local/share/interlock/session-bus.conf \
  --address="$DBUS_SESSION_BUS_ADDRESS" --nofork --nopidfile --nosyslog &
for _ in $(seq 100); do
  [ -S "$bus_path" ] && break
  sleep 0.1
done
[ -S "$bus_path" ] || die "the session bus did not start at $bus_path"

printf '%s' "$password" |
  XDG_DATA_HOME="$INTERLOCK_KEYRING_DIR" \
    gnome-keyring-daemon --foreground --unlock --components=secrets >/dev/null &
keyring_pid=$!
unset password

has_owner() {
  dbus-send --session --print-reply --dest=org.freedesktop.DBus / \
    org.freedesktop.DBus.NameHasOwner string:org.freedesktop.secrets 2>/dev/null |
    grep -q 'boolean true'
}
for _ in $(seq 100); do
  has_owner && break
  kill -0 "$keyring_pid" 2>/dev/null || break
  sleep 0.1
done
has_owner || die "gnome-keyring-daemon did not start the Secret Service (a wrong password for an existing keyring in $INTERLOCK_KEYRING_DIR?)"

exec /usr/local/bin/interlock "$@"
