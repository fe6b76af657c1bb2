// The in-browser checkpoint check, on a checkpoint signed by a real gateway
// (fixtures/checkpoint.json is GET /api/v1/log/checkpoint from `interlock serve`).
import { describe, expect, it } from 'vitest';
import fs from 'node:fs';
import path from 'node:path';
import { verifyCheckpoint } from '../../src/lib/note';
import { toBase64, toHex } from '../../src/lib/statement';

const cp = JSON.parse(fs.readFileSync(path.join(__dirname, 'fixtures/checkpoint.json'), 'utf8'));

describe('checkpoint verification', () => {
  it('verifies a real checkpoint and its size and root', async () => {
    const v = await verifyCheckpoint(cp.note, cp.verifier_key, cp);
    expect(v.message).toMatch(/verified/);
    expect(v).toMatchObject({ ok: true, size: cp.size, rootHex: cp.root, origin: 'interlock.local/log' });
  });

  it('fails when the API reports another root for the same size', async () => {
    expect((await verifyCheckpoint(cp.note, cp.verifier_key, { ...cp, root: '00'.repeat(32) })).ok).toBe(false);
  });

  it('says so when the log has grown past the signed checkpoint', async () => {
    const v = await verifyCheckpoint(cp.note, cp.verifier_key, { size: cp.size + 2, root: '00'.repeat(32) });
    expect(v.ok).toBe(true);
    expect(v.size).toBe(cp.size);
    expect(v.message).toMatch(new RegExp(`covers ${cp.size} entries \\(the log reports ${cp.size + 2}\\)`));
  });

  it('fails on a tampered note or signature', async () => {
    const tampered = cp.note.replace(`\n${cp.size}\n`, `\n${cp.size + 1}\n`);
    expect((await verifyCheckpoint(tampered, cp.verifier_key, { ...cp, size: cp.size + 1 })).ok).toBe(false);
    const lines = cp.note.split('\n');
    const sigLine = lines.findIndex((l: string) => l.startsWith('\u2014 '));
    const b64 = lines[sigLine].split(' ')[2];
    const raw = Buffer.from(b64, 'base64');
    raw[10] ^= 1;
    lines[sigLine] = lines[sigLine].replace(b64, raw.toString('base64'));
    const v = await verifyCheckpoint(lines.join('\n'), cp.verifier_key, cp);
    expect(v.ok).toBe(false);
    expect(v.message).toMatch(/does not verify/);
  });

  it('fails without a note or with a wrong verifier key', async () => {
    expect((await verifyCheckpoint(null, cp.verifier_key, cp)).ok).toBe(false);
    const wrongHash = cp.verifier_key.replace(/\+([0-9a-f]{8})\+/, '+00000000+');
    expect((await verifyCheckpoint(cp.note, wrongHash, cp)).message).toMatch(/Verifier key/);
  });

  it('reads verifier keys whose base64 contains "+"', async () => {
    // A fresh log key, with the note signed as the gateway signs it (C2SP).
    for (let tries = 0; tries < 200; tries++) {
      const k = (await crypto.subtle.generateKey({ name: 'Ed25519' }, true, ['sign', 'verify'])) as CryptoKeyPair;
      const pub = new Uint8Array(await crypto.subtle.exportKey('raw', k.publicKey));
      const data = toBase64(new Uint8Array([1, ...pub]));
      if (!data.includes('+')) continue;
      const name = 'example.test/log';
      const hash = new Uint8Array(
        await crypto.subtle.digest('SHA-256', new Uint8Array([...new TextEncoder().encode(name + '\n'), 1, ...pub])),
      ).slice(0, 4);
      const root = new Uint8Array(32).fill(7);
      const text = `${name}\n3\n${toBase64(root)}\n`;
      const sig = new Uint8Array(await crypto.subtle.sign({ name: 'Ed25519' }, k.privateKey, new TextEncoder().encode(text)));
      const note = `${text}\n\u2014 ${name} ${toBase64(new Uint8Array([...hash, ...sig]))}\n`;
      const v = await verifyCheckpoint(note, `${name}+${toHex(hash)}+${data}`, { size: 3, root: toHex(root) });
      expect(v.message).toMatch(/verified/);
      expect(v.ok).toBe(true);
      return;
    }
    throw new Error('no key with "+" in 200 tries');
  });
});
