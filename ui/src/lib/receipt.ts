// How a receipt reads to an auditor without a developer (issue 46 item 3):
// who decided (a name, not a key id), what, on which subject, when (with its
// timezone), why, and the verdict in words; a tool call's intent and outcome
// leaves as one call; epoch numbers in a statement shown as dates.
// Pure functions: the Receipts view renders what these return.

import type { Receipt } from './api';

type Obj = Record<string, unknown>;

const str = (v: unknown): string => (typeof v === 'string' ? v : typeof v === 'number' ? String(v) : '');

/** A member of the receipt's predicate, as text ('' when absent). */
export function field(r: Receipt, k: string): string {
  return str(r.predicate?.[k]);
}

function verdictObj(r: Receipt): Obj | null {
  const v = r.predicate?.verdict;
  return v && typeof v === 'object' && !Array.isArray(v) ? (v as Obj) : null;
}

// ---------------------------------------------------------------- time

const pad = (n: number, w = 2) => String(Math.abs(n)).padStart(w, '0');

/**
 * Unix seconds as local date and time with its offset, never ambiguous:
 * `2026-12-06 18:44:43 UTC+01:00`, or `… UTC` where local time is UTC.
 * `offsetMinutes` (east of UTC) defaults to this browser's at that instant.
 */
export function zonedTime(unix: number | null | undefined, offsetMinutes?: number): string {
  if (unix === null || unix === undefined || !Number.isFinite(unix)) return '';
  const ms = unix * 1000;
  const off = offsetMinutes ?? -new Date(ms).getTimezoneOffset();
  const d = new Date(ms + off * 60_000);
  const date = `${d.getUTCFullYear()}-${pad(d.getUTCMonth() + 1)}-${pad(d.getUTCDate())}`;
  const time = `${pad(d.getUTCHours())}:${pad(d.getUTCMinutes())}:${pad(d.getUTCSeconds())}`;
  const zone = off === 0 ? 'UTC' : `UTC${off < 0 ? '−' : '+'}${pad(Math.trunc(Math.abs(off) / 60))}:${pad(Math.abs(off) % 60)}`;
  return `${date} ${time} ${zone}`;
}

/** Members whose number is a Unix time (seconds). */
const TIME_KEY = /^(time|at|since|until|not_before|expires|deadline)$|_at$|_time$|^time_/;

/** Whether `n` is plausibly Unix seconds (2001 … 2286). */
function plausibleUnix(n: number): boolean {
  return Number.isInteger(n) && n >= 1_000_000_000 && n < 10_000_000_000;
}

/**
 * Pretty JSON text with every Unix time annotated by its date, as a comment
 * after the unchanged number: `"expires_at": 1796582683,  // 2026-12-06 …`.
 * The values stay as signed; only the reading is helped.
 */
export function annotateTimes(prettyJson: string, offsetMinutes?: number): string {
  return prettyJson.replace(/^(\s*"([^"]+)": )(-?\d+)(,?)$/gm, (line, head: string, key: string, num: string, comma: string) => {
    const n = Number(num);
    if (!TIME_KEY.test(key) || !plausibleUnix(n)) return line;
    return `${head}${num}${comma}  // ${zonedTime(n, offsetMinutes)}`;
  });
}

// ---------------------------------------------------------------- names

/**
 * Key id → identity (`ed25519:…` → `human:jane`), from the gateway's
 * registered approvers and any `approver.registered` receipts at hand.
 */
export function approverNames(approvers: { key_id: string; identity: string }[], receipts: Receipt[] = []): Map<string, string> {
  const m = new Map<string, string>();
  for (const r of receipts) {
    if (r.kind !== 'approver.registered') continue;
    const id = field(r, 'key_id');
    const who = field(r, 'identity') || r.approver || '';
    if (id && who) m.set(id, who);
  }
  for (const a of approvers) if (a.key_id && a.identity) m.set(a.key_id, a.identity);
  return m;
}

/** A key id shortened for reading (`ed25519:b78f0c1d…`); the whole one goes in a title. */
export function shortKey(keyId: string): string {
  return keyId.length > 20 ? `${keyId.slice(0, 16)}…` : keyId;
}

/** The name behind a key id, or the shortened key id when no registration names it. */
export function nameOfKey(keyId: string, names: Map<string, string>): string {
  return names.get(keyId) ?? `key ${shortKey(keyId)}`;
}

export interface Who {
  /** Who decided, by name: `human:jane`, `the gateway's policy`, `admin token ops`. */
  name: string;
  /** How the receipt says so. */
  role: 'approver' | 'policy' | 'proposer' | 'admin' | 'agent' | 'unrecorded';
  /** The signing key's id, when there is one. */
  keyId?: string;
}

