// Verifying a receipts bundle in the browser (issue 18): the checks of
// `interlock receipts verify` (crates/interlock-receipts/src/verify.rs), with
// WebCrypto for SHA-256 and Ed25519 and nothing trusted but the bundle (and a
// pinned log key, if given). Both bundle versions: v1 (an inclusion proof
// inline per receipt) and v2 (a contiguous range recomputed over its leaves
// with one range proof, and other receipts' proofs as references into a
// shared node table).
//
// Each failure is named as the Rust verifier names it (the `ReceiptError`
// variant: `RangeNotVouched`, `BadInclusion`, ...), so the unit tests compare
// this verifier with the CLI on the Rust tamper matrix's own bundles
// (ui/tests/unit/fixtures/bundles, written by scripts/bundle-fixtures.sh): same
// verdicts, names and counts. The messages say the same things in this page's
// words; library error texts (JSON parser positions) differ.
//
// One thing is not checked here: an approved surface a bundle carries
// (`--with-surfaces`) would need the gateway's surface hashing; such surfaces
// are counted as `unchecked_surfaces` and the page says to use the CLI.

import { parseNote, witnessReport, type WitnessReport } from './cosignature';
import { canonicalize } from './jcs';
import { parseVerifierKey, type VerifierKey } from './note';
import { fromBase64, toHex, utf8 } from './statement';

export const BUNDLE_VERSION = 'interlock.receipts/v2';
export const BUNDLE_VERSION_V1 = 'interlock.receipts/v1';
const STATEMENT_TYPE = 'https://in-toto.io/Statement/v1';
const PREDICATE_TYPE = 'https://interlock.dev/receipt/v1';
const PAYLOAD_TYPE = 'application/vnd.in-toto+json';
const APPROVAL_PAYLOAD_TYPE = 'application/vnd.interlock.approval+json';
const MAX_SAFE = Number.MAX_SAFE_INTEGER;

/** A named failure: `name` is the Rust `ReceiptError` variant. */
export interface Problem {
  name: string;
  message: string;
}

export interface ReceiptLine {
  index: number;
  kind: string;
  subjects: string;
  error: Problem | null;
}

export interface BundleReport {
  ok: boolean;
  origin: string;
  tree_size: number | null;
  version: string | null;
  problems: Problem[];
  receipts: ReceiptLine[];
  /** Approved surfaces carried but not checked in the browser. */
  unchecked_surfaces: number;
  log_key: string | null;
  /** Each witness key given and its verdict on the latest checkpoint (issue 43). */
  witnesses: WitnessReport['witnesses'];
  /** Cosignature lines by witnesses whose key was not given. */
  other_cosigners: string[];
  /** Valid cosignatures by the witnesses given, and how many were required. */
  witnesses_have: number;
  witnesses_need: number;
}

class Fail extends Error {
  constructor(
    public readonly problemName: string,
    message: string,
  ) {
    super(message);
  }
}

const fail = (name: string, message: string): never => {
  throw new Fail(name, message);
};

function problem(e: unknown): Problem {
  return e instanceof Fail ? { name: e.problemName, message: e.message } : { name: 'Internal', message: String(e) };
}

// ------------------------------------------------------------ strict JSON intake

/** Where a member's raw text is kept (the leaf bytes are hashed as they stand). */
const RAW = Symbol('raw');
type Raw = { [RAW]?: Record<string, string> };

/**
 * A JSON parser that refuses duplicate members (serde's typed parse does) and
 * keeps the exact text of every `leaf` and `surface` member.
 */
export function parseStrict(text: string): unknown {
  let i = 0;
  const ws = () => {
    while (i < text.length && (text[i] === ' ' || text[i] === '\n' || text[i] === '\r' || text[i] === '\t')) i++;
  };
  const err = (m: string): never => fail('MalformedBundle', `${m} at offset ${i}`);
  const value = (): unknown => {
    ws();
    const c = text[i];
    if (c === '{') {
      i++;
      const obj: Record<string, unknown> & Raw = {};
      ws();
      if (text[i] === '}') {
        i++;
        return obj;
      }
      for (;;) {
        ws();
        if (text[i] !== '"') err('expected a member name');
        const key = str();
        ws();
        if (text[i] !== ':') err('expected `:`');
        i++;
        ws();
        const start = i;
        const v = value();
        if (Object.prototype.hasOwnProperty.call(obj, key)) err(`duplicate field \`${key}\``);
        obj[key] = v;
        if (key === 'leaf' || key === 'surface') (obj[RAW] ??= {})[key] = text.slice(start, i);
        ws();
        if (text[i] === ',') {
          i++;
          continue;
        }
        if (text[i] === '}') {
          i++;
          return obj;
        }
        err('expected `,` or `}`');
      }
    }
    if (c === '[') {
      i++;
      const arr: unknown[] = [];
      ws();
      if (text[i] === ']') {
        i++;
        return arr;
      }
      for (;;) {
        arr.push(value());
        ws();
        if (text[i] === ',') {
          i++;
          continue;
        }
        if (text[i] === ']') {
          i++;
          return arr;
        }
        err('expected `,` or `]`');
      }
    }
    if (c === '"') return str();
    const m = /^-?(0|[1-9]\d*)(\.\d+)?([eE][+-]?\d+)?|^true|^false|^null/.exec(text.slice(i, i + 400));
    if (!m) return err('expected a value');
    i += m[0].length;
    return JSON.parse(m[0]);
  };
  const str = (): string => {
    const start = i;
    i++;
    while (i < text.length && text[i] !== '"') {
      if (text[i] === '\\') i++;
      else if (text.charCodeAt(i) < 0x20) err('control character in a string');
      i++;
    }
    if (i >= text.length) err('unterminated string');
    i++;
    return JSON.parse(text.slice(start, i)) as string;
  };
  const v = value();
  ws();
  if (i !== text.length) err('trailing characters');
  return v;
}

