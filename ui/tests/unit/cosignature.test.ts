// Witness cosignatures (C2SP tlog-cosignature v1) checked in the browser, as
// interlock-merkle's `witness_report` and the CLI's `check_witnesses` check
// them: the known answer of crates/interlock-merkle/tests/cosignature.rs (a
// real public witness, remora.n621.de, over a transparency.dev checkpoint),
// one-byte edits in every part of a line, and the CLI's rules (unknown
// cosigner, too few, twice, a plain signature) on notes signed here.
import { describe, expect, it } from 'vitest';
import fs from 'node:fs';
import path from 'node:path';
import { verifyBundle } from '../../src/lib/bundle';
import {
  checkCosigned,
  cosignatureMessage,
  parseNote,
  parseWitnessKey,
  witnessReport,
  witnessVerdicts,
} from '../../src/lib/cosignature';
import { toBase64, toHex, utf8 } from '../../src/lib/statement';

const ARCHE_NOTE =
  'arche2025h1.staging.ct.transparency.dev\n' +
  '1432088532\n' +
  'U7WM79jrzyhGZ5/GUBTpM7NzwdyfFx61t3RovgcC4Ro=\n' +
  '\n' +
  '\u2014 arche2025h1.staging.ct.transparency.dev zTM8sQAAAZ5W0WdjBAMARjBEAiBjW5IQf9pvsYLfQFX6hoGREPMHbdQ3urbllzalApkptQIgIpwtEroeW2BXaHAI4kJXFbon5Ch9MNL5zRNZ55lvGt0=\n' +
  '\u2014 arche2025h1.staging.ct.transparency.dev ui8GwCF1+kWqZrxGdhj4aX3gcw7XUlXQQabg/27lefwhUkzbC3NygNI75MdhL1bfTW9g8Ei59RA23oHP7Ry1k3ZFWwQ=\n' +
  '\u2014 transparency.dev/DEV:witness-little-garden 2AQqhwAAAABqEiEgzgFIqqhbUoDwjMWE6UP8nd8/KYTzwZ2rhIgcqoXHAwVkjZr4AscylP3v7sEodkRAErumC2q44vdgJY096st5BQ==\n' +
  '\u2014 witness1.smartit.nu/witness1 pIyCDwAAAABqEiEghIp82KWebrw7/oHQwlTAm3g2RKS4+eebl8eO0WH+/iEcxZ75W3u5hNI7TOQtmJbqmNWVuE0tgh0XwzdZsDsUAQ==\n' +
  '\u2014 remora.n621.de 2net5wAAAABqEiEgPlfF3V06o0Y+fHM+J5J9s27wgxxcOVSpZ/2g/KSiXCg9DEZI+aVCIobWX9sXTynk5XeU/zZ0WBxtqB0DrAWfBw==\n' +
  '\u2014 witness.stagemole.eu Z/euoAAAAABqEiEgw0i+7g2ENfDAWHmtRzCfKTHSDwYDJA2NmKeGi9Y8FtEyOUvVr+AJmIY/2TUFucgKi7lI7cUiOvKFYe/TmN9DAg==\n';
const ARCHE_LOG_VKEY = 'arche2025h1.staging.ct.transparency.dev+ba2f06c0+AU0vHmlGCS/PdN8b2OaGmKprLI8HKM+dJ472xgFYh15f';
const REMORA_VKEY = 'remora.n621.de+da77ade7+BOvN63jn/bLvkieywe8R6UYAtVtNbZpXh34x7onlmtw2';
const OTHERS = ['transparency.dev/DEV:witness-little-garden', 'witness1.smartit.nu/witness1', 'witness.stagemole.eu'];

/** The note with only the lines whose name is in `keep` (the log's always kept). */
function only(note: string, keep: string[]): string {
  return note
    .split('\n')
    .filter((l) => !l.startsWith('\u2014 ') || l.startsWith('\u2014 arche2025h1') || keep.some((k) => l.startsWith(`\u2014 ${k} `)))
    .join('\n');
}

/** `note` with the decoded byte `at` of `name`'s signature line changed (re-encoded, so still valid base64). */
function flipByte(note: string, name: string, at: number): string {
  return note
    .split('\n')
    .map((l) => {
      if (!l.startsWith(`\u2014 ${name} `)) return l;
      const b64 = l.split(' ')[2];
      const raw = Buffer.from(b64, 'base64');
      raw[at] ^= 1;
      return `\u2014 ${name} ${raw.toString('base64')}`;
    })
    .join('\n');
}

