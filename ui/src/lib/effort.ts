// Effort in proportion to risk (issue 46, "The reviewer's and the auditor's
// experience", item 1). Low and medium items are approved in one step (`a`,
// Enter) with a stock reason; high and critical ones ask for a reason the
// reviewer types, show what changed or what the call does inside the dialog,
// and offer Reject and Approve on equal footing. Pure functions of the API's
// answers, so they are unit-tested.

import type { Drift, FirstContactFinding, PlanDocument, Stage, Target } from './api';
import { HELD_TITLE } from './inboxGroups';

/** Whether an item at this risk asks for a typed reason (high and critical). */
export function asksForReason(risk: string | null | undefined): boolean {
  return risk === 'high' || risk === 'critical';
}

/** What a decision dialog shows of its subject besides its title and hash. */
export type DecisionContext =
  | {
      kind: 'call';
      /** The name agents call it by (`server__tool`). */
      exposed: string;
      server: string;
      tool: string;
      arguments: unknown;
      /** The gateway's account of why it held the call. */
      why?: string;
    }
  | { kind: 'stages'; stages: StageLine[]; diff?: DiffSummary | null }
  | {
      kind: 'drift';
      drift: Drift[];
      /** Tools whose definitions differ from the baseline (the diff's summary). */
      changed?: string[];
      /** What of the launch changed since it was approved. */
      launch?: string[];
    }
  | { kind: 'findings'; findings: FirstContactFinding[] };

/** A target as one line: a string as it is, an object target as `kind id`. */
export function targetLine(t: Target): string {
  return typeof t === 'string' ? t : `${t.kind} ${t.id}`;
}

/**
 * A held call's plan (one `mcp.call_tool` stage: target the server, params
 * `tool` and `arguments`) as the call it stands for; null for any other plan.
 */
export function heldCall(doc: PlanDocument | null | undefined): Extract<DecisionContext, { kind: 'call' }> | null {
  const stage = doc?.body.stages.length === 1 ? doc.body.stages[0] : undefined;
  if (!stage || stage.action !== 'mcp.call_tool' || typeof stage.target !== 'string') return null;
  const tool = stage.params?.tool;
  if (typeof tool !== 'string') return null;
  const exposed = doc!.title.startsWith(HELD_TITLE) ? doc!.title.slice(HELD_TITLE.length) : `${stage.target}__${tool}`;
  return {
    kind: 'call',
    exposed,
    server: stage.target,
    tool,
    arguments: stage.params?.arguments ?? {},
    why: doc!.description,
  };
}

/** Lines added and removed by a unified diff (its `---`/`+++` headers left out). */
export interface DiffSummary {
  added: number;
  removed: number;
}

export function diffSummary(diff: string | null | undefined): DiffSummary | null {
  if (!diff) return null;
  let added = 0;
  let removed = 0;
  for (const l of diff.split('\n')) {
    if (l.startsWith('+++') || l.startsWith('---')) continue;
    if (l.startsWith('+')) added++;
    else if (l.startsWith('-')) removed++;
  }
  return { added, removed };
}

/** A stage as the dialog lists it: its params as one line of JSON (null when it has none). */
export interface StageLine {
  id: string;
  action: string;
  target: string;
  params: string | null;
}

/** A plan's stages as the dialog lists them. */
export function stageLines(stages: Stage[]): StageLine[] {
  return stages.map((s) => ({
    id: s.id,
    action: s.action,
    target: targetLine(s.target),
    params: s.params && Object.keys(s.params).length ? oneLine(s.params) : null,
  }));
}

/**
 * JSON for reading in a small space: keys sorted, two-space indents, and an
 * array or object whose one-line form fits in `width` columns kept on one line
 * (`[1, 2, 3]`, not five lines). Strings as JSON writes them.
 */
export function compactJson(v: unknown, width = 64, indent = ''): string {
  const one = oneLine(v);
  if (one.length + indent.length <= width || v === null || typeof v !== 'object') return one;
  const inner = indent + '  ';
  if (Array.isArray(v)) return `[\n${v.map((x) => inner + compactJson(x, width, inner)).join(',\n')}\n${indent}]`;
  const keys = Object.keys(v as object).sort();
  if (!keys.length) return '{}';
  return `{\n${keys
    .map((k) => `${inner}${JSON.stringify(k)}: ${compactJson((v as Record<string, unknown>)[k], width, inner)}`)
    .join(',\n')}\n${indent}}`;
}

function oneLine(v: unknown): string {
  if (Array.isArray(v)) return `[${v.map(oneLine).join(', ')}]`;
  if (v !== null && typeof v === 'object') {
    const keys = Object.keys(v).sort();
    return keys.length ? `{ ${keys.map((k) => `${JSON.stringify(k)}: ${oneLine((v as Record<string, unknown>)[k])}`).join(', ')} }` : '{}';
  }
  return JSON.stringify(v) ?? 'null';
}

/**
 * What a rejection does, said in its dialog before it is signed (issue 46):
 * on a trusted server it is not a "no" to a proposal but a stop to what agents
 * use now. Null when there is nothing to add.
 */
export function rejectConsequence(kind: string, status?: string | null): string | null {
  if (kind === 'tool') return 'Agents no longer get this tool, from the moment it is signed; the rest of the server is served as it is. Approving its definition later serves it again.';
  if (kind === 'plan') return 'The plan does not run, and this revision cannot be approved afterwards; the agent is told it was rejected.';
  if (kind !== 'server') return null;
  switch (status) {
    case 'TRUSTED':
      return 'This server is trusted and served now. Rejecting it stops serving it at once: agents lose all of its tools, prompts and resources. Its approved baseline is kept; approving its surface later serves it again.';
    case 'PENDING':
      return 'Nothing of this server is served yet; rejecting it keeps it so. It stays listed (as rejected) until a reviewer approves its surface or it is removed.';
    case 'QUARANTINED':
      return 'None of its tools are served now; rejecting it keeps them so, as rejected rather than quarantined, until a reviewer approves its surface.';
    default:
      return 'None of its tools, prompts or resources are served to agents until a reviewer approves its surface.';
  }
}
