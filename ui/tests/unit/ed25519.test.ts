// Weak (small-order) Ed25519 keys are refused in the browser as the gateway's
// `verify_strict` refuses them (issue 43): every small-order point of
// libsodium's `has_small_order` list, with and without the sign bit, for a
// witness's cosignature key and for a log key; a real witness key passes.
import { describe, expect, it } from 'vitest';
import { hasSmallOrder } from '../../src/lib/ed25519';
import { parseWitnessKey } from '../../src/lib/cosignature';
import { parseVerifierKey } from '../../src/lib/note';
import { toBase64, toHex, utf8 } from '../../src/lib/statement';

const fromHex = (h: string) => new Uint8Array(h.match(/../g)!.map((b) => parseInt(b, 16)));

// The eight canonical encodings of the points of order 1, 2, 4 and 8.
const CANONICAL_SMALL_ORDER = [
  '0100000000000000000000000000000000000000000000000000000000000000',
  'ecffffffffffffffffffffffffffffffffffffffffffffffffffffffffffff7f',
  '0000000000000000000000000000000000000000000000000000000000000000',
  '0000000000000000000000000000000000000000000000000000000000000080',
  '26e8958fc2b227b045c3f489f2ef98f0d5dfac05d3c63339b13802886d53fc05',
  '26e8958fc2b227b045c3f489f2ef98f0d5dfac05d3c63339b13802886d53fc85',
  'c7176a703d4dd84fba3c0b760d10670f2a2053fa2c39ccc64ec7fd7792ac037a',
  'c7176a703d4dd84fba3c0b760d10670f2a2053fa2c39ccc64ec7fd7792ac03fa',
];

async function vkey(name: string, type: number, pk: Uint8Array): Promise<string> {
  const n = utf8(name + '\n');
  const m = new Uint8Array(n.length + 1 + pk.length);
  m.set(n);
  m[n.length] = type;
  m.set(pk, n.length + 1);
  const id = new Uint8Array(await crypto.subtle.digest('SHA-256', m)).slice(0, 4);
  const raw = new Uint8Array(33);
  raw[0] = type;
  raw.set(pk, 1);
  return `${name}+${toHex(id)}+${toBase64(raw)}`;
}

describe('weak Ed25519 keys', () => {
  it('knows every small-order point, canonical or not', () => {
    for (const h of CANONICAL_SMALL_ORDER) expect(hasSmallOrder(fromHex(h)), h).toBe(true);
    // y = p and y = p + 1: non-canonical encodings of 0 and 1.
    expect(hasSmallOrder(fromHex('edffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffff'))).toBe(true);
    expect(hasSmallOrder(fromHex('eeffffffffffffffffffffffffffffffffffffffffffffffffffffffffffff7f'))).toBe(true);
  });

  it('lets a real witness key through', async () => {
    const remora = await parseWitnessKey('remora.n621.de+da77ade7+BOvN63jn/bLvkieywe8R6UYAtVtNbZpXh34x7onlmtw2');
    expect(hasSmallOrder(remora.publicKey)).toBe(false);
  });

  it('regression_issue_43_a_weak_witness_key_or_log_key_is_refused', async () => {
    for (const h of CANONICAL_SMALL_ORDER) {
      const pk = fromHex(h);
      await expect(parseWitnessKey(await vkey('weak.example', 0x04, pk))).rejects.toThrow(/weak Ed25519 key/);
      await expect(parseVerifierKey(await vkey('weak.example', 0x01, pk))).rejects.toThrow(/weak Ed25519 key/);
    }
  });
});