function rawOf(o: unknown, key: string): string | undefined {
  return (o as Raw)[RAW]?.[key];
}

type Obj = Record<string, unknown>;

function isObj(v: unknown): v is Obj {
  return typeof v === 'object' && v !== null && !Array.isArray(v);
}

/** Exactly these members (required and optional), like serde's deny_unknown_fields. */
function shape(o: unknown, what: string, required: string[], optional: string[] = []): Obj {
  if (!isObj(o)) return fail('MalformedBundle', `${what} is not an object`);
  for (const k of Object.keys(o)) {
    if (!required.includes(k) && !optional.includes(k)) fail('MalformedBundle', `unknown field \`${k}\` in ${what}`);
  }
  for (const k of required) if (!(k in o)) fail('MalformedBundle', `missing field \`${k}\` in ${what}`);
  return o;
}

function str(o: Obj, k: string, what: string): string {
  if (typeof o[k] !== 'string') fail('MalformedBundle', `${what}.${k} is not a string`);
  return o[k] as string;
}

function u64(v: unknown, what: string): number {
  if (typeof v !== 'number' || !Number.isInteger(v) || v < 0) fail('MalformedBundle', `${what} is not a non-negative integer`);
  return v as number;
}

function strings(v: unknown, what: string): string[] {
  if (!Array.isArray(v) || v.some((x) => typeof x !== 'string')) fail('MalformedBundle', `${what} is not an array of strings`);
  return v as string[];
}

interface RawReceipt {
  index: number;
  leaf: string;
  inclusion_proof?: string[];
  proof?: number[];
}

interface RawBundle {
  version: 'v1' | 'v2';
  bundle_version: string;
  origin: string;
  log_key: string;
  approver_keys: { key_id: string; public_key: string; identity: string }[];
  checkpoint: string;
  earlier: { note: string; consistency_proof: string[] }[];
  nodes?: string[];
  range?: { from: number; to: number; proof?: string[] };
  receipts: RawReceipt[];
  surfaces: { hash: string; surface: string }[];
}

function parseBundle(text: string): RawBundle {
  const top = shape(
    parseStrict(text),
    'the bundle',
    ['bundle_version', 'origin', 'trust', 'checkpoint', 'earlier_checkpoints', 'receipts'],
    ['nodes', 'range', 'surfaces'],
  );
  const trust = shape(top.trust, 'trust', ['log_key', 'approver_keys']);
  if (!Array.isArray(trust.approver_keys)) fail('MalformedBundle', 'trust.approver_keys is not an array');
  const approver_keys = (trust.approver_keys as unknown[]).map((a, n) => {
    const o = shape(a, `approver key ${n}`, ['key_id', 'public_key', 'identity']);
    return { key_id: str(o, 'key_id', 'key'), public_key: str(o, 'public_key', 'key'), identity: str(o, 'identity', 'key') };
  });
  if (!Array.isArray(top.earlier_checkpoints)) fail('MalformedBundle', 'earlier_checkpoints is not an array');
  const earlier = (top.earlier_checkpoints as unknown[]).map((e, n) => {
    const o = shape(e, `earlier checkpoint ${n}`, ['note', 'consistency_proof']);
    return { note: str(o, 'note', 'earlier'), consistency_proof: strings(o.consistency_proof, 'consistency_proof') };
  });
  let range: RawBundle['range'];
  if (top.range !== undefined && top.range !== null) {
    const r = shape(top.range, 'range', ['from', 'to'], ['proof']);
    range = { from: u64(r.from, 'range.from'), to: u64(r.to, 'range.to') };
    if (r.proof !== undefined && r.proof !== null) range.proof = strings(r.proof, 'range.proof');
    for (const n of [range.from, range.to]) if (n > MAX_SAFE) fail('MalformedBundle', `range bound ${n} is beyond 2^53 - 1`);
  }
  if (!Array.isArray(top.receipts)) fail('MalformedBundle', 'receipts is not an array');
  const receipts = (top.receipts as unknown[]).map((r, n) => {
    const o = shape(r, `receipt ${n}`, ['index', 'leaf'], ['inclusion_proof', 'proof']);
    const leaf = rawOf(o, 'leaf');
    if (leaf === undefined) return fail('MalformedBundle', `receipt ${n} has no leaf`);
    const rr: RawReceipt = { index: u64(o.index, 'index'), leaf };
    if (rr.index > MAX_SAFE) fail('MalformedBundle', `receipt index ${rr.index} is beyond 2^53 - 1`);
    if (o.inclusion_proof !== undefined && o.inclusion_proof !== null) rr.inclusion_proof = strings(o.inclusion_proof, 'inclusion_proof');
    if (o.proof !== undefined && o.proof !== null) {
      if (!Array.isArray(o.proof)) fail('MalformedBundle', 'proof is not an array');
      rr.proof = (o.proof as unknown[]).map((x) => u64(x, 'a proof reference'));
    }
    return rr;
  });
  const surfaces = Array.isArray(top.surfaces)
    ? (top.surfaces as unknown[]).map((s, n) => {
        const o = shape(s, `surface ${n}`, ['hash', 'surface']);
        return { hash: str(o, 'hash', 'surface'), surface: rawOf(o, 'surface') ?? '' };
      })
    : [];
  const bundle_version = str(top, 'bundle_version', 'the bundle');
  const version = bundle_version === BUNDLE_VERSION ? 'v2' : bundle_version === BUNDLE_VERSION_V1 ? 'v1' : null;
  if (version === null)
    fail('UnsupportedVersion', `unsupported bundle version \`${bundle_version}\` (expected \`${BUNDLE_VERSION}\` or \`${BUNDLE_VERSION_V1}\`)`);
  const nodes = top.nodes === undefined || top.nodes === null ? undefined : strings(top.nodes, 'nodes');
  const rangeProof = range ? range.proof !== undefined : undefined;
  if (version === 'v1') {
    if (nodes !== undefined || rangeProof === true) fail('MalformedBundle', `a ${BUNDLE_VERSION_V1} bundle has no \`nodes\` and no range \`proof\``);
    const r = receipts.find((r) => r.inclusion_proof === undefined || r.proof !== undefined);
    if (r) fail('MalformedBundle', `receipt ${r.index} of a ${BUNDLE_VERSION_V1} bundle must carry \`inclusion_proof\` (and no \`proof\`)`);
  } else {
    if (nodes === undefined || rangeProof === false) fail('MalformedBundle', `a ${BUNDLE_VERSION} bundle has \`nodes\`, and a \`proof\` in its \`range\``);
    const r = receipts.find((r) => r.inclusion_proof !== undefined);
    if (r) fail('MalformedBundle', `receipt ${r.index} of a ${BUNDLE_VERSION} bundle carries an inline \`inclusion_proof\``);
  }
  return {
    version: version!,
    bundle_version,
    origin: str(top, 'origin', 'the bundle'),
    log_key: str(trust, 'log_key', 'trust'),
    approver_keys,
    checkpoint: str(top, 'checkpoint', 'the bundle'),
    earlier,
    nodes,
    range,
    receipts,
    surfaces,
  };
}

