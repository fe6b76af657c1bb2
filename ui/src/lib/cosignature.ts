// Witness cosignatures in the browser (issue 43): C2SP tlog-cosignature v1
// (https://c2sp.org/tlog-cosignature), Ed25519, checked with WebCrypto.
//
//   vkey:  name+hex(key id)+base64(0x04 ‖ 32-byte public key)
//   key id = SHA-256(name ‖ "\n" ‖ 0x04 ‖ public key)[:4]
//   line:  — <name> base64(key id ‖ u64 big-endian timestamp ‖ 64-byte signature)
//   signed: "cosignature/v1\ntime <timestamp>\n" ‖ checkpoint body
//
// A cosignature line is a note signature line whose payload after the key id
// is 72 bytes (the log's own Ed25519 lines carry 64). `witnessReport` mirrors
// `interlock_merkle::witness_report` and the CLI's `check_witnesses`
// (crates/interlock-receipts/src/verify.rs): with witness keys given, a line
// claiming a given witness's name that does not verify (or has another key id,
// or appears twice) fails; a cosignature line by a name not given fails ("pass
// its key, or the line was altered"); fewer than K valid cosignatures fails.
// Without keys, cosignature lines are listed as not checked.

import { parseVerifierKey } from './note';
import { fromBase64, toHex, utf8 } from './statement';

import { hasSmallOrder } from './ed25519';

export const ALG_COSIGNATURE_V1 = 0x04;
/** Bytes of a cosignature after its key id: an 8-byte timestamp and a signature. */
export const COSIGNATURE_LEN = 8 + 64;
/** The spec's largest timestamp, 2^63 - 1. */
export const MAX_TIMESTAMP = (1n << 63n) - 1n;
const SIG_PREFIX = '\u2014 ';
const MAX_SIGNATURES = 100;

/** A witness's public key, as an auditor or a gateway configures it. */
export interface WitnessKey {
  name: string;
  keyId: Uint8Array;
  publicKey: Uint8Array;
  vkey: string;
}

/** One signature line of a note: `payload` is what follows the 4-byte key id. */
export interface NoteLine {
  name: string;
  keyId: Uint8Array;
  payload: Uint8Array;
  line: string;
}

export interface ParsedNote {
  /** The body: up to and including its last text line's newline. */
  text: string;
  /** Plain Ed25519 note signatures (64-byte payload), e.g. the log's own. */
  signatures: NoteLine[];
  /** Every other line (cosignatures among them). */
  foreign: NoteLine[];
}

/** One cosignature line, decoded. */
export interface Cosignature {
  name: string;
  keyId: Uint8Array;
  /** POSIX seconds (u64). */
  timestamp: bigint;
  signature: Uint8Array;
}

/** What one given witness said about a note. */
export type WitnessVerdict =
  | { kind: 'cosigned'; timestamp: bigint }
  | { kind: 'absent' }
  | { kind: 'invalid'; reason: string };

/** A named failure, named as the Rust `ReceiptError` variant is. */
export interface WitnessProblem {
  name: 'BadWitnessKey' | 'BadCosignature' | 'UnknownCosigner' | 'TooFewWitnesses' | 'BadCheckpoint';
  message: string;
}

export interface WitnessReport {
  ok: boolean;
  /** Each witness given (that parsed), in order, and its verdict. */
  witnesses: { name: string; vkey: string; verdict: WitnessVerdict }[];
  /** Names on cosignature-shaped lines of no witness given (not checked). */
  others: string[];
  /** Valid cosignatures by the witnesses given, and how many were required. */
  have: number;
  need: number;
  problems: WitnessProblem[];
}

/** Rust's `is_valid_key_name`: non-empty, no whitespace, '+' or control character. */
export function isValidKeyName(name: string): boolean {
  // eslint-disable-next-line no-control-regex
  return name !== '' && !/[\s+\u0000-\u001f\u007f-\u009f]/.test(name);
}

/** Strict standard base64 (padding required, canonical trailing bits), as Rust's STANDARD engine decodes. */
export function decodeBase64Strict(s: string): Uint8Array {
  if (s.length % 4 !== 0 || !/^[A-Za-z0-9+/]*(?:[A-Za-z0-9+/]{2}==|[A-Za-z0-9+/]{3}=)?$/.test(s)) throw new Error('not valid standard base64');
  const out = fromBase64(s);
  let back = '';
  for (const x of out) back += String.fromCharCode(x);
  if (btoa(back) !== s) throw new Error('not valid standard base64');
  return out;
}

