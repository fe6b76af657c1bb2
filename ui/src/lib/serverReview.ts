// What the server review shows besides the diff: the first-contact scan of a
// pending server (issue 16 item 3) and which per-tool decisions a tool allows
// (item 5). Pure functions of the API's answers, so they are unit-tested.

import type { FirstContact, FirstContactFinding, Risk, ServerDetail, ServerSummary } from './api';

const RISKS: Risk[] = ['low', 'medium', 'high', 'critical'];

/** The findings of one tool (or of the server's instructions: `tool` null). */
export interface FindingGroup {
  tool: string | null;
  findings: FirstContactFinding[];
}

/**
 * The first-contact findings grouped by tool, in the surface's order of tools
 * (instructions first: agents read them before any tool), each group's
 * findings by field, then kind, then excerpt, with exact repeats dropped.
 */
export function groupFindings(fc: FirstContact | null | undefined, toolOrder: string[] = []): FindingGroup[] {
  if (!fc) return [];
  const groups = new Map<string | null, FirstContactFinding[]>();
  const seen = new Set<string>();
  for (const f of fc.findings) {
    const tool = f.tool ?? null;
    const key = JSON.stringify([tool, f.field, f.kind, f.excerpt]);
    if (seen.has(key)) continue;
    seen.add(key);
    if (!groups.has(tool)) groups.set(tool, []);
    groups.get(tool)!.push(f);
  }
  const rank = (t: string | null) => {
    if (t === null) return -1;
    const i = toolOrder.indexOf(t);
    return i < 0 ? toolOrder.length : i;
  };
  const cmp = (a: string, b: string) => (a < b ? -1 : a > b ? 1 : 0);
  return [...groups.entries()]
    .sort(([a], [b]) => rank(a) - rank(b) || cmp(a ?? '', b ?? ''))
    .map(([tool, findings]) => ({
      tool,
      findings: [...findings].sort((x, y) => cmp(x.field, y.field) || cmp(x.kind, y.kind) || cmp(x.excerpt, y.excerpt)),
    }));
}

/**
 * A JSON Pointer's reference tokens, unescaped (RFC 6901: `~1` is `/`, `~0`
 * is `~`), for showing where a finding is; `""` (the whole document) is no tokens.
 */
export function pointerTokens(pointer: string): string[] {
  if (pointer === '') return [];
  if (!pointer.startsWith('/')) throw new Error(`not a JSON Pointer: ${JSON.stringify(pointer)}`);
  return pointer
    .slice(1)
    .split('/')
    .map((t) => t.replace(/~1/g, '/').replace(/~0/g, '~'));
}

/** A finding kind as words: `imperative_tag` → "imperative tag". */
export function kindLabel(kind: string): string {
  return kind.replace(/_/g, ' ');
}

/**
 * The risk a server row and page lead with: the first-contact risk while it is
 * pending (nothing drifted yet), else the worst drift's severity.
 */
export function serverRisk(s: ServerSummary): { risk: string | null; label: string } {
  // The gateway's one risk (issue 46): what the tools can do, the findings, the drift.
  if (s.risk_level && RISKS.includes(s.risk_level)) return { risk: s.risk_level, label: 'Risk' };
  if (s.status === 'PENDING' && s.risk && RISKS.includes(s.risk)) return { risk: s.risk, label: 'First-contact risk' };
  return { risk: s.worst_severity ?? null, label: 'Worst drift' };
}

/** Each observed tool's definition hash, when the gateway gives them (else null: no per-tool decisions). */
export function observedToolHashes(d: ServerDetail | undefined): Map<string, string> | null {
  const list = d?.observed_tools;
  if (!Array.isArray(list)) return null;
  const m = new Map<string, string>();
  for (const t of list) {
    if (t && typeof t.name === 'string' && typeof t.definition_hash === 'string' && /^sha256:[0-9a-f]{64}$/.test(t.definition_hash))
      m.set(t.name, t.definition_hash);
  }
  return m;
}

/** What a reviewer may decide about one tool now. */
export interface ToolActions {
  /** The hash a decision signs (null: the gateway gave none, so nothing is offered). */
  hash: string | null;
  /** How it is kept from agents now: `hold`, `quarantine`, `block` (by a reviewer), or null (served or pending). */
  blocked: string | null;
  /** Approve this tool's definition into the baseline (a held, quarantined or blocked tool of an approved server). */
  approve: boolean;
  /** Block it (not already blocked by a reviewer; allowed while the server is pending). */
  block: boolean;
}

export function toolActions(d: ServerDetail | undefined, tool: string, hashes = observedToolHashes(d)): ToolActions {
  const s = d?.server;
  const blocked = s?.blocked_tools?.find((b) => b.tool === tool)?.action ?? null;
  const hash = hashes?.get(tool) ?? null;
  if (!s || !hash) return { hash, blocked, approve: false, block: false };
  const approved = s.status === 'TRUSTED' || s.status === 'QUARANTINED';
  return {
    hash,
    blocked,
    approve: approved && blocked !== null,
    block: blocked !== 'block' && (approved || s.status === 'PENDING'),
  };
}

/** One line on whether agents get this tool now (always shown, so a decision moves nothing). */
export function toolState(d: ServerDetail | undefined, tool: string): string {
  const s = d?.server;
  if (!s) return '';
  const o = d?.observed_tools?.find((t) => t.name === tool);
  if (o?.served === true) return 'served';
  switch (s.status) {
    case 'PENDING':
      return 'not served until the server is approved';
    case 'QUARANTINED':
      return 'not served: the server is quarantined';
    case 'REJECTED':
      return 'not served: the server is rejected';
  }
  return o?.served === false ? 'not served' : 'served';
}

/** A blocked tool's label: a reviewer's block reads as such, the rest by their action. */
export function blockedLabel(action: string): string {
  return action === 'block' ? 'blocked by reviewer' : action === 'hold' ? 'held' : action === 'quarantine' ? 'quarantined' : action;
}

const RANK: Record<string, number> = { low: 1, medium: 2, high: 3, critical: 4 };

/**
 * The risk a decision on one tool is taken at (issue 46): the worst of that
 * tool's drift, what it can do (the gateway's `power`), and, while the server
 * is pending, the first-contact risk when the scan found something in that
 * tool; null when none says anything.
 */
export function toolRisk(d: ServerDetail | undefined, tool: string): Risk | null {
  let worst: Risk | null = null;
  const consider = (r: string | null | undefined) => {
    if (r && RANK[r] && (!worst || RANK[r] > RANK[worst])) worst = r as Risk;
  };
  for (const x of d?.drift ?? []) if (x.tool === tool) consider(x.severity);
  // What the tool can do (issue 46: the same rule as the server's risk).
  for (const p of d?.server.power ?? []) if (p.tool === tool) consider(p.risk);
  const fc = d?.first_contact;
  if (d?.server.status === 'PENDING' && fc && fc.findings.some((f) => f.tool === tool)) consider(fc.risk);
  return worst;
}