describe('the known answer: remora.n621.de over arche2025h1', () => {
  it('parses the witness key, and refuses a log key (type 0x01) and a wrong key id', async () => {
    const k = await parseWitnessKey(REMORA_VKEY);
    expect(k.name).toBe('remora.n621.de');
    expect(toHex(k.keyId)).toBe('da77ade7');
    expect(toBase64(new Uint8Array([4, ...k.publicKey]))).toBe('BOvN63jn/bLvkieywe8R6UYAtVtNbZpXh34x7onlmtw2');
    await expect(parseWitnessKey(ARCHE_LOG_VKEY)).rejects.toThrow(/type 0x01/);
    await expect(parseWitnessKey(REMORA_VKEY.replace('da77ade7', 'da77ade8'))).rejects.toThrow(/key id mismatch/);
    await expect(parseWitnessKey('remora.n621.de')).rejects.toThrow(/name\+keyid\+key/);
  });

  it('verifies, at timestamp 0x6a122120; the three other witnesses are unchecked cosigners', async () => {
    const { verdicts, unknown } = await witnessVerdicts(parseNote(ARCHE_NOTE), [await parseWitnessKey(REMORA_VKEY)]);
    expect(verdicts.map((v) => [v.key.name, v.verdict])).toEqual([['remora.n621.de', { kind: 'cosigned', timestamp: 0x6a122120n }]]);
    expect(unknown).toEqual(OTHERS);
    // With the key given, their lines are failures (pass their keys, or they were altered).
    const r = await witnessReport(ARCHE_NOTE, [REMORA_VKEY], 1);
    expect(r.ok).toBe(false);
    expect(r.have).toBe(1);
    expect(r.problems.map((p) => p.name)).toEqual(['UnknownCosigner', 'UnknownCosigner', 'UnknownCosigner']);
    expect(r.problems[0].message).toMatch(/witness-little-garden, whose key was not given: pass its key, or the line was altered/);
    // remora alone on the note: verified, 1 of 1.
    const alone = await witnessReport(only(ARCHE_NOTE, ['remora.n621.de']), [REMORA_VKEY], 1);
    expect(alone).toMatchObject({ ok: true, have: 1, need: 1, problems: [], others: [] });
    expect(alone.witnesses[0].verdict).toEqual({ kind: 'cosigned', timestamp: 0x6a122120n });
  });

  it('fails when the checkpoint size changes', async () => {
    const forked = only(ARCHE_NOTE, ['remora.n621.de']).replace('1432088532', '1432088533');
    const r = await witnessReport(forked, [REMORA_VKEY], 1);
    expect(r.ok).toBe(false);
    expect(r.witnesses[0].verdict).toEqual({ kind: 'invalid', reason: 'its cosignature does not verify' });
    expect(r.problems.map((p) => p.name)).toEqual(['BadCosignature', 'TooFewWitnesses']);
  });

  it('fails after a one-byte edit of the name, key id, timestamp or signature', async () => {
    const note = only(ARCHE_NOTE, ['remora.n621.de']);
    // The name: now a cosigner whose key was not given; remora has no line.
    const renamed = await witnessReport(note.replace('\u2014 remora.n621.de ', '\u2014 remorb.n621.de '), [REMORA_VKEY], 1);
    expect(renamed.witnesses[0].verdict).toEqual({ kind: 'absent' });
    expect(renamed.problems.map((p) => p.name)).toEqual(['UnknownCosigner', 'TooFewWitnesses']);
    expect(renamed.ok).toBe(false);
    // The key id (bytes 0..4), the timestamp (4..12), the signature (12..76).
    const cases: [number, string][] = [
      [1, 'its line has another key ID than the key given'],
      [11, 'its cosignature does not verify'],
      [4, 'its cosignature does not verify'],
      [12, 'its cosignature does not verify'],
      [75, 'its cosignature does not verify'],
    ];
    for (const [at, reason] of cases) {
      const r = await witnessReport(flipByte(note, 'remora.n621.de', at), [REMORA_VKEY], 1);
      expect(r.ok, `byte ${at}`).toBe(false);
      expect(r.witnesses[0].verdict, `byte ${at}`).toEqual({ kind: 'invalid', reason });
    }
  });

  it('counts too few, and without keys lists the cosigners unchecked', async () => {
    const r = await witnessReport(only(ARCHE_NOTE, ['remora.n621.de']), [REMORA_VKEY], 2);
    expect(r.ok).toBe(false);
    expect(r.problems).toEqual([
      { name: 'TooFewWitnesses', message: 'the checkpoint is cosigned by 1 of the witnesses given; at least 2 required' },
    ]);
    const none = await witnessReport(ARCHE_NOTE, [], 0);
    expect(none).toMatchObject({ ok: true, witnesses: [], others: [...OTHERS.slice(0, 2), 'remora.n621.de', OTHERS[2]] });
    expect((await witnessReport(ARCHE_NOTE, [], 1)).problems.map((p) => p.name)).toEqual(['TooFewWitnesses']);
  });

  it('reports a key that does not parse, and a witness whose name is on a plain note signature', async () => {
    const r = await witnessReport(only(ARCHE_NOTE, ['remora.n621.de']), [REMORA_VKEY, ARCHE_LOG_VKEY], 1);
    expect(r.problems.map((p) => p.name)).toEqual(['BadWitnessKey']);
    expect(r.have).toBe(1);
    // A 64-byte line under remora's name is a note signature, not its cosignature.
    const plain = only(ARCHE_NOTE, []).replace(/\n$/, '') + `\n\u2014 remora.n621.de ${toBase64(new Uint8Array(68))}\n`;
    const p = await witnessReport(plain, [REMORA_VKEY], 0);
    expect(p.witnesses[0].verdict).toEqual({ kind: 'invalid', reason: 'its line is a plain note signature, not a cosignature' });
  });
});

