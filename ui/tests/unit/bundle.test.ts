// The browser's bundle verifier against the CLI's: every bundle the Rust tamper
// matrix (crates/interlock-receipts/tests/tamper.rs) verifies, written with
// what `verify_bundle` said of it by scripts/bundle-fixtures.sh, must get the
// same verdict, the same failure names per receipt and for the bundle, and the
// same counts here.
import { describe, expect, it } from 'vitest';
import fs from 'node:fs';
import path from 'node:path';
import { verifyBundle } from '../../src/lib/bundle';

interface Fixture {
  test: string;
  pinned_log_key: string | null;
  bundle: string;
  expected: {
    ok: boolean;
    origin: string;
    tree_size: number | null;
    problems: string[];
    receipts: { index: number; kind: string; subjects: string; ok: boolean; error: string | null }[];
  };
}

const dir = path.resolve(__dirname, 'fixtures/bundles');
const files = fs.readdirSync(dir).filter((f) => f.endsWith('.json')).sort();

describe('the browser verifies bundles as `interlock receipts verify` does', () => {
  it('has the tamper matrix’s bundles to compare with', () => {
    expect(files.length).toBeGreaterThan(50);
    const all = files.map((f) => JSON.parse(fs.readFileSync(path.join(dir, f), 'utf8')) as Fixture);
    // Both verdicts are represented, and v1 as well as v2 bundles.
    expect(all.some((f) => f.expected.ok)).toBe(true);
    expect(all.some((f) => !f.expected.ok)).toBe(true);
    expect(all.some((f) => f.bundle.includes('interlock.receipts/v1'))).toBe(true);
    expect(all.some((f) => f.bundle.includes('"nodes":['))).toBe(true);
  });

  for (const f of files) {
    it(f.replace(/\.json$/, ''), async () => {
      const fx = JSON.parse(fs.readFileSync(path.join(dir, f), 'utf8')) as Fixture;
      const r = await verifyBundle(fx.bundle, { pinnedLogKey: fx.pinned_log_key ?? undefined });
      const got = {
        ok: r.ok,
        origin: r.origin,
        tree_size: r.tree_size,
        problems: r.problems.map((p) => p.name),
        receipts: r.receipts.map((l) => ({ index: l.index, kind: l.kind, subjects: l.subjects, ok: l.error === null, error: l.error?.name ?? null })),
      };
      expect(got).toEqual({
        ok: fx.expected.ok,
        origin: fx.expected.origin,
        tree_size: fx.expected.tree_size,
        problems: fx.expected.problems,
        receipts: fx.expected.receipts,
      });
    });
  }
});
