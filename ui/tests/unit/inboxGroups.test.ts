import { describe, expect, it } from 'vitest';
import type { InboxItem } from '../../src/lib/api';
import { groupInbox, groupTitle } from '../../src/lib/inboxGroups';

const held = (id: string, tool: string, agent: string, risk = 'high'): InboxItem =>
  ({
    kind: 'plan',
    plan_id: `call-${id}`,
    title: `Held tool call: ${tool}`,
    proposer: `agent:${agent}`,
    risk,
    revision: 1,
    status: 'PROPOSED',
    plan_hash: 'sha256:' + '0'.repeat(64),
    created_at: 0,
    updated_at: 0,
  }) as InboxItem;

const plan = (id: string): InboxItem =>
  ({ ...held(id, 'x', 'a'), plan_id: id, title: 'Restart the web tier' }) as InboxItem;

describe('grouping similar held calls', () => {
  it('groups two or more held calls of one tool by one agent, where the first stood', () => {
    const items = [plan('p1'), held('1', 'files__read_file', 'builder'), held('2', 'files__write', 'builder'),
      held('3', 'files__read_file', 'builder', 'critical'), held('4', 'files__read_file', 'other')];
    const out = groupInbox(items);
    expect(out.map((e) => (e.kind === 'group' ? e.key : e.item.kind === 'plan' ? e.item.plan_id : ''))).toEqual([
      'p1',
      'group:agent:builder:Held tool call: files__read_file',
      'call-2',
      'call-4',
    ]);
    const g = out[1];
    if (g.kind !== 'group') throw new Error('not a group');
    expect(g.members.map((m) => m.plan_id)).toEqual(['call-1', 'call-3']);
    expect(g.risk).toBe('critical');
    expect(groupTitle(g)).toBe('2 calls of files__read_file by builder');
  });

  it('leaves a single held call and every other plan alone', () => {
    const items = [held('1', 't', 'a'), plan('p'), plan('q')];
    expect(groupInbox(items).every((e) => e.kind === 'item')).toBe(true);
  });

  it('never groups a plan an agent titled like a held call', () => {
    // Only the gateway's own `call-…` plans are held calls.
    const fake = { ...held('1', 't', 'a'), plan_id: 'my-plan-1' } as InboxItem;
    const fake2 = { ...held('2', 't', 'a'), plan_id: 'my-plan-2' } as InboxItem;
    expect(groupInbox([fake, fake2]).every((e) => e.kind === 'item')).toBe(true);
  });
});
