// The approval statement (interlock.approval/v2), its DSSE PAE and envelope.
// Mirrors crates/interlock-core/src/decision.rs byte for byte: the statement is
// canonicalized with JCS, and the Ed25519 signature covers
// PAE(payloadType, JCS bytes).

import { canonicalBytes } from './jcs';

export const APPROVAL_SCHEMA_VERSION = 'interlock.approval/v2';
export const APPROVAL_PAYLOAD_TYPE = 'application/vnd.interlock.approval+json';
/** How long before `now` a statement becomes valid (clock skew allowance). */
export const NOT_BEFORE_SLACK_SECS = 30;
/** How long a statement stays valid for the gateway to apply. */
export const VALIDITY_SECS = 3600;
export const MAX_REASON_BYTES = 4096;

export type DecisionKind = 'approve' | 'reject';
/** What a statement decides: a plan, a server's surface, or one tool of a server (`<server>/<tool>`). */
export type SubjectKind = 'plan' | 'server' | 'tool';

export interface ApprovalStatement {
  schema_version: string;
  plan_id: string;
  plan_hash: string;
  decision: DecisionKind;
  reason: string;
  approver_key_id: string;
  /** The log origin of the gateway this statement is for (it refuses any other). */
  audience: string;
  /** When the approver signed (Unix seconds): decisions about a subject are ordered by it. */
  issued_at: number;
  not_before: number;
  expires_at: number;
  nonce: string;
  policy_digest: string;
}

export interface DsseEnvelope {
  payloadType: string;
  payload: string;
  signatures: { keyid: string; sig: string }[];
}

/** Bytes backed by a plain ArrayBuffer (what WebCrypto takes). */
export type Bytes = Uint8Array<ArrayBuffer>;

const DIGEST_RE = /^sha256:[0-9a-f]{64}$/;
const KEY_ID_RE = /^ed25519:[0-9a-f]{64}$/;

/**
 * The statement's subject: the plan id, `server:<name>` for a server's surface,
 * or `tool:<server>/<tool>` for one tool (its observed definition).
 */
export function subjectId(kind: SubjectKind, subject: string): string {
  if (kind === 'server') return `server:${subject}`;
  if (kind === 'tool') {
    const { server, tool } = splitToolSubject(subject);
    return `tool:${server}/${tool}`;
  }
  return subject;
}

/** A tool decision's subject from its server and tool names. */
export function toolSubject(server: string, tool: string): string {
  if (server === '' || server.includes('/')) throw new Error(`not a server name: ${JSON.stringify(server)}`);
  if (tool === '') throw new Error('a tool name is required');
  return `${server}/${tool}`;
}

/** `<server>/<tool>` split at its first `/` (as the gateway splits `tool:<server>/<tool>`). */
export function splitToolSubject(subject: string): { server: string; tool: string } {
  const i = subject.indexOf('/');
  if (i <= 0 || i === subject.length - 1) throw new Error(`not a <server>/<tool> subject: ${JSON.stringify(subject)}`);
  return { server: subject.slice(0, i), tool: subject.slice(i + 1) };
}

export function reasonError(reason: string): string | null {
  if (reason.trim() === '') return 'A reason is required.';
  const n = utf8(reason).length;
  if (n > MAX_REASON_BYTES) return `The reason is ${n} bytes; at most ${MAX_REASON_BYTES} are allowed.`;
  return null;
}

export interface StatementInput {
  planId: string;
  planHash: string;
  decision: DecisionKind;
  reason: string;
  approverKeyId: string;
  policyDigest: string;
  /** The gateway's log origin, as its plan or server view reports it. */
  audience: string;
  /** Unix seconds. */
  now: number;
  /** 16 bytes; random when omitted. */
  nonce?: Uint8Array;
}

