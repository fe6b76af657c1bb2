// JCS (RFC 8785) cross-checked against the Rust side: the test vector in
// docs/SCHEMA.md (which the Rust tests check against the very same file), the
// shared RFC 8785 vectors the Rust canonicalizer is tested with, and — when the
// interlock binary is at hand — `interlock canon` itself on generated documents.
import { describe, expect, it } from 'vitest';
import { execFileSync } from 'node:child_process';
import { createHash } from 'node:crypto';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { canonicalize, canonicalBytes, JcsError } from '../../src/lib/jcs';

const repo = path.resolve(__dirname, '../../..');

function vectorsDir(): string | null {
  const candidates = [
    process.env.INTERLOCK_VECTORS_DIR,
    path.resolve(repo, '../shared/vectors'),
    '/work/shared/vectors',
  ].filter(Boolean) as string[];
  return candidates.map((c) => path.join(c, 'jcs')).find((c) => fs.existsSync(path.join(c, 'input'))) ?? null;
}

function interlockBin(): string | null {
  const target = process.env.CARGO_TARGET_DIR || path.join(os.homedir(), '.cache/interlock/target');
  const bin = process.env.INTERLOCK_BIN || path.join(target, 'debug/interlock');
  return fs.existsSync(bin) ? bin : null;
}

describe('JCS', () => {
  it('reproduces the docs/SCHEMA.md test vector (canonical body and plan hash)', () => {
    const doc = fs.readFileSync(path.join(repo, 'docs/SCHEMA.md'), 'utf8');
    const vector = doc.slice(doc.indexOf('## Test vector'));
    const blocks = [...vector.matchAll(/```(\w+)\n([\s\S]*?)\n```/g)].map((m) => m[2]);
    const [plan, canonicalBody, planHash] = blocks;
    const body = (JSON.parse(plan) as { body: unknown }).body;
    expect(canonicalize(body)).toBe(canonicalBody);
    const hash = 'sha256:' + createHash('sha256').update(canonicalBytes(body)).digest('hex');
    expect(hash).toBe(planHash.trim());
  });

  const dir = vectorsDir();
  it.skipIf(!dir)('matches every shared RFC 8785 vector byte for byte', () => {
    const names = fs.readdirSync(path.join(dir!, 'input')).filter((n) => n.endsWith('.json'));
    expect(names.length).toBeGreaterThan(3);
    for (const n of names) {
      const input = JSON.parse(fs.readFileSync(path.join(dir!, 'input', n), 'utf8'));
      const want = fs.readFileSync(path.join(dir!, 'output', n));
      expect(Buffer.from(canonicalBytes(input)).equals(want), n).toBe(true);
    }
  });

  it('sorts keys by UTF-16 code units, not code points', () => {
    // U+1F600 is D83D DE00 in UTF-16: it sorts before U+FB01 by code unit.
    expect(canonicalize({ '\ufb01': 1, '\u{1f600}': 2, '\u20ac': 3, a: 4, '\r': 5 })).toBe(
      '{"\\r":5,"a":4,"€":3,"😀":2,"ﬁ":1}',
    );
  });

  it('writes numbers and strings as ECMAScript does, with no whitespace', () => {
    expect(canonicalize({ b: [1, 1.5, -0, 1e21, 1e-7], a: 'x\u0007"\\\u2028' })).toBe(
      '{"a":"x\\u0007\\"\\\\\u2028","b":[1,1.5,0,1e+21,1e-7]}',
    );
  });

  it('refuses what is not I-JSON', () => {
    expect(() => canonicalize(NaN)).toThrow(JcsError);
    expect(() => canonicalize({ x: Infinity })).toThrow(JcsError);
    expect(() => canonicalize('\ud800')).toThrow(JcsError);
    expect(() => canonicalize({ '\udc00': 1 })).toThrow(JcsError);
  });

  const bin = interlockBin();
  it.skipIf(!bin)('agrees with `interlock canon` on generated statements', () => {
    const alphabet = ['a', 'Z', ' ', '"', '\\', '\n', '\t', '\u0001', '\u001f', '\u007f', 'é', '€', '\u2028', '𝄞', '😀', '中'];
    let seed = 7;
    const rnd = (n: number) => ((seed = (seed * 1103515245 + 12345) % 2 ** 31), seed % n);
    const docs = Array.from({ length: 12 }, (_, i) => {
      const reason = Array.from({ length: 1 + rnd(40) }, () => alphabet[rnd(alphabet.length)]).join('');
      return {
        [`k${rnd(1000)}`]: reason,
        schema_version: 'interlock.approval/v1',
        plan_id: `plan-${i}`,
        reason,
        not_before: 1796000000 + rnd(100000),
        expires_at: 1796003600 + rnd(100000),
        nested: { z: [reason, i], a: null, m: true },
      };
    });
    for (const d of docs) {
      const out = execFileSync(bin!, ['canon', '-'], { input: JSON.stringify(d) });
      expect(out.toString('utf8')).toBe(canonicalize(d));
    }
  });
});