async function cosignatureKeyId(name: string, publicKey: Uint8Array): Promise<Uint8Array> {
  const n = utf8(name + '\n');
  const m = new Uint8Array(n.length + 1 + publicKey.length);
  m.set(n);
  m[n.length] = ALG_COSIGNATURE_V1;
  m.set(publicKey, n.length + 1);
  return new Uint8Array(await crypto.subtle.digest('SHA-256', m as BufferSource)).slice(0, 4);
}

/** Parses a witness verifier key `name+hex(key id)+base64(0x04 ‖ key)`; throws why not. */
export async function parseWitnessKey(vkey: string): Promise<WitnessKey> {
  const i = vkey.indexOf('+');
  const j = i < 0 ? -1 : vkey.indexOf('+', i + 1);
  if (i < 0 || j < 0) throw new Error('expected name+keyid+key');
  const [name, idHex, b64] = [vkey.slice(0, i), vkey.slice(i + 1, j), vkey.slice(j + 1)];
  let raw: Uint8Array;
  try {
    raw = decodeBase64Strict(b64);
  } catch {
    throw new Error('key is not valid standard base64');
  }
  if (raw.length === 0) throw new Error('key is empty');
  if (raw[0] !== ALG_COSIGNATURE_V1)
    throw new Error(
      raw[0] === 0x01
        ? 'a note signing key (type 0x01, like the log key), not a witness cosignature key (type 0x04)'
        : `unsupported key type 0x${raw[0].toString(16).padStart(2, '0')}`,
    );
  if (raw.length !== 33) throw new Error('Ed25519 key is not 32 bytes');
  if (!isValidKeyName(name)) throw new Error(`invalid key name \`${name}\``);
  const publicKey = raw.slice(1);
  // A weak key would vouch for any checkpoint (the gateway's verify_strict refuses it too).
  if (hasSmallOrder(publicKey)) throw new Error('a weak Ed25519 key (a point of small order): it would cosign anything');
  const keyId = await cosignatureKeyId(name, publicKey);
  if (toHex(keyId) !== idHex) throw new Error(`key id mismatch: expected ${toHex(keyId)}, got ${idHex}`);
  return { name, keyId, publicKey, vkey };
}

/** Parses a C2SP signed note as `interlock_merkle::SignedNote::parse` does; throws why not. */
export function parseNote(note: string): ParsedNote {
  // eslint-disable-next-line no-control-regex
  if (/[\u0000-\u0009\u000b-\u001f]/.test(note)) throw new Error('control character in the note');
  const split = note.lastIndexOf('\n\n');
  if (split < 0) throw new Error('no signature block');
  const text = note.slice(0, split + 1);
  const sigs = note.slice(split + 2);
  if (sigs === '' || !sigs.endsWith('\n')) throw new Error('malformed signature block');
  const parsed: ParsedNote = { text, signatures: [], foreign: [] };
  const lines = sigs.slice(0, -1).split('\n');
  if (lines.length > MAX_SIGNATURES) throw new Error(`more than ${MAX_SIGNATURES} signatures`);
  for (const [n, line] of lines.entries()) {
    const bad = (why: string): never => {
      throw new Error(`signature line ${n + 1}: ${why}`);
    };
    if (!line.startsWith(SIG_PREFIX)) bad('does not start with an em dash and a space');
    const rest = line.slice(SIG_PREFIX.length);
    const space = rest.indexOf(' ');
    if (space < 0) bad('no space between key name and signature');
    const name = rest.slice(0, space);
    if (!isValidKeyName(name)) bad('invalid key name');
    let blob: Uint8Array = new Uint8Array();
    try {
      blob = decodeBase64Strict(rest.slice(space + 1));
    } catch {
      bad('signature is not valid standard base64');
    }
    if (blob.length < 5) bad('signature is shorter than a key ID and one byte');
    const l: NoteLine = { name, keyId: blob.slice(0, 4), payload: blob.slice(4), line: line + '\n' };
    (l.payload.length === 64 ? parsed.signatures : parsed.foreign).push(l);
  }
  return parsed;
}

