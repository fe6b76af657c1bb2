// The approval statement, its PAE and envelope, checked against bytes and a
// signature made by the Rust side (interlock_core::decision::sign_decision) with
// the RFC 8032 test-1 key: Ed25519 is deterministic, so WebCrypto must produce the
// very same signature over the very same PAE.
import { describe, expect, it } from 'vitest';
import fs from 'node:fs';
import path from 'node:path';
import {
  buildStatement,
  envelope,
  fingerprint,
  fromBase64,
  fromHex,
  keyIdOf,
  pae,
  reasonError,
  signingInput,
  statementPayload,
  subjectId,
  toHex,
  APPROVAL_PAYLOAD_TYPE,
} from '../../src/lib/statement';

const fx = (n: string) => fs.readFileSync(path.join(__dirname, 'fixtures', n), 'utf8');
const rust = JSON.parse(fx('rust-signed-statement.json'));
const statementJson = JSON.parse(fx('statement.json'));
const cliCanon = fx('statement.jcs');

async function rfc8032Key() {
  // PKCS#8 wrapping of a raw Ed25519 seed.
  const pkcs8 = new Uint8Array([...fromHex('302e020100300506032b657004220420'), ...fromHex(rust.seed_hex)]);
  const priv = await crypto.subtle.importKey('pkcs8', pkcs8, { name: 'Ed25519' }, false, ['sign']);
  const pub = fromHex(rust.public_key);
  return { priv, pub };
}

function fixtureStatement() {
  return buildStatement({
    planId: subjectId('server', 'drifty'),
    planHash: statementJson.plan_hash,
    decision: 'approve',
    reason: statementJson.reason,
    approverKeyId: rust.key_id,
    policyDigest: statementJson.policy_digest,
    audience: statementJson.audience,
    now: statementJson.not_before + 30,
    nonce: fromHex(statementJson.nonce),
  });
}

describe('approval statement', () => {
  it('builds exactly the fields the Rust statement has, with a 30 s / 1 h window', () => {
    const s = fixtureStatement();
    expect(s).toEqual(statementJson);
    expect(s.expires_at - s.not_before).toBe(3630);
  });

  it('serializes to the bytes `interlock canon` and sign_decision produce', () => {
    const bytes = statementPayload(fixtureStatement());
    expect(new TextDecoder().decode(bytes)).toBe(cliCanon);
    expect(toHex(bytes)).toBe(toHex(fromBase64(rust.envelope.payload)));
  });

  it('builds the DSSE PAE the Rust side signs', () => {
    expect(toHex(signingInput(fixtureStatement()))).toBe(rust.pae_hex);
    // And the PAE counts bytes, not UTF-16 units.
    expect(new TextDecoder().decode(pae('t', new TextEncoder().encode('€')))).toBe('DSSEv1 1 t 3 €');
  });

  it('derives the key id and fingerprint as KeyId::of does', async () => {
    const { pub } = await rfc8032Key();
    expect(await keyIdOf(pub)).toBe(rust.key_id);
    expect(fingerprint(rust.key_id)).toBe(rust.fingerprint);
  });

  it('signs with WebCrypto Ed25519 to the very envelope the Rust side made', async () => {
    const { priv, pub } = await rfc8032Key();
    const s = fixtureStatement();
    const sig = new Uint8Array(await crypto.subtle.sign({ name: 'Ed25519' }, priv, signingInput(s)));
    const env = envelope(s, sig);
    expect(env).toEqual(rust.envelope);
    expect(env.payloadType).toBe(APPROVAL_PAYLOAD_TYPE);
    const verifier = await crypto.subtle.importKey('raw', pub, { name: 'Ed25519' }, false, ['verify']);
    expect(await crypto.subtle.verify({ name: 'Ed25519' }, verifier, sig, signingInput(s))).toBe(true);
  });

  it('uses a fresh random 16-byte nonce by default', () => {
    const a = buildStatement({ ...baseInput(), now: 1_800_000_000 });
    const b = buildStatement({ ...baseInput(), now: 1_800_000_000 });
    expect(a.nonce).toMatch(/^[0-9a-f]{32}$/);
    expect(a.nonce).not.toBe(b.nonce);
    expect(a.not_before).toBe(1_800_000_000 - 30);
    expect(a.issued_at).toBe(1_800_000_000);
    expect(a.expires_at).toBe(1_800_000_000 + 3600);
  });

  it('refuses what the gateway would refuse', () => {
    expect(reasonError('  ')).toMatch(/required/);
    expect(reasonError('é'.repeat(2049))).toMatch(/4098 bytes/);
    expect(reasonError('é'.repeat(2048))).toBeNull();
    expect(() => buildStatement({ ...baseInput(), reason: '' })).toThrow(/reason/);
    expect(() => buildStatement({ ...baseInput(), planHash: 'sha256:ABC' })).toThrow(/digest/);
    expect(() => buildStatement({ ...baseInput(), approverKeyId: 'ed25519:xyz' })).toThrow(/key id/);
    expect(() => buildStatement({ ...baseInput(), audience: '' })).toThrow(/audience/);
    expect(() => envelope(fixtureStatement(), new Uint8Array(63))).toThrow(/64 bytes/);
  });
});

function baseInput() {
  return {
    planId: 'p',
    planHash: statementJson.plan_hash,
    decision: 'reject' as const,
    reason: 'no',
    approverKeyId: rust.key_id,
    policyDigest: statementJson.policy_digest,
    audience: statementJson.audience,
    now: 1_800_000_000,
  };
}