/** Who, when the receipt does not name anyone (`apikey.issued`, `approver.registered`). */
export const UNRECORDED = 'unknown (the receipt does not say)';

/** The approver's key id a decision was signed with, if it says. */
export function approverKeyId(r: Receipt): string {
  const direct = field(r, 'approver_key_id');
  if (direct) return direct;
  for (const k of ['statement', 'envelope']) {
    const env = r.predicate?.[k] as { signatures?: { keyid?: string }[] } | undefined;
    const id = env?.signatures?.[0]?.keyid;
    if (typeof id === 'string' && id) return id;
  }
  return '';
}

/** Who decided what this receipt records. */
export function decider(r: Receipt, names: Map<string, string>): Who {
  const keyId = approverKeyId(r) || undefined;
  if (r.kind === 'approver.registered') {
    // The receipt names the key registered (its `identity`), not who registered it.
    return { name: UNRECORDED, role: 'unrecorded' };
  }
  const approver = r.approver ?? field(r, 'approver');
  if (approver && !/^ed25519:/.test(approver)) return { name: approver, role: 'approver', keyId };
  if (keyId) return { name: nameOfKey(keyId, names), role: 'approver', keyId };
  if (approver) return { name: nameOfKey(approver, names), role: 'approver', keyId: approver };
  const by = r.predicate?.by;
  if (typeof by === 'string' && by) return { name: /^ed25519:/.test(by) ? nameOfKey(by, names) : by, role: 'approver' };
  if (by && typeof by === 'object') {
    const o = by as Obj;
    const n = str(o.name) || str(o.identity);
    if (n) return { name: `admin token ${n}${str(o.scope) ? ` (${str(o.scope)})` : ''}`, role: 'admin' };
  }
  if (r.kind === 'tool.call' || r.kind === 'tool.call.intent' || ['hook.call', 'llm.call', 'prompt.get', 'resource.read', 'completion.complete'].includes(r.kind)) {
    return { name: "the gateway's policy", role: 'policy' };
  }
  if (r.kind === 'plan.proposed') {
    const p = field(r, 'proposer');
    return { name: p || 'the agent', role: 'proposer' };
  }
  if (r.kind.startsWith('server.') && !/approved|rejected/.test(r.kind)) {
    return { name: "the gateway's drift check", role: 'policy' };
  }
  if (r.kind === 'plan.transition') return { name: 'the gateway (following the decisions and the run)', role: 'policy' };
  return { name: UNRECORDED, role: 'unrecorded' };
}

// ---------------------------------------------------------------- verdicts

export type Tone = 'ok' | 'bad' | 'hold' | 'info';

const WORDS: Record<string, [string, Tone]> = {
  approve: ['Approved', 'ok'],
  approved: ['Approved', 'ok'],
  reject: ['Rejected', 'bad'],
  rejected: ['Rejected', 'bad'],
  allowed: ['Allowed', 'ok'],
  allow: ['Allowed', 'ok'],
  held: ['Held', 'hold'],
  hold: ['Held', 'hold'],
  blocked: ['Blocked', 'bad'],
  block: ['Blocked', 'bad'],
  denied: ['Denied', 'bad'],
  shadow_would_block: ['Would have been blocked (shadow mode)', 'hold'],
  shadow_would_hold: ['Would have been held (shadow mode)', 'hold'],
  quarantined: ['Quarantined', 'bad'],
  pending: ['Pending review', 'hold'],
  granted: ['Granted', 'ok'],
  revoked: ['Revoked', 'bad'],
  proposed: ['Proposed', 'info'],
  registered: ['Registered', 'info'],
  issued: ['Issued', 'info'],
  redeemed: ['Redeemed', 'info'],
  added: ['Added', 'info'],
  removed: ['Removed', 'info'],
  requested: ['Requested', 'info'],
  drift_held: ['Held (drift)', 'hold'],
  drift: ['Drift recorded', 'hold'],
  probe_drift: ['Drift found by a probe', 'hold'],
  probe_call: ['Probed', 'info'],
  envelope_fixed: ['Envelope fixed', 'info'],
  envelope_widened: ['Envelope widened', 'hold'],
  executed: ['Executed', 'ok'],
  executing: ['Executing', 'info'],
  halted: ['Halted', 'bad'],
  failed: ['Failed', 'bad'],
  rolled_back: ['Rolled back', 'hold'],
  completed: ['Completed', 'ok'],
  expired: ['Expired', 'hold'],
  superseded: ['Superseded', 'info'],
  connected: ['Connected', 'info'],
  undone: ['Undone', 'info'],
  change_refused: ['Change refused', 'bad'],
  ok: ['Ran', 'ok'],
  error: ['Failed', 'bad'],
};

