#!/usr/bin/env bash
# Writes the Rust tamper matrix's bundles, with what `verify_bundle` said of
# each, into ui/tests/unit/fixtures/bundles/ (the browser verifier's unit tests
# compare against them), and a 10,000-receipt bundle into
# ui/test-results/large/ (the in-browser timing, not committed).
set -euo pipefail
cd "$(dirname "$0")/.."
out="$PWD/ui/tests/unit/fixtures/bundles"
rm -rf "$out" ui/test-results/large
mkdir -p "$out"
INTERLOCK_BUNDLE_FIXTURES="$out" cargo test -q -p interlock-receipts --test tamper -- --test-threads=1
mkdir -p ui/test-results
mv "$out/large" ui/test-results/large
ls "$out" | wc -l