// ------------------------------------------------------------ hashing, Merkle

async function sha256(data: Uint8Array): Promise<Uint8Array> {
  return new Uint8Array(await crypto.subtle.digest('SHA-256', data as BufferSource));
}

function concat(...parts: Uint8Array[]): Uint8Array {
  const out = new Uint8Array(parts.reduce((a, p) => a + p.length, 0));
  let o = 0;
  for (const p of parts) {
    out.set(p, o);
    o += p.length;
  }
  return out;
}

const leafHash = (data: Uint8Array) => sha256(concat(new Uint8Array([0]), data));
const nodeHash = (l: Uint8Array, r: Uint8Array) => sha256(concat(new Uint8Array([1]), l, r));

function equal(a: Uint8Array, b: Uint8Array): boolean {
  return a.length === b.length && a.every((x, i) => x === b[i]);
}

/** Standard base64 (canonical) of exactly 32 bytes. */
function decodeHashes(items: string[]): Uint8Array[] {
  return items.map((s, i) => {
    let h: Uint8Array | null = null;
    try {
      h = /^[A-Za-z0-9+/]*={0,2}$/.test(s) ? fromBase64(s) : null;
    } catch {
      h = null;
    }
    if (!h || h.length !== 32 || btoaOf(h) !== s) fail('MalformedProof', `proof element ${i} is not a 32-byte hash in standard base64`);
    return h!;
  });
}

function btoaOf(b: Uint8Array): string {
  let s = '';
  for (const x of b) s += String.fromCharCode(x);
  return btoa(s);
}

/** RFC 9162 §2.1.3.2; the error says why, as interlock-merkle does. */
async function verifyInclusion(index: number, size: number, leaf: Uint8Array, proof: Uint8Array[], root: Uint8Array): Promise<string | null> {
  if (index >= size) return `index ${index} is beyond the tree size ${size}`;
  let fn = index;
  let sn = size - 1;
  let r = leaf;
  for (const p of proof) {
    if (sn === 0) return 'the proof is too long';
    if (fn % 2 === 1 || fn === sn) {
      r = await nodeHash(p, r);
      if (fn % 2 === 0) while (fn % 2 === 0 && fn !== 0) ((fn = Math.floor(fn / 2)), (sn = Math.floor(sn / 2)));
    } else {
      r = await nodeHash(r, p);
    }
    fn = Math.floor(fn / 2);
    sn = Math.floor(sn / 2);
  }
  if (sn !== 0) return 'the proof is too short';
  return equal(r, root) ? null : 'the computed root does not match';
}

const lsb = (n: number) => n % 2 === 1;

function isPowerOfTwo(n: number): boolean {
  while (n > 1 && n % 2 === 0) n /= 2;
  return n === 1;
}

/** RFC 9162 §2.1.4.2 consistency. */
async function verifyConsistency(size1: number, size2: number, proof: Uint8Array[], root1: Uint8Array, root2: Uint8Array): Promise<string | null> {
  if (size1 > size2) return `size ${size1} is larger than ${size2}`;
  if (size1 === 0) return 'the old tree is empty';
  if (size1 === size2) return proof.length === 0 && equal(root1, root2) ? null : 'the roots differ';
  const [seed, rest] = isPowerOfTwo(size1) ? [root1, proof] : [proof[0], proof.slice(1)];
  if (!seed) return 'the proof is empty';
  let fn = size1 - 1;
  let sn = size2 - 1;
  while (lsb(fn)) ((fn = Math.floor(fn / 2)), (sn = Math.floor(sn / 2)));
  let fr = seed;
  let sr = seed;
  for (const c of rest) {
    if (sn === 0) return 'the proof is too long';
    if (lsb(fn) || fn === sn) {
      fr = await nodeHash(c, fr);
      sr = await nodeHash(c, sr);
      while (!lsb(fn) && fn !== 0) ((fn = Math.floor(fn / 2)), (sn = Math.floor(sn / 2)));
    } else {
      sr = await nodeHash(sr, c);
    }
    fn = Math.floor(fn / 2);
    sn = Math.floor(sn / 2);
  }
  if (sn !== 0) return 'the proof is too short';
  if (!equal(fr, root1)) return 'the old root does not match';
  if (!equal(sr, root2)) return 'the new root does not match';
  return null;
}

