#!/usr/bin/env bash
# Usage: scripts/with-keyring scripts/bench-probes.sh [INTERLOCK_BINARY]
#
# Issue 16 item 1's measure: what one re-check's round of ten effective-permission
# probes costs, in ms. A real `interlock serve` (throwaway data dir and keychain
# service) in front of tests/peers/probed-server.mjs (official TypeScript SDK, stdio)
# with ten probes (read_secret expected denied, echo with a result predicate, fail
# expected error) and recheck_secs = 1; the gateway logs each round's wall time
# (`probes ran … elapsed_ms`, RUST_LOG=interlock_gateway::probes=debug); after
# ROUNDS rounds of the approved server this prints min / p50 / p90 / max.
# Needs the npm peers installed (scripts/peers.sh) and a keychain (scripts/with-keyring).
set -euo pipefail
cd "$(dirname "$0")/.."
bin=${1:-${CARGO_TARGET_DIR:-target}/debug/interlock}
rounds=${ROUNDS:-30}
peers=${INTERLOCK_PEERS_DIR:-$PWD/tests/peers}
dir=$(mktemp -d)
trap 'kill "$pid" 2>/dev/null || true; wait "$pid" 2>/dev/null || true; rm -rf "$dir"' EXIT
export INTERLOCK_DATA_DIR=$dir/data
export INTERLOCK_KEYCHAIN_SERVICE=interlock-bench-probes-$$
"$bin" keys init --identity human:bench >/dev/null
{
  echo 'listen = "127.0.0.1:0"'
  echo 'recheck_secs = 1'
  echo '[servers.vault]'
  echo 'command = "node"'
  echo "args = [\"$peers/probed-server.mjs\"]"
  echo 'probes = "non-production"'
  for i in 1 2 3 4; do
    printf '[[servers.vault.probe]]\ntool = "read_secret"\narguments = { path = "/etc/shadow-%s" }\nexpect = "denied"\n' "$i"
  done
  for i in 1 2 3 4; do
    printf '[[servers.vault.probe]]\ntool = "echo"\narguments = { text = "probe %s" }\nexpect = { result_contains = "probe", result_lacks = "root:" }\n' "$i"
  done
  for i in 1 2; do
    printf '[[servers.vault.probe]]\ntool = "fail"\narguments = { n = %s }\nexpect = "error"\n' "$i"
  done
} >"$dir/gateway.toml"
RUST_LOG=info,interlock_gateway::probes=debug "$bin" serve --config "$dir/gateway.toml" \
  >"$dir/serve.out" 2>"$dir/serve.log" &
pid=$!
for _ in $(seq 100); do
  "$bin" servers show vault 2>/dev/null | grep -q '^observed sha256:' && break
  sleep 0.2
done
hash=$("$bin" servers show vault | sed -n 's/^observed //p')
"$bin" servers approve vault --reason "bench" --hash "$hash" >/dev/null
# Rounds after the approval (the gateway picks it up within 0.5 s).
sleep 2
start=$(grep -c 'probes ran' "$dir/serve.log" || true)
while [ "$(grep -c 'probes ran' "$dir/serve.log" || true)" -lt $((start + rounds)) ]; do sleep 1; done
grep 'probes ran' "$dir/serve.log" | tail -n "$rounds" | sed 's/\x1b\[[0-9;]*m//g' |
  sed -n 's/.*probes=\([0-9]*\) findings=\([0-9]*\).*elapsed_ms=\([0-9.]*\).*/\1 \3 \2/p' |
  sort -k2 -n | awk '{ n++; p[n]=$1; v[n]=$2; f+=$3 } END {
    if (n == 0) { print "no rounds measured"; exit 1 }
    if (f != 0) { print "some rounds had findings: the probes did not run as declared"; exit 1 }
    printf "probes per round: %s, rounds: %d, findings: 0\n", p[1], n
    printf "round (ms): min %.2f  p50 %.2f  p90 %.2f  max %.2f\n", v[1], v[int((n+1)/2)], v[int(n*0.9+0.5)], v[n]
  }'