export function buildStatement(i: StatementInput): ApprovalStatement {
  if (!DIGEST_RE.test(i.planHash)) throw new Error(`not a sha256 digest: ${i.planHash}`);
  if (!DIGEST_RE.test(i.policyDigest)) throw new Error(`not a sha256 digest: ${i.policyDigest}`);
  if (!KEY_ID_RE.test(i.approverKeyId)) throw new Error(`not an ed25519 key id: ${i.approverKeyId}`);
  if (i.audience === '') throw new Error('the audience (the gateway’s log origin) is required');
  const bad = reasonError(i.reason);
  if (bad) throw new Error(bad);
  const now = Math.floor(i.now);
  const nonce = i.nonce ?? crypto.getRandomValues(new Uint8Array(16));
  if (nonce.length !== 16) throw new Error('the nonce must be 16 bytes');
  return {
    schema_version: APPROVAL_SCHEMA_VERSION,
    plan_id: i.planId,
    plan_hash: i.planHash,
    decision: i.decision,
    reason: i.reason,
    approver_key_id: i.approverKeyId,
    audience: i.audience,
    issued_at: now,
    not_before: now - NOT_BEFORE_SLACK_SECS,
    expires_at: now + VALIDITY_SECS,
    nonce: toHex(nonce),
    policy_digest: i.policyDigest,
  };
}

/** DSSE v1 pre-authentication encoding: "DSSEv1" SP LEN(type) SP type SP LEN(body) SP body. */
export function pae(payloadType: string, payload: Uint8Array): Bytes {
  const type = utf8(payloadType);
  const head = utf8(`DSSEv1 ${type.length} ${payloadType} ${payload.length} `);
  const out = new Uint8Array(head.length + payload.length);
  out.set(head, 0);
  out.set(payload, head.length);
  return out;
}

export function statementPayload(s: ApprovalStatement): Bytes {
  return canonicalBytes(s);
}

/** The bytes an approver signs. */
export function signingInput(s: ApprovalStatement): Bytes {
  return pae(APPROVAL_PAYLOAD_TYPE, statementPayload(s));
}

export function envelope(s: ApprovalStatement, signature: Uint8Array): DsseEnvelope {
  if (signature.length !== 64) throw new Error('an Ed25519 signature is 64 bytes');
  return {
    payloadType: APPROVAL_PAYLOAD_TYPE,
    payload: toBase64(statementPayload(s)),
    signatures: [{ keyid: s.approver_key_id, sig: toBase64(signature) }],
  };
}

/** `ed25519:` + hex SHA-256 of the raw 32-byte public key. */
export async function keyIdOf(rawPublicKey: Uint8Array): Promise<string> {
  if (rawPublicKey.length !== 32) throw new Error('an Ed25519 public key is 32 bytes');
  return 'ed25519:' + toHex(new Uint8Array(await crypto.subtle.digest('SHA-256', new Uint8Array(rawPublicKey))));
}

/** The short form humans compare: the key id's first 16 hex digits in groups of four. */
export function fingerprint(keyId: string): string {
  const hex = keyId.replace(/^ed25519:/, '').slice(0, 16);
  return hex.match(/.{1,4}/g)?.join(':') ?? '';
}

export function utf8(s: string): Bytes {
  return new TextEncoder().encode(s);
}

export function toHex(b: Uint8Array): string {
  let s = '';
  for (const x of b) s += x.toString(16).padStart(2, '0');
  return s;
}

export function fromHex(h: string): Bytes {
  if (h.length % 2 || /[^0-9a-fA-F]/.test(h)) throw new Error('not hex');
  const out = new Uint8Array(h.length / 2);
  for (let i = 0; i < out.length; i++) out[i] = parseInt(h.slice(2 * i, 2 * i + 2), 16);
  return out;
}

export function toBase64(b: Uint8Array): string {
  let s = '';
  for (let i = 0; i < b.length; i += 0x8000) s += String.fromCharCode(...b.subarray(i, i + 0x8000));
  return btoa(s);
}

export function fromBase64(s: string): Bytes {
  const bin = atob(s);
  const out = new Uint8Array(bin.length);
  for (let i = 0; i < bin.length; i++) out[i] = bin.charCodeAt(i);
  return out;
}