/** A verdict word (`reject`, `shadow_would_block`, `REJECTED`) in words. */
export function words(v: string): [string, Tone] {
  const k = v.trim().toLowerCase();
  const hit = WORDS[k];
  if (hit) return hit;
  const plain = k.replace(/[_.]+/g, ' ');
  return [plain.charAt(0).toUpperCase() + plain.slice(1), 'info'];
}

export interface Verdict {
  /** In words: `Rejected`, `Allowed · ran`, `Would have been blocked (shadow mode)`. */
  text: string;
  tone: Tone;
}

/** The receipt's verdict in words. */
export function verdictOf(r: Receipt): Verdict {
  const kind = r.kind;
  if (kind === 'plan.decision') {
    const d = field(r, 'decision') || r.verdict || '';
    const [text, tone] = words(d || 'decided');
    return { text, tone };
  }
  if (kind === 'plan.transition') {
    const to = field(r, 'to');
    if (to) {
      const [text, tone] = words(to);
      return { text, tone };
    }
  }
  if (kind === 'tool.call' || kind === 'tool.call.intent' || ['hook.call', 'llm.call', 'prompt.get', 'resource.read', 'completion.complete'].includes(kind)) {
    const v = r.verdict ?? str(verdictObj(r)?.verdict);
    const [text, tone] = words(v || r.outcome || 'recorded');
    if (kind === 'tool.call.intent') return { text: `${text} · forwarding`, tone: tone === 'ok' ? 'info' : tone };
    const out = r.outcome ?? '';
    // The outcome, said when it adds something to the verdict.
    if (out && out !== v && !(v === 'allowed' && out === 'ok')) {
      const [o] = words(out);
      return { text: `${text} · ${o.toLowerCase()}`, tone: out === 'error' || out === 'failed' ? 'bad' : tone };
    }
    return { text, tone };
  }
  if (r.verdict) {
    const [text, tone] = words(r.verdict);
    return { text, tone };
  }
  // The event type's last part: `server.rejected` → Rejected, `apikey.issued` → Issued.
  const last = kind.includes('.') ? kind.slice(kind.indexOf('.') + 1) : kind;
  const [text, tone] = words(last);
  return { text, tone };
}

// ---------------------------------------------------------------- what, subject

/** What the receipt is about: `plan restart-web r1`, `server calm`, `tool calm/greet`. */
export function subjectOf(r: Receipt): string {
  const rev = field(r, 'revision');
  if (r.plan_id && r.kind.startsWith('plan.')) return `plan ${r.plan_id}${rev ? ` r${rev}` : ''}`;
  if (r.server && r.tool) return `tool ${r.server}/${r.tool}`;
  if (r.server) return `server ${r.server}`;
  switch (r.kind) {
    case 'apikey.issued':
      return `${field(r, 'kind') || 'API'} key ${field(r, 'name')}`.trim();
    case 'approver.registered':
      return `approver key of ${field(r, 'identity') || r.approver || '?'}`;
    case 'standing.granted': {
      const d = (r.predicate?.document ?? {}) as Obj;
      return `standing approval: ${str(d.role) || '?'} → ${str(d.tool) || '?'}`;
    }
    case 'standing.revoked':
      return `standing approval ${field(r, 'id')}`;
    case 'admin.action':
      return [field(r, 'action'), field(r, 'name')].filter(Boolean).join(' ');
    case 'hook.call':
      return `${field(r, 'client') || 'a client'}'s ${r.tool ?? field(r, 'tool') ?? '?'}`;
    case 'llm.call':
      return `model ${field(r, 'model') || '?'}`;
  }
  if (r.plan_id) return `plan ${r.plan_id}`;
  const n = field(r, 'name') || field(r, 'client') || field(r, 'id');
  return n;
}

