#!/usr/bin/env bash
# Writes the Rust tamper matrix's bundles (crates/interlock-receipts/tests/
# tamper.rs), with what `verify_bundle` said of each, into
# ui/tests/unit/fixtures/bundles/ — the browser verifier's unit tests
# (ui/tests/unit/bundle.test.ts) and WebKitGTK test compare against them, and
# `the_browsers_fixtures_match_this_verifier` keeps them current — and a
# 10,000-receipt bundle into ui/test-results/large/ (the in-browser timing of
# ui/tests/e2e; not committed). Run it after changing the verifier or the
# matrix, and commit the fixtures.
set -euo pipefail
cd "$(dirname "$0")/.."
out="$PWD/ui/tests/unit/fixtures/bundles"
tmp="$(mktemp -d)"
trap 'rm -rf "$tmp"' EXIT
INTERLOCK_BUNDLE_FIXTURES="$tmp" cargo test -q -p interlock-receipts --test tamper -- --test-threads=1
rm -rf "$out" ui/test-results/large
mkdir -p ui/test-results
mv "$tmp/large" ui/test-results/large
mkdir -p "$out"
mv "$tmp"/*.json "$out"/
echo "$(ls "$out" | wc -l) fixtures in $out"