/** Largest power of two strictly smaller than n (n >= 2). */
function splitPoint(n: number): number {
  let k = 1;
  while (k * 2 < n) k *= 2;
  return k;
}

/** The root of [lo, hi) of `leaves` (RFC 6962 MTH), level by level. */
async function subtreeRoot(leaves: Uint8Array[]): Promise<Uint8Array> {
  if (leaves.length === 1) return leaves[0];
  const k = splitPoint(leaves.length);
  return nodeHash(await subtreeRoot(leaves.slice(0, k)), await subtreeRoot(leaves.slice(k)));
}

/** interlock-merkle's range walk: the root from a range's leaves and its proof. */
async function rootFromRange(start: number, size: number, leaves: Uint8Array[], proof: Uint8Array[]): Promise<Uint8Array> {
  const end = start + leaves.length;
  if (start >= end || end > size) throw new Error(`invalid range ${start}..${end} of ${size}`);
  const count = (lo: number, hi: number): number => {
    if (hi <= start || lo >= end) return 1;
    if (start <= lo && hi <= end) return 0;
    const k = splitPoint(hi - lo);
    return count(lo, lo + k) + count(lo + k, hi);
  };
  const expected = count(0, size);
  if (proof.length !== expected) throw new Error(`the proof has ${proof.length} hashes, not ${expected}`);
  let next = 0;
  const walk = async (lo: number, hi: number): Promise<Uint8Array> => {
    if (hi <= start || lo >= end) return proof[next++];
    if (start <= lo && hi <= end) return subtreeRoot(leaves.slice(lo - start, hi - start));
    const k = splitPoint(hi - lo);
    const left = await walk(lo, lo + k);
    const right = await walk(lo + k, hi);
    return nodeHash(left, right);
  };
  return walk(0, size);
}

// ------------------------------------------------------------ notes, keys

interface Checkpoint {
  origin: string;
  size: number;
  root: Uint8Array;
}

async function verifyEd25519(publicKey: Uint8Array, sig: Uint8Array, msg: Uint8Array): Promise<boolean> {
  try {
    const key = await crypto.subtle.importKey('raw', publicKey as BufferSource, { name: 'Ed25519' }, false, ['verify']);
    return await crypto.subtle.verify({ name: 'Ed25519' }, key, sig as BufferSource, msg as BufferSource);
  } catch {
    return false;
  }
}

/** A C2SP signed note verified with `key`, its text a tlog checkpoint. */
async function openCheckpoint(note: string, key: VerifierKey): Promise<Checkpoint> {
  // The note's grammar as interlock-merkle parses it (strict base64, key names,
  // at most 100 lines): a note it refuses is refused here too.
  try {
    parseNote(note);
  } catch (e) {
    throw new Error(`malformed note: ${(e as Error).message}`);
  }
  const split = note.lastIndexOf('\n\n');
  if (split < 0 || !note.endsWith('\n')) throw new Error('malformed note: no signature block');
  const text = note.slice(0, split + 1);
  const lines = note.slice(split + 2, -1).split('\n');
  let verified = false;
  for (const line of lines) {
    const m = /^\u2014 (\S+) ([A-Za-z0-9+/=]+)$/.exec(line);
    if (!m) throw new Error('malformed signature line');
    if (m[1] !== key.name) continue;
    const raw = fromBase64(m[2]);
    if (raw.length < 5 || !equal(raw.slice(0, 4), key.keyHash)) continue;
    if (!(await verifyEd25519(key.publicKey, raw.slice(4), utf8(text)))) throw new Error(`the signature by ${key.name} does not verify`);
    verified = true;
  }
  if (!verified) throw new Error(`no signature by the log key ${key.name}`);
  // eslint-disable-next-line no-control-regex
  if (/[\x00-\x09\x0b-\x1f]/.test(text)) throw new Error('control character in the checkpoint');
  const body = text.slice(0, -1).split('\n');
  if (body.some((l) => l === '')) throw new Error('empty line in the checkpoint');
  if (body.length < 3) throw new Error(`a checkpoint has at least 3 lines, not ${body.length}`);
  const size = Number(body[1]);
  if (!/^(0|[1-9]\d*)$/.test(body[1]) || !Number.isSafeInteger(size)) throw new Error('malformed checkpoint size');
  let root: Uint8Array;
  try {
    root = fromBase64(body[2]);
  } catch {
    throw new Error('the checkpoint root is not base64');
  }
  if (root.length !== 32) throw new Error('the checkpoint root is not 32 bytes');
  return { origin: body[0], size, root };
}

async function keyIdOf(pub: Uint8Array): Promise<string> {
  return 'ed25519:' + toHex(await sha256(pub));
}

// ------------------------------------------------------------ statements

interface Statement {
  value: Obj;
  predicate: Obj;
  seq: number;
  kind: string;
  subjects: Obj[];
}