// ------------------------------------------------------------ notes signed here

async function ed25519(): Promise<{ pub: Uint8Array; sign: (m: Uint8Array) => Promise<Uint8Array> }> {
  const k = (await crypto.subtle.generateKey({ name: 'Ed25519' }, true, ['sign', 'verify'])) as CryptoKeyPair;
  const pub = new Uint8Array(await crypto.subtle.exportKey('raw', k.publicKey));
  return { pub, sign: async (m) => new Uint8Array(await crypto.subtle.sign({ name: 'Ed25519' }, k.privateKey, m as BufferSource)) };
}

async function keyId(name: string, type: number, pub: Uint8Array): Promise<Uint8Array> {
  const d = new Uint8Array(await crypto.subtle.digest('SHA-256', new Uint8Array([...utf8(name + '\n'), type, ...pub])));
  return d.slice(0, 4);
}

async function log(name: string) {
  const k = await ed25519();
  const id = await keyId(name, 1, k.pub);
  return {
    vkey: `${name}+${toHex(id)}+${toBase64(new Uint8Array([1, ...k.pub]))}`,
    sign: async (text: string) => `${text}\n\u2014 ${name} ${toBase64(new Uint8Array([...id, ...(await k.sign(utf8(text)))]))}\n`,
  };
}

async function witness(name: string) {
  const k = await ed25519();
  const id = await keyId(name, 4, k.pub);
  return {
    name,
    vkey: `${name}+${toHex(id)}+${toBase64(new Uint8Array([4, ...k.pub]))}`,
    line: async (text: string, t: bigint) => {
      const ts = new Uint8Array(8);
      new DataView(ts.buffer).setBigUint64(0, t);
      return `\u2014 ${name} ${toBase64(new Uint8Array([...id, ...ts, ...(await k.sign(cosignatureMessage(text, t)))]))}\n`;
    },
  };
}

describe('the CLI’s rules on a checkpoint cosigned here', async () => {
  const text = 'example.test/log\n42\n' + toBase64(new Uint8Array(32).fill(7)) + '\n';
  const lg = await log('example.test/log');
  const [w1, w2, w3] = await Promise.all(['w1.test/witness', 'w2.test/witness', 'w3.test/witness'].map(witness));
  const t = 1796582683n;
  const signed = await lg.sign(text);
  const note = signed + (await w1.line(text, t)) + (await w2.line(text, t + 1n));

  it('passes with both keys and K = 2; fails with K = 3 or a third key absent from the note', async () => {
    const r = await witnessReport(note, [w1.vkey, w2.vkey], 2);
    expect(r).toMatchObject({ ok: true, have: 2, need: 2, problems: [] });
    expect(r.witnesses.map((w) => w.verdict)).toEqual([
      { kind: 'cosigned', timestamp: t },
      { kind: 'cosigned', timestamp: t + 1n },
    ]);
    expect((await witnessReport(note, [w1.vkey, w2.vkey], 3)).problems.map((p) => p.name)).toEqual(['TooFewWitnesses']);
    const three = await witnessReport(note, [w1.vkey, w2.vkey, w3.vkey], 2);
    expect(three.ok).toBe(true);
    expect(three.witnesses[2].verdict).toEqual({ kind: 'absent' });
  });

  it('fails on an unknown cosigner (a key not given) even with enough others', async () => {
    const r = await witnessReport(note, [w1.vkey], 1);
    expect(r.ok).toBe(false);
    expect(r.problems.map((p) => p.name)).toEqual(['UnknownCosigner']);
    expect(r.others).toEqual(['w2.test/witness']);
  });

  it('fails on a line twice, and on a line by another key under a given name', async () => {
    const twice = note + (await w1.line(text, t + 5n));
    expect((await witnessReport(twice, [w1.vkey, w2.vkey], 1)).witnesses[0].verdict).toEqual({ kind: 'invalid', reason: 'it has more than one line' });
    const impostor = await witness('w1.test/witness');
    const swapped = signed + (await impostor.line(text, t)) + (await w2.line(text, t));
    const r = await witnessReport(swapped, [w1.vkey, w2.vkey], 1);
    expect(r.witnesses[0].verdict).toEqual({ kind: 'invalid', reason: 'its line has another key ID than the key given' });
    expect(r.ok).toBe(false);
  });

  it('checks one witness’s newest cosignature as the Log view does', async () => {
    const line = await w1.line(text, t);
    const ok = await checkCosigned(signed, line, w1.vkey, lg.vkey, 'example.test/log');
    expect(ok).toMatchObject({ ok: true, size: 42, timestamp: Number(t) });
    expect((await checkCosigned(signed, line, w2.vkey, lg.vkey, 'example.test/log')).ok).toBe(false);
    expect((await checkCosigned(signed, line, w1.vkey, lg.vkey, 'other.test/log')).message).toMatch(/for log example.test\/log/);
    const other = await log('example.test/log');
    expect((await checkCosigned(signed, line, w1.vkey, other.vkey, 'example.test/log')).message).toMatch(/valid signature by the log key/);
    const forged = signed.replace('\n42\n', '\n43\n');
    expect((await checkCosigned(forged, line, w1.vkey, lg.vkey, 'example.test/log')).ok).toBe(false);
  });
});

