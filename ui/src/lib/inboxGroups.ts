// Similar held calls grouped in the inbox (issue 18): twelve held calls of one
// tool by one agent are one row, "12 calls of files__read_file by builder",
// opened to review them one by one. Only held tool calls (plans the gateway
// names `call-…`) are grouped, only two or more alike, and a group stands where
// its first member stood, so the list does not reorder itself.
import type { InboxItem, PlanSummary } from './api';

export interface HeldGroup {
  kind: 'group';
  /** `group:<proposer>:<title>`: stable while its members come and go. */
  key: string;
  agent: string;
  tool: string;
  members: PlanSummary[];
  /** The highest risk among the members. */
  risk: string;
}

export type InboxEntry = { kind: 'item'; item: InboxItem } | HeldGroup;

/** The title the gateway gives a held tool call's plan, before the tool's exposed name. */
export const HELD_TITLE = 'Held tool call: ';
const RISK_ORDER = ['none', 'low', 'medium', 'high', 'critical'];

function heldCall(i: InboxItem): PlanSummary | null {
  return i.kind === 'plan' && i.plan_id.startsWith('call-') && i.title.startsWith(HELD_TITLE) ? i : null;
}

const groupKey = (p: PlanSummary) => `group:${p.proposer}:${p.title}`;

export function groupInbox(items: InboxItem[]): InboxEntry[] {
  const counts = new Map<string, number>();
  for (const i of items) {
    const p = heldCall(i);
    if (p) counts.set(groupKey(p), (counts.get(groupKey(p)) ?? 0) + 1);
  }
  const out: InboxEntry[] = [];
  const groups = new Map<string, HeldGroup>();
  for (const i of items) {
    const p = heldCall(i);
    const k = p && groupKey(p);
    if (!p || !k || (counts.get(k) ?? 0) < 2) {
      out.push({ kind: 'item', item: i });
      continue;
    }
    let g = groups.get(k);
    if (!g) {
      g = {
        kind: 'group',
        key: k,
        agent: p.proposer.replace(/^agent:/, ''),
        tool: p.title.slice(HELD_TITLE.length),
        members: [],
        risk: p.risk,
      };
      groups.set(k, g);
      out.push(g);
    }
    g.members.push(p);
    if (RISK_ORDER.indexOf(p.risk) > RISK_ORDER.indexOf(g.risk)) g.risk = p.risk;
  }
  return out;
}

/** What a group row says: "12 calls of `tool` by agent". */
export function groupTitle(g: HeldGroup): string {
  return `${g.members.length} calls of ${g.tool} by ${g.agent}`;
}