/** The digest (hex SHA-256 of the JCS bytes) of a JSON value. */
async function digest(v: unknown): Promise<string> {
  return toHex(await sha256(utf8(canonicalize(v))));
}

/** `derive_subjects` of leaf.rs: the subjects a predicate's facts make. */
async function deriveSubjects(p: Obj): Promise<Obj[]> {
  const out: Obj[] = [];
  const sub = (name: string, hex: string) => ({ digest: { sha256: hex }, name });
  if (typeof p.plan_id === 'string' && typeof p.plan_hash === 'string')
    out.push(sub(`plan:${p.plan_id}`, p.plan_hash.replace(/^sha256:/, '')));
  if (typeof p.key_id === 'string') out.push(sub(`approver-key:${p.key_id}`, p.key_id.replace(/^ed25519:/, '')));
  if (p.statement !== undefined) out.push(sub('approval', await digest(p.statement)));
  if (out.length === 0) out.push(sub('log-entry', await digest(p)));
  return out;
}

function readStatement(text: string): Statement {
  let value: unknown;
  try {
    value = JSON.parse(text);
  } catch (e) {
    return fail('MalformedStatement', `malformed statement: payload: ${(e as Error).message}`);
  }
  let canonical: string;
  try {
    canonical = canonicalize(value);
  } catch (e) {
    return fail('MalformedStatement', `malformed statement: ${(e as Error).message}`);
  }
  if (canonical !== text) fail('NonCanonicalPayload', 'the statement payload is not in canonical (JCS) form');
  if (!isObj(value)) return fail('MalformedStatement', 'malformed statement: the statement is not an object');
  const keys = Object.keys(value).sort();
  if (keys.join() !== ['_type', 'predicate', 'predicateType', 'subject'].join())
    fail('MalformedStatement', `malformed statement: the statement must have exactly the fields _type, subject, predicateType, predicate`);
  if (value._type !== STATEMENT_TYPE) fail('MalformedStatement', `malformed statement: _type must be \`${STATEMENT_TYPE}\``);
  if (value.predicateType !== PREDICATE_TYPE) fail('MalformedStatement', `malformed statement: predicateType must be \`${PREDICATE_TYPE}\``);
  if (!Array.isArray(value.subject) || value.subject.length === 0) fail('MalformedStatement', 'malformed statement: subject must be a non-empty array');
  const p = value.predicate;
  if (!isObj(p)) return fail('MalformedStatement', 'malformed statement: predicate is not an object');
  if (typeof p.seq !== 'number' || !Number.isInteger(p.seq) || p.seq < 0)
    fail('MalformedStatement', 'malformed statement: predicate.seq must be a non-negative integer');
  if (typeof p.type !== 'string' || p.type === '') fail('MalformedStatement', 'malformed statement: predicate.type must be a non-empty string');
  if (typeof p.time !== 'number' || !Number.isInteger(p.time)) fail('MalformedStatement', 'malformed statement: predicate.time must be an integer');
  return { value, predicate: p, seq: p.seq as number, kind: p.type as string, subjects: value.subject as Obj[] };
}

function pae(type: string, payload: Uint8Array): Uint8Array {
  const t = utf8(type);
  return concat(utf8(`DSSEv1 ${t.length} `), t, utf8(` ${payload.length} `), payload);
}

/** A receipt's leaf as a statement: a statement leaf, or an older log's envelope signed by the log key. */
async function readReceiptLeaf(leafText: string, logKey: Uint8Array, logId: string): Promise<Statement> {
  if (leafText.startsWith('{"_type":')) return readStatement(leafText);
  let env: unknown;
  try {
    env = JSON.parse(leafText);
  } catch (e) {
    return fail('MalformedLeaf', `malformed leaf: ${(e as Error).message}`);
  }
  if (!isObj(env) || Object.keys(env).sort().join() !== 'payload,payloadType,signatures')
    return fail('MalformedLeaf', 'malformed leaf: not a DSSE envelope');
  if (env.payloadType !== PAYLOAD_TYPE) fail('WrongPayloadType', `wrong payload type \`${String(env.payloadType)}\` (expected \`${PAYLOAD_TYPE}\`)`);
  const sigs = env.signatures;
  if (!Array.isArray(sigs) || sigs.length !== 1 || !isObj(sigs[0])) return fail('MalformedLeaf', 'malformed leaf: the envelope must carry exactly one signature');
  const s = sigs[0];
  if (typeof env.payload !== 'string' || typeof s.keyid !== 'string' || typeof s.sig !== 'string')
    return fail('MalformedLeaf', 'malformed leaf: not a DSSE envelope');
  let payload: Uint8Array;
  let sig: Uint8Array;
  try {
    payload = fromBase64(env.payload);
    sig = fromBase64(s.sig);
  } catch {
    return fail('MalformedLeaf', 'malformed leaf: payload is not standard base64');
  }
  if (sig.length !== 64) fail('MalformedLeaf', 'malformed leaf: sig is not 64 bytes of standard base64');
  if (!/^ed25519:[0-9a-f]{64}$/.test(s.keyid)) fail('MalformedLeaf', 'malformed leaf: keyid is not a key id');
  if (canonicalize(env) !== leafText) fail('NonCanonicalLeaf', 'the leaf is not in canonical (JCS) form');
  if (s.keyid !== logId)
    fail(
      'WrongLogKey',
      `the leaf is signed by key ${s.keyid}, not by the bundle's log key ${logId}: a receipt from a different log, or a swapped log key`,
    );
  if (!(await verifyEd25519(logKey, sig, pae(PAYLOAD_TYPE, payload))))
    fail('BadLogSignature', "the log key's signature over the statement does not verify: the statement or its signature was altered");
  return readStatement(new TextDecoder().decode(payload));
}