describe('the bundle verifier with witness keys and K', async () => {
  // A real bundle of the tamper matrix (it verifies), its checkpoint cosigned here by two witnesses.
  const fx = JSON.parse(fs.readFileSync(path.join(__dirname, 'fixtures/bundles/a_real_bundle_verifies_and_round_trips-007.json'), 'utf8'));
  const bundle = JSON.parse(fx.bundle);
  const cp: string = bundle.checkpoint;
  const text = cp.slice(0, cp.lastIndexOf('\n\n') + 1);
  const [w1, w2] = await Promise.all(['w1.test/witness', 'w2.test/witness'].map(witness));
  const l2 = await w2.line(text, 1796582684n);
  const cosigned = (checkpoint: string) => JSON.stringify({ ...bundle, checkpoint });
  const good = cosigned(cp + (await w1.line(text, 1796582683n)) + l2);

  it('passes with both keys and K = 2, each witness’s verdict in the report', async () => {
    const r = await verifyBundle(good, { witnesses: [w1.vkey, w2.vkey], minWitnesses: 2 });
    expect(r.problems).toEqual([]);
    expect(r.ok).toBe(true);
    expect(r.witnesses.map((w) => [w.name, w.verdict.kind])).toEqual([
      ['w1.test/witness', 'cosigned'],
      ['w2.test/witness', 'cosigned'],
    ]);
    expect([r.witnesses_have, r.witnesses_need]).toEqual([2, 2]);
    // Without keys: verified as before, the cosigners listed unchecked.
    const plain = await verifyBundle(good);
    expect(plain.ok).toBe(true);
    expect(plain.other_cosigners).toEqual(['w1.test/witness', 'w2.test/witness']);
  });

  it('fails with K = 3, with one key given, and after a one-byte edit of a cosignature', async () => {
    expect((await verifyBundle(good, { witnesses: [w1.vkey, w2.vkey], minWitnesses: 3 })).problems.map((p) => p.name)).toEqual(['TooFewWitnesses']);
    expect((await verifyBundle(good, { witnesses: [w1.vkey], minWitnesses: 1 })).problems.map((p) => p.name)).toEqual(['UnknownCosigner']);
    const raw = Buffer.from(l2.split(' ')[2].trim(), 'base64');
    raw[40] ^= 1;
    const edited = cosigned(cp + (await w1.line(text, 1796582683n)) + `\u2014 w2.test/witness ${raw.toString('base64')}\n`);
    const r = await verifyBundle(edited, { witnesses: [w1.vkey, w2.vkey], minWitnesses: 2 });
    expect(r.ok).toBe(false);
    expect(r.problems.map((p) => p.name)).toEqual(['BadCosignature', 'TooFewWitnesses']);
    expect(r.witnesses[1].verdict).toEqual({ kind: 'invalid', reason: 'its cosignature does not verify' });
    // A key that is not a witness key (the log's own) is named, as the CLI names it.
    const bad = await verifyBundle(good, { witnesses: [bundle.trust.log_key, w1.vkey, w2.vkey], minWitnesses: 2 });
    expect(bad.problems.map((p) => p.name)).toEqual(['BadWitnessKey']);
  });
});
