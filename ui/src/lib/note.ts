// Verifies the log's latest checkpoint in the browser: a C2SP signed note
// (https://c2sp.org/signed-note) whose Ed25519 signature is checked with the log's
// verifier key (`name+hash+base64(0x01 ‖ public key)`), and whose body
// (https://c2sp.org/tlog-checkpoint: origin, size, base64 root) must match the size
// and root the API reports.

import { fromBase64, toHex, utf8 } from './statement';
import { hasSmallOrder } from './ed25519';

export interface CheckpointVerification {
  ok: boolean;
  /** What was checked, or why it failed. */
  message: string;
  origin?: string;
  size?: number;
  rootHex?: string;
}

const SIG_PREFIX = '\u2014 ';

export interface VerifierKey {
  name: string;
  keyHash: Uint8Array;
  publicKey: Uint8Array;
}

export async function parseVerifierKey(vkey: string): Promise<VerifierKey> {
  // name+hash+base64: the base64 key data may itself contain '+'.
  const i = vkey.indexOf('+');
  const j = vkey.indexOf('+', i + 1);
  const [name, hashHex, b64] = [vkey.slice(0, i), vkey.slice(i + 1, j), vkey.slice(j + 1)];
  if (i <= 0 || j < 0 || !/^[0-9a-f]{8}$/i.test(hashHex) || !b64) throw new Error('malformed verifier key');
  const raw = fromBase64(b64);
  if (raw.length !== 33 || raw[0] !== 0x01) throw new Error('not an Ed25519 verifier key');
  const publicKey = raw.slice(1);
  if (hasSmallOrder(publicKey)) throw new Error('a weak Ed25519 key (a point of small order): it would verify anything');
  const keyHash = await keyHashOf(name, publicKey);
  if (toHex(keyHash) !== hashHex.toLowerCase()) throw new Error('the verifier key hash does not match the key');
  return { name, keyHash, publicKey };
}

async function keyHashOf(name: string, publicKey: Uint8Array): Promise<Uint8Array> {
  const n = utf8(name + '\n');
  const m = new Uint8Array(n.length + 1 + publicKey.length);
  m.set(n);
  m[n.length] = 0x01;
  m.set(publicKey, n.length + 1);
  return new Uint8Array(await crypto.subtle.digest('SHA-256', m)).slice(0, 4);
}

export async function verifyCheckpoint(
  note: string | null,
  vkey: string,
  expect: { size: number; root: string },
): Promise<CheckpointVerification> {
  if (!note) return { ok: false, message: 'No checkpoint has been signed yet.' };
  let key: VerifierKey;
  try {
    key = await parseVerifierKey(vkey);
  } catch (e) {
    return { ok: false, message: `Verifier key: ${(e as Error).message}.` };
  }
  const split = note.lastIndexOf('\n\n');
  if (split < 0) return { ok: false, message: 'The note has no signature block.' };
  const text = note.slice(0, split + 1);
  const sigLines = note.slice(split + 2).split('\n').filter((l) => l !== '');
  let verified = false;
  for (const line of sigLines) {
    if (!line.startsWith(SIG_PREFIX)) return { ok: false, message: 'Malformed signature line.' };
    const [name, b64] = line.slice(SIG_PREFIX.length).split(' ');
    if (name !== key.name || !b64) continue;
    const raw = fromBase64(b64);
    if (raw.length !== 68 || toHex(raw.slice(0, 4)) !== toHex(key.keyHash)) continue;
    const pub = await crypto.subtle.importKey('raw', key.publicKey as BufferSource, { name: 'Ed25519' }, false, ['verify']);
    const good = await crypto.subtle.verify({ name: 'Ed25519' }, pub, raw.slice(4) as BufferSource, utf8(text) as BufferSource);
    if (!good) return { ok: false, message: `The signature by ${key.name} does not verify.` };
    verified = true;
  }
  if (!verified) return { ok: false, message: `No signature by the log key ${key.name}.` };
  const [origin, sizeLine, rootB64] = text.split('\n');
  const size = Number(sizeLine);
  let rootHex = '';
  try {
    rootHex = toHex(fromBase64(rootB64 ?? ''));
  } catch {
    return { ok: false, message: 'The checkpoint root is not base64.' };
  }
  if (!Number.isSafeInteger(size) || String(size) !== sizeLine)
    return { ok: false, message: 'The checkpoint size is malformed.' };
  if (origin !== key.name) return { ok: false, message: `The checkpoint origin ${origin} is not the key's name.` };
  if (size === expect.size && rootHex !== expect.root.toLowerCase())
    return {
      ok: false,
      message: `The signed checkpoint for size ${size} has another root than the log the API reports.`,
      origin,
      size,
      rootHex,
    };
  if (size !== expect.size)
    // The API reads its size and the latest note separately: entries appended in
    // between (or not yet checkpointed) make them differ for a moment.
    return {
      ok: true,
      message: `Signature by ${key.name} verified in this browser; it covers ${size} entries (the log reports ${expect.size}).`,
      origin,
      size,
      rootHex,
    };
  return { ok: true, message: `Signature by ${key.name} verified in this browser; size and root match the log.`, origin, size, rootHex };
}