/** The approver's envelope inside a `plan.decision` receipt. */
async function checkApproval(p: Obj, approvers: Map<string, Uint8Array>): Promise<void> {
  const st = p.statement;
  if (st === undefined) fail('ApprovalMissing', 'a plan.decision receipt carries no approver statement');
  const bad = (m: string) => fail('ApprovalMalformed', `malformed approver statement: ${m}`);
  if (!isObj(st)) return bad('not an envelope');
  const sigs = st.signatures;
  if (typeof st.payload !== 'string' || typeof st.payloadType !== 'string' || !Array.isArray(sigs) || sigs.length !== 1 || !isObj(sigs[0]))
    return bad('not a DSSE envelope with one signature');
  if (st.payloadType !== APPROVAL_PAYLOAD_TYPE) bad(`payloadType \`${st.payloadType}\` is not \`${APPROVAL_PAYLOAD_TYPE}\``);
  const keyid = sigs[0].keyid;
  if (typeof keyid !== 'string' || !/^ed25519:[0-9a-f]{64}$/.test(keyid)) return bad('keyid is not a key id');
  const key = approvers.get(keyid);
  if (!key) return fail('UntrustedApprover', `the approval is signed by key ${keyid}, which is not among the bundle's trusted approver keys`);
  let payload: Uint8Array;
  let sig: Uint8Array;
  try {
    payload = fromBase64(st.payload);
    sig = fromBase64(String(sigs[0].sig));
  } catch {
    return bad('not base64');
  }
  if (sig.length !== 64 || !(await verifyEd25519(key, sig, pae(st.payloadType, payload))))
    fail('BadApprovalSignature', `the approver's signature (key ${keyid}) does not verify`);
  const text = new TextDecoder().decode(payload);
  let a: unknown;
  try {
    a = JSON.parse(text);
  } catch (e) {
    return bad((e as Error).message);
  }
  if (canonicalize(a) !== text) bad('the approval payload is not in canonical (JCS) form');
  if (!isObj(a)) return bad('the approval is not an object');
  if (a.approver_key_id !== keyid) bad(`the approval names key ${String(a.approver_key_id)} but is signed by ${keyid}`);
  const recorded = (k: string) => (typeof p[k] === 'string' ? (p[k] as string) : '');
  for (const what of ['plan_id', 'plan_hash'] as const) {
    if (recorded(what) !== a[what])
      fail('ApprovalMismatch', `the approval is for ${what} \`${String(a[what])}\`, but the receipt records \`${recorded(what)}\``);
  }
  if ('decision' in p && recorded('decision') !== a.decision)
    fail('ApprovalMismatch', `the approval is for decision \`${String(a.decision)}\`, but the receipt records \`${recorded('decision')}\``);
}

// ------------------------------------------------------------ the bundle

export interface VerifyOptions {
  /** The log key the auditor trusts (C2SP vkey). */
  pinnedLogKey?: string;
  /** Witnesses the auditor trusts (cosignature vkeys, type 0x04), as `--witness`. */
  witnesses?: string[];
  /** How many of them must have cosigned the latest checkpoint (`--min-witnesses`). */
  minWitnesses?: number;
}

