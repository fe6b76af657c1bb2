#!/usr/bin/env bash
# Runs the MCP conformance suite's SERVER scenarios against a Streamable HTTP MCP URL and
# prints one JSON summary on stdout:
#
#   {"url":..., "package":"@modelcontextprotocol/conformance@0.1.16", "args":[...],
#    "exit_code": <the suite's own exit code>, "passed":N, "failed":M,
#    "scenarios": {"<scenario>": {"status":"pass"|"fail", "reason": null|"...",
#                                 "checks": {"passed":n,"failed":n,"warnings":n},
#                                 "warnings": ["..."]}, ...}}
#
# Usage: tests/peers/conformance.sh URL [--next] [conformance server options...]
#   --next        use the 0.2.0 alpha (npm alias conformance-next), which adds the
#                 2026-07-28 scenarios (select them with --spec-version 2026-07-28)
#   other options go to `conformance server` as they are, e.g. --scenario NAME,
#   --suite active|all|pending, --spec-version V, --expected-failures FILE.
#   CONFORMANCE_OUT=DIR keeps the raw results (checks.json per scenario, stdout.txt).
#
# Exit: 0 when every scenario passed, 1 when any failed, 2 when the suite could not run.
# The scenarios expect a server with specific test tools/resources/prompts: the
# reference one is tests/peers/conformance-server.mjs (see README.md).
# Needs `scripts/peers.sh` to have run (node_modules in tests/peers).
set -uo pipefail

here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
if [ $# -lt 1 ] || [ "${1#-}" != "$1" ]; then
  echo "usage: $0 URL [--next] [conformance server options...]" >&2
  exit 2
fi
url="$1"
shift
pkg_dir="$here/node_modules/@modelcontextprotocol/conformance"
args=()
for a in "$@"; do
  if [ "$a" = "--next" ]; then pkg_dir="$here/node_modules/conformance-next"; else args+=("$a"); fi
done
[ -f "$pkg_dir/dist/index.js" ] || {
  echo "conformance.sh: $pkg_dir missing; run scripts/peers.sh" >&2
  exit 2
}

out="${CONFORMANCE_OUT:-}"
if [ -z "$out" ]; then
  out="$(mktemp -d "${TMPDIR:-/tmp}/interlock-conformance.XXXXXX")"
  trap 'rm -rf "$out"' EXIT
else
  mkdir -p "$out"
fi

# The suite prints a human summary; keep it out of our stdout.
node --import "$here/node20-compat.mjs" "$pkg_dir/dist/index.js" server \
  --url "$url" -o "$out" ${args[@]+"${args[@]}"} >"$out/stdout.txt" 2>&1
rc=$?

node - "$out" "$url" "$pkg_dir" "$rc" ${args[@]+"${args[@]}"} <<'EOF'
const fs = require('node:fs');
const path = require('node:path');
const [out, url, pkgDir, rc, ...args] = process.argv.slice(2);
const pkg = JSON.parse(fs.readFileSync(path.join(pkgDir, 'package.json'), 'utf8'));
const stdout = fs.readFileSync(path.join(out, 'stdout.txt'), 'utf8');
// Every scenario that was started, in order (so one that left no results still shows).
const order = [...stdout.matchAll(/^=== Running scenario: (.+?) ===$/gm)].map((m) => m[1]);
const scenarios = {};
for (const name of order) scenarios[name] = { status: 'fail', reason: 'no results written', checks: { passed: 0, failed: 0, warnings: 0 } };
for (const dir of fs.readdirSync(out)) {
  const m = /^server-(.+)-\d{4}-\d{2}-\d{2}T[\d-]+Z$/.exec(dir);
  const file = path.join(out, dir, 'checks.json');
  if (!m || !fs.existsSync(file)) continue;
  let checks;
  try {
    checks = JSON.parse(fs.readFileSync(file, 'utf8'));
  } catch (e) {
    scenarios[m[1]] = { status: 'fail', reason: `unreadable checks.json: ${e.message}`, checks: { passed: 0, failed: 0, warnings: 0 } };
    continue;
  }
  const failures = checks.filter((c) => c.status === 'FAILURE');
  const warnings = checks.filter((c) => c.status === 'WARNING');
  const entry = {
    status: failures.length ? 'fail' : 'pass',
    reason: failures.length ? failures.map((c) => `${c.id}: ${c.errorMessage ?? c.description}`).join('; ') : null,
    checks: {
      passed: checks.filter((c) => c.status === 'SUCCESS').length,
      failed: failures.length,
      warnings: warnings.length,
    },
  };
  if (warnings.length) entry.warnings = warnings.map((c) => `${c.id}: ${c.errorMessage ?? c.description}`);
  scenarios[m[1]] = entry;
}
const names = Object.keys(scenarios);
const failed = names.filter((n) => scenarios[n].status === 'fail').length;
const doc = {
  url,
  package: `${pkg.name}@${pkg.version}`,
  args,
  exit_code: Number(rc),
  passed: names.length - failed,
  failed,
  scenarios,
};
if (!names.length) doc.error = stdout.trim().split('\n').slice(-5).join('\n') || 'the suite ran no scenario';
process.stdout.write(JSON.stringify(doc, null, 2) + '\n');
process.exitCode = !names.length ? 2 : failed ? 1 : 0;
EOF