/** A signature line read as a cosignature, if its payload has a cosignature's length. */
export function cosignatureOf(l: NoteLine): Cosignature | null {
  if (l.payload.length !== COSIGNATURE_LEN) return null;
  const timestamp = new DataView(l.payload.buffer, l.payload.byteOffset, 8).getBigUint64(0, false);
  return { name: l.name, keyId: l.keyId, timestamp, signature: l.payload.slice(8) };
}

/** The message a witness signs over the checkpoint body `text` at `timestamp`. */
export function cosignatureMessage(text: string, timestamp: bigint): Uint8Array {
  return utf8(`cosignature/v1\ntime ${timestamp.toString()}\n${text}`);
}

const sameBytes = (a: Uint8Array, b: Uint8Array) => a.length === b.length && a.every((x, i) => x === b[i]);

/** Whether `c` claims to be `key`'s: same name and key id. */
export function claims(key: WitnessKey, c: Cosignature): boolean {
  return c.name === key.name && sameBytes(c.keyId, key.keyId);
}

/** Verifies `c` over the checkpoint body `text` with `key`. */
export async function verifyCosignature(key: WitnessKey, text: string, c: Cosignature): Promise<boolean> {
  if (!claims(key, c) || c.timestamp > MAX_TIMESTAMP) return false;
  try {
    const pub = await crypto.subtle.importKey('raw', key.publicKey as BufferSource, { name: 'Ed25519' }, false, ['verify']);
    return await crypto.subtle.verify({ name: 'Ed25519' }, pub, c.signature as BufferSource, cosignatureMessage(text, c.timestamp) as BufferSource);
  } catch {
    return false;
  }
}

/** Each witness's verdict on a parsed note, and the names of cosignature lines of no witness given (`witness_report`). */
export async function witnessVerdicts(
  note: ParsedNote,
  keys: WitnessKey[],
): Promise<{ verdicts: { key: WitnessKey; verdict: WitnessVerdict }[]; unknown: string[] }> {
  const lines = note.foreign.map((f) => ({ c: cosignatureOf(f), f }));
  const verdicts = [];
  for (const key of keys) {
    const named = lines.filter(({ f }) => f.name === key.name);
    let verdict: WitnessVerdict;
    if (named.length === 0)
      verdict = note.signatures.some((s) => s.name === key.name)
        ? { kind: 'invalid', reason: 'its line is a plain note signature, not a cosignature' }
        : { kind: 'absent' };
    else if (named.length > 1) verdict = { kind: 'invalid', reason: 'it has more than one line' };
    else {
      const c = named[0].c;
      if (!c) verdict = { kind: 'invalid', reason: 'its line is not a cosignature' };
      else if (!claims(key, c)) verdict = { kind: 'invalid', reason: 'its line has another key ID than the key given' };
      else if (await verifyCosignature(key, note.text, c)) verdict = { kind: 'cosigned', timestamp: c.timestamp };
      else verdict = { kind: 'invalid', reason: 'its cosignature does not verify' };
    }
    verdicts.push({ key, verdict });
  }
  const unknown = lines.filter(({ c, f }) => c !== null && !keys.some((k) => k.name === f.name)).map(({ f }) => f.name);
  return { verdicts, unknown };
}

/**
 * The CLI's witness rules on a note (`check_witnesses`): each given key's
 * verdict; a key that does not parse, an invalid cosignature, a cosignature
 * line by a witness not given (when any key was given) and fewer than
 * `minWitnesses` valid ones are problems. Never throws.
 */