/** Verifies a bundle's text; never throws. */
export async function verifyBundle(text: string, opts: VerifyOptions = {}): Promise<BundleReport> {
  const report: BundleReport = {
    ok: false,
    origin: '',
    tree_size: null,
    version: null,
    problems: [],
    receipts: [],
    unchecked_surfaces: 0,
    log_key: null,
    witnesses: [],
    other_cosigners: [],
    witnesses_have: 0,
    witnesses_need: opts.minWitnesses ?? 0,
  };
  const problems = report.problems;
  let raw: RawBundle;
  try {
    raw = parseBundle(text);
  } catch (e) {
    problems.push(problem(e));
    return report;
  }
  report.origin = raw.origin;
  report.version = raw.bundle_version;
  report.log_key = raw.log_key;

  let key: VerifierKey;
  try {
    key = await parseVerifierKey(raw.log_key);
  } catch (e) {
    problems.push({ name: 'BadLogKey', message: `the bundle's log key \`${raw.log_key}\` does not parse: ${(e as Error).message}` });
    return report;
  }
  if (opts.pinnedLogKey) {
    try {
      const pinned = await parseVerifierKey(opts.pinnedLogKey);
      if (pinned.name !== key.name || !equal(pinned.publicKey, key.publicKey))
        problems.push({
          name: 'NotPinned',
          message: `the bundle's log key is not the pinned one (bundle: \`${raw.log_key}\`, pinned: \`${opts.pinnedLogKey}\`)`,
        });
    } catch (e) {
      problems.push({ name: 'BadPinnedKey', message: `the pinned log key \`${opts.pinnedLogKey}\` does not parse: ${(e as Error).message}` });
    }
  }

  // Checkpoints.
  let latest: Checkpoint | null = null;
  try {
    latest = await openCheckpoint(raw.checkpoint, key);
    if (latest.origin !== raw.origin)
      problems.push({ name: 'OriginMismatch', message: `checkpoint latest is for log \`${latest.origin}\`, not the bundle's origin \`${raw.origin}\`` });
  } catch (e) {
    problems.push({ name: 'BadCheckpoint', message: `the latest checkpoint does not verify with the bundle's log key: ${(e as Error).message}` });
  }
  report.tree_size = latest?.size ?? null;
  // The latest checkpoint's cosignatures, by the CLI's rules (`check_witnesses`).
  const wr = await witnessReport(raw.checkpoint, opts.witnesses ?? [], opts.minWitnesses ?? 0);
  report.witnesses = wr.witnesses;
  report.other_cosigners = wr.others;
  report.witnesses_have = wr.have;
  for (const p of wr.problems) {
    // A note the strict parse refuses was refused as a checkpoint by the CLI.
    if (p.name === 'BadCheckpoint') {
      if (!problems.some((q) => q.name === 'BadCheckpoint'))
        problems.push({ name: 'BadCheckpoint', message: `the latest checkpoint does not verify with the bundle's log key: ${p.message}` });
    } else problems.push(p);
  }
  for (const [position, e] of raw.earlier.entries()) {
    let cp: Checkpoint;
    try {
      cp = await openCheckpoint(e.note, key);
    } catch (err) {
      problems.push({ name: 'BadEarlierCheckpoint', message: `earlier checkpoint ${position} does not verify: ${(err as Error).message}` });
      continue;
    }
    if (cp.origin !== raw.origin)
      problems.push({ name: 'OriginMismatch', message: `checkpoint earlier ${position} is for log \`${cp.origin}\`, not the bundle's origin \`${raw.origin}\`` });
    if (!latest) continue;
    if (cp.size > latest.size) {
      problems.push({
        name: 'OlderPassedOffAsNewer',
        message: `earlier checkpoint ${position} has size ${cp.size}, larger than the latest checkpoint's ${latest.size}: an older checkpoint is passed off as the latest`,
      });
      continue;
    }
    let why: string | null;
    try {
      why = await verifyConsistency(cp.size, latest.size, decodeHashes(e.consistency_proof), cp.root, latest.root);
    } catch (err) {
      why = (err as Error).message;
    }
    if (why)
      problems.push({
        name: 'Inconsistent',
        message: `earlier checkpoint ${position} (size ${cp.size}) is not consistent with the latest (size ${latest.size}): ${why}`,
      });
  }

  // Trusted approver keys.
  const approvers = new Map<string, Uint8Array>();
  const trusted: [string, string][] = [];
  for (const [position, a] of raw.approver_keys.entries()) {
    if (!/^ed25519:[0-9a-f]{64}$/.test(a.key_id)) {
      problems.push({ name: 'MalformedApproverKey', message: `trusted approver key entry ${position}: key_id is not \`ed25519:\` and 64 lowercase hex digits` });
      continue;
    }
    if (!/^[0-9a-f]{64}$/.test(a.public_key)) {
      problems.push({
        name: 'MalformedApproverKey',
        message: `trusted approver key entry ${position}: public_key is not an Ed25519 key in 64 lowercase hex digits`,
      });
      continue;
    }
    const pub = new Uint8Array(a.public_key.match(/../g)!.map((x) => parseInt(x, 16)));
    if ((await keyIdOf(pub)) !== a.key_id) {
      problems.push({ name: 'ApproverKeyIdMismatch', message: `trusted approver key ${a.key_id} (${a.identity}) is not the id of its public key` });
      continue;
    }
    if (approvers.has(a.key_id)) problems.push({ name: 'DuplicateApproverKey', message: `trusted approver key ${a.key_id} is listed more than once` });
    approvers.set(a.key_id, pub);
    trusted.push([a.key_id, a.identity]);
  }

  // The shared node table (v2).
  let nodes: Uint8Array[] = [];
  try {
    nodes = decodeHashes(raw.nodes ?? []);
  } catch (e) {
    problems.push({ name: 'MalformedBundle', message: `malformed bundle: the node table's ${(e as Error).message}` });
  }
  if (nodes.length) {
    const used = new Array<boolean>(nodes.length).fill(false);
    for (const r of raw.receipts) for (const i of r.proof ?? []) if (i < used.length) used[i] = true;
    const position = used.indexOf(false);
    if (position >= 0) problems.push({ name: 'UnreferencedNode', message: `node ${position} of the node table is referenced by no receipt` });
  }

  // Receipts.
  const range = raw.version === 'v2' && raw.range ? raw.range : null;
  const logId = await keyIdOf(key.publicKey);
  const registered = new Set<string>();
  const rangeLeaves: { index: number; hash: Uint8Array; line: ReceiptLine }[] = [];
  const checked: { line: ReceiptLine; registration: string | null }[] = [];
  const enc = new TextEncoder();
  for (const r of raw.receipts) {
    const line: ReceiptLine = { index: r.index, kind: '', subjects: '', error: null };
    let registration: string | null = null;
    const bytes = enc.encode(r.leaf);
    const inRange = range !== null && range.from <= r.index && r.index <= range.to;
    const lh = await leafHash(bytes);
    if (inRange) rangeLeaves.push({ index: r.index, hash: lh, line });
    try {
      const st = await readReceiptLeaf(r.leaf, key.publicKey, logId);
      line.kind = st.kind;
      line.subjects = st.subjects.map((s) => (typeof s.name === 'string' ? s.name : null)).filter((s) => s !== null).join(', ');
      if (canonicalize(await deriveSubjects(st.predicate)) !== canonicalize(st.subjects))
        fail('SubjectMismatch', "the statement's subjects do not match its facts: a subject was swapped or edited");
      if (st.seq !== r.index) fail('SeqMismatch', `the receipt at index ${r.index} carries statement number ${st.seq}: renumbered`);
      let proof: Uint8Array[] | null;
      if (raw.version === 'v1' && r.inclusion_proof) proof = decodeHashes(r.inclusion_proof);
      else if (raw.version === 'v2' && r.proof && inRange)
        return fail('ProofInsideRange', `receipt ${r.index} is inside the bundle's range, which vouches for it, but carries a proof of its own`);
      else if (raw.version === 'v2' && r.proof)
        proof = r.proof.map((i) =>
          i < nodes.length ? nodes[i] : fail('BadNodeReference', `the proof refers to node ${i} of a node table of ${nodes.length}`),
        );
      else if (inRange) proof = null;
      else return fail('MissingProof', `receipt ${r.index} is outside the bundle's range but carries no inclusion proof`);
      if (!latest) return fail('NoCheckpoint', 'no verified checkpoint to check the inclusion proof against');
      if (proof) {
        const why = await verifyInclusion(r.index, latest.size, lh, proof, latest.root);
        if (why)
          fail('BadInclusion', `the inclusion proof for index ${r.index} does not verify against the latest checkpoint (size ${latest.size}): ${why}`);
      }
      if (st.kind === 'plan.decision') await checkApproval(st.predicate, approvers);
      if (st.kind === 'approver.registered' && typeof st.predicate.key_id === 'string' && typeof st.predicate.identity === 'string')
        registration = `${st.predicate.key_id}\n${st.predicate.identity}`;
    } catch (e) {
      line.error = problem(e);
    }
    checked.push({ line, registration });
  }
  // A v2 range is vouched for as a whole.
  let rangeOk = true;
  if (range) {
    const { from, to } = range;
    let err: Problem | null | undefined;
    if (from > to) err = null;
    else if (!latest) err = { name: 'NoCheckpoint', message: 'no verified checkpoint to check the inclusion proof against' };
    else if (to >= latest.size)
      err = {
        name: 'RangeBeyondCheckpoint',
        message: `the range ${from}..=${to} ends beyond the latest checkpoint (size ${latest.size}): it cannot be tied to it`,
      };
    else {
      const mismatch = (reason: string): Problem => ({
        name: 'RangeMismatch',
        message: `the leaves of the range ${from}..=${to} do not recompute the root of the latest checkpoint (size ${latest!.size}): a leaf in it was edited, dropped, added or moved, or the range proof altered (${reason})`,
      });
      const inOrder = rangeLeaves.length === to - from + 1 && rangeLeaves.every((l, k) => l.index === from + k);
      if (!inOrder) err = mismatch(`it holds ${rangeLeaves.length} receipts, not the ${to - from + 1} of its indices in order`);
      else {
        try {
          const proof = decodeHashes(range.proof ?? []);
          const root = await rootFromRange(from, latest.size, rangeLeaves.map((l) => l.hash), proof);
          err = equal(root, latest.root) ? undefined : mismatch('the computed root does not match');
        } catch (e) {
          err = mismatch((e as Error).message);
        }
      }
    }
    if (err !== undefined) {
      rangeOk = false;
      if (err) problems.push(err);
    }
  }
  for (const c of checked) {
    if (!rangeOk && range && range.from <= c.line.index && c.line.index <= range.to && c.line.error === null)
      c.line.error = {
        name: 'RangeNotVouched',
        message: `not vouched for: the leaves of the range ${range.from}..=${range.to} it belongs to do not recompute the signed root`,
      };
    if (c.line.error === null && c.registration) registered.add(c.registration);
    report.receipts.push(c.line);
  }
  report.unchecked_surfaces = raw.surfaces.length;

  // Order, duplicates and the claimed range.
  for (let k = 1; k < report.receipts.length; k++) {
    const [previous, index] = [report.receipts[k - 1].index, report.receipts[k].index];
    if (index === previous) problems.push({ name: 'Duplicate', message: `receipt ${index} appears more than once` });
    else if (index < previous) problems.push({ name: 'Reordered', message: `receipt ${index} comes after receipt ${previous}: receipts are reordered` });
  }
  if (raw.range) {
    const { from, to } = raw.range;
    if (from > to) problems.push({ name: 'BadRange', message: `invalid range ${from}..=${to}` });
    else {
      const present = [...new Set(report.receipts.map((l) => l.index))].sort((a, b) => a - b);
      if (raw.version === 'v1')
        for (const index of present.filter((i) => i < from || i > to))
          problems.push({ name: 'OutsideRange', message: `receipt ${index} is outside the claimed range ${from}..=${to}` });
      const NAMED = 20;
      let missing = 0;
      let expected = from;
      for (const i of [...present.filter((i) => from <= i && i <= to), to + 1]) {
        const named = Math.min(NAMED - Math.min(missing, NAMED), i - expected);
        for (let index = expected; index < expected + named; index++)
          problems.push({ name: 'Dropped', message: `receipt ${index} of the claimed range ${from}..=${to} is missing: a receipt was dropped` });
        missing += i - expected;
        expected = i + 1;
      }
      if (missing > NAMED)
        problems.push({ name: 'DroppedMore', message: `${missing - NAMED} more receipts of the claimed range ${from}..=${to} are missing` });
    }
  }

  // Every trusted approver key is backed by a registration.
  for (const [keyId, identity] of trusted) {
    if (!registered.has(`${keyId}\n${identity}`))
      problems.push({
        name: 'UnbackedApproverKey',
        message: `trusted approver key ${keyId} (${identity}) is not backed by an approver.registered receipt in the bundle: an added or swapped key`,
      });
  }
  report.ok = problems.length === 0 && report.receipts.every((r) => r.error === null);
  return report;
}
