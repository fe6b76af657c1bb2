// The in-browser inclusion proof check, against the RFC 6962 inclusion vectors
// (../shared/vectors/merkle/testdata/inclusion, as the Rust merkle crate is):
// every happy path verifies, every tampered one fails.
import { describe, expect, it } from 'vitest';
import fs from 'node:fs';
import path from 'node:path';
import { leafHash, verifyInclusion } from '../../src/lib/proof';
import { fromBase64, toHex } from '../../src/lib/statement';

const vectors =
  process.env.INTERLOCK_VECTORS_DIR || path.resolve(__dirname, '../../../../shared/vectors');
const dir = path.join(vectors, 'merkle/testdata/inclusion');

interface Vector {
  leafIdx: number;
  treeSize: number;
  root: string;
  leafHash: string;
  proof: string[] | null;
  desc: string;
  wantErr: boolean;
}

function load(): [string, Vector][] {
  if (!fs.existsSync(dir)) throw new Error(`no vectors at ${dir}: set INTERLOCK_VECTORS_DIR`);
  const out: [string, Vector][] = [];
  const walk = (d: string) => {
    for (const f of fs.readdirSync(d).sort()) {
      const p = path.join(d, f);
      if (fs.statSync(p).isDirectory()) walk(p);
      else if (f.endsWith('.json')) out.push([path.relative(dir, p), JSON.parse(fs.readFileSync(p, 'utf8'))]);
    }
  };
  walk(dir);
  return out;
}

describe('RFC 6962 inclusion proofs in the browser', () => {
  const all = load();
  it('has the vectors', () => {
    expect(all.length).toBeGreaterThan(20);
    expect(all.filter(([, v]) => !v.wantErr).length).toBeGreaterThan(3);
  });
  it.each(all)('%s', async (_, v) => {
    const ok = await verifyInclusion(
      v.leafIdx,
      v.treeSize,
      fromBase64(v.leafHash),
      (v.proof ?? []).map(fromBase64),
      fromBase64(v.root),
    );
    expect(ok).toBe(!v.wantErr);
  });
  it('hashes leaves with the 0x00 prefix', async () => {
    expect(toHex(await leafHash(new Uint8Array()))).toBe(
      '6e340b9cffb37a989ca544e6bb780a2c78901d3fb33738768511a30617afa01d',
    );
  });
});