export async function witnessReport(note: string, keys: string[], minWitnesses: number): Promise<WitnessReport> {
  const report: WitnessReport = { ok: false, witnesses: [], others: [], have: 0, need: minWitnesses, problems: [] };
  const parsed: WitnessKey[] = [];
  for (const vkey of keys) {
    try {
      parsed.push(await parseWitnessKey(vkey));
    } catch (e) {
      report.problems.push({ name: 'BadWitnessKey', message: `witness key \`${vkey}\` is not a cosignature verifier key: ${(e as Error).message}` });
    }
  }
  let n: ParsedNote;
  try {
    n = parseNote(note);
  } catch (e) {
    // The bundle verifier reports a malformed checkpoint already (BadCheckpoint).
    report.problems.push({ name: 'BadCheckpoint', message: `the checkpoint is not a signed note: ${(e as Error).message}` });
    return report;
  }
  const { verdicts, unknown } = await witnessVerdicts(n, parsed);
  for (const { key, verdict } of verdicts) {
    if (verdict.kind === 'cosigned') report.have++;
    if (verdict.kind === 'invalid') report.problems.push({ name: 'BadCosignature', message: `witness ${key.name}: ${verdict.reason}` });
    report.witnesses.push({ name: key.name, vkey: key.vkey, verdict });
  }
  if (parsed.length > 0)
    for (const w of unknown)
      report.problems.push({
        name: 'UnknownCosigner',
        message: `the checkpoint carries a cosignature by ${w}, whose key was not given: pass its key, or the line was altered`,
      });
  report.others = unknown;
  if (report.have < minWitnesses)
    report.problems.push({
      name: 'TooFewWitnesses',
      message: `the checkpoint is cosigned by ${report.have} of the witnesses given; at least ${minWitnesses} required`,
    });
  report.ok = report.problems.length === 0;
  return report;
}

/** What the browser found of one witness's newest cosignature (the Log view). */
export interface CosignedCheck {
  ok: boolean;
  message: string;
  /** The cosigned checkpoint's size and the cosignature's time, when it verified. */
  size?: number;
  timestamp?: number;
}

/**
 * One witness's cosignature `line` over `checkpoint` (a note the log signed),
 * checked against the witness's configured `vkey` and the log's `logVkey`: the
 * log's signature on the checkpoint, its origin, and the cosignature.
 */
export async function checkCosigned(checkpoint: string, line: string, vkey: string, logVkey: string, origin: string): Promise<CosignedCheck> {
  let key: WitnessKey;
  try {
    key = await parseWitnessKey(vkey);
  } catch (e) {
    return { ok: false, message: `Its configured key does not parse: ${(e as Error).message}.` };
  }
  let note: ParsedNote;
  let cos: ParsedNote;
  try {
    note = parseNote(checkpoint);
    cos = parseNote(`x\n\n${line.endsWith('\n') ? line : line + '\n'}`);
  } catch (e) {
    return { ok: false, message: `Malformed: ${(e as Error).message}.` };
  }
  // The log's own signature: the checkpoint is one the log signed.
  try {
    const log = await parseVerifierKey(logVkey);
    const sig = note.signatures.find((s) => s.name === log.name && sameBytes(s.keyId, log.keyHash));
    const pub = await crypto.subtle.importKey('raw', log.publicKey as BufferSource, { name: 'Ed25519' }, false, ['verify']);
    if (!sig || !(await crypto.subtle.verify({ name: 'Ed25519' }, pub, sig.payload as BufferSource, utf8(note.text) as BufferSource)))
      return { ok: false, message: `The cosigned checkpoint does not carry a valid signature by the log key ${log.name}.` };
  } catch (e) {
    return { ok: false, message: `The log key: ${(e as Error).message}.` };
  }
  const [cpOrigin, sizeLine] = note.text.split('\n');
  const size = Number(sizeLine);
  if (!/^(0|[1-9]\d*)$/.test(sizeLine ?? '') || !Number.isSafeInteger(size)) return { ok: false, message: 'The cosigned checkpoint’s size is malformed.' };
  if (cpOrigin !== origin) return { ok: false, message: `The cosigned checkpoint is for log ${cpOrigin}, not ${origin}.` };
  const c = cos.foreign.length === 1 && cos.signatures.length === 0 ? cosignatureOf(cos.foreign[0]) : null;
  if (!c) return { ok: false, message: 'Its line is not one cosignature.' };
  if (c.name !== key.name) return { ok: false, message: `Its line is signed as ${c.name}, not ${key.name}.` };
  if (!claims(key, c)) return { ok: false, message: 'Its line has another key ID than the configured key.' };
  if (!(await verifyCosignature(key, note.text, c))) return { ok: false, message: `The cosignature does not verify with ${key.name}’s key.` };
  return { ok: true, message: `Cosigned size ${size}.`, size, timestamp: Number(c.timestamp) };
}