/** One line saying what happened, without repeating the event type. */
export function whatOf(r: Receipt): string {
  const agent = r.agent ? `agent ${r.agent}` : '';
  switch (r.kind) {
    case 'tool.call':
    case 'tool.call.intent':
      return `${agent || 'an agent'} called ${r.server ?? '?'}/${r.tool ?? '?'}`;
    case 'hook.call':
      return `${agent || 'an agent'} used ${r.tool ?? field(r, 'tool') ?? '?'} in ${field(r, 'client') || '?'} (${field(r, 'cwd') || '?'})`;
    case 'llm.response':
      return `the answer to ${agent || 'an agent'}'s model request (leaf ${field(r, 'call_index') || '?'}) was scanned`;
    case 'llm.call':
      return `${agent || 'an agent'} asked model ${field(r, 'model') || '?'} (${field(r, 'provider') || '?'})`;
    case 'prompt.get':
      return `${agent || 'an agent'} got prompt ${field(r, 'prompt')} of ${r.server ?? '?'}`;
    case 'resource.read':
      return `${agent || 'an agent'} read ${field(r, 'uri')} of ${r.server ?? '?'}`;
    case 'completion.complete':
      return `${agent || 'an agent'} asked ${r.server ?? '?'} for completions`;
    case 'plan.proposed':
      return `proposed ${subjectOf(r)}${field(r, 'title') ? ` “${field(r, 'title')}”` : ''}${field(r, 'risk') ? ` · ${field(r, 'risk')} risk` : ''}`;
    case 'plan.decision':
      return `decided on ${subjectOf(r)}`;
    case 'plan.transition':
      return `${subjectOf(r)}: ${field(r, 'from') || '?'} → ${field(r, 'to') || '?'}`;
    case 'apikey.issued':
      return `issued ${subjectOf(r)}${field(r, 'role') ? ` (role ${field(r, 'role')})` : ''}`;
    case 'approver.registered':
      return `registered the approver key of ${field(r, 'identity') || r.approver || '?'}${field(r, 'label') ? ` (${field(r, 'label')})` : ''}`;
    case 'admin.action':
      return `admin: ${subjectOf(r) || 'an action'}`;
  }
  const subj = subjectOf(r);
  const act = r.kind.slice(r.kind.indexOf('.') + 1);
  // A reviewer's act reads as a verb on its subject: `approved server calm`.
  if (subj && /^(approved|rejected|blocked|granted|revoked|added|removed|requested)$/.test(act)) return `${act} ${subj}`;
  const [said] = words(act);
  return subj ? `${subj}: ${said.toLowerCase()}` : r.kind.replace(/[._]/g, ' ');
}

/** The reason given (or found), if any. */
export function whyOf(r: Receipt): string {
  const detail = r.outcome && r.outcome !== 'ok' ? field(r, 'detail') : '';
  return r.reasons || field(r, 'reason') || str(verdictObj(r)?.hold_reasons) || detail || '';
}

// ---------------------------------------------------------------- tool calls as one row

/** One row of the list: a receipt, or a tool call's intent and outcome leaves. */
export interface ReceiptGroup {
  /** The list key: the outcome's (or the lone leaf's) log index. */
  key: string;
  /** The receipt that speaks for the row: the outcome when there is one. */
  main: Receipt;
  /** Every leaf of the row, newest first (the outcome, then its intent). */
  leaves: Receipt[];
}

/** The id joining a call's leaves: `call_id`, else the intent's index. */
function callKey(r: Receipt): string | null {
  if (r.kind !== 'tool.call' && r.kind !== 'tool.call.intent') return null;
  const id = field(r, 'call_id');
  if (id) return `call:${id}`;
  if (r.kind === 'tool.call.intent') return `intent:${r.index}`;
  const intent = field(r, 'intent_index');
  return intent ? `intent:${intent}` : null;
}

/**
 * Receipts (newest first) as rows: a tool call's `tool.call.intent` leaf
 * joins its `tool.call` outcome (same `call_id`, or the outcome's
 * `intent_index`) in one row, where the outcome is; anything else is a row
 * of its own. Order is kept.
 */
export function groupReceipts(list: Receipt[]): ReceiptGroup[] {
  const out: ReceiptGroup[] = [];
  const byCall = new Map<string, ReceiptGroup>();
  for (const r of list) {
    const ck = callKey(r);
    const alt = r.kind === 'tool.call' && field(r, 'intent_index') ? `intent:${field(r, 'intent_index')}` : null;
    const found = (ck && byCall.get(ck)) || (r.kind === 'tool.call.intent' ? byCall.get(`intent:${r.index}`) : undefined);
    if (found) {
      found.leaves.push(r);
      if (r.kind === 'tool.call' && found.main.kind === 'tool.call.intent') found.main = r;
      found.leaves.sort((a, b) => b.index - a.index);
      continue;
    }
    const g: ReceiptGroup = { key: String(r.index), main: r, leaves: [r] };
    out.push(g);
    if (ck) byCall.set(ck, g);
    if (alt) byCall.set(alt, g);
  }
  return out;
}

/** One line that holds everything the row says, for a title (full text on hover) and print. */
export function rowText(g: ReceiptGroup, names: Map<string, string>): string {
  const r = g.main;
  const v = verdictOf(r);
  const why = whyOf(r);
  return [v.text, whatOf(r), `by ${decider(r, names).name}`, zonedTime(r.time), why && `why: ${why}`].filter(Boolean).join(' · ');
}
